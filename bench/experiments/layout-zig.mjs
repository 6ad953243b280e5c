// Experiment `layout-zig` (issue 16): the paper's layout code is Zig (Figures 20–29). This
// builds that code (bench/zig-layout/layout.zig, written from the figures) with zig
// (PyPI's ziglang) in ReleaseFast and ReleaseSafe, to wasm32 (run in V8) and natively (a
// shared library, called through koffi), and times it beside the Rust build's variants in
// one process: which of the paper's figures follow the language, which the layout.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runInChild } from '../lib/measure.mjs';
import { ensurePip } from '../lib/tools.mjs';

const child = fileURLToPath(new URL('./layout-zig-child.mjs', import.meta.url));
const rustChild = fileURLToPath(new URL('./layout-child.mjs', import.meta.url));
const SOURCE = fileURLToPath(new URL('../zig-layout/layout.zig', import.meta.url));
const OUT = fileURLToPath(new URL('../../target/zig/', import.meta.url));
const N = 10_000;
const REPS = 100;
const PAPER = { fixed: 74.9, stride: 91.2, fixedSimd: 9.7, soa: -58.1, soaSimd: -73.9, aop: 39.1 };

function zig(args) {
  const r = spawnSync('python3', ['-m', 'ziglang', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`zig ${args.join(' ')}: ${r.stderr || r.error} (pip install ziglang)`);
}

function build(ctx) {
  ensurePip('ziglang', 'ziglang', ctx.progress);
  mkdirSync(OUT, { recursive: true });
  const builds = [];
  for (const mode of ['ReleaseFast', 'ReleaseSafe']) {
    ctx.progress(`zig: ${mode} wasm32 and native`);
    const wasm = `${OUT}layout-${mode}.wasm`;
    const so = `${OUT}liblayout-${mode}.so`;
    zig(
      ['build-exe', SOURCE, '-target', 'wasm32-freestanding', '-fno-entry', '-rdynamic', '-O', mode].concat([
        '-mcpu=generic+simd128',
        `-femit-bin=${wasm}`,
      ]),
    );
    zig(['build-lib', SOURCE, '-dynamic', '-lc', '-O', mode, `-femit-bin=${so}`]);
    builds.push({ name: `zig wasm ${mode}`, kind: 'wasm', path: wasm });
    builds.push({ name: `zig native ${mode}`, kind: 'native', path: so });
  }
  return builds;
}

export async function run(ctx) {
  const builds = ctx.argv.includes('--no-build')
    ? ['ReleaseFast', 'ReleaseSafe'].flatMap((m) => [
        { name: `zig wasm ${m}`, kind: 'wasm', path: `${OUT}layout-${m}.wasm` },
        { name: `zig native ${m}`, kind: 'native', path: `${OUT}liblayout-${m}.so` },
      ])
    : build(ctx);
  const minTime = ctx.quick ? 200 : 800;
  const { value: zigRows } = await runInChild(child, 'measure', [{ builds, n: N, reps: REPS, minTime }], {
    progress: ctx.progress,
  });
  const { value: rustRows } = await runInChild(rustChild, 'measure', [{ n: N, reps: REPS, quick: ctx.quick }], {
    progress: ctx.progress,
  });
  const rows = [
    ...zigRows,
    ...rustRows.map((r) => ({ build: `rust ${r.build}`, variant: r.variant, nsPerUpdate: r.nsPerUpdate })),
  ];
  const buildNames = [...new Set(rows.map((r) => r.build))];
  const get = (build, variant) => rows.find((r) => r.build === build && r.variant === variant)?.nsPerUpdate;
  const pct = (build, variant) => (get(build, variant) / get(build, 'native') - 1) * 100;
  const table = Object.keys(PAPER).map((variant) => ({
    variant,
    paper: PAPER[variant],
    ...Object.fromEntries(buildNames.map((b) => [b, pct(b, variant)])),
  }));
  const within = Object.fromEntries(
    buildNames.map((b) => [b, table.filter((t) => Math.abs(t[b] - t.paper) <= 15).length]),
  );
  const fmt = (v) => (Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(1)}%` : '–');
  return {
    title: "layout-zig: the paper's Zig layout code (Figures 20–29) beside our Rust, % vs each build's native",
    params: {
      scooters: N,
      repsPerCall: REPS,
      quick: ctx.quick,
      zig: 'PyPI ziglang',
      builds: builds.map((b) => b.name),
    },
    notes: [
      'Zig: bench/zig-layout/layout.zig, the run_* functions of Figures 21–29 as printed (Zig 0.17 needs `const` for the locals the figures declare `var` and never change); init and run_reps (the host part, not in the paper) allocate the arrays and loop the runs so one timed call crosses the JS boundary once, like the Rust build.',
      "wasm: wasm32-freestanding with SIMD128, run in V8 (this Node). native: a shared library for this CPU (zig defaults to -mcpu=native), called through koffi. Rust rows: the layout experiment's own builds (napi and offthread.wasm), the same process, the same n and reps.",
      `Within ±15 points of the paper, of 6 variants: ${buildNames.map((b) => `${b} ${within[b]}`).join(' · ')}.`,
      'The machine was shared with other builds while this ran (the memory-streaming variants swing most: see layout-runs).',
    ],
    tables: [
      {
        title: "% vs each build's native struct array (the paper's Table 3 means in 'paper')",
        columns: [
          { key: 'variant', label: 'variant' },
          { key: 'paper', label: 'paper', format: fmt },
          ...buildNames.map((b) => ({ key: b, label: b, format: fmt })),
        ],
        rows: table,
      },
      {
        title: 'ns per update',
        columns: [
          { key: 'build', label: 'build' },
          { key: 'variant', label: 'variant' },
          { key: 'nsPerUpdate', label: 'ns/update', format: 'sig3' },
        ],
        rows,
      },
    ],
    ratios: buildNames.map((b) => ({
      label: `${b}: variants within ±15 points of the paper`,
      value: within[b],
      unit: ' of 6',
      target: 6,
    })),
    raw: rows,
  };
}
