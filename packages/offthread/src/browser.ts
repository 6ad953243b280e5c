/**
 * offthread for browsers (`import … from 'offthread'` in a bundler, or
 * 'offthread/browser'): the same API as Node's, on a pool of Web Workers each running
 * offthread.wasm. Built from the same sources as the Node entry; only web/ differs.
 */
import type { BackendInfo } from './host.js';
import { installHost } from './host.js';
import { resetDefaultPool } from './pool/pool.js';
import { type InitOptions, init as load, webHost } from './web/host.js';

installHost(webHost);

export * from './api.js';
export type { FilterBuilders, StreamOptions } from './filters/builders.js';
export type {
  ColumnType,
  CsvOptions,
  FilterSpec,
  NdjsonOptions,
  RecordColumn,
  TextEncodingName,
} from './filters/spec.js';
/** Filters as TransformStreams (`filters.gzip()`, …), on the pool's workers (offthread.wasm there). */
export { web as filters } from './filters/web.js';
export * as guests from './guests/index.js';
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
export type { InitOptions } from './web/host.js';

/**
 * Loads offthread.wasm (and optionally the schema compiler) from elsewhere than beside
 * this module. The default pool is replaced, so later calls use what was loaded; pools
 * you made yourself keep their engine.
 */
export async function init(options?: InitOptions): Promise<BackendInfo> {
  const info = await load(options);
  resetDefaultPool();
  return info;
}

/** Settles once offthread.wasm is loaded (or failed to: `backendInfo().wasm.error` says why). */
export const ready: Promise<BackendInfo> = load();
