// Runs in its own process (one per variant): clean JIT state and its own peak RSS.
// Measures one π variant at ascending sizes; sync variants are timed as calls, async
// variants as one awaited call at a time (the paper's deferred benchmark).
import { Pool } from 'offthread';
// The variants are research only: offthread/internal, not the public `pi`.
import { piVariants } from 'offthread/internal';
import { cpuMeter, peakRssMiB, progress, timeFn } from '../lib/measure.mjs';

/** Calls at and above this size are timed one by one, with no warm-up or probe call. */
const LONG_CALL = 1e9;

/** Per-size time budget: long calls run a few times, tiny ones many. */
function budget(quick, samples) {
  // 10^10 (--full): one call is minutes for the JS rows and long enough to time alone.
  if (samples >= 1e10) return { minIterations: 1 };
  if (samples >= LONG_CALL) return { minIterations: quick ? 1 : 2 };
  if (samples >= 1e8) return { minTime: quick ? 200 : 1000, minIterations: quick ? 2 : 3, warmup: 1 };
  return { minTime: quick ? 150 : 500, minIterations: 5, warmup: 5 };
}

/**
 * Rows that are not plain variants: the worker engine (WASM on worker_threads, what runs
 * without the addon) with every core, and with one worker for the scaling ratio.
 */
const ENGINE_ROWS = {
  wasmWorkers: { engine: 'wasm' },
  wasmWorkers1: { engine: 'wasm', threads: 1 },
};

/**
 * The paper's non-bitwise off-thread variants (addonAsync, addonConAsync and the pool):
 * the same async forms running the definition as written (`kernel: 'plain'`).
 */
const PLAIN_ROWS = {
  nativeAsyncPlain: 'nativeAsync',
  nativeChunkedPlain: 'nativeChunked',
  parallelAsyncPlain: 'parallelAsync',
};

/** The variant and options of one row's calls. */
function rowCall(variant, seed, pool) {
  if (ENGINE_ROWS[variant]) return { variant: 'wasmWorkers', options: { seed, pool } };
  if (PLAIN_ROWS[variant]) return { variant: PLAIN_ROWS[variant], options: { seed, kernel: 'plain' } };
  return { variant, options: { seed } };
}

/** `n` calls timed one by one: timeFn's figures (ns) and the first call's result. */
async function timeEach(call, n) {
  const samples = [];
  let first;
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const r = await call();
    samples.push(Number(process.hrtime.bigint() - t0));
    first ??= r;
  }
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { first, samples, median, p99: sorted[sorted.length - 1], opsPerSec: 1e9 / median };
}

export async function measureVariant({ variant, sizes, quick, seed = 1 }) {
  const engineRow = ENGINE_ROWS[variant];
  const pool = engineRow ? new Pool(engineRow) : undefined;
  const isAsync = engineRow !== undefined || variant in PLAIN_ROWS || piVariants.asyncVariants.includes(variant);
  const { variant: name, options } = rowCall(variant, seed, pool);
  const rows = [];
  for (const samples of sizes) {
    const call = isAsync
      ? () => piVariants.estimate(samples, name, options)
      : () => piVariants.estimateSync(samples, name, options);
    // Long calls: the smaller sizes warmed the code up; an extra untimed call (and
    // timeFn's probe) would triple a 10^10 row (a JS call is 8–10 minutes here).
    const long = samples >= LONG_CALL;
    const first = long ? undefined : await call();
    const meter = cpuMeter();
    meter.start();
    const t = long
      ? await timeEach(call, budget(quick, samples).minIterations)
      : await timeFn(call, budget(quick, samples));
    const cpu = meter.stop();
    const { inside, variant: used } = first ?? t.first;
    rows.push({
      variant,
      used,
      samples,
      inside,
      opsPerSec: t.opsPerSec,
      medianNs: t.median,
      p99Ns: t.p99,
      nsPerSample: t.median / Math.max(samples, 1),
      runs: t.samples.length,
      coresUsed: cpu.coresUsed,
      peakRssMiB: peakRssMiB(),
      samplesNs: t.samples,
    });
    progress(`${variant} 1e${Math.log10(samples)}: ${t.opsPerSec.toFixed(1)} ops/s, ${cpu.coresUsed.toFixed(2)} cores`);
  }
  await pool?.close();
  return rows;
}
