/**
 * The API both entries export (index.ts for Node, browser.ts for browsers): the same
 * functions, classes and result shapes on every host.
 */
import * as md5 from './kernels/md5.js';
import * as pi from './kernels/pi.js';
import * as qr from './kernels/qr.js';
import * as sha256 from './kernels/sha256.js';
import * as stats from './kernels/stats.js';
import * as schema from './schema/index.js';

export {
  AbortError,
  type ErrorCode,
  errorRegistry,
  OffthreadError,
  OffthreadRangeError,
  OffthreadTypeError,
  SchemaReadError,
  SchemaWriteError,
} from './errors.js';
export {
  type NumericColumn,
  RecordBatch,
  type RecordColumnInfo,
  type RecordStats,
  type RecordStream,
  StringColumn,
} from './filters/records.js';
export type { ColumnDecl, ColumnDefault, OnError } from './filters/spec.js';
export { type BackendInfo, type BackendName, backendInfo } from './host.js';
export type { IterateOptions } from './kernels/md5.js';
export type { PiAsyncOptions, PiOptions, PiResult } from './kernels/pi.js';
export type { Ecc, QrOptions } from './kernels/qr.js';
export type { TemperatureSummary } from './kernels/stats.js';
export {
  all,
  Emitter,
  type FanOutEntry,
  type Listener,
  type Offloaded,
  type OffloadedCall,
  type Task,
  type TaskCall,
  type TaskContext,
} from './pool/fanout.js';
export {
  type CallOptions,
  defaultPool,
  type EngineName,
  type LatencyStats,
  Pool,
  type PoolOptions,
  type PoolStats,
  type TaskStats,
} from './pool/pool.js';
export { md5, pi, qr, schema, sha256, stats };
