// Helper of experiment `http-md5` (not an experiment itself): the blog's "MD5-like" stripped
// loop (20 M iterations of one MD5 F-round mixing step), in JS and in Rust. The Rust
// version (http-md5-like.rs) is built here with plain rustc — not through the addon, whose
// crates this bench leaves alone — as a shared library called through koffi ("native") and
// as wasm32 run in V8.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { timeFn } from '../lib/measure.mjs';

const require = createRequire(import.meta.url);
const SOURCE = fileURLToPath(new URL('./http-md5-like.rs', import.meta.url));
export const OUT = fileURLToPath(new URL('../../target/md5-like/', import.meta.url));

// The first 16 MD5 constants and the F-round shifts, as in http-md5-like.rs.
const K = new Int32Array([
  0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501, 0x698098d8,
  0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
]);
const S = new Int32Array([7, 12, 17, 22]);

/** n iterations of the MD5-like step; returns a ^ b ^ c ^ d as an unsigned 32-bit integer. */
export function md5LikeJs(/** @type {number} */ n) {
  let a = 0x67452301 | 0;
  let b = 0xefcdab89 | 0;
  let c = 0x98badcfe | 0;
  let d = 0x10325476 | 0;
  for (let i = 0; i < n; i++) {
    const f = (b & c) | (~b & d);
    // each sum truncated at once, so V8 keeps it in int32 (an untruncated a + f + K + i
    // overflows into a double first)
    const x = (((a + f) | 0) + ((K[i & 15] + i) | 0)) | 0;
    const s = S[i & 3];
    const t = d;
    d = c;
    c = b;
    b = (b + ((x << s) | (x >>> (32 - s)))) | 0;
    a = t;
  }
  return (a ^ b ^ c ^ d) >>> 0;
}

/** rustc with the release profile's settings, into `out`. */
function rustc(/** @type {string[]} */ args, /** @type {string} */ out) {
  const r = spawnSync(
    'nice',
    ['-n', '10', 'rustc', '--edition', '2021', '--crate-type', 'cdylib', '-C', 'opt-level=3', '-C', 'panic=abort']
      .concat(args)
      .concat(['-o', out, SOURCE]),
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`rustc ${args.join(' ')}: ${r.stderr || r.error}`);
}

/**
 * Builds the shared library and the wasm module into `outDir`.
 * @returns {{ so: string, wasm: string }}
 */
export function buildMd5Like(outDir = OUT) {
  mkdirSync(outDir, { recursive: true });
  const so = `${outDir}libmd5like.so`;
  const wasm = `${outDir}md5like.wasm`;
  rustc([], so);
  rustc(['--target', 'wasm32-unknown-unknown'], wasm);
  return { so, wasm };
}

/**
 * The three implementations as functions of n.
 * @param {{ so: string, wasm: string }} build
 * @returns {Promise<Record<'js' | 'native' | 'wasm', (n: number) => number>>}
 */
export async function loadMd5Like(build) {
  const koffi = require('koffi');
  const native = koffi.load(build.so).func('uint32_t md5_like(uint32_t)');
  const { instance } = await WebAssembly.instantiate(readFileSync(build.wasm), {});
  const wasm = /** @type {(n: number) => number} */ (instance.exports.md5_like);
  return { js: md5LikeJs, native, wasm: (n) => wasm(n) >>> 0 };
}

/**
 * Times each implementation at `iterations` (run in a child of the runner): builds, checks
 * that all three agree, then takes tinybench's median of whole calls.
 * @param {{ iterations: number, minTime: number }} o
 */
export async function measureMd5Like({ iterations, minTime }) {
  const impls = await loadMd5Like(buildMd5Like());
  const expected = impls.js(iterations);
  const rows = [];
  for (const [impl, fn] of Object.entries(impls)) {
    const got = fn(iterations);
    if (got !== expected) throw new Error(`md5-like ${impl}: ${got} ≠ JS ${expected}`);
    const t = await timeFn(() => fn(iterations), { minTime, minIterations: 5 });
    rows.push({ impl, iterations, result: got, medianMs: t.median / 1e6, nsPerIteration: t.median / iterations });
  }
  return rows;
}

/** Not an experiment: the runner lists every file here, so say so if it is run. */
export async function run() {
  throw new Error('http-md5-like.mjs is a helper of the http-md5 experiment; run http-md5');
}
