/**
 * What a task module reads of the call it is running: `currentTask()` inside an export
 * gives its signal (aborted by the caller's `signal` or `timeout`) and progress reporting.
 * The worker's loop (tasks/runner.ts) sets it before each call; it lives on globalThis so
 * a task module's own copy of offthread (another install, a bundle) sees the same one.
 */
import { describe, makeError } from '../errors.js';
import type { JobContext } from '../pool/serve.js';

/** The running task's view of its call. */
export interface CurrentTask {
  /**
   * Aborted when the caller aborts the call or its timeout passes. A loop that never
   * awaits can still poll it: reading `signal.aborted` (or `throwIfAborted()`) checks.
   */
  readonly signal: AbortSignal;
  /** Sends `value` to the caller's `onProgress` (structured clone). */
  progress(value: unknown): void;
}

const KEY = Symbol.for('offthread.currentTask');
type Holder = { [KEY]?: JobContext | undefined };

/** @internal The worker loop: the context of the task about to run. */
export function setTaskContext(context: JobContext | undefined): void {
  (globalThis as Holder)[KEY] = context;
}

/** The context of the task running on this worker; throws ERR_NOT_IN_TASK elsewhere. */
export function currentTask(): CurrentTask {
  const context = (globalThis as Holder)[KEY];
  if (!context) throw makeError('ERR_NOT_IN_TASK', 'currentTask() is only available inside a task running on a worker');
  return context;
}

const EXPOSED = Symbol.for('offthread.exposedTasks');
type Exposed = { [EXPOSED]?: Record<string, unknown> | undefined };

/**
 * Names a task module's functions by side effect, for bundlers that bundle the module as
 * a worker entry and drop its exports (Vite's `?worker&url`: docs/browser.md). Call it
 * once at the module's top level: `exposeTasks({ resize, report })`. The worker that
 * imports the module takes these as its exports. Harmless anywhere else.
 */
export function exposeTasks(functions: Record<string, unknown>): void {
  if (functions === null || typeof functions !== 'object') {
    throw makeError('ERR_INVALID_ARG', `exposeTasks() takes an object of functions, got ${describe(functions)}`);
  }
  (globalThis as Exposed)[EXPOSED] = functions;
}

/** @internal The worker: what the module just imported exposed (and forget it). */
export function takeExposed(): Record<string, unknown> | undefined {
  const g = globalThis as Exposed;
  const out = g[EXPOSED];
  g[EXPOSED] = undefined;
  return out;
}
