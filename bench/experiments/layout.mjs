// Experiment `layout` (EXPERIMENTS.md; Silva et al. 2024 §5.1.2): scooters (id u32,
// distance u32), add a runtime speed to every distance, with seven data layouts, in
// the native build and in the WASM build. Percentages are against each build's own
// native struct array, as in the paper.
import { fileURLToPath } from 'node:url';
import { runInChild } from '../lib/measure.mjs';

const child = fileURLToPath(new URL('./layout-child.mjs', import.meta.url));
const N = 10_000;
const REPS = 100;
/** The paper's means vs the native struct array (its Table, §5.1.2). */
const PAPER = { fixed: 74.9, stride: 91.2, fixedSimd: 9.7, soa: -58.1, soaSimd: -73.9, aop: 39.1 };

export async function run(ctx) {
  const { value: rows } = await runInChild(child, 'measure', [{ n: N, reps: REPS, quick: ctx.quick }], {
    progress: ctx.progress,
  });
  const base = (build) => rows.find((r) => r.build === build && r.variant === 'native').nsPerUpdate;
  for (const r of rows) r.vsNativePct = (r.nsPerUpdate / base(r.build) - 1) * 100;
  const table = ['fixed', 'stride', 'fixedSimd', 'soa', 'soaSimd', 'aop'].map((variant) => {
    const get = (build) => rows.find((r) => r.build === build && r.variant === variant).vsNativePct;
    return {
      variant,
      paper: PAPER[variant],
      native: get('native'),
      wasm: get('wasm'),
      nativeWithin15: Math.abs(get('native') - PAPER[variant]) <= 15 ? 'yes' : 'no',
      wasmWithin15: Math.abs(get('wasm') - PAPER[variant]) <= 15 ? 'yes' : 'no',
    };
  });
  const order = (build) =>
    rows
      .filter((r) => r.build === build)
      .sort((a, b) => a.nsPerUpdate - b.nsPerUpdate)
      .map((r) => r.variant)
      .join(' < ');
  const pct = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}%`;
  return {
    title: 'layout: AoS vs SoA vs AoP (scooters, add speed to every distance)',
    params: { scooters: N, repsPerCall: REPS, quick: ctx.quick },
    notes: [
      `Fastest to slowest, native build: ${order('native')}.`,
      `Fastest to slowest, WASM build: ${order('wasm')}.`,
      `Paper order (means vs native): soaSimd ${pct(PAPER.soaSimd)} < soa ${pct(PAPER.soa)} < native < fixedSimd ${pct(PAPER.fixedSimd)} < aop ${pct(PAPER.aop)} < fixed ${pct(PAPER.fixed)} < stride ${pct(PAPER.stride)}.`,
      'Each call builds nothing: the layout is built once, then `reps` passes of the update run inside the build (native or WASM), timed from JS; ns/update = call time / (scooters × reps).',
      'Deviations from the paper, explained. The variants follow its Zig code (Figures 21–29) line for line, but it ran them as WASM in a Go host (wazero) and we run them compiled by rustc/LLVM, natively and as WASM in V8. (1) `fixed` (+105–155% vs +74.9%) and `stride` (+125–135% vs +91.2%): both index loops stay scalar, one bounds-checked add per scooter (Rust indexing, like Zig safety checks), against a struct-array baseline that LLVM vectorises; the gap grows with the baseline\'s vector width (AVX-512 natively, SIMD128 in WASM). The constant stride buys nothing here: LLVM does not vectorise the checked strided loop, so natively `fixed` and `stride` are within noise of each other. (2) `aop` (+110% WASM, +295% native, vs +39.1%): a dependent load per scooter against the same vectorised baseline; natively the 8-byte boxes also sit 16+ bytes apart (allocator headers), so half of each cache line is wasted. (3) `fixedSimd` ≈ native (−3…+5% vs +9.7%): explicit [0, speed, 0, speed] vectors are the code LLVM already makes of the struct loop; the paper marks this variant "~" (not significant, ±36–38%) on two of its five machines. (4) `soa` native −75.8% (paper −58.1%): a plain u32 column vectorises at full width, twice the scooters per register of the interleaved struct; in WASM (SIMD128) it lands at −65%, within 15 points.',
      'native = #[repr(C)] struct array; fixed = u32 view of the same array, `words[i + 1] += speed` for i in steps of 2 (compile-time constants); stride = the same with stride/offset read at run time; fixedSimd = the u32 view in 4-word vectors plus [0, speed, 0, speed]; soa = one u32 column; soaSimd = the column in 4-lane vectors; aop = Vec<Box<Scooter>>.',
    ],
    tables: [
      {
        title: 'vs each build’s native struct array (percent; negative = faster)',
        columns: [
          { key: 'variant', label: 'variant' },
          { key: 'paper', label: 'paper %', format: 'sig3' },
          { key: 'native', label: 'native build %', format: 'sig3' },
          { key: 'wasm', label: 'WASM build %', format: 'sig3' },
          { key: 'nativeWithin15', label: 'native within ±15' },
          { key: 'wasmWithin15', label: 'WASM within ±15' },
        ],
        rows: table,
      },
      {
        title: 'ns per update',
        columns: [
          { key: 'build', label: 'build' },
          { key: 'variant', label: 'variant' },
          { key: 'nsPerUpdate', label: 'ns/update', format: 'sig3' },
          { key: 'vsNativePct', label: 'vs native %', format: 'sig3' },
        ],
        rows,
      },
    ],
    charts: [
      {
        title: 'layout: ns per update by variant',
        x: { field: 'variantIndex', label: 'variant (0 native … 6 aop)', log: false },
        y: { field: 'nsPerUpdate', label: 'ns/update', log: true },
        series: 'build',
        data: rows.map((r) => ({
          ...r,
          variantIndex: ['native', 'fixed', 'stride', 'fixedSimd', 'soa', 'soaSimd', 'aop'].indexOf(r.variant),
        })),
      },
    ],
    ratios: table.flatMap((r) => [
      { label: `${r.variant}: native build vs paper (${pct(r.paper)})`, value: r.native, unit: '%' },
      { label: `${r.variant}: WASM build vs paper (${pct(r.paper)})`, value: r.wasm, unit: '%' },
    ]),
    raw: rows,
  };
}
