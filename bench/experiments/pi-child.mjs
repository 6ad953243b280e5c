// Runs in its own process (one per variant): clean JIT state and its own peak RSS.
// Measures one π variant at ascending sizes; sync variants are timed as calls, async
// variants as one awaited call at a time (the paper's deferred benchmark).
import { Pool, pi } from 'offthread';
import { cpuMeter, peakRssMiB, progress, timeFn } from '../lib/measure.mjs';

/** Per-size time budget: long calls run a few times, tiny ones many. */
function budget(quick, samples) {
  // 10^10 (--full): one call is minutes for the JS rows and long enough to time alone.
  if (samples >= 1e10) return { minTime: 0, minIterations: 1, warmup: 0 };
  if (samples >= 1e9) return { minTime: 0, minIterations: quick ? 1 : 2, warmup: 0 };
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

/** The options of one row's calls. */
function rowOptions(variant, seed, pool) {
  if (ENGINE_ROWS[variant]) return { seed, variant: 'wasmWorkers', pool };
  if (PLAIN_ROWS[variant]) return { seed, variant: PLAIN_ROWS[variant], kernel: 'plain' };
  return { seed, variant };
}

export async function measureVariant({ variant, sizes, quick, seed = 1 }) {
  const engineRow = ENGINE_ROWS[variant];
  const pool = engineRow ? new Pool(engineRow) : undefined;
  const isAsync = engineRow !== undefined || variant in PLAIN_ROWS || pi.asyncVariants.includes(variant);
  const options = rowOptions(variant, seed, pool);
  const rows = [];
  for (const samples of sizes) {
    const call = isAsync ? () => pi.estimate(samples, options) : () => pi.estimateSync(samples, options);
    const { inside, variant: used } = await call();
    const meter = cpuMeter();
    meter.start();
    const t = await timeFn(call, budget(quick, samples));
    const cpu = meter.stop();
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
