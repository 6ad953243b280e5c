/**
 * What the two engines behind `Pool` share: the call options every async kernel takes,
 * the statistics shape, and abort/timeout handling.
 */
import { AbortError, makeError } from './errors.js';
import type { ArgsOf, KernelName, ResultOf } from './kernels.js';

/** The options every async call accepts. `pool` is checked by the facade (pool.ts). */
export interface RunOptions {
  /** Abort: a queued job is dropped at once, a running one stops at its next check. */
  signal?: AbortSignal | undefined;
  /** Milliseconds until the call rejects with ERR_TIMEOUT (and the job is cancelled). */
  timeout?: number | undefined;
}

/** Latency percentiles in milliseconds. */
export interface LatencyStats {
  p50: number;
  p99: number;
  max: number;
}

export type EngineName = 'native' | 'wasm' | 'js';

export interface PoolStats {
  /** 'native': Rust threads; 'wasm' / 'js': worker threads running offthread.wasm / the JS tier. */
  engine: EngineName;
  threads: number;
  /** Accepted, not started. */
  queued: number;
  running: number;
  /** Finished with a result. */
  completed: number;
  /** Finished with an error (kernel error, panic, crashed worker). */
  failed: number;
  /** Cancelled or timed out. */
  cancelled: number;
  /** Time from submit to start (ms). */
  waitTime: LatencyStats;
  /** Time from start to finish (ms). */
  runTime: LatencyStats;
  /** Promises not yet settled on the JS side. */
  pending: number;
  /** The pool's task workers (`tasks()`), once a task has run on it. */
  tasks?: TaskStats;
}

/** The figures of a pool's task workers. */
export interface TaskStats {
  threads: number;
  /** Accepted, not started. */
  queued: number;
  running: number;
  completed: number;
  /** Finished with an error (the task's own, or its worker's death). */
  failed: number;
  /** Aborted or timed out. */
  cancelled: number;
  /** Workers replaced: died (exit, out of memory, an uncaught error) or stopped after ignoring an abort. */
  replaced: number;
}

export interface Engine {
  readonly name: EngineName;
  readonly threads: number;
  run<K extends KernelName>(kernel: K, args: ArgsOf<K>, call: RunOptions): Promise<ResultOf<K>>;
  /** Worker engines: runs on worker `worker` only, after what was queued for it (stream filters). */
  runOn?<K extends KernelName>(
    worker: number,
    kernel: K,
    args: ArgsOf<K>,
    transfer?: Transferable[],
  ): Promise<ResultOf<K>>;
  stats(): PoolStats;
  /** Stop accepting; resolve once accepted work has settled, then free the threads. */
  close(): Promise<void>;
  /** Stop accepting; reject what is pending with ERR_POOL_CLOSED; free the threads. */
  destroy(): void;
  /** Called with true when the first job is pending and false when the last settles. */
  onBusy: (busy: boolean) => void;
}

export function abortError(signal: AbortSignal): AbortError {
  return new AbortError('The operation was aborted', { cause: signal.reason });
}

export function timeoutError(timeout: number): Error {
  return makeError('ERR_TIMEOUT', `timed out after ${timeout} ms`);
}

/**
 * Calls `fail` on abort or timeout; returns the function that stops watching.
 * One place for both engines, so they reject alike.
 */
export function watchCall(call: RunOptions, fail: (err: Error) => void): () => void {
  const { signal, timeout } = call;
  if (!signal && timeout === undefined) return () => {};
  const onAbort = () => fail(abortError(signal as AbortSignal));
  const timer = timeout === undefined ? undefined : setTimeout(() => fail(timeoutError(timeout)), timeout);
  signal?.addEventListener('abort', onAbort, { once: true });
  return () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  };
}

/** Latency percentiles over a bounded window of recent samples (ms). */
export class LatencyWindow {
  readonly #samples: number[] = [];
  #next = 0;

  add(ms: number): void {
    if (this.#samples.length < 4096) this.#samples.push(ms);
    else this.#samples[this.#next++ & 4095] = ms;
  }

  stats(): LatencyStats {
    const s = [...this.#samples].sort((a, b) => a - b);
    if (s.length === 0) return { p50: 0, p99: 0, max: 0 };
    const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
    return { p50: at(0.5), p99: at(0.99), max: s[s.length - 1] as number };
  }
}
