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
export * as guests from './guests/index.js';
export { type LoopDelayMonitor, type LoopDelaySummary, monitorLoopDelay } from './node/loop-delay.js';
export {
  type CurrentTask,
  currentTask,
  type Priority,
  type TaskCallOptions,
  type TaskFunction,
  type TaskModule,
  type TaskResult,
  type TaskStream,
  type TasksOptions,
  tasks,
} from './tasks/index.js';
