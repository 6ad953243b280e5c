/**
 * Monte Carlo π in every variant of the benchmark (EXPERIMENTS.md `pi`). Every variant
 * returns the same `inside` for the same (samples, seed): work is split by jump-ahead.
 */
import { ffiPiCount } from './backends/ffi';
import { warnFallbackOnce } from './backends/index';
import { native } from './backends/native';
import { wasm } from './backends/wasm';
import { fromNative, makeError } from './errors';
import { countInsideJs, countInsideJsBitwise, stateAt } from './js/pi';
import { type CallOptions, checkCallOptions, defaultPool, raceAbort } from './pool';
import { MAX_SAMPLES, toCount, toOptions, toSeed } from './validate';

/** Variants that run on the calling thread (usable with `estimateSync`). */
export const syncVariants = ['js', 'jsBitwise', 'ffi', 'native', 'nativeBitwise', 'parallel', 'wasm'] as const;
/** Variants that only exist as Promises. */
export const asyncVariants = ['nativeAsync', 'nativeChunked', 'parallelAsync'] as const;
export type PiSyncVariant = (typeof syncVariants)[number];
export type PiVariant = 'auto' | PiSyncVariant | (typeof asyncVariants)[number];
export const variants: readonly PiVariant[] = ['auto', ...syncVariants, ...asyncVariants];

export interface PiOptions {
  /** Any safe integer (number or bigint); default 1. */
  seed?: number | bigint;
  /** Default `auto`: picks by size (see README); the result names the variant used. */
  variant?: PiVariant;
}

export interface PiAsyncOptions extends PiOptions, CallOptions {
  /** `nativeChunked` only: number of libuv AsyncTasks (default 4 = libuv's pool). */
  chunks?: number;
}

export interface PiResult {
  /** 4·inside/samples; NaN when samples is 0. */
  estimate: number;
  /** Samples with x² + y² ≤ 1: identical for every variant. */
  inside: number;
  samples: number;
  seed: number;
  /** The variant that computed it (for `auto`, the one it picked). */
  variant: Exclude<PiVariant, 'auto'>;
}

/**
 * `auto` thresholds, from `npm run bench -- pi` on 2 cores: below AUTO_NATIVE_MIN the
 * JIT-compiled JS loop beats the napi call; from AUTO_PARALLEL_MIN (two 2^14-sample
 * chunks) `parallel` shares the work between the caller and the pool (below it, one
 * chunk: the caller does it all, so `parallel` is never slower than `nativeBitwise`). Async calls up to AUTO_INLINE_MAX samples (≲ 20 µs) are
 * computed inline: a pool round trip would cost more than the work.
 */
export const AUTO_NATIVE_MIN = 4;
export const AUTO_PARALLEL_MIN = 1 << 15;
export const AUTO_INLINE_MAX = 1 << 14;

function result(samples: number, seed: number, inside: number, variant: PiResult['variant']): PiResult {
  return { estimate: (4 * inside) / samples, inside, samples, seed, variant };
}

function parseArgs(samples: unknown, options: unknown) {
  const opts = toOptions<PiAsyncOptions>(options);
  const n = toCount(samples, 'samples', MAX_SAMPLES, 'ERR_INVALID_SAMPLES');
  const seed = toSeed(opts.seed, 1);
  const variant = opts.variant ?? 'auto';
  if (!variants.includes(variant)) {
    throw makeError(
      'ERR_INVALID_VARIANT',
      `unknown π variant ${JSON.stringify(variant)}; one of ${variants.join(', ')}`,
    );
  }
  return { opts, n, seed, variant };
}

function requireNative(variant: string) {
  if (!native) throw makeError('ERR_BACKEND_UNAVAILABLE', `the ${variant} variant needs the native addon`);
  return native;
}

function wasmCount(n: number, seed: number): number {
  const w = wasm();
  if (!w) throw makeError('ERR_BACKEND_UNAVAILABLE', 'the wasm variant needs offthread.wasm (npm run setup)');
  return w.pi_count_range(0, n, seed);
}

function pickSync(n: number): PiSyncVariant {
  if (!native) {
    warnFallbackOnce();
    return wasm() ? 'wasm' : 'jsBitwise';
  }
  if (n < AUTO_NATIVE_MIN) return 'jsBitwise';
  return n >= AUTO_PARALLEL_MIN ? 'parallel' : 'nativeBitwise';
}

function countSync(variant: PiSyncVariant, n: number, seed: number): number {
  try {
    switch (variant) {
      case 'js':
        return countInsideJs(stateAt(seed, 0), n);
      case 'jsBitwise':
        return countInsideJsBitwise(stateAt(seed, 0), n);
      case 'ffi':
        return ffiPiCount()(n, seed, 1);
      case 'native':
        return requireNative(variant).piCountSync(n, seed, false);
      case 'nativeBitwise':
        return requireNative(variant).piCountSync(n, seed, true);
      case 'parallel':
        return requireNative(variant).piCountParallelSync(n, seed);
      case 'wasm':
        return wasmCount(n, seed);
    }
  } catch (err) {
    throw fromNative(err);
  }
}

/** π on the calling thread. Throws TypeError/RangeError with a `code` on bad input. */
export function estimateSync(samples: number | bigint, options?: PiOptions): PiResult {
  const { n, seed, variant } = parseArgs(samples, options);
  if ((asyncVariants as readonly string[]).includes(variant)) {
    throw makeError('ERR_INVALID_VARIANT', `${variant} is async-only: use pi.estimate()`);
  }
  const chosen = variant === 'auto' ? pickSync(n) : (variant as PiSyncVariant);
  return result(n, seed, countSync(chosen, n, seed), chosen);
}

async function chunkedUv(n: number, seed: number, chunks: number): Promise<number> {
  const binding = requireNative('nativeChunked');
  const size = Math.ceil(n / chunks);
  const parts: Promise<number>[] = [];
  for (let first = 0; first < n; first += size) {
    parts.push(binding.piCountRangeUv(first, Math.min(size, n - first), seed));
  }
  return (await Promise.all(parts)).reduce((a, b) => a + b, 0);
}

/**
 * π off the event loop. `parallelAsync` (and `auto` above AUTO_INLINE_MAX samples)
 * runs on the offthread pool and honours `{ pool, signal, timeout }`.
 */
export async function estimate(samples: number | bigint, options?: PiAsyncOptions): Promise<PiResult> {
  const { opts, n, seed, variant } = parseArgs(samples, options);
  const call = checkCallOptions(opts);
  let chosen: PiResult['variant'];
  if (variant === 'auto') {
    chosen = n <= AUTO_INLINE_MAX || !native ? pickSync(n) : 'parallelAsync';
  } else {
    chosen = variant;
  }
  try {
    switch (chosen) {
      case 'parallelAsync':
        return result(n, seed, await (call.pool ?? defaultPool()).submitPi(n, seed, call), chosen);
      case 'nativeAsync':
        return result(n, seed, await raceAbort(requireNative(chosen).piCountRangeUv(0, n, seed), call), chosen);
      case 'nativeChunked': {
        const chunks = opts.chunks ?? 4;
        if (!Number.isInteger(chunks) || chunks < 1 || chunks > 1024) {
          throw makeError('ERR_INVALID_ARG', `chunks must be an integer from 1 to 1024, got ${chunks}`);
        }
        return result(n, seed, await raceAbort(chunkedUv(n, seed, chunks), call), chosen);
      }
      default:
        call.signal?.throwIfAborted();
        return result(n, seed, countSync(chosen, n, seed), chosen);
    }
  } catch (err) {
    throw fromNative(err);
  }
}
