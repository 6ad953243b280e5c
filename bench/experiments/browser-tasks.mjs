// Experiment `browser-tasks` (issue 34, acceptance row "Browser"): a page runs a batch of
// CPU-bound task calls (`tasks(url).primes(n)`, bench/experiments/_browser-tasks/work.mjs)
// on a pool of module Web Workers while a timer probe on the page's thread measures its
// longest stall (the largest gap between consecutive setTimeout(0) ticks; nested timers
// are clamped to 4 ms, so that is the floor). Chromium also reports long tasks
// (PerformanceObserver 'longtask'; Firefox has none). For scale, the same batch run on the
// page's thread stalls it for the whole batch. Each browser, with and without COOP/COEP
// (shared memory or messages).
//   npm run bench -- browser-tasks [--quick]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium, launchFirefox, startServer } from '../../scripts/browser-server.mjs';

const distBrowser = fileURLToPath(new URL('../../packages/offthread/dist/browser/', import.meta.url));
const moduleDir = fileURLToPath(new URL('./_browser-tasks/', import.meta.url));
const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8" /><link rel="icon" href="data:," /><title>browser-tasks</title></head>
<body><script type="module">
import * as o from '/offthread/offthread.js';
globalThis.offthread = o;
await o.ready;
globalThis.pageReady = true;
</script></body></html>
`;
const STALL_TARGET_MS = 16;

/** In the page: the batch on the pool, then on the page's thread, each under the probe. */
async function inPage(o, { url, calls, n, threads, idleMs }) {
  const probe = () => {
    const gaps = [];
    let last = performance.now();
    let on = true;
    const tick = () => {
      const now = performance.now();
      gaps.push(now - last);
      last = now;
      if (on) setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    const longtasks = [];
    let observer = null;
    try {
      observer = new PerformanceObserver((list) => longtasks.push(...list.getEntries().map((e) => e.duration)));
      observer.observe({ type: 'longtask' });
    } catch {
      // Firefox: no long task API
    }
    return () => {
      on = false;
      observer?.disconnect();
      const sorted = gaps.slice().sort((a, b) => a - b);
      const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      return {
        longestMs: sorted[sorted.length - 1] ?? 0,
        p50Ms: at(0.5),
        p99Ms: at(0.99),
        ticks: gaps.length,
        longtasks: observer ? longtasks.length : null,
      };
    };
  };
  const wait = (ms) => new Promise((r) => setTimeout(r, ms));
  // The machine's own share: the same probe on the idle page, as long as a batch takes.
  let stop = probe();
  await wait(idleMs);
  const idle = stop();
  const pool = new o.Pool({ threads });
  const work = o.tasks(url, { pool });
  await Promise.all(Array.from({ length: threads }, () => work.primes(1000))); // workers up, module loaded
  await wait(100);
  stop = probe();
  performance.mark('offthread-batch-start');
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: calls }, (_, i) => work.primes(n + i)));
  const pooled = { ...stop(), batchMs: performance.now() - t0 };
  performance.mark('offthread-batch-end');
  await wait(50);
  await pool.close();
  const mod = await import(url);
  stop = probe();
  const t1 = performance.now();
  await wait(0);
  const inline = [];
  for (let i = 0; i < calls; i++) inline.push(mod.primes(n + i));
  await wait(0);
  const onPage = { ...stop(), batchMs: performance.now() - t1 };
  return {
    idle,
    pooled,
    onPage,
    same: inline.every((v, i) => v === results[i]),
    coi: globalThis.crossOriginIsolated,
    transport: pool.stats().tasks ? (globalThis.crossOriginIsolated ? 'shared' : 'message') : null,
  };
}

/**
 * Chromium only: traces the page (CDP Tracing) around `fn` and returns the longest task
 * of the renderer's main thread between the batch's user-timing marks, by wall time and
 * by the thread's own CPU time (`tdur`): CPU time does not count the time the thread
 * waited for a core, so it is what the page's own work (offthread's included) cost it,
 * whatever else the machine runs.
 */
async function traced(page, fn) {
  const cdp = await page.context().newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', (e) => events.push(...e.value));
  await cdp.send('Tracing.start', {
    traceConfig: { includedCategories: ['toplevel', 'blink.user_timing', '__metadata'] },
    transferMode: 'ReportEvents',
  });
  const value = await fn();
  const complete = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
  await cdp.send('Tracing.end');
  await complete;
  await cdp.detach();
  const marks = events.filter((e) => e.name === 'offthread-batch-start' || e.name === 'offthread-batch-end');
  const main = events.find(
    (e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain' && marks.some((m) => m.pid === e.pid),
  );
  const mark = (name) => marks.find((e) => e.name === name && e.pid === main?.pid)?.ts;
  const from = mark('offthread-batch-start');
  const to = mark('offthread-batch-end');
  if (!main || from === undefined || to === undefined) return { value, trace: null };
  const tasks = events.filter(
    (e) =>
      e.ph === 'X' && e.pid === main.pid && e.tid === main.tid && e.ts >= from && e.ts <= to && e.dur !== undefined,
  );
  const max = (key) => Math.max(0, ...tasks.map((e) => e[key] ?? 0)) / 1000;
  return { value, trace: { tasks: tasks.length, longestWallMs: max('dur'), longestCpuMs: max('tdur') } };
}

async function measure(launch, name, isolated, params, ctx) {
  const pageDir = mkdtempSync(join(tmpdir(), 'offthread-browser-tasks-'));
  writeFileSync(join(pageDir, 'index.html'), PAGE);
  const server = await startServer({
    isolated,
    mounts: [
      ['/offthread/', distBrowser],
      ['/work/', moduleDir],
      ['/', pageDir],
    ],
  });
  const browser = await launch();
  try {
    const page = await browser.context.newPage();
    await page.goto(server.url);
    await page.waitForFunction(() => globalThis.pageReady === true, null, { timeout: 60_000 });
    ctx.progress(`${name}, ${isolated ? 'isolated' : 'not isolated'}: ${params.calls} calls of primes(${params.n})`);
    const evaluate = () =>
      page.evaluate(
        ([src, o]) => new Function(`return (${src})`)()(globalThis.offthread, o),
        [inPage.toString(), { ...params, url: `${server.url}work/work.mjs` }],
      );
    const { value: got, trace } =
      name === 'Chromium' ? await traced(page, evaluate) : { value: await evaluate(), trace: null };
    return { browser: name, version: browser.version, isolated, threads: params.threads, trace, ...got };
  } finally {
    await browser.close();
    await server.close();
    rmSync(pageDir, { recursive: true, force: true });
  }
}

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const params = { calls: ctx.quick ? 32 : 64, n: ctx.quick ? 100_000 : 200_000, idleMs: 2000 };
  // 2 workers on 2 cores: the page's thread shares a core with one (browsers cannot lower a
  // worker's priority); 1 worker leaves it a core of its own.
  const threadCounts = [2, 1];
  const runs = [];
  for (const [name, launch] of [
    ['Chromium', launchChromium],
    ['Firefox', launchFirefox],
  ]) {
    for (const isolated of [true, false]) {
      for (const threads of threadCounts) runs.push(await measure(launch, name, isolated, { ...params, threads }, ctx));
    }
  }
  const rows = runs.map((r) => ({
    browser: `${r.browser} ${r.version ?? ''}`.trim(),
    page: r.isolated ? 'COOP/COEP (shared memory)' : 'not isolated (messages)',
    threads: r.threads,
    idleStall: r.idle.longestMs,
    idleP99: r.idle.p99Ms,
    pooledStall: r.pooled.longestMs,
    pooledP50: r.pooled.p50Ms,
    pooledP99: r.pooled.p99Ms,
    pooledTicks: r.pooled.ticks,
    longtasks: r.pooled.longtasks,
    taskWall: r.trace?.longestWallMs ?? null,
    taskCpu: r.trace?.longestCpuMs ?? null,
    pooledMs: r.pooled.batchMs,
    pageStall: r.onPage.longestMs,
    same: r.same ? 'yes' : 'NO',
  }));
  return {
    title: `Browser tasks: the page's longest stall during ${params.calls} CPU-bound task calls`,
    params: { ...params, threads: threadCounts.join(', ') },
    notes: [
      'Probe: consecutive setTimeout(0) ticks on the page thread; the stall is the largest gap (nested timers are clamped to 4 ms: the floor).',
      '"gap p50/p99" are the median and 99th percentile of the gaps between ticks.',
      '"idle" is the same probe for idleMs on the same page before the batch, nothing running: what the machine alone costs the page (load from other processes).',
      '"long tasks" counts PerformanceObserver longtask entries (a page-thread task of 50 ms or more; Chromium only, blank in Firefox) during the pooled batch.',
      '"longest main-thread task" (Chromium only): from a trace of the page (CDP Tracing, category toplevel), the longest task the renderer main thread ran between the batch start and end marks, in wall time and in the thread CPU time. CPU time leaves out waiting for a core, so it is what the page work, offthread included, cost the thread however loaded the machine is.',
      '"stall, batch on the page" runs the same calls on the page thread, for scale: the page is stalled for the whole batch.',
      '"same" says the pooled results equal the page-thread results.',
    ],
    tables: [
      {
        title: 'Longest main-thread stall',
        columns: [
          { key: 'browser', label: 'Browser' },
          { key: 'page', label: 'Page' },
          { key: 'threads', label: 'workers', format: 'int' },
          { key: 'idleStall', label: 'stall, idle page', format: 'ms' },
          { key: 'idleP99', label: 'gap p99, idle', format: 'ms' },
          { key: 'pooledStall', label: 'stall, batch on workers', format: 'ms' },
          { key: 'pooledP50', label: 'gap p50, batch', format: 'ms' },
          { key: 'pooledP99', label: 'gap p99, batch', format: 'ms' },
          { key: 'pooledTicks', label: 'probe ticks', format: 'int' },
          { key: 'longtasks', label: 'long tasks', format: 'int' },
          { key: 'taskWall', label: 'longest main-thread task, wall', format: 'ms' },
          { key: 'taskCpu', label: 'longest main-thread task, CPU', format: 'ms' },
          { key: 'pooledMs', label: 'batch, on workers', format: 'ms' },
          { key: 'pageStall', label: 'stall, batch on the page', format: 'ms' },
          { key: 'same', label: 'same results' },
        ],
        rows,
      },
    ],
    ratios: [
      ...runs.map((r) => ({
        label: `${r.browser}, ${r.isolated ? 'isolated' : 'not isolated'}, ${r.threads} worker(s): longest main-thread stall during the batch (timer probe)`,
        value: r.pooled.longestMs,
        target: STALL_TARGET_MS,
        op: '<=',
        unit: ' ms',
      })),
      ...runs
        .filter((r) => r.trace)
        .map((r) => ({
          label: `${r.browser}, ${r.isolated ? 'isolated' : 'not isolated'}, ${r.threads} worker(s): longest main-thread task during the batch, CPU time (trace)`,
          value: r.trace.longestCpuMs,
          target: STALL_TARGET_MS,
          op: '<=',
          unit: ' ms',
        })),
    ],
    raw: runs,
  };
}
