// π on WebAssembly threads (bench/wasm-threads, bench/browser/wasm-threads.mjs; issue 35):
// in headless Chromium, 1 and 2 wasm threads on one shared memory count exactly what the
// single-thread kernels count for the same seed and sample count (jump-ahead: the split
// changes no count). The module needs nightly Rust with rust-src (-Z build-std): without
// it the test skips, saying so; with it, it builds the module and runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launchChromium, MOUNTS, startServer } from '../../scripts/browser-server.mjs';
import { buildWasmThreads, toolchainMissing } from '../wasm-threads/build.mjs';

const missing = toolchainMissing();

/** The bench page and the library as scripts/browser-server.mjs serves them, plus the module. */
const mounts = (dir) => [['/wasm-threads/', dir], ...MOUNTS];

/** Opens the bench page from `server` and waits until it can run. */
async function openPage(browser, server) {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.url);
  await page.waitForFunction(() => globalThis.benchReady === true, null, { timeout: 60_000 });
  return { page, errors };
}

test('wasm threads count what the single-thread kernels count, in Chromium', {
  skip: missing ?? false,
  // The first build compiles std (-Z build-std): minutes on a loaded machine.
  timeout: 1_800_000,
}, async (t) => {
  const built = buildWasmThreads(() => {});
  assert.ok(!('error' in built), built.error);
  const server = await startServer({ isolated: true, mounts: mounts(built.dir) });
  t.after(() => server.close());
  const browser = await launchChromium();
  t.after(() => browser.close());
  const { page, errors } = await openPage(browser, server);

  const cases = [];
  for (const seed of [1, 7, -3, 2 ** 53 - 1]) {
    // Around the lane width (16), the smallest chunk (2^14) and the largest (2^21), so
    // jobs of one chunk, of a tail chunk, and of more chunks than threads are all met.
    for (const n of [0, 1, 15, 17, 16_383, 16_385, 100_000, 1_000_003, 3 * 2 ** 21 + 7]) cases.push({ seed, n });
  }
  const got = await page.evaluate(async (cases) => {
    const { startWasmThreads } = await import('./wasm-threads.mjs');
    const { piVariants } = globalThis.offthread;
    const out = { isolated: globalThis.crossOriginIsolated, runs: [], repeatMismatches: [], earlyWake: [] };
    for (const workers of [1, 2]) {
      const threads = await startWasmThreads({
        url: new URL('./wasm-threads/pi_wasm_threads.wasm', location.href),
        workers,
      });
      out.shared = threads.memory.buffer instanceof SharedArrayBuffer;
      out.wake = threads.wake;
      for (const { seed, n } of cases) {
        const r = await threads.estimate(n, seed);
        out.runs.push({
          workers,
          seed,
          n,
          threads: r.inside,
          countedBy: r.countedBy,
          wasm: piVariants.estimateSync(n, 'wasm', { seed }).inside,
          // The definition itself (f64 division, `%` step), where it is quick.
          js: n <= 100_000 ? piVariants.estimateSync(n, 'js', { seed }).inside : null,
        });
      }
      // Back-to-back calls, as the bench times them: a call must not return before its
      // own job is done (a late wake-up from the last job once made one read 0).
      const want = [100, 17, 20_000].map((n) => piVariants.estimateSync(n, 'wasm', { seed: 1 }).inside);
      for (let i = 0; i < 3000; i++) {
        const k = i % 3;
        const { inside } = await threads.estimate([100, 17, 20_000][k], 1);
        if (inside !== want[k]) out.repeatMismatches.push(`${workers} thread(s), call ${i}: ${inside} ≠ ${want[k]}`);
      }
      // A wake-up that is not the end of the job (a late notify from the last job, as
      // above, made deterministic): the call must go on waiting for its own count.
      const long = threads.estimate(10_000_000, 1);
      await new Promise((r) => setTimeout(r, 0));
      Atomics.notify(new Int32Array(threads.memory.buffer), threads.finishedWord);
      out.earlyWake.push({ workers, inside: (await long).inside });
      out.badSamples = await threads.estimate(-1, 1).then(
        () => 'resolved',
        (e) => e.message,
      );
      threads.close();
    }
    return out;
  }, cases);
  assert.deepEqual(errors, []);
  assert.equal(got.isolated, true);
  assert.equal(got.shared, true, 'the threads share one SharedArrayBuffer-backed memory');
  assert.match(got.wake, /^(waitAsync|message)$/);
  assert.equal(got.runs.length, 2 * cases.length);
  assert.deepEqual(got.repeatMismatches.slice(0, 5), []);
  // seed 1, 10^7 samples: the count every variant returns (bench/results/browser.json).
  assert.deepEqual(got.earlyWake, [
    { workers: 1, inside: 7_854_695 },
    { workers: 2, inside: 7_854_695 },
  ]);
  for (const r of got.runs) {
    const at = `${r.workers} thread(s), seed ${r.seed}, ${r.n} samples`;
    assert.equal(r.threads, r.wasm, at);
    if (r.js !== null) assert.equal(r.threads, r.js, `${at} (definition)`);
    assert.ok(r.countedBy >= (r.n > 0 ? 1 : 0) && r.countedBy <= r.workers, `${at}: counted by ${r.countedBy}`);
  }
  // The documented count (docs/kernels.md): seed 1, 10^5 samples.
  assert.equal(got.runs.find((r) => r.seed === 1 && r.n === 100_000).threads, 78_463);
  // A bad sample count is refused by the module (ERR_INVALID_SAMPLES is return −1).
  assert.match(got.badSamples, /pi_begin\(-1, 1, \d\) failed: -1/);
});

// The page refuses the rows before it asks for the module: no module, no nightly Rust.
test('without cross-origin isolation the bench page skips the wasmThreads rows and says why', {
  timeout: 300_000,
}, async (t) => {
  const server = await startServer({ isolated: false });
  t.after(() => server.close());
  const browser = await launchChromium();
  t.after(() => browser.close());
  const { page, errors } = await openPage(browser, server);
  const result = await page.evaluate(() =>
    globalThis.runBench({ variants: ['wasmThreads1', 'wasm'], minExp: 1, maxExp: 1, minTime: 10 }),
  );
  assert.deepEqual(errors, []);
  assert.equal(result.crossOriginIsolated, false);
  assert.deepEqual(
    result.rows.map((r) => r.variant),
    ['wasm'],
  );
  assert.equal(result.skipped.length, 1);
  assert.equal(result.skipped[0].variant, 'wasmThreads1');
  assert.match(result.skipped[0].reason, /cross-origin isolated/);
});
