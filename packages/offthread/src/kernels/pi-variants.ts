/**
 * Monte Carlo π in every variant of the paper's benchmark: research only, reached
 * through `offthread/internal` as `piVariants` (the public `pi` in pi.ts runs `auto`).
 * Every variant returns the same
 * `inside` for the same (samples, seed): work is split by jump-ahead in the one
 * generator stream, never by other seeds. The Rust kernels are the registry's
 * `pi.range` (fast) and `pi.rangeReference` (the definition); `js`/`jsBitwise` are
 * the pure-JS tier's, `parallel`, `nativeAsync` and `nativeChunked` the addon's own.
 */
import { describe, fromNative, makeError } from '../errors.js';
import { activeBackend, host, warnFallbackOnce } from '../host.js';
import { raceAbort } from '../pool/call.js';
import { type CallOptions, checkCallOptions, type Pool, poolOf, runAll } from '../pool/pool.js';
import { CALL_KEYS, MAX_SAMPLES, toCount, toOptions, toSeed } from '../validate.js';
import { countInsideJs, countInsideJsBitwise, stateAt } from './js/pi.js';
import { NO_INPUT, nativeKernelIndex, type PiEstimate, type PiKernel, piResult } from './kernels.js';
import { callSync, type SyncTier } from './registry.js';
import { wasmKernels } from './wasm-sync.js';

/** Variants that run on the calling thread (usable with `estimateSync`). */
export const syncVariants = ['js', 'jsBitwise', 'ffi', 'native', 'nativeBitwise', 'parallel', 'wasm'] as const;
/** Variants that only exist as Promises. */
export const asyncVariants = ['nativeAsync', 'nativeChunked', 'parallelAsync', 'wasmWorkers', 'jsWorkers'] as const;
export type PiSyncVariant = (typeof syncVariants)[number];
export type PiAsyncVariant = (typeof asyncVariants)[number];
export type PiVariant = 'auto' | PiSyncVariant | PiAsyncVariant;
export const variants: readonly PiVariant[] = ['auto', ...syncVariants, ...asyncVariants];

export interface PiVariantOptions {
  /** Any safe integer (number or bigint); default 1. */
  seed?: number | bigint;
}

export interface PiVariantAsyncOptions extends PiVariantOptions, CallOptions {
  /** `nativeChunked`: libuv AsyncTasks (default 4); `wasmWorkers`/`jsWorkers`: chunks (default ≈ 4 per worker). */
  chunks?: number;
  /**
   * `nativeAsync`, `nativeChunked`, `parallelAsync` only: the Rust kernel, 'bitwise'
   * (default: division-free) or 'plain' (the definition as written, like the paper's
   * non-bitwise addonAsync). The same `inside` either way.
   */
  kernel?: PiKernel;
}

/** What every variant returns: the estimate, and the variant that computed it. */
export type PiResult = PiEstimate<Exclude<PiVariant, 'auto'>>;

/**
 * `auto` thresholds, from `npm run bench -- pi` on 2 cores: below AUTO_NATIVE_MIN the
 * JIT-compiled JS loop beats the napi call (≈ 240 vs 330 ns at 4 samples, even at
 * 16–32 on the AVX2 host); from there on `parallel`, whose napi entry
 * is direct: it counts fewer than two 2^14-sample chunks on the caller alone, and from
 * 2^15 shares the work with the pool. (Through the registry's `nativeBitwise` entry the
 * same small counts cost ≈ 150 ns more per call: auto ran at 0.38–0.73× the best
 * variant at 10^1…10^3 on an AVX2 host.) Async calls up to AUTO_INLINE_MAX samples
 * (≲ 20 µs native) run inline: a round trip would cost more.
 */
export const AUTO_NATIVE_MIN = 24;
export const AUTO_INLINE_MAX = 1 << 14;
/**
 * Worker chunks: 4 per worker (uneven workers balance), none below 2^14 samples. No
 * upper bound: a chunk checks for cancellation every 2^20 samples, and one call must
 * never fill a bounded queue (maxQueue) with thousands of chunks.
 */
const MIN_CHUNK = 2 ** 14;
/** Most chunks one call may ask for (`chunks`): each is a queue entry. */
const MAX_CHUNKS = 4096;

const SYNC_KEYS = ['seed'] as const;
const ASYNC_KEYS = [...SYNC_KEYS, 'chunks', 'kernel', ...CALL_KEYS] as const;
/** The variants that take `kernel`. */
const KERNEL_VARIANTS: readonly PiVariant[] = ['nativeAsync', 'nativeChunked', 'parallelAsync'];

function checkKernel(kernel: unknown, variant: PiVariant): PiKernel {
  if (kernel === undefined) return 'bitwise';
  if (kernel !== 'plain' && kernel !== 'bitwise') {
    throw makeError('ERR_INVALID_ARG', `kernel must be 'plain' or 'bitwise', got ${describe(kernel)}`);
  }
  if (!KERNEL_VARIANTS.includes(variant)) {
    throw makeError('ERR_INVALID_ARG', `kernel applies to ${KERNEL_VARIANTS.join(', ')}, not ${variant}`);
  }
  return kernel;
}

/** Samples [first, first + count) as one libuv AsyncTask of the registry kernel. */
function countUv(variant: PiVariant, kernel: PiKernel, first: number, count: number, seed: number): Promise<number> {
  const name = kernel === 'plain' ? 'pi.rangeReference' : 'pi.range';
  return requireNative(variant).kernelCallUv(nativeKernelIndex(name), NO_INPUT, first, count, seed) as Promise<number>;
}

function parseArgs(
  samples: unknown,
  variant: unknown,
  options: unknown,
  keys: readonly (keyof PiVariantAsyncOptions & string)[],
) {
  const opts = toOptions<PiVariantAsyncOptions>(options, keys);
  const n = toCount(samples, 'samples', MAX_SAMPLES, 'ERR_INVALID_SAMPLES');
  const seed = toSeed(opts.seed, 1);
  if (!variants.includes(variant as PiVariant)) {
    throw makeError('ERR_INVALID_VARIANT', `unknown π variant ${describe(variant)}; one of ${variants.join(', ')}`);
  }
  return { opts, n, seed };
}

function requireNative(variant: string) {
  const native = host().native();
  if (!native) throw makeError('ERR_BACKEND_UNAVAILABLE', `the ${variant} variant needs the native addon`);
  return native;
}

function pickSync(n: number): PiSyncVariant {
  if (!host().native()) {
    warnFallbackOnce();
    return wasmKernels() ? 'wasm' : 'jsBitwise';
  }
  return n < AUTO_NATIVE_MIN ? 'jsBitwise' : 'parallel';
}

/** Samples [0, n) through the registry's sync entry, on `tier`. */
function registryCount(kernel: 'pi.range' | 'pi.rangeReference', tier: SyncTier, n: number, seed: number): number {
  return callSync({ kernel, input: NO_INPUT, a: 0, b: n, c: seed }, tier) as number;
}

function countSync(variant: PiSyncVariant, n: number, seed: number): number {
  try {
    switch (variant) {
      case 'js':
        return countInsideJs(stateAt(seed, 0), n);
      case 'jsBitwise':
        return countInsideJsBitwise(stateAt(seed, 0), n);
      case 'ffi': {
        const ffi = host().ffiPiCount;
        if (!ffi) throw makeError('ERR_BACKEND_UNAVAILABLE', 'the ffi variant needs Node and koffi');
        return ffi()(n, seed, 1);
      }
      case 'native':
        requireNative(variant);
        return registryCount('pi.rangeReference', 'native', n, seed);
      case 'nativeBitwise':
        requireNative(variant);
        return registryCount('pi.range', 'native', n, seed);
      case 'parallel':
        return requireNative(variant).piCountParallelSync(n, seed);
      case 'wasm':
        if (!wasmKernels())
          throw makeError('ERR_BACKEND_UNAVAILABLE', `the wasm variant needs offthread.wasm: ${host().wasmError()}`);
        return registryCount('pi.range', 'wasm', n, seed);
    }
  } catch (err) {
    throw fromNative(err);
  }
}

/** π on the calling thread in `variant`. Throws TypeError/RangeError with a `code` on bad input. */
export function estimateSync(samples: number | bigint, variant: PiVariant, options?: PiVariantOptions): PiResult {
  const { n, seed } = parseArgs(samples, variant, options, SYNC_KEYS);
  if ((asyncVariants as readonly string[]).includes(variant)) {
    throw makeError('ERR_INVALID_VARIANT', `${variant} is async-only: use piVariants.estimate()`);
  }
  const chosen = variant === 'auto' ? pickSync(n) : (variant as PiSyncVariant);
  return piResult(n, seed, countSync(chosen, n, seed), chosen);
}

async function chunkedUv(n: number, seed: number, chunks: number, kernel: PiKernel): Promise<number> {
  requireNative('nativeChunked');
  const size = Math.ceil(n / chunks);
  const parts: Promise<number>[] = [];
  for (let first = 0; first < n; first += size) {
    parts.push(countUv('nativeChunked', kernel, first, Math.min(size, n - first), seed));
  }
  return (await Promise.all(parts)).reduce((a, b) => a + b, 0);
}

/** The pool variant for `pool`'s engine. */
function onPoolVariant(pool: Pool): PiAsyncVariant {
  return pool.engine === 'native' ? 'parallelAsync' : pool.engine === 'wasm' ? 'wasmWorkers' : 'jsWorkers';
}

/** Jump-ahead chunks [first, count) covering [0, n) for a worker pool. */
export function piChunks(n: number, threads: number, chunks?: number): { first: number; count: number }[] {
  const size = chunks ? Math.ceil(n / chunks) : Math.max(MIN_CHUNK, Math.ceil(n / (threads * 4)));
  const out: { first: number; count: number }[] = [];
  for (let first = 0; first < n; first += size) out.push({ first, count: Math.min(size, n - first) });
  return out;
}

function checkChunks(chunks: unknown, max: number): number | undefined {
  if (chunks === undefined) return undefined;
  if (typeof chunks !== 'number' || !Number.isInteger(chunks) || chunks < 1 || chunks > max) {
    throw makeError('ERR_INVALID_ARG', `chunks must be an integer from 1 to ${max}, got ${describe(chunks)}`);
  }
  return chunks;
}

/**
 * A pool variant on `pool`, resolving to its result. Not async: on the native engine it
 * returns the pool's own promise of a `piEstimate` job, whose completion the drain turns
 * into the `PiResult` — so the caller's `await` is the only step between the job and its
 * result. (An async wrapper here cost an extra promise and its ticks per call: the
 * facade ran at about half of `pool.echo`'s rate at 1,000 in flight, issue 35; a
 * `.then` building the result cost one more promise and microtask.) Throws at once on
 * a variant that does not fit the pool.
 */
function onPool(
  pool: Pool,
  variant: PiAsyncVariant,
  n: number,
  seed: number,
  chunks: number | undefined,
  call: CallOptions,
  kernel: PiKernel,
): Promise<PiResult> {
  const needed = onPoolVariant(pool);
  if (variant === 'wasmWorkers' && needed !== variant && !host().wasmModule()) {
    throw makeError('ERR_BACKEND_UNAVAILABLE', `wasmWorkers needs offthread.wasm: ${host().wasmError()}`);
  }
  if (variant !== needed) {
    throw makeError(
      'ERR_INVALID_VARIANT',
      `${variant} needs a pool on the ${variant === 'parallelAsync' ? 'native' : variant === 'wasmWorkers' ? 'wasm' : 'js'} engine; this pool runs ${pool.engine}`,
    );
  }
  if (needed === 'parallelAsync')
    return pool.run('piEstimate', { first: 0, count: n, seed, kernel, variant }, call) as Promise<PiResult>;
  return onWorkers(pool, variant, n, seed, chunks, call);
}

/** Jump-ahead chunks of [0, n) on a worker pool, summed. */
async function onWorkers(
  pool: Pool,
  variant: PiAsyncVariant,
  n: number,
  seed: number,
  chunks: number | undefined,
  call: CallOptions,
): Promise<PiResult> {
  if (n === 0) return piResult(n, seed, 0, variant);
  try {
    const parts = piChunks(n, pool.threads, chunks).map((c) => ({ ...c, seed }));
    const counts = await runAll(pool, 'pi', parts, call);
    return piResult(
      n,
      seed,
      counts.reduce((a, b) => a + b, 0),
      variant,
    );
  } catch (err) {
    throw fromNative(err);
  }
}

/** The pool variant `auto` or `variant` names on `pool`, with its `chunks` checked. */
function onPoolOf(
  pool: Pool,
  variant: 'auto' | PiAsyncVariant,
  n: number,
  seed: number,
  chunks: unknown,
  call: CallOptions,
  kernel: PiKernel,
): Promise<PiResult> {
  const chosen = variant === 'auto' ? onPoolVariant(pool) : variant;
  if (chosen !== 'parallelAsync') warnFallbackOnce();
  return onPool(pool, chosen, n, seed, checkChunks(chunks, MAX_CHUNKS), call, kernel);
}

/** `estimate`'s arguments, checked (a throw here is the rejection as it is). */
function parseAsync(samples: unknown, variant: unknown, options: unknown) {
  const { opts, n, seed } = parseArgs(samples, variant, options, ASYNC_KEYS);
  const call = checkCallOptions(opts);
  return { opts, n, seed, call, kernel: checkKernel(opts.kernel, variant as PiVariant) };
}

/**
 * π off the event loop. `auto` runs small inputs inline and the rest on the pool
 * (`parallelAsync` on the native engine, `wasmWorkers` / `jsWorkers` on a worker pool);
 * pool variants honour `{ pool, signal, timeout }`. Not async, so a call on the native
 * pool costs the pool's promise only; bad input still rejects, never throws.
 */
export function estimate(
  samples: number | bigint,
  variant: PiVariant,
  options?: PiVariantAsyncOptions,
): Promise<PiResult> {
  let args: ReturnType<typeof parseAsync>;
  try {
    args = parseAsync(samples, variant, options);
  } catch (err) {
    return Promise.reject(err);
  }
  const { opts, n, seed, call, kernel } = args;
  try {
    const pooled = variant === 'parallelAsync' || variant === 'wasmWorkers' || variant === 'jsWorkers';
    if (variant === 'auto' ? n > AUTO_INLINE_MAX : pooled) {
      const poolVariant = variant as 'auto' | PiAsyncVariant;
      const maybe = poolOf(call); // no extra tick: the job is queued before this returns
      if (!(maybe instanceof Promise)) return onPoolOf(maybe, poolVariant, n, seed, opts.chunks, call, kernel);
      return maybe
        .then((pool) => onPoolOf(pool, poolVariant, n, seed, opts.chunks, call, kernel))
        .catch((err) => Promise.reject(fromNative(err)));
    }
    const sync = variant === 'js' || variant === 'jsBitwise' || variant === 'wasm';
    if (variant === 'nativeAsync' || variant === 'nativeChunked' || (sync && !onNative(call))) {
      return estimateOther(n, seed, variant, opts.chunks, call, kernel);
    }
    call.pool?.assertOpen();
    if (call.signal?.aborted) throw makeError('ERR_ABORTED', 'The operation was aborted', call.signal.reason);
    const chosen = variant === 'auto' ? pickSync(n) : (variant as PiSyncVariant);
    return Promise.resolve(piResult(n, seed, countSync(chosen, n, seed), chosen));
  } catch (err) {
    return Promise.reject(fromNative(err));
  }
}

/** Whether the call's pool (else a new default one) runs the native engine. */
function onNative(call: CallOptions): boolean {
  return (call.pool?.engine ?? activeBackend()) === 'native';
}

/**
 * `estimate`'s other paths: the libuv variants, and a sync variant asked for
 * asynchronously on a worker pool (one worker runs it, so the caller's thread stays
 * free and abort/timeout apply).
 */
async function estimateOther(
  n: number,
  seed: number,
  variant: PiVariant,
  chunksOption: unknown,
  call: CallOptions,
  kernel: PiKernel,
): Promise<PiResult> {
  try {
    if (variant === 'nativeAsync') {
      return piResult(n, seed, await raceAbort(countUv(variant, kernel, 0, n, seed), call), variant);
    }
    if (variant === 'nativeChunked') {
      const chunks = checkChunks(chunksOption, 1024) ?? 4;
      return piResult(n, seed, await raceAbort(chunkedUv(n, seed, chunks, kernel), call), variant);
    }
    const impl = variant as 'js' | 'jsBitwise' | 'wasm';
    const maybe = poolOf(call); // no extra tick: the job is queued before this returns
    const pool = maybe instanceof Promise ? await maybe : maybe;
    return piResult(n, seed, await pool.run('pi', { first: 0, count: n, seed, impl }, call), impl);
  } catch (err) {
    throw fromNative(err);
  }
}
