// Demo experiment: it exercises every helper of the harness on a trivial question —
// is `Math.sqrt(x)` faster than `x ** 0.5` over an array? Each variant runs in its own
// child process (runInChild), so JIT state and peak RSS are its own.
//
//   node bench/run.mjs example --quick

import { formatPow10 } from '../lib/format.mjs';
import { startLoopDelay } from '../lib/loop-delay.mjs';
import { cpuMeter, peakRssMiB, progress, runInChild, timeFn } from '../lib/measure.mjs';

/** @type {Record<string, (xs: Float64Array) => number>} */
const VARIANTS = {
  'Math.sqrt': (xs) => {
    let s = 0;
    for (let i = 0; i < xs.length; i++) s += Math.sqrt(xs[i]);
    return s;
  },
  '** 0.5': (xs) => {
    let s = 0;
    for (let i = 0; i < xs.length; i++) s += xs[i] ** 0.5;
    return s;
  },
};

/**
 * Runs in a child process: time one variant at every size.
 * @param {string} variant
 * @param {number[]} sizes
 * @param {import('../lib/measure.mjs').TimeOptions} timing
 */
export async function measureVariant(variant, sizes, timing) {
  const kernel = VARIANTS[variant];
  if (!kernel) throw new Error(`unknown variant ${variant}`);
  const loop = startLoopDelay({ resolutionMs: 1 });
  const rows = [];
  let sink = 0; // keeps the results alive so the loops cannot be optimised away
  for (const n of sizes) {
    // Give the loop a turn between sizes, so the delay monitor records each blocked stretch.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const xs = Float64Array.from({ length: n }, (_, i) => i + 0.5);
    const meter = cpuMeter();
    meter.start();
    const t = await timeFn(() => (sink += kernel(xs)), timing);
    const cpu = meter.stop();
    progress(`example: ${variant} n=${formatPow10(n)} → ${Math.round(t.opsPerSec)} ops/s`);
    rows.push({
      variant,
      n,
      opsPerSec: t.opsPerSec,
      medianNs: t.median,
      p99Ns: t.p99,
      nsPerElement: t.median / n,
      sampleCount: t.samples.length,
      batch: t.batch,
      coresUsed: cpu.coresUsed,
      samplesNs: t.samples,
    });
  }
  return { rows, loopDelay: loop.stop(), peakRssMiB: peakRssMiB(), sink };
}

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const maxExp = ctx.quick ? 5 : ctx.full ? 7 : 6;
  const sizes = Array.from({ length: maxExp }, (_, i) => 10 ** (i + 1));
  const timing = ctx.quick
    ? { minTime: 150, minIterations: 5, maxIterations: 500, warmup: 50 }
    : { minTime: 1000, minIterations: 10, maxIterations: 1000, warmup: 250 };

  const parentLoop = startLoopDelay({ resolutionMs: 10 });
  const perProcess = [];
  /** @type {Omit<Awaited<ReturnType<typeof measureVariant>>['rows'][number], 'samplesNs'>[]} */
  const rows = [];
  const samplesNs = [];
  for (const variant of Object.keys(VARIANTS)) {
    ctx.progress(`example: ${variant} in a child process`);
    /** @type {import('../lib/measure.mjs').ChildResult<Awaited<ReturnType<typeof measureVariant>>>} */
    const child = await runInChild(import.meta.url, 'measureVariant', [variant, sizes, timing], { timeoutMs: 120_000 });
    for (const { samplesNs: samples, ...row } of child.value.rows) {
      rows.push(row);
      samplesNs.push({ variant, n: row.n, batch: row.batch, samples });
    }
    perProcess.push({
      variant,
      peakRssMiB: child.value.peakRssMiB,
      loopP99Ms: child.value.loopDelay.p99Ms,
      loopMaxMs: child.value.loopDelay.maxMs,
      wallMs: child.wallMs,
      coresUsed: child.coresUsed,
    });
  }
  const parentDelay = parentLoop.stop();

  const at = (/** @type {string} */ v, /** @type {number} */ n) => rows.find((r) => r.variant === v && r.n === n);
  const largest = sizes[sizes.length - 1];
  const sqrtRow = at('Math.sqrt', largest);
  const powRow = at('** 0.5', largest);

  return {
    title: 'Example: Math.sqrt vs ** 0.5 over a Float64Array',
    params: { sizes, timing, variants: Object.keys(VARIANTS) },
    notes: [
      'A demo of the harness, not a claim about V8: both loops usually compile to the same sqrt instruction.',
      'One child process per variant; ops/s is the median of samples (a sample may batch several calls).',
      'Loop delay inside a child is high by design: each size blocks its event loop for the whole timing run (resolution 1 ms).',
      `Parent event-loop delay while the children ran: p99 ${parentDelay.p99Ms.toFixed(1)} ms (resolution ${parentDelay.resolutionMs} ms).`,
    ],
    tables: [
      {
        title: 'Throughput by size',
        columns: [
          { key: 'variant', label: 'Variant' },
          { key: 'n', label: 'n', format: 'pow10' },
          { key: 'opsPerSec', label: 'ops/s (median)', format: 'ops' },
          { key: 'medianNs', label: 'median', format: 'ns' },
          { key: 'p99Ns', label: 'p99', format: 'ns' },
          { key: 'nsPerElement', label: 'ns/element', format: 'sig3' },
          { key: 'sampleCount', label: 'samples', format: 'int' },
          { key: 'batch', label: 'calls/sample', format: 'int' },
          { key: 'coresUsed', label: 'cores used', format: 'sig3' },
        ],
        rows,
      },
      {
        title: 'Per child process',
        columns: [
          { key: 'variant', label: 'Variant' },
          { key: 'peakRssMiB', label: 'peak RSS', format: 'mib' },
          { key: 'loopP99Ms', label: 'loop delay p99', format: 'ms' },
          { key: 'loopMaxMs', label: 'loop delay max', format: 'ms' },
          { key: 'wallMs', label: 'wall', format: 'ms' },
          { key: 'coresUsed', label: 'cores used', format: 'sig3' },
        ],
        rows: perProcess,
      },
    ],
    charts: [
      {
        title: 'Square roots of n doubles: calls per second',
        subtitle: 'log–log; higher is better',
        x: { field: 'n', label: 'array length n', log: true },
        y: { field: 'opsPerSec', label: 'calls/s (median)', log: true },
        series: 'variant',
        data: rows,
      },
      {
        suffix: 'per-element',
        title: 'Time per element',
        subtitle: 'lower is better',
        x: { field: 'n', label: 'array length n', log: true },
        y: { field: 'nsPerElement', label: 'ns per element', log: true },
        series: 'variant',
        data: rows,
      },
    ],
    ratios: [
      {
        label: `Math.sqrt / ** 0.5 at n = ${formatPow10(largest)}`,
        value: (sqrtRow?.opsPerSec ?? NaN) / (powRow?.opsPerSec ?? NaN),
        target: 0.8,
      },
      { label: 'parent loop-delay p99 while children ran', value: parentDelay.p99Ms, target: 50, op: '<=', unit: 'ms' },
    ],
    raw: { samplesNs, perProcess, parentLoopDelay: parentDelay },
  };
}
