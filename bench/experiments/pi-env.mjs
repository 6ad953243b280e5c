// Experiment `pi-env` (Kyriakou & Tselikas 2022: what the paper states as limits or side
// observations). (1) Cold vs warm start per backend: in a fresh `node` process, the time to
// import offthread, to the first `pi.estimate(1e6)` result, and to a second one (warm).
// (2) WASM compile time of offthread.wasm in a fresh process (async compile and sync
// Module). (3) nativeChunked under UV_THREADPOOL_SIZE = 2 (= cores here), 4 (libuv's
// default) and 8, 4 chunks and as many chunks as threads.
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WASM = fileURLToPath(new URL('../../packages/offthread/wasm/offthread.wasm', import.meta.url));

/** Runs `code` (an ES module) in a fresh node with `env`; returns its JSON stdout. */
function fresh(code, env = {}) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (r.status !== 0) throw new Error(`fresh process failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const START = `
const t0 = performance.now();
const { pi, backendInfo } = await import('offthread');
const t1 = performance.now();
const a = await pi.estimate(1e6, { seed: 1 });
const t2 = performance.now();
const b = await pi.estimate(1e6, { seed: 1 });
const t3 = performance.now();
if (a.inside !== b.inside) throw new Error('results differ');
console.log(JSON.stringify({ backend: backendInfo().backend, variant: a.variant, processToImport: t0, importMs: t1 - t0, firstMs: t2 - t1, warmMs: t3 - t2 }));
process.exit(0);
`;

const COMPILE = `
import { readFileSync } from 'node:fs';
const bytes = readFileSync(${JSON.stringify(WASM)});
const t0 = performance.now();
await WebAssembly.compile(bytes);
const t1 = performance.now();
new WebAssembly.Module(bytes);
const t2 = performance.now();
console.log(JSON.stringify({ bytes: bytes.length, compileMs: t1 - t0, moduleSyncMs: t2 - t1 }));
`;

const CHUNKED = (chunks) => `
const { piVariants } = await import('offthread/internal');
await piVariants.estimate(1e7, 'nativeChunked', { seed: 1, chunks: ${chunks} });
const times = [];
for (let i = 0; i < 5; i++) {
  const t0 = performance.now();
  await piVariants.estimate(1e8, 'nativeChunked', { seed: 1, chunks: ${chunks} });
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ medianMs: times[2], minMs: times[0] }));
`;

export async function run(ctx) {
  const repeats = ctx.quick ? 3 : 7;
  const start = [];
  for (const backend of ['native', 'wasm', 'js']) {
    ctx.progress(`cold start: ${backend}`);
    const runs = Array.from({ length: repeats }, () => fresh(START, { OFFTHREAD_BACKEND: backend }));
    start.push({
      backend,
      variant: runs[0].variant,
      importMs: median(runs.map((r) => r.importMs)),
      firstMs: median(runs.map((r) => r.firstMs)),
      warmMs: median(runs.map((r) => r.warmMs)),
      coldOverWarm: median(runs.map((r) => r.firstMs / r.warmMs)),
    });
  }
  ctx.progress('wasm compile');
  const compiles = Array.from({ length: repeats }, () => fresh(COMPILE));
  const compile = {
    bytes: compiles[0].bytes,
    compileMs: median(compiles.map((r) => r.compileMs)),
    moduleSyncMs: median(compiles.map((r) => r.moduleSyncMs)),
  };
  const cores = availableParallelism();
  const pool = [];
  for (const threads of [cores, 4, 2 * cores, 8].filter((t, i, a) => a.indexOf(t) === i)) {
    for (const chunks of [4, threads].filter((c, i, a) => a.indexOf(c) === i)) {
      ctx.progress(`UV_THREADPOOL_SIZE=${threads}, ${chunks} chunks`);
      const r = fresh(CHUNKED(chunks), { UV_THREADPOOL_SIZE: String(threads) });
      pool.push({ threads, chunks, ...r, opsPerSec: 1000 / r.medianMs });
    }
  }
  const base = pool.find((p) => p.threads === 4 && p.chunks === 4);
  for (const p of pool) p.vsDefault = base.medianMs / p.medianMs;
  return {
    title: 'π: cold vs warm start per backend, WASM compile time, UV_THREADPOOL_SIZE',
    params: { repeats, cores, coldSamples: 1e6, chunkedSamples: 1e8 },
    notes: [
      'Cold start: a fresh node process per run (median of runs); import = `await import("offthread")`; first = the first `pi.estimate(1e6)` (auto: the pool variant, so pool start-up — threads, workers, each worker\'s WASM instance — is in it); warm = the same call again.',
      "WASM compile: offthread.wasm in a fresh process, `WebAssembly.compile` then `new WebAssembly.Module` of the same bytes (V8 compiles lazily with Liftoff first; both are the up-front cost the paper names as WASM's limitation).",
      `UV_THREADPOOL_SIZE: nativeChunked runs its chunks as napi AsyncTasks on libuv's pool; this machine has ${cores} cores, so 4 (the default) is ${4 / cores}× cores. Median of 5 calls at 10^8 samples in a fresh process per setting.`,
      'The machine was shared with other builds while this ran: compare rows of one table, not absolute times.',
    ],
    tables: [
      {
        title: 'cold vs warm start (fresh process per run)',
        columns: [
          { key: 'backend', label: 'backend' },
          { key: 'variant', label: 'variant used' },
          { key: 'importMs', label: 'import', format: 'ms' },
          { key: 'firstMs', label: 'first call (cold)', format: 'ms' },
          { key: 'warmMs', label: 'second call (warm)', format: 'ms' },
          { key: 'coldOverWarm', label: 'cold / warm', format: 'ratio' },
        ],
        rows: start,
      },
      {
        title: 'WASM compile of offthread.wasm (fresh process)',
        columns: [
          { key: 'bytes', label: 'module bytes', format: 'int' },
          { key: 'compileMs', label: 'WebAssembly.compile', format: 'ms' },
          { key: 'moduleSyncMs', label: 'new WebAssembly.Module (again)', format: 'ms' },
        ],
        rows: [compile],
      },
      {
        title: 'nativeChunked at 10^8 by libuv pool size',
        columns: [
          { key: 'threads', label: 'UV_THREADPOOL_SIZE', format: 'int' },
          { key: 'chunks', label: 'chunks', format: 'int' },
          { key: 'medianMs', label: 'median call', format: 'ms' },
          { key: 'minMs', label: 'fastest call', format: 'ms' },
          { key: 'vsDefault', label: 'speed vs 4 threads, 4 chunks', format: 'ratio' },
        ],
        rows: pool,
      },
    ],
    ratios: [
      ...start.map((s) => ({ label: `${s.backend}: first call / warm call (1e6 samples)`, value: s.coldOverWarm })),
      ...pool
        .filter((p) => p !== base)
        .map((p) => ({
          label: `nativeChunked, ${p.threads} threads × ${p.chunks} chunks vs 4 × 4`,
          value: p.vsDefault,
        })),
    ],
    raw: { start, compiles, pool },
  };
}
