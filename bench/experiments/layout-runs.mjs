// Experiment `layout-runs` (Silva et al. 2024, Table 4: variation between executions):
// the layout experiment's 14 (build, variant) pairs, in a new random order every round,
// repeated (the paper ran 64 times). For each pair: mean ns/update, the relative standard
// deviation across rounds (the ± %), and the mean % against its build's native struct
// array computed per round (so a slow round moves both).
import { fileURLToPath } from 'node:url';
import { runInChild } from '../lib/measure.mjs';

const child = fileURLToPath(new URL('./layout-child.mjs', import.meta.url));
const N = 10_000;
const REPS = 100;
/** The paper's Table 4, PC1 (± % between executions). */
const PAPER_PC1 = { native: 1, fixed: 2, stride: 14, fixedSimd: 38, soa: 1, soaSimd: 1, aop: 1 };

const mean = (xs) => xs.reduce((a, x) => a + x, 0) / xs.length;
const rsd = (xs) => {
  const m = mean(xs);
  return (Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1)) / m) * 100;
};

export async function run(ctx) {
  const rounds = ctx.quick ? 8 : 64;
  const minTime = ctx.quick ? 30 : 60;
  const { value: rows } = await runInChild(child, 'measureRounds', [{ n: N, reps: REPS, rounds, minTime, seed: 64 }], {
    progress: ctx.progress,
  });
  const table = [];
  for (const build of ['native', 'wasm']) {
    const base = new Map(rows.filter((r) => r.build === build && r.variant === 'native').map((r) => [r.round, r]));
    for (const variant of ['native', 'fixed', 'stride', 'fixedSimd', 'soa', 'soaSimd', 'aop']) {
      const mine = rows.filter((r) => r.build === build && r.variant === variant);
      const ns = mine.map((r) => r.nsPerUpdate);
      const vs = mine.map((r) => (r.nsPerUpdate / base.get(r.round).nsPerUpdate - 1) * 100);
      table.push({
        build,
        variant,
        rounds: ns.length,
        meanNs: mean(ns),
        minNs: Math.min(...ns),
        maxNs: Math.max(...ns),
        rsdPct: rsd(ns),
        vsNativePct: mean(vs),
        vsNativeRsd:
          variant === 'native' ? 0 : Math.sqrt(vs.reduce((a, x) => a + (x - mean(vs)) ** 2, 0) / (vs.length - 1)),
        paperPc1: PAPER_PC1[variant],
      });
    }
  }
  return {
    title: `layout-runs: run-to-run variation (Karmem Table 4), ${rounds} rounds in random order`,
    params: { scooters: N, repsPerCall: REPS, rounds, minTimeMsPerMeasurement: minTime, shuffleSeed: 64 },
    notes: [
      'Each round times all 14 (build, variant) pairs once, in a new random order (seeded xorshift shuffle), in one process; each measurement is the median call over its minTime.',
      '± % is the relative standard deviation of ns/update across rounds (the paper does not define its ±; this is the usual reading). "vs native" is computed per round against the same round\'s native struct array, then averaged (± its standard deviation in points).',
      "The machine was shared with other builds while this ran (see the load in the header): the spread here includes their noise, which the paper's dedicated PCs did not have.",
      'Paper, Table 4, PC1: native ±1%, fixed ±2%, stride ±14%, fixed+SIMD ±38%, SoA ±1%, SoA+SIMD ±1%, AoP ±1% (PC4: ±0–1% everywhere).',
    ],
    tables: [
      {
        title: 'ns per update across rounds, ± % between rounds',
        columns: [
          { key: 'build', label: 'build' },
          { key: 'variant', label: 'variant' },
          { key: 'rounds', label: 'rounds', format: 'int' },
          { key: 'meanNs', label: 'mean ns/update', format: 'sig3' },
          { key: 'minNs', label: 'min', format: 'sig3' },
          { key: 'maxNs', label: 'max', format: 'sig3' },
          { key: 'rsdPct', label: '± % (σ/mean)', format: (v) => `±${v.toFixed(1)}%` },
          { key: 'paperPc1', label: 'paper PC1 ±', format: (v) => `±${v}%` },
          {
            key: 'vsNativePct',
            label: 'vs native (mean of rounds)',
            format: (v, r) => `${v >= 0 ? '+' : ''}${v.toFixed(1)}% ± ${r.vsNativeRsd.toFixed(1)}`,
          },
        ],
        rows: table,
      },
    ],
    charts: [
      {
        title: 'layout-runs: ns/update per round (random order)',
        x: { field: 'round', label: 'round' },
        y: { field: 'nsPerUpdate', label: 'ns per update', log: true },
        series: 'series',
        data: rows.map((r) => ({ ...r, series: `${r.build} ${r.variant}` })),
      },
    ],
    raw: rows,
  };
}
