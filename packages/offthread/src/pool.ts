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
  /**
   * Workers' scheduling niceness (Unix nice, 0–19; default 10). Above the event loop's
   * 0, so the loop stays responsive while the pool saturates every core.
   */
  nice?: number;
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

/** Latency percentiles in milliseconds. */
export interface LatencyStats {
  p50: number;
  p99: number;
  max: number;
}

export interface PoolStats {
  threads: number;
  /** Accepted, not started. */
  queued: number;
  running: number;
  /** Finished with a result. */
  completed: number;
  /** Finished with an error (kernel error or panic). */
  failed: number;
  /** Cancelled or timed out. */
  cancelled: number;
  /** Time from submit to start (ms). */
  waitTime: LatencyStats;
  /** Time from start to finish (ms). */
  runTime: LatencyStats;
  /** Promises not yet settled on the JS side. */
  pending: number;
}

type Resolve = (value: never) => void;
type Reject = (err: unknown) => void;

/** One executor for every job's Promise: it hands the resolvers out through these. */
let lastResolve: Resolve;
let lastReject: Reject;
const captureResolvers = (resolve: Resolve, reject: Reject) => {
  lastResolve = resolve;
  lastReject = reject;
};

/** Triples per drain call: 1,024 completions per napi call. */
const DRAIN_BATCH = 1024;

/** A pool option that must be an integer from `min` to `max`. */
function checkPoolInt(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw makeError(
      'ERR_INVALID_POOL_OPTIONS',
      `${name} must be an integer from ${min} to ${max}, got ${String(value)}`,
    );
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
  /**
   * Pending jobs by id. An id is a slot index; a slot is freed only when the native
   * completion for it has been drained (aborted jobs keep theirs until then), so a
   * late completion can never settle a newer job.
   */
  readonly #resolvers: (Resolve | undefined)[] = [];
  readonly #rejecters: (Reject | undefined)[] = [];
  readonly #cleanups = new Map<number, () => void>();
  readonly #freeIds: number[] = [];
  /** Promises not yet settled on the JS side. */
  #pending = 0;
  readonly #buffer = new Float64Array(3 * DRAIN_BATCH);
  #state: 'open' | 'closed' | 'destroyed' = 'open';
  #idle: (() => void)[] = [];

  constructor(options?: PoolOptions) {
    const opts = toOptions<PoolOptions>(options, 'pool options');
    const threads = opts.threads === undefined ? 0 : checkPoolInt(opts.threads, 'threads', 1, 1024);
    const maxQueue =
      opts.maxQueue === undefined || opts.maxQueue === Number.POSITIVE_INFINITY
        ? 0
        : checkPoolInt(opts.maxQueue, 'maxQueue', 1, 2 ** 32 - 1);
    const nice = opts.nice === undefined ? 10 : checkPoolInt(opts.nice, 'nice', 0, 19);
    if (!binding) throw makeError('ERR_BACKEND_UNAVAILABLE', 'Pool needs the native addon (npm run setup)');
    this.#native = new binding.NativePool(threads, maxQueue, nice, () => this.#drain());
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

  /** @internal Batch statistics on the pool; resolves to 4 little-endian f64. */
  submitStatsTemperature(buf: Uint8Array, call: CallOptions): Promise<Buffer> {
    return this.#submit(call, (id) => this.#native.submitStatsTemperature(id, buf));
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
    const id = this.#freeIds.pop() ?? this.#resolvers.length;
    try {
      start(id);
    } catch (err) {
      this.#freeIds.push(id);
      const code = (err as { code?: ErrorCode }).code;
      return Promise.reject(code ? makeError(code, (err as Error).message) : err);
    }
    const promise = new Promise<T>(captureResolvers);
    this.#resolvers[id] = lastResolve;
    this.#rejecters[id] = lastReject;
    if (this.#pending++ === 0) this.#native.keepAlive(true);
    if (signal || timeout !== undefined) this.#watch(id, signal, timeout);
    return promise;
  }

  /** Rejects job `id` early on abort or timeout, and cancels it natively. */
  #watch(id: number, signal: AbortSignal | undefined, timeout: number | undefined): void {
    const fail = (err: unknown) => {
      const reject = this.#rejecters[id];
      if (!reject) return;
      this.#native.cancel(id);
      this.#settle(id);
      reject(err);
    };
    const onAbort = () => fail(abortError(signal as AbortSignal));
    const timer =
      timeout === undefined
        ? undefined
        : setTimeout(() => fail(makeError('ERR_TIMEOUT', `timed out after ${timeout} ms`)), timeout);
    signal?.addEventListener('abort', onAbort, { once: true });
    this.#cleanups.set(id, () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    });
  }

  /** Settles the JS side of job `id` (its slot stays reserved until the completion is drained). */
  #settle(id: number): void {
    this.#resolvers[id] = undefined;
    this.#rejecters[id] = undefined;
    if (this.#cleanups.size > 0) {
      this.#cleanups.get(id)?.();
      this.#cleanups.delete(id);
    }
    if (--this.#pending === 0) {
      this.#native.keepAlive(false);
      if (this.#state !== 'open') this.#native.release();
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
        const resolve = this.#resolvers[id];
        const reject = this.#rejecters[id] as Reject;
        this.#freeIds.push(id);
        if (!resolve) continue; // settled already (aborted, timed out or destroyed)
        this.#settle(id);
        if (kind === 2) {
          const [code, message] = value as [ErrorCode, string];
          reject(makeError(code, message));
        } else {
          resolve(value as never);
        }
      }
      if (n < DRAIN_BATCH) return;
    }
  }

  stats(): PoolStats {
    return { ...this.#native.stats(), pending: this.#pending };
  }

  /** Stops accepting jobs; resolves once every accepted job has settled. */
  close(): Promise<void> {
    if (this.#state === 'open') this.#state = 'closed';
    this.#native.close();
    if (this.#pending === 0) {
      this.#native.release();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Stops accepting jobs and cancels the rest: their promises reject with ERR_POOL_CLOSED. */
  destroy(): Promise<void> {
    this.#state = 'destroyed';
    this.#native.destroy();
    for (const [id, reject] of this.#rejecters.entries()) {
      if (!reject) continue;
      this.#settle(id);
      reject(new OffthreadError('ERR_POOL_CLOSED', 'the pool was destroyed before the job finished'));
    }
    this.#native.release();
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
