/**
 * Parallel fan-out (the Nexus.js idea, in Node): run many calls at once on one pool and
 * get their results in order. A task or listener that is a function receives `{ pool,
 * signal }` and passes them to the kernels it calls, so it runs on the pool and is
 * cancelled with its siblings; its own JS runs on the loop. One that is *offloaded* (a
 * task module's export, `tasks()`) runs whole on the pool's workers: it is called with
 * its arguments alone and the fan-out's pool and signal as its call options.
 */
import { describe, makeError } from '../errors.js';
import { isArray, isInstance, toOptions } from '../validate.js';
import { checkCallOptions, defaultPool, Pool } from './pool.js';

/** What a task or listener receives: run kernels on `pool`, stop when `signal` aborts. */
export interface TaskContext {
  pool: Pool;
  signal: AbortSignal;
}

export type Task<T> = (ctx: TaskContext) => T | Promise<T>;

/**
 * Marks a function that runs elsewhere and takes call options instead of a context (a
 * task module's export: tasks/ sets it). The pool knows no feature, so the feature
 * marks its functions and the fan-out only reads the mark.
 */
export const OFFLOADED: unique symbol = Symbol.for('offthread.offloaded') as never;

/** The call options the fan-out gives an offloaded function: its pool (if one was given) and its signal. */
export interface OffloadedCall {
  pool?: Pool | undefined;
  signal?: AbortSignal | undefined;
}

/** A function whose calls run on the pool's workers (a task module's export). */
// biome-ignore lint/suspicious/noExplicitAny: any argument list, as TS spells it
export interface Offloaded<A extends any[] = any[], R = unknown> {
  (...args: A): R;
  with(options: OffloadedCall): (...args: A) => R;
}

// biome-ignore lint/suspicious/noExplicitAny: the shape of any function, as TS spells it
type AnyFunction = (...args: any[]) => unknown;

/** A task call: an offloaded function and its arguments (`[work.blur, pixels, 4]`). */
export type TaskCall = readonly [AnyFunction, ...unknown[]];

/** What all() takes: a function of the context (`(ctx) => …`), an offloaded function, or a task call. */
export type FanOutEntry = Task<unknown> | TaskCall;

type Result<E> = E extends readonly [(...args: never[]) => infer R, ...unknown[]]
  ? Awaited<R>
  : E extends (...args: never[]) => infer R
    ? Awaited<R>
    : never;

type Results<T extends readonly unknown[]> = { -readonly [K in keyof T]: Result<T[K]> };

/** Each task call's arguments checked against its function's parameters. */
type CheckedCalls<T extends readonly unknown[]> = {
  [K in keyof T]: T[K] extends readonly [infer F extends AnyFunction, ...unknown[]]
    ? readonly [F, ...Parameters<F>]
    : T[K];
};

/** @internal Whether `fn` is an offloaded function (a task module's export). */
export function isOffloaded(fn: unknown): fn is Offloaded {
  return typeof fn === 'function' && (fn as unknown as Record<symbol, unknown>)[OFFLOADED] === true;
}

/** Checks `tasks` before anything starts: a bad entry is refused, not half run. */
function checkEntries(tasks: unknown): asserts tasks is readonly FanOutEntry[] {
  if (!isArray(tasks)) throw makeError('ERR_INVALID_ARG', 'tasks must be an array');
  for (const [i, entry] of (tasks as unknown[]).entries()) {
    if (typeof entry === 'function') continue;
    if (isArray(entry) && (entry as unknown[]).length > 0) {
      const fn = (entry as unknown[])[0];
      if (isOffloaded(fn)) continue;
      throw makeError(
        'ERR_INVALID_ARG',
        `tasks[${i}] is an array whose first item is not a task export (tasks(…).name): ` +
          `[fn, ...args] runs a task export on the workers; for your own function write (ctx) => fn(…)`,
      );
    }
    throw makeError(
      'ERR_INVALID_ARG',
      `tasks[${i}] must be a function or a [taskExport, ...args] array, got ${describe(entry)}`,
    );
  }
}

/** Starts one entry: an offloaded function with the fan-out's call options, a plain one with the context. */
function start(entry: FanOutEntry, ctx: TaskContext, call: OffloadedCall): unknown {
  if (typeof entry === 'function') return isOffloaded(entry) ? entry.with(call)() : entry(ctx);
  const [fn, ...args] = entry as readonly [Offloaded, ...unknown[]];
  return fn.with(call)(...args);
}

/**
 * Starts every task concurrently and resolves to their results in task order. The first
 * failure rejects the whole call and aborts the other tasks' signal. A task is a
 * function of the context (`(ctx) => pi.estimate(n, ctx)`: its JS on the loop, its
 * kernels on the pool), a task module's export (run on a worker with no arguments), or
 * a task call `[work.blur, pixels, 4]` (run on a worker with those arguments, typed
 * against the export's parameters).
 */
export async function all<const T extends readonly FanOutEntry[]>(
  tasks: T & CheckedCalls<T>,
  options: { pool?: Pool; signal?: AbortSignal } = {},
): Promise<Results<T>> {
  checkEntries(tasks);
  const opts = checkCallOptions(toOptions<{ pool: Pool; signal: AbortSignal }>(options, ['pool', 'signal']));
  const pool = opts.pool ?? defaultPool();
  const signal = opts.signal;
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  const ctx: TaskContext = { pool, signal: controller.signal };
  // A task export keeps its module's pool unless the fan-out was given one.
  const call: OffloadedCall = { pool: opts.pool, signal: controller.signal };
  try {
    const running = (tasks as readonly FanOutEntry[]).map(async (task) => start(task, ctx, call));
    running.forEach((p) => {
      p.catch((err) => controller.abort(err));
    });
    return (await Promise.all(running)) as Results<T>;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

export type Listener<P, R> = (payload: P, ctx: TaskContext) => R | Promise<R>;

/**
 * An event emitter whose `emit` runs every listener concurrently and resolves to the
 * array of their results, in listener order. A listener that is a task module's export
 * (`emitter.on('order', work.handle)`) runs on a worker, called with the payload alone;
 * a function listener runs on the loop (its kernel calls on the pool).
 */
// biome-ignore lint/suspicious/noExplicitAny: an untyped emitter takes any payload, as EventEmitter does
export class Emitter<Events extends Record<string, unknown> = Record<string, any>> {
  readonly #listeners = new Map<keyof Events, Listener<never, unknown>[]>();
  readonly #pool: Pool | undefined;

  constructor(options: { pool?: Pool } = {}) {
    const { pool } = toOptions<{ pool: Pool }>(options, ['pool']);
    if (pool !== undefined && !isInstance(pool, Pool)) {
      throw makeError('ERR_INVALID_ARG', 'options.pool must be an offthread Pool');
    }
    this.#pool = pool;
  }

  /** A listener: a function of the payload and the context (on the loop), or a task export taking the payload (on a worker). */
  on<E extends keyof Events, R>(event: E, listener: Listener<Events[E], R>): this;
  on<E extends keyof Events, R>(event: E, listener: Offloaded<[payload: Events[E]], R>): this;
  on<E extends keyof Events, R>(event: E, listener: Listener<Events[E], R> | Offloaded<[payload: Events[E]], R>): this {
    if (typeof listener !== 'function') throw makeError('ERR_INVALID_ARG', 'listener must be a function');
    const list = this.#listeners.get(event) ?? [];
    list.push(listener as Listener<never, unknown>);
    this.#listeners.set(event, list);
    return this;
  }

  off<E extends keyof Events>(event: E, listener: Listener<Events[E], unknown>): this;
  off<E extends keyof Events>(event: E, listener: Offloaded<[payload: Events[E]], unknown>): this;
  off<E extends keyof Events>(
    event: E,
    listener: Listener<Events[E], unknown> | Offloaded<[payload: Events[E]], unknown>,
  ): this {
    const list = this.#listeners.get(event) ?? [];
    const i = list.indexOf(listener as Listener<never, unknown>);
    if (i >= 0) list.splice(i, 1);
    return this;
  }

  listenerCount(event: keyof Events): number {
    return this.#listeners.get(event)?.length ?? 0;
  }

  /** Runs every listener of `event` at once; resolves to their results in listener order. */
  emit<E extends keyof Events>(
    event: E,
    payload: Events[E],
    options: { signal?: AbortSignal } = {},
  ): Promise<unknown[]> {
    const listeners = [...(this.#listeners.get(event) ?? [])] as Listener<Events[E], unknown>[];
    return all(
      listeners.map(
        (listener): FanOutEntry =>
          isOffloaded(listener) ? [listener, payload] : (ctx: TaskContext) => listener(payload, ctx),
      ),
      { pool: this.#pool, signal: toOptions<{ signal: AbortSignal }>(options, ['signal']).signal },
    );
  }
}
