// Helper of experiment `md5-like` (not an experiment itself): the "MD5-like" loop of
// "Node vs. JS" (seed 002) — blueimp-md5's MD5 function stripped to its calls, shifts and
// arithmetic: no string-to-words conversion, no padding step, no hex digest. Each
// iteration runs blueimp's block function once (the 64 steps through md5cmn and its
// 16-bit safeAdd, then the add of the previous state) on one 16-word block whose word 1
// is the iteration number, so no iteration can be hoisted. Word 0 is 0x80 and the rest
// 0: at iteration 0 that is the padded empty message, so one iteration gives MD5("").
// The Rust twin (http-md5-like.rs, the same functions) is built here with plain rustc —
// a measurement device, not a product kernel, so it stays out of the addon — as a shared
// library called through koffi ("native") and as wasm32 run in V8.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { progress } from '../lib/measure.mjs';

const require = createRequire(import.meta.url);
const SOURCE = fileURLToPath(new URL('./http-md5-like.rs', import.meta.url));
export const OUT = fileURLToPath(new URL('../../target/md5-like/', import.meta.url));

// blueimp's helpers, as it writes them (every value an int32): 32-bit adds done as two
// 16-bit halves.
function safeAdd(x, y) {
  const lsw = (x & 0xffff) + (y & 0xffff);
  const msw = (x >> 16) + (y >> 16) + (lsw >> 16);
  return (msw << 16) | (lsw & 0xffff);
}
function bitRotateLeft(num, cnt) {
  return (num << cnt) | (num >>> (32 - cnt));
}
function md5cmn(q, a, b, x, s, t) {
  return safeAdd(bitRotateLeft(safeAdd(safeAdd(a, q), safeAdd(x, t)), s), b);
}
function ff(a, b, c, d, x, s, t) {
  return md5cmn((b & c) | (~b & d), a, b, x, s, t);
}
function gg(a, b, c, d, x, s, t) {
  return md5cmn((b & d) | (c & ~d), a, b, x, s, t);
}
function hh(a, b, c, d, x, s, t) {
  return md5cmn(b ^ c ^ d, a, b, x, s, t);
}
function ii(a, b, c, d, x, s, t) {
  return md5cmn(c ^ (b | ~d), a, b, x, s, t);
}

/**
 * The state (a, b, c, d) after `n` iterations of the MD5 block function, each as an
 * unsigned 32-bit integer.
 * @param {number} n
 * @returns {[number, number, number, number]}
 */
export function md5LikeState(n) {
  const x = new Int32Array(16);
  x[0] = 0x80;
  let a = 1732584193;
  let b = -271733879;
  let c = -1732584194;
  let d = 271733878;
  for (let i = 0; i < n; i++) {
    x[1] = i;
    const olda = a;
    const oldb = b;
    const oldc = c;
    const oldd = d;

    a = ff(a, b, c, d, x[0], 7, -680876936);
    d = ff(d, a, b, c, x[1], 12, -389564586);
    c = ff(c, d, a, b, x[2], 17, 606105819);
    b = ff(b, c, d, a, x[3], 22, -1044525330);
    a = ff(a, b, c, d, x[4], 7, -176418897);
    d = ff(d, a, b, c, x[5], 12, 1200080426);
    c = ff(c, d, a, b, x[6], 17, -1473231341);
    b = ff(b, c, d, a, x[7], 22, -45705983);
    a = ff(a, b, c, d, x[8], 7, 1770035416);
    d = ff(d, a, b, c, x[9], 12, -1958414417);
    c = ff(c, d, a, b, x[10], 17, -42063);
    b = ff(b, c, d, a, x[11], 22, -1990404162);
    a = ff(a, b, c, d, x[12], 7, 1804603682);
    d = ff(d, a, b, c, x[13], 12, -40341101);
    c = ff(c, d, a, b, x[14], 17, -1502002290);
    b = ff(b, c, d, a, x[15], 22, 1236535329);

    a = gg(a, b, c, d, x[1], 5, -165796510);
    d = gg(d, a, b, c, x[6], 9, -1069501632);
    c = gg(c, d, a, b, x[11], 14, 643717713);
    b = gg(b, c, d, a, x[0], 20, -373897302);
    a = gg(a, b, c, d, x[5], 5, -701558691);
    d = gg(d, a, b, c, x[10], 9, 38016083);
    c = gg(c, d, a, b, x[15], 14, -660478335);
    b = gg(b, c, d, a, x[4], 20, -405537848);
    a = gg(a, b, c, d, x[9], 5, 568446438);
    d = gg(d, a, b, c, x[14], 9, -1019803690);
    c = gg(c, d, a, b, x[3], 14, -187363961);
    b = gg(b, c, d, a, x[8], 20, 1163531501);
    a = gg(a, b, c, d, x[13], 5, -1444681467);
    d = gg(d, a, b, c, x[2], 9, -51403784);
    c = gg(c, d, a, b, x[7], 14, 1735328473);
    b = gg(b, c, d, a, x[12], 20, -1926607734);

    a = hh(a, b, c, d, x[5], 4, -378558);
    d = hh(d, a, b, c, x[8], 11, -2022574463);
    c = hh(c, d, a, b, x[11], 16, 1839030562);
    b = hh(b, c, d, a, x[14], 23, -35309556);
    a = hh(a, b, c, d, x[1], 4, -1530992060);
    d = hh(d, a, b, c, x[4], 11, 1272893353);
    c = hh(c, d, a, b, x[7], 16, -155497632);
    b = hh(b, c, d, a, x[10], 23, -1094730640);
    a = hh(a, b, c, d, x[13], 4, 681279174);
    d = hh(d, a, b, c, x[0], 11, -358537222);
    c = hh(c, d, a, b, x[3], 16, -722521979);
    b = hh(b, c, d, a, x[6], 23, 76029189);
    a = hh(a, b, c, d, x[9], 4, -640364487);
    d = hh(d, a, b, c, x[12], 11, -421815835);
    c = hh(c, d, a, b, x[15], 16, 530742520);
    b = hh(b, c, d, a, x[2], 23, -995338651);

    a = ii(a, b, c, d, x[0], 6, -198630844);
    d = ii(d, a, b, c, x[7], 10, 1126891415);
    c = ii(c, d, a, b, x[14], 15, -1416354905);
    b = ii(b, c, d, a, x[5], 21, -57434055);
    a = ii(a, b, c, d, x[12], 6, 1700485571);
    d = ii(d, a, b, c, x[3], 10, -1894986606);
    c = ii(c, d, a, b, x[10], 15, -1051523);
    b = ii(b, c, d, a, x[1], 21, -2054922799);
    a = ii(a, b, c, d, x[8], 6, 1873313359);
    d = ii(d, a, b, c, x[15], 10, -30611744);
    c = ii(c, d, a, b, x[6], 15, -1560198380);
    b = ii(b, c, d, a, x[13], 21, 1309151649);
    a = ii(a, b, c, d, x[4], 6, -145523070);
    d = ii(d, a, b, c, x[11], 10, -1120210379);
    c = ii(c, d, a, b, x[2], 15, 718787259);
    b = ii(b, c, d, a, x[9], 21, -343485551);

    a = safeAdd(a, olda);
    b = safeAdd(b, oldb);
    c = safeAdd(c, oldc);
    d = safeAdd(d, oldd);
  }
  return [a >>> 0, b >>> 0, c >>> 0, d >>> 0];
}

/** Word `word` (0–3: a, b, c, d) of the state after `n` iterations: the timed JS call. */
export function md5LikeJs(n, word = 0) {
  return md5LikeState(n)[word & 3];
}

/** The state as MD5 prints a digest (little-endian words): MD5("") at n = 1. */
export function stateHex(/** @type {number[]} */ words) {
  const out = Buffer.alloc(16);
  for (let i = 0; i < 4; i++) out.writeUInt32LE(words[i], 4 * i);
  return out.toString('hex');
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
 * The three implementations as functions of (n, word).
 * @param {{ so: string, wasm: string }} build
 * @returns {Promise<Record<'js' | 'native' | 'wasm', (n: number, word?: number) => number>>}
 */
export async function loadMd5Like(build) {
  const koffi = require('koffi');
  const native = koffi.load(build.so).func('uint32_t md5_like(uint32_t, uint32_t)');
  const { instance } = await WebAssembly.instantiate(readFileSync(build.wasm), {});
  const wasm = /** @type {(n: number, word: number) => number} */ (instance.exports.md5_like);
  return {
    js: md5LikeJs,
    native: (n, word = 0) => native(n, word),
    wasm: (n, word = 0) => wasm(n, word) >>> 0,
  };
}

/**
 * Times each implementation at `iterations` (run in a child of the runner): builds, checks
 * that all three give the same state, warms each up, then times `runs` whole calls, wall
 * clock and this process's CPU time (user + system) around each. The calls are
 * synchronous on one thread, so CPU time is the call's own work; on a shared machine it
 * is the steadier figure (wall time also counts waiting for a core).
 * @param {{ iterations: number, runs: number }} o
 */
export async function measureMd5Like({ iterations, runs }) {
  const impls = await loadMd5Like(buildMd5Like());
  const CHECK = Math.min(iterations, 100_000);
  const expected = stateHex(md5LikeState(CHECK));
  const median = (/** @type {number[]} */ v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
  /** Run r returns state word r mod 4; the JS run's word is the reference. */
  const jsWords = [];
  const rows = [];
  for (const [impl, fn] of Object.entries(impls)) {
    // The check doubles as the warm-up (V8 optimises the JS loop on its way).
    const got = stateHex([0, 1, 2, 3].map((w) => fn(CHECK, w)));
    if (got !== expected) throw new Error(`md5-like ${impl} at ${CHECK}: ${got} ≠ JS ${expected}`);
    const wallMs = [];
    const cpuMs = [];
    for (let r = 0; r < runs; r++) {
      progress(`md5-like ${impl}: run ${r + 1} of ${runs}, ${iterations.toLocaleString('en-US')} iterations`);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const word = fn(iterations, r & 3);
      wallMs.push(performance.now() - t0);
      const cpu = process.cpuUsage(cpu0);
      cpuMs.push((cpu.user + cpu.system) / 1000);
      if (impl === 'js') jsWords.push(word);
      else if (word !== jsWords[r]) throw new Error(`md5-like ${impl}: word ${r & 3} ${word} ≠ JS ${jsWords[r]}`);
    }
    rows.push({
      impl,
      iterations,
      wordsChecked: Math.min(runs, 4),
      runs,
      wallMs: median(wallMs),
      cpuMs: median(cpuMs),
      cpuNsPerIteration: (median(cpuMs) * 1e6) / iterations,
      wallRunsMs: wallMs,
      cpuRunsMs: cpuMs,
    });
  }
  return rows;
}

/** Not an experiment: the runner lists every file here, so say so if it is run. */
export async function run() {
  throw new Error('http-md5-like.mjs is a helper of the md5-like experiment; run md5-like');
}
