/**
 * What both job pools share (jobs.ts over shared memory, message-jobs.ts by message):
 * their options, a job and its promise, the checks before one is taken, and what a
 * worker's message about a job does to it.
 */
import { makeError } from '../errors.js';
import type { Transferable } from '../host.js';
import type { Budget, BudgetWaiter, Lease } from './budget.js';
import { type RunOptions, watchCall } from './call.js';
import { PRIORITIES, type Priority } from './layout.js';
import type { FromWorker } from './serve.js';
import { JobStream } from './streams.js';
import { fromWire } from './wire.js';

/** Node's worker resource limits (MB), applied to each worker. */
export interface ResourceLimits {
  maxOldGenerationSizeMb?: number;
  maxYoungGenerationSizeMb?: number;
  codeRangeSizeMb?: number;
  stackSizeMb?: number;
}

export interface JobPoolOptions {
  threads: number;
  /** Most jobs waiting to start; past it calls reject with ERR_QUEUE_FULL. */
  maxQueue: number;
  /** The worker script (host-specific; the feature names it). */
  script: string;
  resourceLimits?: ResourceLimits | undefined;
  /** ms a running job has to stop after its abort before its worker is replaced. */
  grace: number;
  /** The workers' scheduling niceness (where the host can set a thread's). */
  nice: number;
  /** The run budget its jobs take a slot of before a worker may take them (default: its own, `threads`). */
  budget?: Budget | undefined;
}

export interface JobOptions extends RunOptions {
  /** Moved to the worker, not copied (ArrayBuffers, MessagePorts, …). */
  transfer?: Transferable[] | undefined;
  priority?: Priority | undefined;
  onProgress?: ((value: unknown) => void) | undefined;
  /**
   * For a long job that waits on its caller between bursts of work (a stream between
   * chunks): called once, at once, with the job's switch (`ParkSwitch`).
   */
  park?: ((sw: ParkSwitch) => void) | undefined;
}

/**
 * A long job's switch (JobOptions.park): its caller says when the job only waits on it,
 * and when work for it comes. The pool knows no feature: what "waiting" means is the
 * caller's, and the job says it on its worker's side too (JobContext.park), so that its
 * worker may run other jobs meanwhile.
 */
export interface ParkSwitch {
  /**
   * The job waits on its caller: its run-budget slot goes back, so other jobs may run in
   * its thread's place. It no longer keeps the process alive either (its workers are
   * unref'd unless other work is in flight), unless `keepAlive` (work the caller handed it
   * is still unanswered).
   */
  park(options?: { keepAlive?: boolean }): void;
  /**
   * Work for it: it takes a budget slot again (by its priority; at once when one is free)
   * and then `go` runs. The caller sends the work in `go`, so its worker never works for it
   * outside the budget. It keeps the process alive again from now.
   */
  resume(go: () => void): void;
}

/** What a pool lends its jobs' park switches. */
export interface Parking {
  lease: Lease;
  /** `job.parked` is to change to `parked`: the pool's keep-alive count follows. */
  parked(job: Job, parked: boolean): void;
  /** The pool dropped the job while it waited to take a slot again (destroyed). */
  fail(job: Job, err: Error): void;
}

export interface Job {
  id: number;
  fn: number;
  args: unknown[];
  transfer: Transferable[] | undefined;
  priority: number;
  slot: number;
  resolve(value: unknown): void;
  reject(err: unknown): void;
  stop(): void;
  settled: boolean;
  /** Inside the run budget: from its admission until its worker let go of it. */
  admitted: boolean;
  /** Waiting for the run budget, until admitted (first, or again after parking: `resumes`). */
  waiter?: BudgetWaiter | undefined;
  /** Its caller's work waiting for the job to take a budget slot again (ParkSwitch.resume). */
  resumes?: (() => void)[] | undefined;
  onProgress: ((value: unknown) => void) | undefined;
  /** Parked by its caller (JobOptions.park): waiting on it, not keeping the process alive. */
  parked: boolean;
  /** Its arguments are its own copy, made when it had to wait (holdArgs). */
  held?: boolean;
  /** The job streams its result (pool/streams.ts): weak, so a dropped stream can be collected and cancel itself. */
  stream?: WeakRef<JobStream>;
}

/** Why `run` cannot take a job now, as its rejection; null when it can. */
export function refusal(
  state: string,
  broken: Error | null,
  options: JobOptions,
  queued: number,
  maxQueue: number,
): Promise<never> | null {
  if (state !== 'open') return Promise.reject(makeError('ERR_POOL_CLOSED', `the pool is ${state}`));
  if (broken) return Promise.reject(broken);
  if (options.signal?.aborted) {
    return Promise.reject(makeError('ERR_ABORTED', 'The operation was aborted', options.signal.reason));
  }
  if (queued >= maxQueue) {
    return Promise.reject(makeError('ERR_QUEUE_FULL', `the pool already holds ${queued} queued jobs`));
  }
  return null;
}

/**
 * `job` enters `lease`'s budget: `start(job)` at once when there is room, else once a
 * slot is free (`fail(job, err)` if the pool is destroyed first). The common case makes
 * no waiter: its object and closures per call were a quarter of the main thread's time
 * per small task (1167b09). `start` and `fail` are the pool's own, made once.
 */
export function enterBudget(
  lease: Lease,
  job: Job,
  start: (job: Job) => void,
  fail: (job: Job, err: Error) => void,
): void {
  if (lease.enter(1)) start(job);
  else {
    const bad = holdArgs(job);
    if (bad) {
      fail(job, bad);
      return;
    }
    job.waiter = lease.admit({
      priority: job.priority,
      weight: 1,
      start: () => start(job),
      fail: (err) => fail(job, err),
    });
  }
}

/**
 * The job waits before it reaches a worker: its arguments are copied now, as a call's
 * are, so that the caller may change or reuse them meanwhile (the message or the slot
 * written later would carry the changes). Values without objects need no copy. Returns
 * the error to fail the job with when they cannot be copied (a transfer list beside
 * something structured clone refuses).
 */
export function holdArgs(job: Job): Error | null {
  if (job.held || job.args.every((a) => typeof a !== 'object' || a === null)) return null;
  job.held = true;
  try {
    if (job.transfer) {
      // Cloned together, the list's copies are the ones the arguments' copy holds.
      const held = structuredClone({ args: job.args, transfer: job.transfer }, { transfer: job.transfer });
      job.args = held.args;
      job.transfer = held.transfer;
    } else job.args = structuredClone(job.args);
    return null;
  } catch (err) {
    return makeError('ERR_TASK_DATA', `an argument cannot cross to a worker: ${(err as Error).message}`);
  }
}

/** A new job of `run`, the promise its caller gets, and its abort/timeout watch calling `abort`. */
export function newJob(
  id: number,
  fn: number,
  args: unknown[],
  options: JobOptions,
  abort: (job: Job, err: Error) => void,
  parking?: Parking,
): [Job, Promise<unknown>] {
  const job: Job = {
    id,
    fn,
    args,
    transfer: options.transfer,
    priority: options.priority === undefined ? 1 : PRIORITIES.indexOf(options.priority),
    slot: -1,
    resolve: noop,
    reject: noop,
    stop: noop,
    settled: false,
    parked: false,
    admitted: false,
    onProgress: options.onProgress,
  };
  const promise = new Promise<unknown>((resolve, reject) => {
    job.resolve = resolve;
    job.reject = reject;
  });
  if (options.signal || options.timeout !== undefined) job.stop = watchCall(options, (err) => abort(job, err));
  if (options.park && parking) options.park(parkSwitch(job, parking));
  return [job, promise];
}

/** JobOptions.park's switch for `job` (see ParkSwitch). */
function parkSwitch(job: Job, p: Parking): ParkSwitch {
  return {
    park(options) {
      if (job.settled) return;
      const parked = options?.keepAlive !== true;
      if (job.parked !== parked) p.parked(job, parked);
      // Not while it waits to take a slot (first, or again): it holds none then.
      if (job.admitted && !job.waiter) {
        job.admitted = false;
        p.lease.leave();
      }
    },
    resume(go) {
      if (job.settled) return;
      if (job.parked) p.parked(job, false);
      if (job.resumes) {
        job.resumes.push(go); // after the work already waiting, in order
        return;
      }
      // Inside the budget, or about to start (its work waits for it on the caller's port).
      if (job.admitted || job.waiter) {
        go();
        return;
      }
      job.resumes = [go];
      job.waiter = p.lease.admit({
        priority: job.priority,
        weight: 1,
        start: () => {
          job.waiter = undefined;
          const waiting = job.resumes ?? [];
          job.resumes = undefined;
          if (job.settled) {
            p.lease.leave(); // over meanwhile (its pool cancels such a wait: not expected)
            return;
          }
          job.admitted = true;
          for (const fn of waiting) fn();
        },
        fail: (err) => {
          job.resumes = undefined;
          p.fail(job, err);
        },
      });
    },
  };
}

/** A finished job's outcome: the error, or null and the value. */
export type Outcome = { err: unknown; value?: unknown };

/**
 * What both pools do with a job's message from its worker: progress, a stream's start
 * (`pull` asks the worker for more items, `abort` cancels the job) and its items, the
 * result or the error, counted in `counts`. Returns the outcome once the job is finished
 * (the caller settles it and frees the worker), else null.
 */
export function jobMessage(
  job: Job,
  msg: FromWorker & { type: 'progress' | 'stream' | 'item' | 'result' | 'error' },
  counts: { completed: number; failed: number },
  pull: (n: number) => void,
  abort: (err: Error) => void,
): Outcome | null {
  switch (msg.type) {
    case 'progress':
      if (!job.settled) job.onProgress?.(msg.value);
      return null;
    case 'stream': {
      const stream = new JobStream(pull, () =>
        abort(makeError('ERR_ABORTED', 'the stream was returned by its consumer')),
      );
      job.stream = new WeakRef(stream);
      job.resolve(stream); // the call resolves now; the job settles when the stream ends
      return null;
    }
    case 'item':
      job.stream?.deref()?.push(msg.value);
      return null;
    case 'result':
      if (!job.settled) counts.completed++;
      job.stream?.deref()?.end(msg.value);
      return { err: null, value: msg.value };
    default: {
      if (!job.settled) counts.failed++;
      const err = fromWire(msg.error);
      job.stream?.deref()?.fail(err);
      return { err };
    }
  }
}

export function noop(): void {}
