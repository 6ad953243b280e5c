/**
 * What a task export's function says of itself, for features that run it in another
 * shape than one call (a stream filter: filters/task.ts runs it on one worker for the
 * stream's life, through tasks/stream-driver.ts).
 */
import type { Pool } from '../pool/pool.js';

export const TASK_REF: unique symbol = Symbol.for('offthread.taskRef') as never;

export interface TaskRef {
  /** The task module's URL, as the workers import it. */
  readonly url: string;
  /** The export's name. */
  readonly name: string;
  /** The module's pool (`tasks(url, { pool })`), if it was given one. */
  readonly pool: Pool | undefined;
}

/** The reference of a task export (`tasks(…).name`), or undefined for anything else. */
export function taskRef(fn: unknown): TaskRef | undefined {
  if (typeof fn !== 'function') return undefined;
  return (fn as unknown as { [TASK_REF]?: TaskRef })[TASK_REF];
}
