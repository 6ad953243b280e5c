/**
 * Monte Carlo π, the product API: `estimate` (off the event loop) and `estimateSync`
 * (on the calling thread). The engine that runs it is picked by size and by the pool's
 * `engine`; the paper's research variants (named implementations, chunk counts, the
 * Rust kernel choice, the koffi FFI row) live in pi-variants.ts, reached through
 * `offthread/internal` only. Any option outside the lists below is ERR_INVALID_ARG
 * (toOptions), so a `variant` given here is refused, never silently ignored.
 */
import type { CallOptions } from '../pool/pool.js';
import { CALL_KEYS, toOptions } from '../validate.js';
import { estimate as estimateVariant, estimateSync as estimateVariantSync, type PiResult } from './pi-variants.js';

export type { PiResult };

export interface PiOptions {
  /** Any safe integer (number or bigint); default 1. */
  seed?: number | bigint;
}

export interface PiAsyncOptions extends PiOptions, CallOptions {}

const SYNC_KEYS = ['seed'] as const;
const ASYNC_KEYS = [...SYNC_KEYS, ...CALL_KEYS] as const;

/**
 * π on the calling thread: `{ estimate, inside, samples, seed, variant }`, where
 * `variant` names the implementation that ran (information only). Throws
 * TypeError/RangeError with a `code` on bad input.
 */
export function estimateSync(samples: number | bigint, options?: PiOptions): PiResult {
  return estimateVariantSync(samples, 'auto', toOptions<PiOptions>(options, SYNC_KEYS));
}

/**
 * π off the event loop: small inputs run inline, the rest on the pool (`options.pool`,
 * else the default pool) in that pool's engine; honours `{ signal, timeout }`.
 */
export function estimate(samples: number | bigint, options?: PiAsyncOptions): Promise<PiResult> {
  try {
    return estimateVariant(samples, 'auto', toOptions<PiAsyncOptions>(options, ASYNC_KEYS));
  } catch (err) {
    return Promise.reject(err);
  }
}
