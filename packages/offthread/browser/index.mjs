// offthread for browsers (ESM): π, MD5 and QR with the Node package's API and result
// shapes. Sync calls run on the calling thread with the page's own instance of
// offthread.wasm (compiled while this module loads: top-level await); async calls run
// on a pool of Web Workers, each with its own instance. π is split by jump-ahead, so
// every variant and every worker count returns Node's `inside`, bit for bit.
import {
  AbortError,
  errorKinds,
  makeError,
  OffthreadError,
  OffthreadRangeError,
  OffthreadTypeError,
} from './errors.mjs';
import { countRangeJs } from './pi-js.mjs';
import { checkCallOptions, Pool, sharedMemoryAvailable } from './pool.mjs';
import { compileWasm, defaultWasmUrl, Kernels } from './wasm.mjs';

export { AbortError, OffthreadError, OffthreadRangeError, OffthreadTypeError, Pool };
export const errorCodes = Object.keys(errorKinds);

// ---- the page's wasm instance -------------------------------------------------------

let wasmUrl = defaultWasmUrl;
let modulePromise = null;
let kernels = null;
let loadError = null;
let pool = null; // the default pool, created on first use

/**
 * (Re)loads offthread.wasm from `wasm` (URL or compiled module) for sync calls and for
 * pools created afterwards (the default pool included). The entry loads the copy next to
 * it (`../wasm/offthread.wasm`) by itself; call this only to load another one.
 */
export async function init({ wasm = defaultWasmUrl } = {}) {
  wasmUrl = wasm instanceof WebAssembly.Module ? null : String(wasm);
  modulePromise = wasm instanceof WebAssembly.Module ? Promise.resolve(wasm) : compileWasm(wasmUrl);
  try {
    kernels = await Kernels.instantiate(await modulePromise);
    loadError = null;
  } catch (err) {
    kernels = null;
    loadError = err;
  }
  if (pool) {
    pool.close(); // finishes its calls; the next async call starts a pool with the new module
    pool = null;
  }
  return backendInfo();
}

await init();

function requireWasm(what) {
  if (kernels) return kernels;
  throw makeError(
    'ERR_BACKEND_UNAVAILABLE',
    `${what} needs offthread.wasm, which did not load: ${loadError?.message ?? 'unknown error'}`,
  );
}

// ---- pool -------------------------------------------------------------------------

/** The pool async calls use unless given `{ pool }`: navigator.hardwareConcurrency workers. */
export function defaultPool() {
  if (!pool) {
    pool = new Pool({ wasm: modulePromise });
  }
  return pool;
}

function poolFor(call) {
  return call.pool ?? defaultPool();
}

/** Which backend runs what, and why (the browser's `offthread doctor`). */
export function backendInfo() {
  return {
    runtime: 'browser',
    backend: kernels ? 'wasm' : 'js',
    wasmUrl,
    wasmError: loadError ? String(loadError.message) : null,
    crossOriginIsolated: globalThis.crossOriginIsolated === true,
    transport: sharedMemoryAvailable() ? 'shared' : 'message',
    threads: pool ? pool.threads : (globalThis.navigator?.hardwareConcurrency ?? 1),
  };
}

// ---- validation (the Node package's rules) ------------------------------------------

const MAX_SAMPLES = 2 ** 53;

function describe(v) {
  return typeof v === 'bigint' ? `${v}n` : typeof v === 'string' ? JSON.stringify(v) : String(v);
}

function toOptions(value, name = 'options') {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object') {
    throw makeError('ERR_INVALID_ARG', `${name} must be an object, got ${value === null ? 'null' : typeof value}`);
  }
  return value;
}

function toSamples(value) {
  if (typeof value === 'bigint') {
    if (value < 0n || value > BigInt(MAX_SAMPLES)) {
      throw makeError(
        'ERR_INVALID_SAMPLES',
        `samples must be an integer from 0 to ${MAX_SAMPLES}, got ${describe(value)}`,
      );
    }
    return Number(value);
  }
  if (typeof value !== 'number') {
    throw makeError('ERR_INVALID_ARG', `samples must be a number or bigint, got ${typeof value}`);
  }
  if (!Number.isInteger(value) || value < 0 || value > MAX_SAMPLES) {
    throw makeError(
      'ERR_INVALID_SAMPLES',
      `samples must be an integer from 0 to ${MAX_SAMPLES}, got ${describe(value)}`,
    );
  }
  return value;
}

function toSeed(value) {
  if (value === undefined) return 1;
  if (typeof value === 'bigint') {
    if (value < BigInt(Number.MIN_SAFE_INTEGER) || value > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw makeError('ERR_INVALID_SEED', `seed must be a safe integer, got ${describe(value)}`);
    }
    return Number(value);
  }
  if (typeof value !== 'number')
    throw makeError('ERR_INVALID_ARG', `seed must be a number or bigint, got ${typeof value}`);
  if (!Number.isSafeInteger(value))
    throw makeError('ERR_INVALID_SEED', `seed must be a safe integer, got ${describe(value)}`);
  return value;
}

// ---- π ------------------------------------------------------------------------------

const syncVariants = ['js', 'jsBitwise', 'wasm'];
const variants = ['auto', ...syncVariants, 'wasmWorkers'];
/** Async `auto` up to this many samples runs inline: a worker round trip costs more. */
const AUTO_INLINE_MAX = 2 ** 16;
/** Chunks of `wasmWorkers`: about 4 per worker, none below 2^14 nor above 2^24 samples. */
const MIN_CHUNK = 2 ** 14;
const MAX_CHUNK = 2 ** 24;

function parsePi(samples, options) {
  const opts = toOptions(options);
  const n = toSamples(samples);
  const seed = toSeed(opts.seed);
  const variant = opts.variant ?? 'auto';
  if (!variants.includes(variant)) {
    throw makeError(
      'ERR_INVALID_VARIANT',
      `unknown π variant ${JSON.stringify(variant)}; one of ${variants.join(', ')}`,
    );
  }
  return { opts, n, seed, variant };
}

function piResult(samples, seed, inside, variant) {
  return { estimate: (4 * inside) / samples, inside, samples, seed, variant };
}

function countSync(variant, n, seed) {
  if (variant === 'wasm') return requireWasm('the wasm variant').piCount(0, n, seed);
  return countRangeJs(variant, 0, n, seed);
}

/** π on the calling thread: `js`, `jsBitwise`, `wasm` or `auto` (wasm when loaded). */
function estimateSync(samples, options) {
  const { n, seed, variant } = parsePi(samples, options);
  if (variant === 'wasmWorkers') {
    throw makeError('ERR_INVALID_VARIANT', 'wasmWorkers is async-only: use pi.estimate()');
  }
  const chosen = variant === 'auto' ? (kernels ? 'wasm' : 'jsBitwise') : variant;
  return piResult(n, seed, countSync(chosen, n, seed), chosen);
}

/** [first, count] chunks covering [0, n). */
export function piChunks(n, threads, chunks) {
  const size = chunks ? Math.ceil(n / chunks) : Math.min(MAX_CHUNK, Math.max(MIN_CHUNK, Math.ceil(n / (threads * 4))));
  const out = [];
  for (let first = 0; first < n; first += size) out.push([first, Math.min(size, n - first)]);
  return out;
}

/**
 * π off the main thread. `wasmWorkers` splits the samples over every worker (jump-ahead
 * chunks); `js`, `jsBitwise`, `wasm` run on one worker; `auto` runs small inputs inline
 * and the rest as `wasmWorkers`. Honours `{ signal, timeout, pool }`; `chunks` (1…65536)
 * fixes the number of `wasmWorkers` chunks.
 */
async function estimate(samples, options) {
  const { opts, n, seed, variant } = parsePi(samples, options);
  const call = checkCallOptions(opts);
  const { chunks } = opts;
  if (chunks !== undefined && !(Number.isInteger(chunks) && chunks >= 1 && chunks <= 65536)) {
    throw makeError('ERR_INVALID_ARG', `chunks must be an integer from 1 to 65536, got ${String(chunks)}`);
  }
  let chosen = variant;
  if (variant === 'auto') {
    // Without offthread.wasm the workers cannot start: the last resort runs JS inline.
    chosen = !kernels ? 'jsBitwise' : n <= AUTO_INLINE_MAX ? 'wasm' : 'wasmWorkers';
    if (chosen !== 'wasmWorkers') {
      call.signal?.throwIfAborted();
      return piResult(n, seed, countSync(chosen, n, seed), chosen);
    }
  }
  if (n === 0) return piResult(0, seed, 0, chosen);
  const p = poolFor(call);
  const parts = chosen === 'wasmWorkers' ? piChunks(n, p.threads, chunks) : [[0, n]];
  const kernel = chosen === 'wasmWorkers' ? 'wasm' : chosen;
  const tasks = parts.map(([first, count]) => ({
    op: 'pi',
    args: { variant: kernel, first, count, seed },
    checkable: kernel === 'wasm',
  }));
  const counts = await p.run(tasks, call);
  let inside = 0;
  for (const c of counts) inside += c;
  return piResult(n, seed, inside, chosen);
}

export const pi = { estimate, estimateSync, variants, syncVariants, asyncVariants: ['wasmWorkers'] };

// ---- MD5 ----------------------------------------------------------------------------

const MAX_ROUNDS = 1_000_000_000;

function checkData(data, name = 'data') {
  if (typeof data === 'string' || data instanceof Uint8Array) return data;
  throw makeError(
    'ERR_INVALID_ARG',
    `${name} must be a string or Uint8Array, got ${data === null ? 'null' : typeof data}`,
  );
}

function checkText(text) {
  if (typeof text !== 'string') throw makeError('ERR_INVALID_ARG', `text must be a string, got ${typeof text}`);
  return text;
}

function checkRounds(rounds) {
  if (typeof rounds !== 'number') throw makeError('ERR_INVALID_ARG', `rounds must be a number, got ${typeof rounds}`);
  if (!Number.isInteger(rounds) || rounds < 0 || rounds > MAX_ROUNDS) {
    throw makeError('ERR_INVALID_ROUNDS', `rounds must be an integer from 0 to ${MAX_ROUNDS}, got ${rounds}`);
  }
  return rounds;
}

function checkStart(start) {
  if (start === undefined) return '';
  if (typeof start !== 'string' || !(start.length === 0 || /^[0-9a-f]{32}$/.test(start))) {
    throw makeError('ERR_INVALID_ARG', 'start must be "" or a 32-character lowercase hex digest');
  }
  return start;
}

async function one(call, task) {
  const [value] = await poolFor(call).run([task], call);
  return value;
}

export const md5 = {
  MAX_ROUNDS,
  /** MD5 of a string (UTF-8) or bytes, lowercase hex, on the calling thread. */
  hex(data) {
    return requireWasm('md5.hex').md5Hex(checkData(data));
  },
  /** The same, on a worker. */
  async hexAsync(data, options) {
    const value = checkData(data);
    const call = checkCallOptions(toOptions(options));
    return one(call, { op: 'md5Hex', args: null, text: value });
  },
  /** d_N of the loop dᵢ = hex(MD5(text ‖ dᵢ₋₁)), d₀ = "" (or `start`), on the calling thread. */
  iterateSync(text, rounds, options) {
    const t = checkText(text);
    const n = checkRounds(rounds);
    const start = checkStart(toOptions(options).start);
    return requireWasm('md5.iterateSync').md5Iterate(t, n, start);
  },
  /** d_N on a worker; honours `{ signal, timeout, pool }`. */
  async iterate(text, rounds, options) {
    const opts = toOptions(options);
    const t = checkText(text);
    const n = checkRounds(rounds);
    const start = checkStart(opts.start);
    const call = checkCallOptions(opts);
    return one(call, { op: 'md5Iterate', args: { rounds: n, start }, text: t, checkable: true });
  },
};

// ---- QR -----------------------------------------------------------------------------

function parseQr(text, options) {
  if (typeof text !== 'string') throw makeError('ERR_INVALID_ARG', `text must be a string, got ${typeof text}`);
  const opts = toOptions(options);
  const { size = 128, ecc = 'M', margin = 4 } = opts;
  if (!Number.isInteger(size) || size < 1 || size > 4096) {
    throw makeError('ERR_INVALID_QR_OPTIONS', `size must be an integer from 1 to 4096 pixels, got ${String(size)}`);
  }
  if (!Number.isInteger(margin) || margin < 0 || margin > 64) {
    throw makeError('ERR_INVALID_QR_OPTIONS', `margin must be an integer from 0 to 64 modules, got ${String(margin)}`);
  }
  if (!['L', 'M', 'Q', 'H'].includes(ecc)) {
    throw makeError('ERR_INVALID_QR_OPTIONS', `ecc must be one of L, M, Q, H, got ${JSON.stringify(ecc)}`);
  }
  return { text, qr: { ecc, size, margin }, opts };
}

function qrSync(format) {
  return (text, options) => {
    const p = parseQr(text, options);
    return requireWasm(`qr (${format})`).qr(format, p.text, p.qr);
  };
}

function qrAsync(format) {
  return async (text, options) => {
    const p = parseQr(text, options);
    const call = checkCallOptions(p.opts);
    return one(call, { op: 'qr', args: { format, ...p.qr }, text: p.text });
  };
}

export const qr = {
  /** `data:image/png;base64,…` on a worker. */
  toDataURL: qrAsync('dataURL'),
  /** The PNG file as a Uint8Array, on a worker. */
  toPNG: qrAsync('png'),
  toSVG: qrAsync('svg'),
  toDataURLSync: qrSync('dataURL'),
  toPNGSync: qrSync('png'),
  toSVGSync: qrSync('svg'),
};

export default { pi, md5, qr, Pool, defaultPool, backendInfo, init };
