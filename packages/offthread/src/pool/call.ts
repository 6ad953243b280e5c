/**
 * A call's options — `{ signal, timeout }`, what every async call of every feature
 * accepts — in one place: their type, their one check, and how a call watches them
 * (both engines, the task workers and the guests reject alike).
 */
import { AbortError, describe, makeError } from '../errors.js';
import { isInstance } from '../validate.js';

/** The options every async call accepts. `pool` is checked by the pool (pool.ts). */
export interface RunOptions {
  /** Abort: a queued job is dropped at once, a running one stops at its next check. */
  signal?: AbortSignal | undefined;
  /** Milliseconds until the call rejects with ERR_TIMEOUT (and the job is cancelled). */
  timeout?: number | undefined;
}

/** The one check of `{ signal, timeout }` (other keys of `opts` are the caller's). */
export function checkRunOptions(opts: RunOptions): RunOptions {
  const { signal, timeout } = opts;
  if (signal !== undefined && !isInstance(signal, AbortSignal)) {
    throw makeError('ERR_INVALID_ARG', 'options.signal must be an AbortSignal');
  }
  if (timeout !== undefined && !(typeof timeout === 'number' && timeout > 0 && timeout <= 2 ** 31 - 1)) {
    throw makeError(
      'ERR_INVALID_ARG',
      `options.timeout must be a number of ms from 1 to 2^31-1, got ${describe(timeout)}`,
    );
  }
  return { signal, timeout };
}

export function abortError(signal: AbortSignal): AbortError {
  return new AbortError('The operation was aborted', { cause: signal.reason });
}

export function timeoutError(timeout: number): Error {
  return makeError('ERR_TIMEOUT', `timed out after ${timeout} ms`);
}

/**
 * Calls `fail` on abort or timeout; returns the function that stops watching.
 * One place for every engine, so they reject alike.
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

/**
 * Settles with `promise`, or rejects early on abort/timeout. For work that cannot be
 * cancelled (libuv AsyncTasks): the result is dropped, the thread still finishes.
 */
export function raceAbort<T>(promise: Promise<T>, call: RunOptions): Promise<T> {
  if (!call.signal && call.timeout === undefined) return promise;
  if (call.signal?.aborted) {
    promise.catch(() => {}); // it may still reject; that is no longer this call's outcome
    return Promise.reject(makeError('ERR_ABORTED', 'The operation was aborted', call.signal.reason));
  }
  return new Promise<T>((resolve, reject) => {
    const stop = watchCall(call, reject);
    promise.then(resolve, reject).finally(stop);
  });
}
