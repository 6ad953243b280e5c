/**
 * The offthread pool as JS sees it: every async kernel call becomes a job on native
 * threads; completions come back in batches (one loop wake-up settles many promises).
 */

import type { NativePool } from '../native/binding';
import { native as binding } from './backends/native';
import { AbortError, type ErrorCode, makeError, OffthreadError } from './errors';
import { toOptions } from './validate';

export interface PoolOptions {
  /** Worker threads; default: available parallelism. Integer 1…1024. */
  threads?: number;
  /** Most jobs waiting to start; past it calls reject with ERR_QUEUE_FULL. Default unbounded. */
  maxQueue?: number;
}

/** Options every async kernel call accepts. */
export interface CallOptions {
  /** Run on this pool instead of the default one. */
  pool?: Pool;
  /** Abort: a queued job is dropped at once, a running one stops at its next check. */
  signal?: AbortSignal;
  /** Milliseconds until the call rejects with ERR_TIMEOUT (and the job is cancelled). */
  timeout?: number;
}

export interface PoolStats {
  threads: number;
  queued: number;
  running: number;
  completed: number;
  failed: number;
  cancelled: number;
  /** Promises not yet settled on the JS side. */
  pending: number;
}

interface Pending {
  resolve(value: never): void;
  reject(err: unknown): void;
  cleanup: (() => void) | undefined;
}

/** Triples per drain call: 1,024 completions per napi call. */
const DRAIN_BATCH = 1024;

function checkPositiveInt(value: unknown, name: string, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw makeError('ERR_INVALID_POOL_OPTIONS', `${name} must be an integer from 1 to ${max}, got ${String(value)}`);
  }
  return value;
}

/** Validates `{ pool, signal, timeout }` (shared by every async kernel). */
export function checkCallOptions(opts: Partial<CallOptions>): CallOptions {
  const { pool, signal, timeout } = opts;
  if (pool !== undefined && !(pool instanceof Pool)) {
    throw makeError('ERR_INVALID_ARG', 'options.pool must be an offthread Pool');
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw makeError('ERR_INVALID_ARG', 'options.signal must be an AbortSignal');
  }
  if (timeout !== undefined && !(typeof timeout === 'number' && timeout > 0 && timeout <= 2 ** 31 - 1)) {
    throw makeError(
      'ERR_INVALID_ARG',
      `options.timeout must be a number of ms from 1 to 2^31-1, got ${String(timeout)}`,
    );
  }
  return { pool, signal, timeout } as CallOptions;
}

function abortError(signal: AbortSignal): AbortError {
  return new AbortError('The operation was aborted', { cause: signal.reason });
}

/**
 * Settles with `promise`, or rejects early on abort/timeout. For work that cannot be
 * cancelled (libuv AsyncTasks): the result is dropped, the thread still finishes.
 */
export function raceAbort<T>(promise: Promise<T>, call: CallOptions): Promise<T> {
  const { signal, timeout } = call;
  if (!signal && timeout === undefined) return promise;
  if (signal?.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const timer =
      timeout === undefined
        ? undefined
        : setTimeout(() => reject(makeError('ERR_TIMEOUT', `timed out after ${timeout} ms`)), timeout);
    const onAbort = () => reject(abortError(signal as AbortSignal));
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    });
  });
}

export class Pool {
  readonly #native: NativePool;
  readonly #pending = new Map<number, Pending>();
  readonly #buffer = new Float64Array(3 * DRAIN_BATCH);
  #nextId = 1;
  #state: 'open' | 'closed' | 'destroyed' = 'open';
  #idle: (() => void)[] = [];

  constructor(options?: PoolOptions) {
    const opts = toOptions<PoolOptions>(options, 'pool options');
    const threads = opts.threads === undefined ? 0 : checkPositiveInt(opts.threads, 'threads', 1024);
    const maxQueue =
      opts.maxQueue === undefined || opts.maxQueue === Number.POSITIVE_INFINITY
        ? 0
        : checkPositiveInt(opts.maxQueue, 'maxQueue', 2 ** 32 - 1);
    if (!binding) throw makeError('ERR_BACKEND_UNAVAILABLE', 'Pool needs the native addon (npm run setup)');
    this.#native = new binding.NativePool(threads, maxQueue, () => this.#drain());
  }

  get threads(): number {
    return this.#native.threads;
  }

  /** @internal π on the pool; resolves to `inside`. */
  submitPi(samples: number, seed: number, call: CallOptions): Promise<number> {
    const cancellable = call.signal !== undefined || call.timeout !== undefined;
    return this.#submit(call, (id) => this.#native.submitPi(id, samples, seed, cancellable));
  }

  /** @internal The MD5 loop on the pool. */
  submitMd5Iterate(text: string, rounds: number, start: string, call: CallOptions): Promise<string> {
    const cancellable = call.signal !== undefined || call.timeout !== undefined;
    return this.#submit(call, (id) => this.#native.submitMd5Iterate(id, text, rounds, start, cancellable));
  }

  /** @internal One MD5 on the pool. */
  submitMd5Hex(text: string, call: CallOptions): Promise<string> {
    return this.#submit(call, (id) => this.#native.submitMd5Hex(id, text));
  }

  /** @internal A QR code on the pool (format 0 data URL, 1 PNG, 2 SVG). */
  submitQr(
    text: string,
    ecc: string,
    size: number,
    margin: number,
    format: number,
    call: CallOptions,
  ): Promise<unknown> {
    return this.#submit(call, (id) => this.#native.submitQr(id, text, ecc, size, margin, format));
  }

  /** A trivial job returning `value`: measures the pool's round trip. */
  echo(value: number, call: CallOptions = {}): Promise<number> {
    return this.#submit(checkCallOptions(call), (id) => this.#native.submitNoop(id, value));
  }

  /** @internal Test hooks: a panicking job, and one that spins until cancelled. */
  _testPanic(): Promise<never> {
    return this.#submit({}, (id) => this.#native.submitPanic(id));
  }

  _testSpin(call: CallOptions): Promise<never> {
    return this.#submit(call, (id) => this.#native.submitSpin(id));
  }

  #submit<T>(call: CallOptions, start: (id: number) => void): Promise<T> {
    if (this.#state !== 'open') {
      return Promise.reject(makeError('ERR_POOL_CLOSED', `the pool is ${this.#state}`));
    }
    const { signal, timeout } = call;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const id = this.#nextId;
    this.#nextId = id >= 0xffff_fffe ? 1 : id + 1;
    try {
      start(id);
    } catch (err) {
      const code = (err as { code?: ErrorCode }).code;
      return Promise.reject(code ? makeError(code, (err as Error).message) : err);
    }
    return new Promise<T>((resolve, reject) => {
      const entry: Pending = { resolve: resolve as (v: never) => void, reject, cleanup: undefined };
      if (signal || timeout !== undefined) {
        const fail = (err: unknown) => {
          if (this.#pending.get(id) !== entry) return;
          this.#native.cancel(id);
          this.#settle(id, entry);
          reject(err);
        };
        const onAbort = () => fail(abortError(signal as AbortSignal));
        const timer =
          timeout === undefined
            ? undefined
            : setTimeout(() => fail(makeError('ERR_TIMEOUT', `timed out after ${timeout} ms`)), timeout);
        signal?.addEventListener('abort', onAbort, { once: true });
        entry.cleanup = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        };
      }
      if (this.#pending.size === 0) this.#native.keepAlive(true);
      this.#pending.set(id, entry);
    });
  }

  #settle(id: number, entry: Pending): void {
    this.#pending.delete(id);
    entry.cleanup?.();
    if (this.#pending.size === 0) {
      this.#native.keepAlive(false);
      for (const done of this.#idle.splice(0)) done();
    }
  }

  #drain(): void {
    const buf = this.#buffer;
    for (;;) {
      const n = this.#native.drain(buf);
      for (let i = 0; i < n; i++) {
        const id = buf[3 * i];
        const kind = buf[3 * i + 1];
        const value = kind === 0 ? buf[3 * i + 2] : this.#native.take(id);
        const entry = this.#pending.get(id);
        if (!entry) continue; // settled already (aborted, timed out or destroyed)
        this.#settle(id, entry);
        if (kind === 2) {
          const [code, message] = value as [ErrorCode, string];
          entry.reject(makeError(code, message));
        } else {
          entry.resolve(value as never);
        }
      }
      if (n < DRAIN_BATCH) return;
    }
  }

  stats(): PoolStats {
    return { ...this.#native.stats(), pending: this.#pending.size };
  }

  /** Stops accepting jobs; resolves once every accepted job has settled. */
  close(): Promise<void> {
    if (this.#state === 'open') this.#state = 'closed';
    this.#native.close();
    if (this.#pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Stops accepting jobs and cancels the rest: their promises reject with ERR_POOL_CLOSED. */
  destroy(): Promise<void> {
    this.#state = 'destroyed';
    this.#native.destroy();
    for (const [id, entry] of [...this.#pending]) {
      this.#settle(id, entry);
      entry.reject(new OffthreadError('ERR_POOL_CLOSED', 'the pool was destroyed before the job finished'));
    }
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

let shared: Pool | undefined;

/** The pool async calls use when no `pool` is given (created on first use). */
export function defaultPool(): Pool {
  shared ??= new Pool();
  return shared;
}
