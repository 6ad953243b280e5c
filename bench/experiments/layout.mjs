// Experiment `layout` (docs/experiments.md; Silva et al. 2024 §5.1.2): scooters (id u32,
// distance u32), add a runtime speed to every distance, with seven data layouts, in
// the native build and in the WASM build. Percentages are against each build's own
// native struct array, as in the paper.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runInChild } from '../lib/measure.mjs';

const child = fileURLToPath(new URL('./layout-child.mjs', import.meta.url));
const N = 10_000;
const REPS = 100;
/** The paper's means vs the native struct array (its Table, §5.1.2). */
const PAPER = { fixed: 74.9, stride: 91.2, fixedSimd: 9.7, soa: -58.1, soaSimd: -73.9, aop: 39.1 };

const WAZERO_DIR = fileURLToPath(new URL('../wazero/', import.meta.url));
const WASM = fileURLToPath(new URL('../../packages/offthread/wasm/offthread.wasm', import.meta.url));

/**
 * The WASM build's variants in wazero, the Go runtime the paper measured in
 * (bench/wazero, `go run`; modules from the Go proxy). Empty when Go is missing.
 * @returns {{ rows: any[], note: string }}
 */
function wazeroRows(ctx) {
  if (spawnSync('go', ['version']).status !== 0) return { rows: [], note: 'wazero column skipped: no `go` on PATH.' };
  ctx.progress('wazero: go run bench/wazero');
  const minTime = ctx.quick ? '200ms' : '800ms';
  const r = spawnSync('go', ['run', '.', '-wasm', WASM, '-n', String(N), '-reps', String(REPS), '-min-time', minTime], {
    cwd: WAZERO_DIR,
    encoding: 'utf8',
    timeout: 600_000,
  });
  if (r.status !== 0) throw new Error(`bench/wazero failed: ${r.stderr || r.error}`);
  const version = /wazero v[\d.]+/.exec(
    spawnSync('go', ['list', '-m', 'all'], { cwd: WAZERO_DIR, encoding: 'utf8' }).stdout,
  );
  const rows = JSON.parse(r.stdout).map((/** @type {any} */ x) => ({ build: 'wazero', ...x }));
  return {
    rows,
    note: `wazero rows: the same offthread.wasm in ${version?.[0] ?? 'wazero'} (optimising compiler), driven from Go as in the paper; each variant timed by median call over ≥ ${minTime}.`,
  };
}

export async function run(ctx) {
  const { value: rows } = await runInChild(child, 'measure', [{ n: N, reps: REPS, quick: ctx.quick }], {
    progress: ctx.progress,
  });
  const wazero = wazeroRows(ctx);
  rows.push(...wazero.rows);
  const base = (build) => rows.find((r) => r.build === build && r.variant === 'native').nsPerUpdate;
  for (const r of rows) r.vsNativePct = (r.nsPerUpdate / base(r.build) - 1) * 100;
  const table = ['fixed', 'stride', 'fixedSimd', 'soa', 'soaSimd', 'aop'].map((variant) => {
    const get = (build) => rows.find((r) => r.build === build && r.variant === variant)?.vsNativePct ?? Number.NaN;
    const within = (build) => (Math.abs(get(build) - PAPER[variant]) <= 15 ? 'yes' : 'no');
    return {
      variant,
      paper: PAPER[variant],
      native: get('native'),
      wasm: get('wasm'),
      wazero: get('wazero'),
      nativeWithin15: within('native'),
      wasmWithin15: within('wasm'),
      wazeroWithin15: wazero.rows.length ? within('wazero') : '–',
    };
  });
  const order = (build) =>
    rows
      .filter((r) => r.build === build)
      .sort((a, b) => a.nsPerUpdate - b.nsPerUpdate)
      .map((r) => r.variant)
      .join(' < ');
  const pct = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}%`;
  /** "WASM +98.8%, native +160%" for a variant, from this run. */
  const ours = (variant) => {
    const r = table.find((t) => t.variant === variant);
    return `WASM ${pct(r.wasm)}, native ${pct(r.native)}${wazero.rows.length ? `, wazero ${pct(r.wazero)}` : ''}`;
  };
  return {
    title: 'layout: AoS vs SoA vs AoP (scooters, add speed to every distance)',
    params: { scooters: N, repsPerCall: REPS, quick: ctx.quick },
    notes: [
      `Fastest to slowest, native build: ${order('native')}.`,
      `Fastest to slowest, WASM build: ${order('wasm')}.`,
      ...(wazero.rows.length ? [`Fastest to slowest, WASM build in wazero: ${order('wazero')}.`] : []),
      wazero.note,
      `Within ±15 points of paper (seed 003, Table 3): native ${table.filter((t) => t.nativeWithin15 === 'yes').length} of 6, WASM in V8 ${table.filter((t) => t.wasmWithin15 === 'yes').length} of 6${wazero.rows.length ? `, WASM in wazero ${table.filter((t) => t.wazeroWithin15 === 'yes').length} of 6` : ''}.`,
      `Paper order (means vs native): soaSimd ${pct(PAPER.soaSimd)} < soa ${pct(PAPER.soa)} < native < fixedSimd ${pct(PAPER.fixedSimd)} < aop ${pct(PAPER.aop)} < fixed ${pct(PAPER.fixed)} < stride ${pct(PAPER.stride)}.`,
      'Each call builds nothing: the layout is built once, then `reps` passes of the update run inside the build (native or WASM), timed from JS; ns/update = call time / (scooters × reps).',
      "Deviations from the paper, explained. The variants follow its Zig code (Figures 21–29) line for line, but the paper compiled Zig and we compile Rust (both LLVM, different front ends, bounds checks and loop shapes), and the runtime moves the figures as much as the layout: the same .wasm gives different percentages in V8 and in wazero (the paper's host). " +
        `(1) fixed (${ours('fixed')}; paper +74.9%) and stride (${ours('stride')}; paper +91.2%): both index loops stay scalar, one bounds-checked add per scooter (Rust indexing, like Zig's safety checks), against a struct-array baseline that LLVM vectorises (figures for V8 and native; wazero in (5)); the gap grows with the baseline's vector width (AVX-512 natively, SIMD128 in WASM). The constant stride buys nothing here: LLVM does not vectorise the checked strided loop, so natively fixed and stride are within noise of each other. ` +
        `(2) aop (${ours('aop')}; paper +39.1%): a dependent load per scooter against the same vectorised baseline; natively the 8-byte boxes also sit 16 or more bytes apart (allocator headers), half of every cache line wasted. ` +
        `(3) fixedSimd (${ours('fixedSimd')}; paper +9.7%): explicit [0, speed, 0, speed] vectors are the code LLVM already makes of the struct loop, so it lands on native; the paper marks this variant "~" (not significant, ±36–38%) on two of its five machines. ` +
        `(4) soa (${ours('soa')}; paper −58.1%): a plain u32 column vectorises at full width, twice the scooters per register of the interleaved struct; WASM's 128-bit vectors bring it closest to the paper. ` +
        (wazero.rows.length
          ? "(5) In wazero the baseline is what moves: it runs the struct loop's SIMD128 shuffles far slower than V8 (see ns/update), so the scalar stride loop lands near it and the 4-lane variants far below it; SoA and SoA+SIMD keep their ranking in every runtime."
          : ''),
      'native = #[repr(C)] struct array; fixed = u32 view of the same array, `words[i + 1] += speed` for i in steps of 2 (compile-time constants); stride = the same with stride/offset read at run time; fixedSimd = the u32 view in 4-word vectors plus [0, speed, 0, speed]; soa = one u32 column; soaSimd = the column in 4-lane vectors; aop = Vec<Box<Scooter>>.',
    ],
    tables: [
      {
        title: 'vs each build’s native struct array (percent; negative = faster)',
        columns: [
          { key: 'variant', label: 'variant' },
          { key: 'paper', label: 'paper %', format: 'sig3' },
          { key: 'native', label: 'native build %', format: 'sig3' },
          { key: 'wasm', label: 'WASM build (V8) %', format: 'sig3' },
          { key: 'wazero', label: 'WASM build (wazero) %', format: 'sig3' },
          { key: 'nativeWithin15', label: 'native within ±15' },
          { key: 'wasmWithin15', label: 'V8 within ±15' },
          { key: 'wazeroWithin15', label: 'wazero within ±15' },
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
      { label: `${r.variant}: native build vs paper (seed 003, Table 3: ${pct(r.paper)})`, value: r.native, unit: '%' },
      { label: `${r.variant}: WASM build vs paper (seed 003, Table 3: ${pct(r.paper)})`, value: r.wasm, unit: '%' },
      ...(wazero.rows.length
        ? [
            {
              label: `${r.variant}: WASM build in wazero vs paper (seed 003, Table 3: ${pct(r.paper)})`,
              value: r.wazero,
              unit: '%',
            },
          ]
        : []),
    ]),
    raw: rows,
  };
}
