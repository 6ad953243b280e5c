/**
 * The producer's face of a task module on the queue: `queue.tasks<typeof import('./work.js')>(…)`
 * gives an object whose functions queue a job per call, typed from the module as
 * `tasks()` types a local one. The jobs run on `offthread worker --tasks ./work.js`
 * processes (queue/worker.ts), on their pools.
 */
import { describe, makeError } from '../errors.js';
import { toOptions } from '../validate.js';
import { MODULE_NAME, moduleFile, moduleHash } from './task-wire.js';
import type { JobData } from './wire.js';

// biome-ignore lint/suspicious/noExplicitAny: the shape of any function, as TS spells it
export type AnyFunction = (...args: any[]) => any;

/** Options of one queued task call (`work.fn.with(options)(…args)`). */
export interface QueueTaskCallOptions {
  /** Aborts the call: it rejects at once, the job is removed or, running, cancelled (the task's signal aborts). */
  signal?: AbortSignal | undefined;
  /** ms until the call rejects with ERR_TIMEOUT; the worker aborts the task at the same deadline. */
  timeout?: number | undefined;
  /** Called with the values the task reports through `currentTask().progress(value)` (the latest ones: see docs/queue.md). */
  onProgress?: ((value: unknown) => void) | undefined;
}

/** Options of `queue.tasks()`: how the workers' module is known to be the producer's. */
export interface QueueTasksOptions {
  /**
   * The version the module declares (`export const version = '…'`): a worker whose module
   * declares another (or none) fails the job with ERR_QUEUE_TASK_VERSION.
   */
  version?: string | undefined;
  /**
   * The module file (a URL or an absolute path) when the first argument is a name: its
   * content hash must equal the worker's file's.
   */
  module?: string | URL | undefined;
  /** The name workers know the module by (default: the file's base name, `work` for work.js). */
  name?: string | undefined;
}

/** One export of a task module, run as a queued job. */
export interface QueueTaskFunction<F extends AnyFunction> {
  (...args: Parameters<F>): Promise<Awaited<ReturnType<F>>>;
  /** The same call with options: `work.fn.with({ signal, timeout, onProgress })(…args)`. */
  with(options: QueueTaskCallOptions): (...args: Parameters<F>) => Promise<Awaited<ReturnType<F>>>;
}

/** A task module's exported functions, each queued as a job. */
export type QueueTaskModule<M> = {
  readonly [K in keyof M as M[K] extends AnyFunction ? K : never]: M[K] extends AnyFunction
    ? QueueTaskFunction<M[K]>
    : never;
};

/** The module's name on the workers and what its jobs carry to prove which module they were made for. */
export interface TaskIdentity {
  name: string;
  data: Pick<JobData, 'h' | 'mv'>;
}

const VERSION = /^[\x21-\x7e]{1,100}$/;

/**
 * `queue.tasks(module, options)`'s first two arguments: a module file (URL or absolute
 * path: hashed), or a name with `{ version }` and/or `{ module }`. One identity at least:
 * a job whose worker might run another module than the producer's is never queued blind.
 */
export function taskIdentity(module: unknown, options: unknown): TaskIdentity {
  const o = toOptions<QueueTasksOptions>(options, ['version', 'module', 'name'], 'queue.tasks options');
  if (o.version !== undefined && (typeof o.version !== 'string' || !VERSION.test(o.version))) {
    throw makeError(
      'ERR_INVALID_ARG',
      `options.version must be 1-100 printable ASCII characters, got ${describe(o.version)}`,
    );
  }
  const isName = typeof module === 'string' && MODULE_NAME.test(module);
  if (isName && o.name !== undefined) {
    throw makeError('ERR_INVALID_ARG', 'give the module name once: as the first argument or as options.name');
  }
  if (isName && o.module === undefined && o.version === undefined) {
    throw makeError(
      'ERR_INVALID_ARG',
      `queue.tasks(${JSON.stringify(module)}) needs { version } (the module's declared version) or { module } ` +
        '(its file, hashed): a worker running another version of the module must be detected, not run',
    );
  }
  if (isName && o.module !== undefined && typeof o.module !== 'string' && !(o.module instanceof URL)) {
    throw makeError('ERR_INVALID_ARG', `options.module must be a URL or an absolute path, got ${describe(o.module)}`);
  }
  const fileGiven = isName ? o.module : (module as string | URL);
  const file = fileGiven === undefined ? undefined : moduleFile(fileGiven, 'queue.tasks()');
  const name = isName ? (module as string) : (o.name ?? file?.name ?? '');
  if (!MODULE_NAME.test(name)) {
    throw makeError(
      'ERR_INVALID_ARG',
      `a task module's name must be 1-100 characters of [A-Za-z0-9_-], got ${describe(name)} (set options.name)`,
    );
  }
  const data: TaskIdentity['data'] = {};
  if (file) data.h = moduleHash(file.path);
  if (o.version !== undefined) data.mv = o.version;
  return { name, data };
}

const CALL_KEYS = ['signal', 'timeout', 'onProgress'] as const;
const NO_OPTIONS: QueueTaskCallOptions = {};

/**
 * The module object: a function per export name, each calling `run(name, args, options)`.
 * `check` checks a call's options once, when `.with` is called.
 */
export function taskModule<M>(
  run: (fn: string, args: unknown[], call: QueueTaskCallOptions) => Promise<unknown>,
  check: (options: QueueTaskCallOptions) => QueueTaskCallOptions,
): QueueTaskModule<M> {
  const made = new Map<string, QueueTaskFunction<AnyFunction>>();
  const make = (name: string): QueueTaskFunction<AnyFunction> => {
    const fn = ((...args: unknown[]) => run(name, args, NO_OPTIONS)) as QueueTaskFunction<AnyFunction>;
    fn.with = (options: QueueTaskCallOptions) => {
      const checked = check(toOptions<QueueTaskCallOptions>(options, CALL_KEYS, 'task options'));
      return (...args: unknown[]) => run(name, args, checked);
    };
    return fn;
  };
  return new Proxy(Object.create(null) as QueueTaskModule<M>, {
    get(_, name) {
      // Not thenable (so `await work` is the object), and no symbols: as tasks().
      if (typeof name !== 'string' || name === 'then') return undefined;
      let fn = made.get(name);
      if (!fn) {
        fn = make(name);
        made.set(name, fn);
      }
      return fn;
    },
  });
}
