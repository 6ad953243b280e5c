/**
 * Your own JavaScript on the pool's workers: `tasks(moduleUrl)` gives an object whose
 * functions run the module's exports on worker threads and resolve to their results.
 *
 * ```ts
 * import { tasks } from 'offthread';
 * const work = tasks<typeof import('./work.js')>(new URL('./work.js', import.meta.url));
 * await work.blur(pixels, 4); // on a worker
 * await work.blur.with({ signal, timeout: 50, transfer: [pixels.buffer], priority: 'high' })(pixels, 4);
 * ```
 *
 * The module is imported once per worker, on the pool's first call. Each exported
 * function is registered with the pool's workers the first time it is used
 * (tasks/runner.ts runs it there); arguments and results cross as pool/jobs.ts says.
 */

import { describe, makeError } from '../errors.js';
import { host, type Transferable } from '../host.js';
import { OFFLOADED } from '../pool/fanout.js';
import { type JobOptions, type Jobs, jobPool } from '../pool/jobs.js';
import { PRIORITIES, type Priority } from '../pool/layout.js';
import { checkCallOptions, defaultPool, Pool } from '../pool/pool.js';
import { isInstance, toOptions } from '../validate.js';
import { TASK_REF, type TaskRef } from './ref.js';
import type { ModuleShape, TaskSetup } from './runner.js';

export type { Priority } from '../pool/layout.js';

/** Options of one task call (`work.fn.with(options)(…args)`). */
export interface TaskCallOptions {
  /** Run on this pool instead of the module's (or the default one). */
  pool?: Pool | undefined;
  /** Aborts the call: it rejects at once, and the running task's `currentTask().signal` aborts. */
  signal?: AbortSignal | undefined;
  /** ms until the call rejects with ERR_TIMEOUT (and the task's signal aborts). */
  timeout?: number | undefined;
  /** ArrayBuffers (and other transferables) to move to the worker instead of copying them. */
  transfer?: Transferable[] | undefined;
  /** 'high', 'normal' (default) or 'low'. Higher first, but a busy pool still runs lower ones (no starvation). */
  priority?: Priority | undefined;
  /** Called with each value the task reports through `currentTask().progress(value)`. */
  onProgress?: ((value: unknown) => void) | undefined;
}

/** Options of `tasks()`: the defaults of every call to the module. */
export interface TasksOptions {
  /** The pool the module's calls run on (default: the default pool). */
  pool?: Pool | undefined;
}

// biome-ignore lint/suspicious/noExplicitAny: the shape of any function, as TS spells it
type AnyFunction = (...args: any[]) => any;

/** The items of a generator function's result, or never. */
type StreamItem<R> =
  R extends AsyncGenerator<infer T, unknown, unknown> ? T : R extends Generator<infer T, unknown, unknown> ? T : never;

/** The streamed result of a generator export: `for await (const item of stream)`; `break` stops the generator on its worker. */
export interface TaskStream<T> extends AsyncIterableIterator<T> {}

/**
 * What calling an export gives: a promise of its result; for a generator function, a
 * promise of its stream that is itself async-iterable (`for await (const x of work.rows())`).
 */
export type TaskResult<R> = [StreamItem<R>] extends [never]
  ? Promise<Awaited<R>>
  : Promise<TaskStream<StreamItem<R>>> & AsyncIterable<StreamItem<R>>;

/** One export of a task module, run on the pool. */
export interface TaskFunction<F extends AnyFunction> {
  (...args: Parameters<F>): TaskResult<ReturnType<F>>;
  /** The same call with options: `work.fn.with({ signal })(…args)`. */
  with(options: TaskCallOptions): (...args: Parameters<F>) => TaskResult<ReturnType<F>>;
}

/** A task module's exported functions, each running on the pool. */
export type TaskModule<M> = {
  readonly [K in keyof M as M[K] extends AnyFunction ? K : never]: M[K] extends AnyFunction
    ? TaskFunction<M[K]>
    : never;
};

const CALL_KEYS = ['pool', 'signal', 'timeout', 'transfer', 'priority', 'onProgress'] as const;

/** What the tasks feature keeps per pool: its job pool and the functions it registered there. */
interface PoolTasks {
  jobs: Jobs;
  modules: Map<string, number>;
  functions: Map<string, number>;
}

const TASKS = Symbol('offthread.tasks');

/** Per module URL, its exports that stream (generator functions), as its first worker reported. */
const shapes = new Map<string, Set<string>>();

/** A call's promise, made async-iterable: it iterates the stream it resolves to. */
function iterable(promise: Promise<unknown>, name: string): Promise<unknown> {
  Object.defineProperty(promise, Symbol.asyncIterator, {
    value(): AsyncIterableIterator<unknown> {
      let inner: AsyncIterator<unknown> | null = null;
      const get = async (): Promise<AsyncIterator<unknown>> => {
        if (inner) return inner;
        const value = (await promise) as Partial<AsyncIterable<unknown>> | null;
        if (!value || typeof value[Symbol.asyncIterator] !== 'function') {
          throw makeError('ERR_TASK_EXPORT', `${name}() returned a value, not a stream: await it instead of iterating`);
        }
        inner = (value as AsyncIterable<unknown>)[Symbol.asyncIterator]();
        return inner;
      };
      return {
        next: async () => (await get()).next(),
        async return(value?: unknown) {
          if (inner) return (await inner.return?.(value)) ?? { done: true, value };
          promise.then(
            (s) => (s as AsyncIterator<unknown> | null)?.return?.(),
            () => {},
          );
          return { done: true, value };
        },
        [Symbol.asyncIterator]() {
          return this;
        },
      };
    },
  });
  return promise;
}

function poolTasks(pool: Pool): PoolTasks {
  return pool.resource(TASKS, (options) => {
    const jobs = jobPool({ ...options, script: 'tasks' });
    jobs.onReply = (body) => {
      const shape = body as ModuleShape;
      shapes.set(shape.url, new Set(shape.streams));
    };
    return {
      name: 'tasks',
      jobs,
      modules: new Map(),
      functions: new Map(),
      stats: () => jobs.stats(),
      close: () => jobs.close(),
      destroy: () => jobs.destroy(),
      sleep: () => jobs.sleep(),
      set onBusy(fn: (busy: boolean) => void) {
        jobs.onBusy = fn;
      },
    };
  });
}

/** The id of `name` of `url` on `pool`, registering the module and the function there first. */
function functionId(t: PoolTasks, url: string, name: string): number {
  const key = `${name}\0${url}`;
  let fn = t.functions.get(key);
  if (fn !== undefined) return fn;
  let mod = t.modules.get(url);
  if (mod === undefined) {
    mod = t.modules.size;
    t.modules.set(url, mod);
    t.jobs.setup({ kind: 'module', mod, url } satisfies TaskSetup);
  }
  fn = t.functions.size;
  t.functions.set(key, fn);
  t.jobs.setup({ kind: 'export', fn, mod, name } satisfies TaskSetup);
  return fn;
}

function moduleUrl(module: unknown): string {
  if (isInstance(module, URL)) return (module as URL).href;
  if (typeof module === 'string' && module.length > 0) {
    if (module.startsWith('/')) {
      // A page's workers resolve a path against the page's origin (Node: a file path).
      const page =
        host().name === 'browser' ? (globalThis as { location?: { href: string } }).location?.href : undefined;
      if (page) return new URL(module, page).href;
      return new URL(`file://${encodeURI(module).replace(/[?#]/g, encodeURIComponent)}`).href;
    }
    if (module.startsWith('.')) {
      throw makeError(
        'ERR_INVALID_ARG',
        `tasks() needs an absolute path or a URL, got the relative ${describe(module)}: use new URL(${JSON.stringify(module)}, import.meta.url) (or path.join(__dirname, …))`,
      );
    }
    return module; // a file: / data: URL, or a package specifier
  }
  throw makeError('ERR_INVALID_ARG', `tasks() takes a module URL or an absolute path, got ${describe(module)}`);
}

function checkTaskOptions(options: unknown, defaults: TasksOptions): TaskCallOptions & JobOptions {
  const o = toOptions<TaskCallOptions>(options, CALL_KEYS, 'task options');
  const { signal, timeout } = checkCallOptions({ pool: o.pool, signal: o.signal, timeout: o.timeout });
  if (o.transfer !== undefined && !Array.isArray(o.transfer)) {
    throw makeError('ERR_INVALID_ARG', `options.transfer must be an array, got ${describe(o.transfer)}`);
  }
  if (o.priority !== undefined && !PRIORITIES.includes(o.priority)) {
    throw makeError(
      'ERR_INVALID_ARG',
      `options.priority must be 'high', 'normal' or 'low', got ${describe(o.priority)}`,
    );
  }
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') {
    throw makeError('ERR_INVALID_ARG', `options.onProgress must be a function, got ${describe(o.onProgress)}`);
  }
  return { ...o, pool: o.pool ?? defaults.pool, signal, timeout };
}

const NO_OPTIONS: JobOptions = {};

/**
 * Runs the exports of the module at `module` (a URL, e.g. `new URL('./work.js',
 * import.meta.url)`, or an absolute path) on the pool's workers. Type it with the
 * module's own type: `tasks<typeof import('./work.js')>(…)`.
 */
export function tasks<M = Record<string, AnyFunction>>(module: string | URL, options?: TasksOptions): TaskModule<M> {
  const url = moduleUrl(module);
  const defaults = toOptions<TasksOptions>(options, ['pool'], 'tasks options');
  if (defaults.pool !== undefined && !isInstance(defaults.pool, Pool)) {
    throw makeError('ERR_INVALID_ARG', 'options.pool must be an offthread Pool');
  }
  const made = new Map<string, TaskFunction<AnyFunction>>();
  const make = (name: string): TaskFunction<AnyFunction> => {
    let lastPool: Pool | undefined;
    let last: PoolTasks | undefined;
    let lastFn = 0;
    const run = (args: unknown[], call: TaskCallOptions & JobOptions): Promise<unknown> => {
      try {
        const pool = call.pool ?? defaults.pool ?? defaultPool();
        if (pool !== lastPool) {
          last = poolTasks(pool);
          lastFn = functionId(last, url, name);
          lastPool = pool;
        }
        if (pool.closed) return Promise.reject(makeError('ERR_POOL_CLOSED', 'the pool is closed'));
        return (last as PoolTasks).jobs.run(lastFn, args, call);
      } catch (err) {
        return Promise.reject(err);
      }
    };
    // Calls of exports known not to stream return the pool's promise as it is (the hot path).
    const call = (args: unknown[], options: TaskCallOptions & JobOptions): Promise<unknown> => {
      const p = run(args, options);
      return shapes.get(url)?.has(name) === false ? p : iterable(p, name);
    };
    const fn = ((...args: unknown[]) => call(args, NO_OPTIONS)) as unknown as TaskFunction<AnyFunction>;
    fn.with = (callOptions: TaskCallOptions) => {
      const checked = checkTaskOptions(callOptions, defaults);
      return ((...args: unknown[]) => call(args, checked)) as ReturnType<TaskFunction<AnyFunction>['with']>;
    };
    // all() and Emitter run it on the workers (pool/fanout.ts); filters.task() finds its module (tasks/ref.ts).
    const ref: TaskRef = { url, name, pool: defaults.pool };
    Object.defineProperties(fn, { [OFFLOADED]: { value: true }, [TASK_REF]: { value: ref } });
    return fn;
  };
  return new Proxy(Object.create(null) as TaskModule<M>, {
    get(_, name) {
      // Not thenable (so `await work` is the object), and no symbols.
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

/**
 * @internal Registers export `name` of `url` with the pool's workers, as its first call
 * would: each worker imports the module (taking what it exposes, exposeTasks). A task
 * filter does so before its driver runs, which then finds the export there.
 */
export function registerTask(pool: Pool, url: string, name: string): void {
  functionId(poolTasks(pool), url, name);
}

/**
 * @internal A feature's own call of a task export (filters.task() runs its stream driver
 * so): the pool's job options as they are (JobOptions.park, which task calls do
 * not offer), already checked by the feature.
 */
export function runTask(pool: Pool, url: string, name: string, args: unknown[], options: JobOptions): Promise<unknown> {
  try {
    if (pool.closed) return Promise.reject(makeError('ERR_POOL_CLOSED', 'the pool is closed'));
    const t = poolTasks(pool);
    return t.jobs.run(functionId(t, url, name), args, options);
  } catch (err) {
    return Promise.reject(err);
  }
}

export { type CurrentTask, currentTask, exposeTasks } from './context.js';
