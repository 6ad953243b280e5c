/**
 * offthread for Node: CPU work off the event loop. Rust kernels run on a work-stealing
 * pool behind Promises; without the addon, the same kernels as WebAssembly run on
 * worker threads; without WASM, π and MD5 run in JS on worker threads.
 *
 * ```js
 * const { pi } = require('offthread');
 * const r = await pi.estimate(1e9, { seed: 1 }); // { estimate, inside, samples, seed, variant }
 * ```
 */
import './node/install.js';
import { type BackendInfo, backendInfo } from './host.js';
import type { QrOptions } from './kernels/qr.js';
import * as qrKernels from './kernels/qr.js';
import type { CallOptions } from './pool/pool.js';

export * from './api.js';
export type { FilterBuilders, StreamOptions } from './filters/builders.js';
export { type FileSourceOptions, type PartialFiles, Source } from './filters/nexus.js';
export { FilterTransform, filters } from './filters/node.js';
export type {
  ColumnType,
  CsvOptions,
  FilterSpec,
  NdjsonOptions,
  RecordColumn,
  TextEncodingName,
} from './filters/spec.js';
export { type TaskFilterOptions, TaskTransform } from './filters/task.js';
export * as guests from './guests/index.js';
export { type LoopDelayMonitor, type LoopDelaySummary, monitorLoopDelay } from './node/loop-delay.js';
export {
  type CurrentTask,
  currentTask,
  exposeTasks,
  type Priority,
  type TaskCallOptions,
  type TaskFunction,
  type TaskModule,
  type TaskResult,
  type TaskStream,
  type TasksOptions,
  tasks,
} from './tasks/index.js';

/** QR codes (api.ts's `qr`), typed as they run in Node: the PNG functions give a Buffer. */
export const qr = qrKernels as Omit<typeof qrKernels, 'toPNG' | 'toPNGSync'> & {
  /** The PNG file's bytes, encoded on the pool. */
  toPNG(text: string, options?: QrOptions & CallOptions): Promise<Buffer>;
  /** The PNG file's bytes, on the calling thread. */
  toPNGSync(text: string, options?: QrOptions): Buffer;
};

let loaded: Promise<BackendInfo> | undefined;
function load(): Promise<BackendInfo> {
  loaded ??= Promise.resolve().then(backendInfo);
  return loaded;
}
/**
 * The browser entry's `ready`, so code written for both hosts (and a bundler's type
 * check, which sees this entry's types) has it: Node loads its backend on first use, so
 * this settles with what `backendInfo()` says then. Lazy: awaiting it is what loads.
 */
export const ready: Promise<BackendInfo> = {
  // biome-ignore lint/suspicious/noThenProperty: a promise that starts on first use
  then: (resolved, rejected) => load().then(resolved, rejected),
  catch: (rejected) => load().catch(rejected),
  finally: (done) => load().finally(done),
  [Symbol.toStringTag]: 'Promise',
};
