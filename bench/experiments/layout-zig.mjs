// Experiment `layout-zig` (issue 16): the paper's layout code is Zig (Figures 20–29). This
// builds that code (bench/zig-layout/layout.zig, written from the figures) with zig
// (PyPI's ziglang) in ReleaseFast and ReleaseSafe, to wasm32 (run in V8, and in wazero, the
// paper's Go runtime) and natively (a shared library, called through koffi), and times it
// beside the Rust build's variants: which of the paper's figures follow the language,
// which the layout, which the runtime.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runInChild } from '../lib/measure.mjs';
import { ensurePip } from '../lib/tools.mjs';

const child = fileURLToPath(new URL('./layout-zig-child.mjs', import.meta.url));
const rustChild = fileURLToPath(new URL('./layout-child.mjs', import.meta.url));
const SOURCE = fileURLToPath(new URL('../zig-layout/layout.zig', import.meta.url));
const OUT = fileURLToPath(new URL('../../target/zig/', import.meta.url));
const WAZERO_DIR = fileURLToPath(new URL('../wazero/', import.meta.url));
const RUST_WASM = fileURLToPath(new URL('../../packages/offthread/wasm/offthread.wasm', import.meta.url));
const RUNTIMES = ['V8', 'wazero', 'native'];
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
    builds.push({ name: `zig ${mode} V8`, kind: 'wasm', path: wasm });
    builds.push({ name: `zig ${mode} native`, kind: 'native', path: so });
  }
  return builds;
}

/** `go` on the PATH, else the official tarball's place; null when neither runs. */
function goBinary() {
  for (const go of ['go', '/usr/local/go/bin/go']) if (spawnSync(go, ['version']).status === 0) return go;
  return null;
}

/**
 * Each wasm build (Zig's and our offthread.wasm) in wazero through bench/wazero (`go run`,
 * modules from the Go proxy; it reads either module's exports). Empty without Go.
 * @returns {{ rows: any[], note: string }}
 */
function wazeroRows(ctx, wasmBuilds, minTime) {
  const go = goBinary();
  if (go === null) return { rows: [], note: 'wazero columns skipped: no Go (`go` on PATH or /usr/local/go).' };
  const version = /wazero v[\d.]+/.exec(
    spawnSync(go, ['list', '-m', 'all'], { cwd: WAZERO_DIR, encoding: 'utf8' }).stdout,
  );
  const rows = [];
  for (const { name, path } of wasmBuilds) {
    ctx.progress(`wazero: ${name}`);
    const args = ['run', '.', '-wasm', path, '-n', String(N), '-reps', String(REPS), '-min-time', `${minTime}ms`];
    const r = spawnSync(go, args, { cwd: WAZERO_DIR, encoding: 'utf8', timeout: 600_000 });
    if (r.status !== 0) throw new Error(`bench/wazero on ${path} failed: ${r.stderr || r.error}`);
    for (const x of JSON.parse(r.stdout)) rows.push({ build: name, variant: x.variant, nsPerUpdate: x.nsPerUpdate });
  }
  return {
    rows,
    note: `wazero columns: the same .wasm files in ${version?.[0] ?? 'wazero'} (optimising compiler), driven from Go (bench/wazero) as in the paper; each variant timed by its median call over ≥ ${minTime} ms.`,
  };
}

export async function run(ctx) {
  const builds = ctx.argv.includes('--no-build')
    ? ['ReleaseFast', 'ReleaseSafe'].flatMap((m) => [
        { name: `zig ${m} V8`, kind: 'wasm', path: `${OUT}layout-${m}.wasm` },
        { name: `zig ${m} native`, kind: 'native', path: `${OUT}liblayout-${m}.so` },
      ])
    : build(ctx);
  for (const b of builds) if (!existsSync(b.path)) throw new Error(`${b.path} is missing: run without --no-build`);
  const minTime = ctx.quick ? 200 : 800;
  const { value: zigRows } = await runInChild(child, 'measure', [{ builds, n: N, reps: REPS, minTime }], {
    progress: ctx.progress,
  });
  const { value: rustRows } = await runInChild(rustChild, 'measure', [{ n: N, reps: REPS, quick: ctx.quick }], {
    progress: ctx.progress,
  });
  const wasmBuilds = [
    ...builds.filter((b) => b.kind === 'wasm').map((b) => ({ name: b.name.replace(/ V8$/, ' wazero'), path: b.path })),
    { name: 'rust wazero', path: RUST_WASM },
  ];
  const wazero = wazeroRows(ctx, wasmBuilds, minTime);
  const rustName = { wasm: 'rust V8', native: 'rust native' };
  const rows = [
    ...zigRows,
    ...rustRows.map((r) => ({ build: rustName[r.build], variant: r.variant, nsPerUpdate: r.nsPerUpdate })),
    ...wazero.rows,
  ];
  // Columns by runtime (V8, wazero, native), each: Zig ReleaseFast, Zig ReleaseSafe, Rust.
  const runtimeOf = (/** @type {string} */ b) => RUNTIMES.find((rt) => b.endsWith(` ${rt}`)) ?? '';
  const present = new Set(rows.map((r) => r.build));
  const buildNames = RUNTIMES.flatMap((rt) =>
    ['zig ReleaseFast', 'zig ReleaseSafe', 'rust'].map((lang) => `${lang} ${rt}`).filter((b) => present.has(b)),
  );
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
  const byRuntime = RUNTIMES.filter((rt) => buildNames.some((b) => runtimeOf(b) === rt)).map(
    (rt) =>
      `${rt}: ${buildNames
        .filter((b) => runtimeOf(b) === rt)
        .map((b) => `${b.slice(0, -rt.length - 1)} ${within[b]}`)
        .join(', ')}`,
  );
  return {
    title: "layout-zig: the paper's Zig layout code (Figures 20–29) beside our Rust, % vs each build's native",
    params: {
      scooters: N,
      repsPerCall: REPS,
      quick: ctx.quick,
      zig: 'PyPI ziglang',
      builds: buildNames,
    },
    notes: [
      'Zig: bench/zig-layout/layout.zig, the run_* functions of Figures 21–29 as printed (Zig 0.17 needs `const` for the locals the figures declare `var` and never change); init and run_reps (the host part, not in the paper) allocate the arrays and loop the runs so one timed call crosses the JS boundary once, like the Rust build.',
      "V8: the wasm32-freestanding build (SIMD128) in this Node. wazero: the same file in the paper's Go runtime. native: a shared library for this CPU (zig defaults to -mcpu=native), called through koffi. Rust: the layout experiment's own builds (napi; offthread.wasm in V8 and in wazero), the same n and reps.",
      wazero.note,
      `Within ±15 points of the paper, of 6 variants, by runtime — ${byRuntime.join(' · ')}.`,
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
        title: 'variants within ±15 points of paper (seed 003, Table 3) (of 6), by runtime',
        columns: [
          { key: 'runtime', label: 'runtime' },
          ...['zig ReleaseFast', 'zig ReleaseSafe', 'rust'].map((lang) => ({ key: lang, label: lang })),
        ],
        rows: RUNTIMES.map((rt) => ({
          runtime: rt,
          ...Object.fromEntries(
            ['zig ReleaseFast', 'zig ReleaseSafe', 'rust'].map((lang) => [lang, within[`${lang} ${rt}`] ?? '–']),
          ),
        })),
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
      label: `${b}: variants within ±15 points of paper (seed 003, Table 3)`,
      value: within[b],
      unit: ' of 6',
      target: 6,
    })),
    raw: rows,
  };
}
