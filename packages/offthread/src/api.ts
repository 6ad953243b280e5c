/**
 * The API both entries export (index.ts for Node, browser.ts for browsers): the same
 * functions, classes and result shapes on every host.
 */
import * as md5 from './md5.js';
import * as pi from './pi.js';
import * as qr from './qr.js';
import * as schema from './schema/index.js';
import * as sha256 from './sha256.js';
import * as stats from './stats.js';

export {
  AbortError,
  type ErrorCode,
  errorRegistry,
  OffthreadError,
  OffthreadRangeError,
  OffthreadTypeError,
} from './errors.js';
export { all, Emitter, type Listener, type Task, type TaskContext } from './fanout.js';
export { type BackendInfo, type BackendName, backendInfo } from './host.js';
export type { IterateOptions } from './md5.js';
export type { PiAsyncOptions, PiOptions, PiResult, PiVariant } from './pi.js';
export {
  type CallOptions,
  defaultPool,
  type EngineName,
  type LatencyStats,
  Pool,
  type PoolOptions,
  type PoolStats,
  type TaskStats,
} from './pool.js';
export type { Ecc, QrOptions } from './qr.js';
export type { TemperatureSummary } from './stats.js';
export { md5, pi, qr, schema, sha256, stats };
