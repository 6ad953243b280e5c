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
    let longest = 0;
    let last = performance.now();
    let ticks = 0;
    let on = true;
    const tick = () => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      ticks++;
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
      return { longestMs: longest, ticks, longtasks: observer ? longtasks.length : null };
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
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: calls }, (_, i) => work.primes(n + i)));
  const pooled = { ...stop(), batchMs: performance.now() - t0 };
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
    const got = await page.evaluate(
      ([src, o]) => new Function(`return (${src})`)()(globalThis.offthread, o),
      [inPage.toString(), { ...params, url: `${server.url}work/work.mjs` }],
    );
    return { browser: name, version: browser.version, isolated, threads: params.threads, ...got };
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
    pooledStall: r.pooled.longestMs,
    pooledTicks: r.pooled.ticks,
    longtasks: r.pooled.longtasks,
    pooledMs: r.pooled.batchMs,
    pageStall: r.onPage.longestMs,
    same: r.same ? 'yes' : 'NO',
  }));
  return {
    title: `Browser tasks: the page's longest stall during ${params.calls} CPU-bound task calls`,
    params: { ...params, threads: threadCounts.join(', ') },
    notes: [
      'Probe: consecutive setTimeout(0) ticks on the page thread; the stall is the largest gap (nested timers are clamped to 4 ms: the floor).',
      '"idle" is the same probe for idleMs on the same page before the batch, nothing running: what the machine alone costs the page (load from other processes).',
      '"long tasks" counts PerformanceObserver longtask entries (a page-thread task of 50 ms or more; Chromium only, blank in Firefox) during the pooled batch.',
      '"stall, on the page" runs the same calls on the page thread, for scale: the page is stalled for the whole batch.',
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
          { key: 'pooledStall', label: 'stall, batch on workers', format: 'ms' },
          { key: 'pooledTicks', label: 'probe ticks', format: 'int' },
          { key: 'longtasks', label: 'long tasks', format: 'int' },
          { key: 'pooledMs', label: 'batch, on workers', format: 'ms' },
          { key: 'pageStall', label: 'stall, batch on the page', format: 'ms' },
          { key: 'same', label: 'same results' },
        ],
        rows,
      },
    ],
    ratios: runs.map((r) => ({
      label: `${r.browser}, ${r.isolated ? 'isolated' : 'not isolated'}, ${r.threads} worker(s): longest main-thread stall during the batch`,
      value: r.pooled.longestMs,
      target: STALL_TARGET_MS,
      op: '<=',
      unit: ' ms',
    })),
    raw: runs,
  };
}
