// Experiment `browser` (docs/experiments.md `browser`; the paper's Figure 9): the
// benchmark page bench/browser/ in headless Chromium (js, jsBitwise, wasm on the page's
// thread, wasmWorkers on every worker, wasmThreads1/2 on WebAssembly threads over one
// shared memory) and, in the same run, Node's nativeBitwise, wasm and jsBitwise
// single-thread for the ratios.
//   npm run bench -- browser [--quick] [--no-isolation] [--no-firefox]
// --no-isolation serves the page without COOP/COEP (no SharedArrayBuffer; timers 100 µs;
// no wasmThreads rows). The wasmThreads module is built here (bench/wasm-threads/build.mjs,
// nightly Rust); without the toolchain those rows are skipped with the reason in the notes.
import { fileURLToPath } from 'node:url';
import { launchChromium, MOUNTS, startServer } from '../../scripts/browser-server.mjs';
import { firefoxPath, runPageInFirefox } from '../lib/firefox.mjs';
import { runInChild } from '../lib/measure.mjs';
import { opsRatio } from '../lib/report.mjs';
import { ensureApt } from '../lib/tools.mjs';
import { buildWasmThreads } from '../wasm-threads/build.mjs';

const BROWSER_VARIANTS = ['js', 'jsBitwise', 'wasm', 'wasmWorkers'];
/** WebAssembly threads (the seed 000 mechanism): 1 and 2 workers on one shared memory. */
const THREAD_VARIANTS = ['wasmThreads1', 'wasmThreads2'];
/** Node rows: pi variant, series label, environment of the child that runs it. */
const NODE_ROWS = [
  { variant: 'nativeBitwise', name: 'nativeBitwise', env: {} },
  // The same kernel held to 128-bit vectors, the width WASM SIMD has (AVX-512 otherwise).
  { variant: 'nativeBitwise', name: 'nativeBitwise SSE2', env: { OFFTHREAD_PI_SIMD: 'sse2' } },
  { variant: 'wasm', name: 'wasm', env: {} },
  { variant: 'jsBitwise', name: 'jsBitwise', env: {} },
  // The paper's 67.86 %: browser wasmWorkers against Node's multi-threaded native form.
  { variant: 'parallelAsync', name: 'parallelAsync', env: {} },
];
const piChild = fileURLToPath(new URL('./pi-child.mjs', import.meta.url));

const at = (rows, series, samples) => rows.find((r) => r.series === series && r.samples === samples);

function ratio(rows, label, num, den, samples, target) {
  return opsRatio(label, at(rows, num, samples), at(rows, den, samples), target);
}

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const isolated = !ctx.argv.includes('--no-isolation');
  const maxExp = ctx.full ? 9 : 8;
  const sizes = Array.from({ length: maxExp }, (_, i) => 10 ** (i + 1));
  // A shared memory needs cross-origin isolation; the module needs nightly Rust.
  const wasmThreads = isolated
    ? buildWasmThreads(ctx.progress)
    : { error: 'the page is not cross-origin isolated (--no-isolation): no shared memory' };
  if ('error' in wasmThreads) ctx.progress(`wasmThreads rows skipped: ${wasmThreads.error}`);
  const browserVariants = 'error' in wasmThreads ? BROWSER_VARIANTS : [...BROWSER_VARIANTS, ...THREAD_VARIANTS];
  // The page and the library as scripts/browser-server.mjs serves them, plus the module.
  const mounts = 'error' in wasmThreads ? MOUNTS : [['/wasm-threads/', wasmThreads.dir], ...MOUNTS];
  const pageOptions = {
    variants: browserVariants,
    minExp: 1,
    maxExp,
    minTime: ctx.quick ? 150 : 500,
    // --quick: skip a variant's larger sizes once one call would pass 1.5 s.
    maxCallMs: ctx.quick ? 1500 : 60_000,
  };

  ctx.progress(`chromium: serving bench/browser ${isolated ? 'with' : 'without'} COOP/COEP`);
  const server = await startServer({ isolated, mounts });
  const browser = await launchChromium();
  let page;
  let pageResult;
  const version = browser.context.browser()?.version() ?? null;
  try {
    page = await browser.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(server.url);
    await page.waitForFunction(() => globalThis.benchReady === true, null, { timeout: 30_000 });
    let shown = '';
    const timer = setInterval(async () => {
      const s = await page.evaluate(() => document.getElementById('status')?.textContent ?? '').catch(() => '');
      if (s && s !== shown) {
        shown = s;
        ctx.progress(`chromium: ${s}`);
      }
    }, 2000);
    try {
      pageResult = await page.evaluate((o) => globalThis.runBench(o), pageOptions);
    } finally {
      clearInterval(timer);
    }
    if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  } finally {
    await browser.close();
    await server.close();
  }

  const rows = pageResult.rows.map((r) => ({ ...r, series: `chromium ${r.variant}`, runtime: 'chromium' }));
  // Firefox (the paper's Figure 10): the same page and options, over WebDriver BiDi.
  let firefox = null;
  if (!ctx.argv.includes('--no-firefox') && (firefoxPath() || ensureApt('firefox-esr', 'firefox-esr', ctx.progress))) {
    ctx.progress('firefox: serving bench/browser again');
    const ffServer = await startServer({ isolated, mounts });
    try {
      firefox = await runPageInFirefox(ffServer.url, pageOptions, ctx.progress);
    } finally {
      await ffServer.close();
    }
    rows.push(...firefox.result.rows.map((r) => ({ ...r, series: `firefox ${r.variant}`, runtime: 'firefox' })));
  }
  for (const { variant, name, env } of NODE_ROWS) {
    ctx.progress(`node: ${name}`);
    const nodeSizes = variant === 'nativeBitwise' ? sizes : sizes.filter((n) => !ctx.quick || n <= 1e7);
    const { value } = await runInChild(piChild, 'measureVariant', [{ variant, sizes: nodeSizes, quick: ctx.quick }], {
      timeoutMs: 30 * 60_000,
      progress: ctx.progress,
      env,
    });
    for (const r of value) {
      rows.push({
        variant,
        series: `node ${name}`,
        runtime: 'node',
        samples: r.samples,
        opsPerSec: r.opsPerSec,
        medianMs: r.medianNs / 1e6,
        nsPerSample: r.nsPerSample,
        inside: r.inside,
        samplesNs: r.samplesNs,
      });
    }
  }

  const mismatches = rows
    .filter((r) => r.inside !== at(rows, 'node nativeBitwise', r.samples)?.inside)
    .map((r) => `${r.series} at ${r.samples}: ${r.inside}`);

  const ratios = [
    ratio(rows, 'Chromium wasm / jsBitwise at 10^6', 'chromium wasm', 'chromium jsBitwise', 1e6, 3),
    ratio(rows, 'Chromium wasm / jsBitwise at 10^7', 'chromium wasm', 'chromium jsBitwise', 1e7, 3),
    ratio(
      rows,
      'Chromium wasm / Node nativeBitwise (1 thread) at 10^7',
      'chromium wasm',
      'node nativeBitwise',
      1e7,
      0.9,
    ),
    ratio(
      rows,
      'Chromium wasm / Node nativeBitwise (1 thread) at 10^8',
      'chromium wasm',
      'node nativeBitwise',
      1e8,
      0.9,
    ),
    ratio(
      rows,
      "Chromium wasm / Node nativeBitwise held to 128-bit SIMD (SSE2, WASM's width) at 10^8",
      'chromium wasm',
      'node nativeBitwise SSE2',
      1e8,
    ),
    ratio(
      rows,
      'Node nativeBitwise (AVX-512) / nativeBitwise SSE2 at 10^8: what vector width alone is worth',
      'node nativeBitwise',
      'node nativeBitwise SSE2',
      1e8,
    ),
    ratio(rows, 'Chromium wasmWorkers / wasm at 10^7', 'chromium wasmWorkers', 'chromium wasm', 1e7, 1.8),
    ratio(rows, 'Chromium wasmWorkers / wasm at 10^8', 'chromium wasmWorkers', 'chromium wasm', 1e8, 1.8),
    // The seed's mechanism beside ours: wasm threads on one shared memory vs one instance per worker.
    ...[1e4, 1e6, 1e8].map((n) =>
      ratio(
        rows,
        `Chromium wasmThreads2 / wasmWorkers at 10^${Math.log10(n)}: shared-memory threads vs instances by message`,
        'chromium wasmThreads2',
        'chromium wasmWorkers',
        n,
      ),
    ),
    ratio(rows, 'Chromium wasmThreads2 / wasmThreads1 at 10^8', 'chromium wasmThreads2', 'chromium wasmThreads1', 1e8),
    ratio(rows, 'Chromium wasmThreads1 / wasm (page thread) at 10^8', 'chromium wasmThreads1', 'chromium wasm', 1e8),
    ratio(rows, 'Chromium wasm / Node wasm at 10^7', 'chromium wasm', 'node wasm', 1e7),
    // The paper's 93.5 % is browser wasm against the native addon (addonBwSync) at 10^6.
    ratio(
      rows,
      'Chromium wasm / Node nativeBitwise (1 thread) at 10^6, paper (seed 000, Fig. 9 text: Chromium wasm / addonBwSync): 0.935',
      'chromium wasm',
      'node nativeBitwise',
      1e6,
    ),
    ratio(rows, 'Chromium jsBitwise / Node jsBitwise at 10^7', 'chromium jsBitwise', 'node jsBitwise', 1e7),
    ...[1e7, 1e8].map((n) =>
      ratio(
        rows,
        `Chromium wasmWorkers / Node parallelAsync at 10^${Math.log10(n)}, paper (seed 000, Fig. 9 text: Chromium wasm multi-thread / addonBwWsAsync): 0.6786`,
        'chromium wasmWorkers',
        'node parallelAsync',
        n,
      ),
    ),
    ...[1e7, 1e8].map((n) =>
      ratio(
        rows,
        `Chromium wasmThreads2 / Node parallelAsync at 10^${Math.log10(n)}, paper (seed 000, Fig. 9 text: Chromium wasm multi-thread / addonBwWsAsync): 0.6786`,
        'chromium wasmThreads2',
        'node parallelAsync',
        n,
      ),
    ),
    ...(firefox
      ? [
          ratio(
            rows,
            'Firefox wasm / jsBitwise at 10^6, paper (seed 000, Fig. 10 text: Firefox wasm / JS bitwise): about 4',
            'firefox wasm',
            'firefox jsBitwise',
            1e6,
          ),
          ratio(rows, 'Firefox wasm / jsBitwise at 10^7', 'firefox wasm', 'firefox jsBitwise', 1e7),
          ratio(rows, 'Firefox wasmWorkers / wasm at 10^7', 'firefox wasmWorkers', 'firefox wasm', 1e7),
          ratio(rows, 'Firefox wasmWorkers / wasm at 10^8', 'firefox wasmWorkers', 'firefox wasm', 1e8),
          ratio(rows, 'Firefox wasm / Chromium wasm at 10^7', 'firefox wasm', 'chromium wasm', 1e7),
          ...[1e4, 1e8].map((n) =>
            ratio(
              rows,
              `Firefox wasmThreads2 / wasmWorkers at 10^${Math.log10(n)}`,
              'firefox wasmThreads2',
              'firefox wasmWorkers',
              n,
            ),
          ),
          ratio(rows, 'Firefox wasm / Node wasm at 10^7', 'firefox wasm', 'node wasm', 1e7),
          ...[1e7, 1e8].map((n) =>
            ratio(
              rows,
              `Firefox wasmWorkers / Node parallelAsync at 10^${Math.log10(n)}`,
              'firefox wasmWorkers',
              'node parallelAsync',
              n,
            ),
          ),
        ]
      : []),
  ].filter(Boolean);

  const series = [
    ...browserVariants.map((v) => `chromium ${v}`),
    ...(firefox ? browserVariants.map((v) => `firefox ${v}`) : []),
    ...NODE_ROWS.map((r) => `node ${r.name}`),
  ];
  const table = (metric, title, format) => ({
    title,
    columns: [
      { key: 'series', label: 'variant' },
      ...sizes.map((s) => ({ key: String(s), label: `10^${Math.log10(s)}`, format })),
    ],
    rows: series.map((name) =>
      Object.fromEntries([['series', name], ...sizes.map((s) => [String(s), at(rows, name, s)?.[metric] ?? null])]),
    ),
  });

  return {
    title:
      'Monte Carlo π in Chromium and Firefox: JS vs WebAssembly vs WebAssembly on every worker, by message and as wasm threads',
    params: {
      sizes,
      page: pageOptions,
      crossOriginIsolated: pageResult.crossOriginIsolated,
      transport: pageResult.transport,
      wasmLoaded: pageResult.backend.wasm.loaded,
      hardwareConcurrency: pageResult.hardwareConcurrency,
      chromium: version,
      firefox: firefox?.version ?? null,
      firefoxCrossOriginIsolated: firefox?.result.crossOriginIsolated ?? null,
      wasmThreads:
        'error' in wasmThreads
          ? { skipped: wasmThreads.error }
          : {
              module: 'bench/wasm-threads (pi_wasm_threads.wasm)',
              rustc: wasmThreads.rustc,
              chromiumWake: pageResult.wasmThreads?.wasmThreads2?.wake ?? null,
              firefoxWake: firefox?.result.wasmThreads?.wasmThreads2?.wake ?? null,
            },
      userAgent: pageResult.userAgent,
      quick: ctx.quick,
      seed: 1,
    },
    notes: [
      'Chromium rows: bench/browser/ in headless /usr/bin/chromium (playwright-core). js, jsBitwise and wasm are ' +
        'piVariants.estimateSync (offthread/internal) on the page thread; wasmWorkers is piVariants.estimate on navigator.hardwareConcurrency workers ' +
        '(jump-ahead chunks, one awaited call at a time). ops/s = 1 / median per-call time over batches of ≥ 10 ms.',
      firefox
        ? `Firefox rows: the same page and options in headless ${firefox.version} (the system firefox-esr, driven over WebDriver BiDi by puppeteer-core), after Chromium, in the same run.`
        : 'Firefox rows: skipped (no firefox-esr, or --no-firefox).',
      'error' in wasmThreads
        ? `wasmThreads rows: skipped (${wasmThreads.error.split('\n')[0]}).`
        : "wasmThreads1/wasmThreads2 (the seed 000 mechanism): bench/wasm-threads, the wasm rows' own f64x2 kernel (offthread-wasm pi_simd.rs, included verbatim) built with " +
          '+atomics,+bulk-memory (nightly -Z build-std) against one imported shared WebAssembly.Memory, instantiated once on the page and once per Web Worker (1 or 2) on that memory. ' +
          'A call writes the job into the memory and Atomics.notify wakes the workers; they claim chunks (≈ samples / 4·workers, 2^14 to 2^21) with an atomic counter and add their counts into the memory; ' +
          `the last to leave sets a word the page awaits (${pageResult.wasmThreads?.wasmThreads2?.wake === 'message' ? 'a message: no Atomics.waitAsync' : 'Atomics.waitAsync'}). No count travels by message. ` +
          'wasmWorkers, ours: one offthread.wasm instance per pool worker, chunks by message.',
      "Node parallelAsync: the native kernel on the offthread pool (every core), for the paper's 67.86 % (Chromium wasmWorkers vs Node addonBwWsAsync).",
      'Node rows: the same run, bench/experiments/pi-child.mjs in a child process (single-thread variants). "nativeBitwise SSE2" is the same kernel with OFFTHREAD_PI_SIMD=sse2: 128-bit vectors, the width of WASM SIMD, where the default picks AVX-512 on this CPU.',
      pageResult.skipped.length
        ? `Skipped in Chromium (one call too long for this mode): ${pageResult.skipped.map((s) => `${s.variant} 10^${Math.log10(s.samples)}`).join(', ')}.`
        : 'No size skipped.',
      mismatches.length === 0
        ? 'Identity: every row returned the same `inside` as Node nativeBitwise.'
        : `IDENTITY FAILURES: ${mismatches.join('; ')}`,
    ],
    tables: [table('opsPerSec', 'ops/s (higher is better)', 'ops'), table('nsPerSample', 'ns per sample', 'sig3')],
    charts: [
      {
        title: 'π in Chromium, Firefox and Node: ops/s vs samples (log–log)',
        x: { field: 'samples', label: 'samples', log: true },
        y: { field: 'opsPerSec', label: 'ops/s', log: true },
        series: 'series',
        data: rows.map(({ samplesNs: _, ...r }) => r),
      },
    ],
    ratios,
    raw: { page: pageResult, firefox: firefox?.result ?? null, rows },
  };
}
