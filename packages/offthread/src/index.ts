/**
 * offthread: CPU work off the Node.js event loop. Rust kernels run on a work-stealing
 * pool behind Promises; WebAssembly and pure JS are the fallbacks.
 *
 * ```js
 * const { pi } = require('offthread');
 * const r = await pi.estimate(1e9, { seed: 1 }); // { estimate, inside, samples, seed, variant }
 * ```
 */
import * as md5 from './md5';
import * as pi from './pi';
import * as qr from './qr';
import * as schema from './schema/index';
import * as stats from './stats';

export { type BackendInfo, type BackendName, backendInfo } from './backends/index';
export {
  AbortError,
  type ErrorCode,
  errorRegistry,
  OffthreadError,
  OffthreadRangeError,
  OffthreadTypeError,
} from './errors';
export { all, Emitter, type Listener, type Task, type TaskContext } from './fanout';
export { type LoopDelayMonitor, type LoopDelaySummary, monitorLoopDelay } from './loop-delay';
export type { IterateOptions } from './md5';
export type { PiAsyncOptions, PiOptions, PiResult, PiVariant } from './pi';
export { type CallOptions, defaultPool, type LatencyStats, Pool, type PoolOptions, type PoolStats } from './pool';
export type { Ecc, QrOptions } from './qr';
export { md5, pi, qr, schema, stats };
