/**
 * Parallel fan-out (the Nexus.js idea, in Node): run many kernel calls at once on one
 * pool and get their results in order. A task or listener receives `{ pool, signal }`
 * and passes them to the kernels it calls, so it runs on the pool and is cancelled
 * with its siblings; plain JS code runs on the loop as usual.
 */
import { makeError } from '../errors.js';
import { isArray, isInstance, toOptions } from '../validate.js';
import { checkCallOptions, defaultPool, Pool } from './pool.js';

/** What a task or listener receives: run kernels on `pool`, stop when `signal` aborts. */
export interface TaskContext {
  pool: Pool;
  signal: AbortSignal;
}

export type Task<T> = (ctx: TaskContext) => T | Promise<T>;

type Results<T extends readonly Task<unknown>[]> = { -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> };

/**
 * Starts every task concurrently and resolves to their results in task order. The first
 * failure rejects the whole call and aborts the other tasks' signal.
 */
export async function all<const T extends readonly Task<unknown>[]>(
  tasks: T,
  options: { pool?: Pool; signal?: AbortSignal } = {},
): Promise<Results<T>> {
  if (!isArray(tasks) || tasks.some((t) => typeof t !== 'function')) {
    throw makeError('ERR_INVALID_ARG', 'tasks must be an array of functions');
  }
  const opts = checkCallOptions(toOptions<{ pool: Pool; signal: AbortSignal }>(options, ['pool', 'signal']));
  const pool = opts.pool ?? defaultPool();
  const signal = opts.signal;
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  const ctx: TaskContext = { pool, signal: controller.signal };
  try {
    const running = tasks.map(async (task) => task(ctx));
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
 * An event emitter whose `emit` runs every listener concurrently (kernel listeners on
 * the pool) and resolves to the array of their results, in listener order.
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

  on<E extends keyof Events, R>(event: E, listener: Listener<Events[E], R>): this {
    if (typeof listener !== 'function') throw makeError('ERR_INVALID_ARG', 'listener must be a function');
    const list = this.#listeners.get(event) ?? [];
    list.push(listener as Listener<never, unknown>);
    this.#listeners.set(event, list);
    return this;
  }

  off<E extends keyof Events>(event: E, listener: Listener<Events[E], unknown>): this {
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
      listeners.map((listener) => (ctx: TaskContext) => listener(payload, ctx)),
      { pool: this.#pool, signal: toOptions<{ signal: AbortSignal }>(options, ['signal']).signal },
    );
  }
}
