// Experiment `pi` (docs/experiments.md): Monte Carlo π in every variant at 10^1…10^9
// (10^10 with --full), side by side in one run. Each variant runs in its own child
// process; ratios compare figures measured in the same run.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runInChild } from '../lib/measure.mjs';
import { opsRatio } from '../lib/report.mjs';

const VARIANTS = [
  'js',
  'jsBitwise',
  'ffi',
  'native',
  'nativeBitwise',
  'nativeAsync',
  'nativeAsyncPlain',
  'nativeChunked',
  'nativeChunkedPlain',
  'parallel',
  'parallelAsync',
  'parallelAsyncPlain',
  'wasm',
  'wasmWorkers',
  'wasmWorkers1',
  'auto',
];
/** Variants too slow for the largest sizes in --quick (seconds per call). */
const SLOW = new Set([
  'js',
  'jsBitwise',
  'native',
  'nativeAsyncPlain',
  'nativeChunkedPlain',
  'parallelAsyncPlain',
  'wasm',
  'wasmWorkers',
  'wasmWorkers1',
]);
const child = fileURLToPath(new URL('./pi-child.mjs', import.meta.url));

/** `max`: the largest size (`--max 1000`: the small sizes only, e.g. auto's per-call cost). */
function sizesFor(variant, { quick, full }, max = Number.POSITIVE_INFINITY) {
  const top = full ? 10 : quick ? (SLOW.has(variant) ? 7 : 8) : 9;
  return Array.from({ length: top }, (_, i) => 10 ** (i + 1)).filter((s) => s <= max);
}

const at = (rows, variant, samples) => rows.find((r) => r.variant === variant && r.samples === samples);

function ratio(rows, label, num, den, samples, target) {
  return opsRatio(label, at(rows, num, samples), at(rows, den, samples), target);
}

/** The paper's Figures 7 (sync) and 8 (async): the forms a caller awaits or blocks on. */
const SYNC = new Set(['js', 'jsBitwise', 'ffi', 'native', 'nativeBitwise', 'parallel', 'wasm']);

export async function run(ctx) {
  const { values } = parseArgs({ args: ctx.argv, strict: false, options: { max: { type: 'string' } } });
  const max = values.max === undefined ? undefined : Number(values.max);
  const rows = [];
  for (const variant of VARIANTS) {
    ctx.progress(`variant ${variant}`);
    const sizes = sizesFor(variant, ctx, max);
    const { value } = await runInChild(child, 'measureVariant', [{ variant, sizes, quick: ctx.quick }], {
      // --full: one JS call at 10^10 is 8–10 minutes on a 2-core AVX2 host.
      timeoutMs: (ctx.full ? 120 : 30) * 60_000,
      progress: ctx.progress,
    });
    rows.push(...value);
  }
  return report(rows, ctx);
}

/** The report for measured `rows` (also re-renders a committed pi.json's samples). */
export function report(rows, ctx) {
  // The variants this run measured (a re-render of an older pi.json has fewer rows).
  const measured = VARIANTS.filter((v) => rows.some((r) => r.variant === v));
  // Identity: every variant returned the same `inside` at every size it ran.
  const mismatches = [];
  for (const r of rows) {
    const ref = at(rows, 'nativeBitwise', r.samples) ?? r;
    if (r.inside !== ref.inside) mismatches.push(`${r.variant} at ${r.samples}: ${r.inside} ≠ ${ref.inside}`);
  }

  const sizes = [...new Set(rows.map((r) => r.samples))].sort((a, b) => a - b);
  const ratios = [
    ratio(rows, 'nativeBitwise / jsBitwise at 10^6', 'nativeBitwise', 'jsBitwise', 1e6, 10),
    ratio(rows, 'nativeBitwise / jsBitwise at 10^7', 'nativeBitwise', 'jsBitwise', 1e7, 10),
    ratio(rows, 'parallel / nativeBitwise at 10^8 (2 cores)', 'parallel', 'nativeBitwise', 1e8, 1.8),
    ratio(rows, 'parallelAsync / nativeChunked at 10^8', 'parallelAsync', 'nativeChunked', 1e8),
    ratio(rows, 'wasm / jsBitwise at 10^7', 'wasm', 'jsBitwise', 1e7),
    // The paper's point, side by side: one optimised thread against every core unoptimised.
    ratio(
      rows,
      'nativeBitwise (1 thread) / parallelAsyncPlain (all cores) at 10^8',
      'nativeBitwise',
      'parallelAsyncPlain',
      1e8,
    ),
    ratio(
      rows,
      'parallelAsync / parallelAsyncPlain at 10^8 (bitwise vs plain kernel)',
      'parallelAsync',
      'parallelAsyncPlain',
      1e8,
    ),
    ratio(rows, 'wasm engine: 2 workers / 1 worker at 10^8 (wasmWorkers)', 'wasmWorkers', 'wasmWorkers1', 1e8, 1.8),
  ].filter(Boolean);
  for (const samples of sizes) {
    const best = rows
      .filter((r) => r.samples === samples && r.variant !== 'auto' && r.variant !== 'wasmWorkers1')
      .reduce((a, b) => (b.opsPerSec > a.opsPerSec ? b : a));
    const auto = at(rows, 'auto', samples);
    if (auto) {
      ratios.push({
        label: `auto / best (${best.variant}) at 10^${Math.log10(samples)}`,
        value: auto.opsPerSec / best.opsPerSec,
        target: 0.9,
        pass: auto.opsPerSec / best.opsPerSec >= 0.9,
      });
    }
  }
  for (const variant of ['ffi', 'native', 'nativeBitwise']) {
    const r = at(rows, variant, 10);
    if (r) ratios.push({ label: `${variant} time per call at 10^1`, value: r.medianNs, unit: 'ns' });
  }

  const table = (metric, label, format) => ({
    title: label,
    columns: [
      { key: 'variant', label: 'variant' },
      ...sizes.map((s) => ({ key: String(s), label: `10^${Math.log10(s)}`, format })),
    ],
    rows: measured.map((variant) =>
      Object.fromEntries([
        ['variant', variant],
        ...sizes.map((s) => [String(s), at(rows, variant, s)?.[metric] ?? null]),
      ]),
    ),
  });

  return {
    title: 'Monte Carlo π: every variant, ops/s by sample count',
    params: { variants: measured, sizes, quick: ctx.quick, full: ctx.full, seed: 1 },
    notes: [
      'ops/s = completed estimations per second (median of runs); async variants: one awaited call at a time.',
      'cores used = process CPU time / wall time while timing; peak RSS = the child process maxRSS after that size.',
      'jsBitwise = Carta division-free step in doubles (the fastest sequential JS form measured here).',
      mismatches.length === 0
        ? 'Identity: every variant returned the same `inside` at every size.'
        : `IDENTITY FAILURES: ${mismatches.join('; ')}`,
    ],
    tables: [
      table('opsPerSec', 'ops/s (higher is better)', 'ops'),
      table('nsPerSample', 'ns per sample', 'sig3'),
      table('coresUsed', 'cores used (CPU time / wall time)', 'sig3'),
      table('peakRssMiB', 'peak RSS (MiB)', 'sig3'),
    ],
    charts: [
      {
        title: 'π: ops/s vs samples (log–log)',
        x: { field: 'samples', label: 'samples', log: true },
        y: { field: 'opsPerSec', label: 'ops/s', log: true },
        series: 'variant',
        data: rows,
      },
      {
        suffix: 'sync',
        title: 'π, sync variants, as paper (seed 000, Fig. 7): ops/s vs samples',
        x: { field: 'samples', label: 'samples', log: true },
        y: { field: 'opsPerSec', label: 'ops/s', log: true },
        series: 'variant',
        data: rows.filter((r) => SYNC.has(r.variant)),
      },
      {
        suffix: 'async',
        title: 'π, async variants, as paper (seed 000, Fig. 8): ops/s vs samples',
        x: { field: 'samples', label: 'samples', log: true },
        y: { field: 'opsPerSec', label: 'ops/s', log: true },
        series: 'variant',
        data: rows.filter((r) => !SYNC.has(r.variant)),
      },
      {
        suffix: 'memory',
        title: "π: peak RSS of each variant's process vs samples, as paper (seed 000, Fig. 6)",
        x: { field: 'samples', label: 'samples', log: true },
        y: { field: 'peakRssMiB', label: 'peak RSS (MiB)', log: false },
        series: 'variant',
        data: rows,
      },
      {
        suffix: 'cores',
        title: 'π: cores used vs samples, as paper (seed 000, Fig. 5)',
        x: { field: 'samples', label: 'samples', log: true },
        y: { field: 'coresUsed', label: 'cores used', log: false },
        series: 'variant',
        data: rows,
      },
    ],
    ratios,
    raw: rows,
  };
}
