/**
 * The native engine: jobs on the Rust work-stealing pool (crates/offthread-pool through
 * the addon's NativePool). Completions come back in batches: one loop wake-up drains
 * many `[id, kind, number]` triples into a Float64Array this side owns.
 */
import type { NativePool } from '../../native/binding';
import { type ErrorCode, makeError, OffthreadError } from '../errors.js';
import type { NativeBinding } from '../host.js';
import { Budget, type BudgetWaiter, type Lease } from '../pool/budget.js';
import { type RunOptions, watchCall } from '../pool/call.js';
import type { Engine, JobArgs, JobName, JobResult, PoolStats } from '../pool/engine.js';
import { nodeSetImmediate } from '../pool/turn.js';
import { type KernelName, kernels } from './kernels.js';

type Resolve = (value: never) => void;
type Reject = (err: unknown) => void;
/** A kernel's native forms, as this engine calls them (kernels.ts). */
interface NativeDef {
  native(p: NativePool, id: number, a: unknown, c: boolean): void;
  fromNative?: (raw: unknown, args: unknown) => unknown;
  nativeShared?(a: unknown): boolean;
}

/** One executor for every job's Promise: it hands the resolvers out through these. */
let lastResolve: Resolve;
let lastReject: Reject;
const captureResolvers = (resolve: Resolve, reject: Reject) => {
  lastResolve = resolve;
  lastReject = reject;
};

/** Triples per drain call: 1,024 completions per napi call. */
const DRAIN_BATCH = 1024;

/**
 * A lone job (nothing else pending) usually completes within a few µs. Left alone, the
 * JS thread often reaches epoll_wait first and pays a sleep and a wake per round trip
 * (≈22 µs instead of ≈5 here). So the first pending job schedules one immediate: while
 * it is queued the loop polls I/O without sleeping, and in it the thread spins up to
 * this long for the completion. A spin that finds nothing (a longer job) turns spinning
 * off for the next SPIN_BACKOFF lone jobs, so long jobs cost no spinning.
 */
const LONE_JOB_SPIN_US = 20;
const SPIN_BACKOFF = 64;

type Figures = Omit<PoolStats, 'pending' | 'engine'>;

function noFigures(threads: number): Figures {
  const none = { p50: 0, p99: 0, max: 0 };
  return { threads, queued: 0, running: 0, completed: 0, failed: 0, cancelled: 0, waitTime: none, runTime: none };
}

export class NativeEngine implements Engine {
  readonly name = 'native';
  readonly threads: number;
  /** The Rust pool; null while idle (the pool's idleTimeout) or once closed. */
  #native: NativePool | null;
  readonly #start: () => NativePool;
  /**
   * Pending jobs by id. An id is a slot index; a slot is freed only when the native
   * completion for it has been drained (aborted jobs keep theirs until then), so a late
   * completion can never settle a newer job.
   */
  readonly #resolvers: (Resolve | undefined)[] = [];
  readonly #rejecters: (Reject | undefined)[] = [];
  readonly #converters: (((raw: unknown, args: unknown) => unknown) | undefined)[] = [];
  /** The args of each job whose kernel converts its completion (`fromNative`). */
  readonly #args: unknown[] = [];
  /** Each submitted job's weight in the run budget, given back when its completion is drained. */
  readonly #weights: number[] = [];
  /** This engine's share of the pool's run budget (its own until the pool gives it one). */
  #lease: Lease;
  /** Jobs waiting for the budget (destroy() rejects them; `maxQueue` bounds them). */
  #waiters = 0;
  readonly #maxQueue: number;
  /** Why the binding refused the last job `#submit` was given. */
  #submitError: unknown = null;
  readonly #cleanups = new Map<number, () => void>();
  readonly #freeIds: number[] = [];
  #pending = 0;
  /** Jobs whose native completion has not been drained (aborted ones included). */
  #undrained = 0;
  readonly #buffer = new Float64Array(3 * DRAIN_BATCH);
  #state: 'open' | 'closed' | 'destroyed' = 'open';
  #idle: (() => void)[] = [];
  /** The figures when the last native pool was let go: carried into the next one's. */
  #carried: Figures | null = null;
  #spinScheduled = false;
  #spinSkip = 0;
  onBusy: (busy: boolean) => void = () => {};

  constructor(binding: NativeBinding, threads: number, maxQueue: number, nice: number) {
    // The wake-up reaches this engine through a WeakRef: the addon's threadsafe function
    // is a GC root, and a strong reference would keep a dropped pool's threads forever.
    const self = new WeakRef(this);
    this.#start = () => new binding.NativePool(threads, maxQueue, nice, () => self.deref()?.drain());
    this.#native = this.#start();
    this.threads = this.#native.threads;
    this.#maxQueue = maxQueue === 0 ? Number.POSITIVE_INFINITY : maxQueue;
    this.#lease = new Budget(this.threads).lease(this.threads);
  }

  /** The pool's run budget: a job enters the Rust pool only with its slots (budget.ts). */
  useBudget(budget: Budget): void {
    this.#lease = budget.lease(this.threads);
  }

  run<K extends JobName>(kernel: K, args: JobArgs<K>, call: RunOptions): Promise<JobResult<K>> {
    if (this.#state !== 'open') {
      return Promise.reject(makeError('ERR_POOL_CLOSED', `the pool is ${this.#state}`));
    }
    const def = kernels[kernel as KernelName] as NativeDef;
    // Slots of the pool's run budget first (pool/budget.ts): one per thread the job may use.
    const weight = def.nativeShared?.(args) ? Math.min(this.threads, this.#lease.budget.size) : 1;
    if (!this.#lease.enter(weight)) return this.#wait(def, args, call, weight);
    const id = this.#submit(def, args, call.signal !== undefined || call.timeout !== undefined, weight);
    if (id < 0) return Promise.reject(this.#submitError);
    const promise = new Promise<JobResult<K>>(captureResolvers);
    this.#resolvers[id] = lastResolve;
    this.#rejecters[id] = lastReject;
    if (this.#pending++ === 0) this.#busy();
    if (call.signal !== undefined || call.timeout !== undefined) this.#watch(id, call);
    return promise;
  }

  /**
   * Hands a job that is inside the budget to the Rust pool: its slot id, or -1 when the
   * binding refused it (`#submitError`; its budget weight is given back).
   */
  #submit(def: NativeDef, args: unknown, cancellable: boolean, weight: number): number {
    const id = this.#freeIds.pop() ?? this.#resolvers.length;
    try {
      this.#native ??= this.#start(); // back from idle
      def.native(this.#native, id, args, cancellable);
    } catch (err) {
      this.#freeIds.push(id);
      this.#lease.leave(weight);
      const code = (err as { code?: ErrorCode }).code;
      this.#submitError = code ? makeError(code, (err as Error).message) : err;
      return -1;
    }
    this.#converters[id] = def.fromNative;
    if (def.fromNative) this.#args[id] = args;
    this.#weights[id] = weight;
    this.#undrained++;
    return id;
  }

  #busy(): void {
    this.#native ??= this.#start();
    this.#native.keepAlive(true);
    this.onBusy(true);
    this.#scheduleSpin();
  }

  /**
   * A job whose slots are taken (by the pool's other features, or by jobs waiting
   * before it): it waits in the budget's queue, its abort and timeout watched from
   * the call, and goes to the Rust pool once its slots are free.
   */
  #wait<K extends JobName>(def: NativeDef, args: JobArgs<K>, call: RunOptions, weight: number): Promise<JobResult<K>> {
    if (this.#waiters >= this.#maxQueue) {
      return Promise.reject(
        makeError('ERR_QUEUE_FULL', `the pool already holds ${this.#waiters} jobs waiting for a thread (maxQueue)`),
      );
    }
    return new Promise<JobResult<K>>((resolve, reject) => {
      let id = -1;
      const waiter: BudgetWaiter = {
        priority: 1,
        weight,
        start: () => {
          this.#waiters--;
          id = this.#submit(def, args, true, weight);
          if (id < 0) {
            stop();
            this.#unpend();
            reject(this.#submitError);
            return;
          }
          this.#resolvers[id] = resolve as Resolve;
          this.#rejecters[id] = reject;
          this.#cleanups.set(id, stop); // #settle stops the watch
        },
        fail: (err) => {
          this.#waiters--;
          stop();
          this.#unpend();
          reject(err);
        },
      };
      const stop = watchCall(call, (err) => {
        if (id < 0) {
          if (!this.#lease.cancel(waiter)) return;
          this.#waiters--;
          this.#unpend();
          reject(err);
          return;
        }
        if (!this.#rejecters[id]) return;
        this.#native?.cancel(id);
        this.#settle(id);
        reject(err);
      });
      if (this.#pending++ === 0) this.#busy();
      this.#waiters++;
      this.#lease.wait(waiter);
    });
  }

  #scheduleSpin(): void {
    if (this.#spinScheduled || !nodeSetImmediate) return;
    if (this.#spinSkip > 0) {
      this.#spinSkip--;
      return;
    }
    this.#spinScheduled = true;
    nodeSetImmediate(this.#spinForLoneJob);
  }

  readonly #spinForLoneJob = (): void => {
    this.#spinScheduled = false;
    if (this.#pending === 0 || !this.#native) return; // settled during the poll phase
    if (this.#native.awaitCompletion(LONE_JOB_SPIN_US)) this.drain();
    else this.#spinSkip = SPIN_BACKOFF;
  };

  /** Rejects job `id` early on abort or timeout, and cancels it natively. */
  #watch(id: number, call: RunOptions): void {
    const stop = watchCall(call, (err) => {
      const reject = this.#rejecters[id];
      if (!reject) return;
      this.#native?.cancel(id);
      this.#settle(id);
      reject(err);
    });
    this.#cleanups.set(id, stop);
  }

  /** Settles the JS side of job `id` (its slot stays reserved until the completion is drained). */
  #settle(id: number): void {
    this.#resolvers[id] = undefined;
    this.#rejecters[id] = undefined;
    if (this.#cleanups.size > 0) {
      this.#cleanups.get(id)?.();
      this.#cleanups.delete(id);
    }
    this.#unpend();
  }

  /** One pending call fewer (settled, or dropped while waiting for the budget). */
  #unpend(): void {
    if (--this.#pending === 0) {
      this.#native?.keepAlive(false);
      if (this.#state !== 'open') this.#release();
      for (const done of this.#idle.splice(0)) done();
      this.onBusy(false);
    }
  }

  /** Called by the addon's wake-up: settles every completion that has arrived. */
  drain(): void {
    const buf = this.#buffer;
    const native = this.#native;
    if (!native) return;
    for (;;) {
      const n = native.drain(buf);
      this.#undrained -= n;
      for (let i = 0; i < n; i++) {
        const id = buf[3 * i] as number;
        const kind = buf[3 * i + 1];
        const value = kind === 0 ? buf[3 * i + 2] : native.take(id);
        const resolve = this.#resolvers[id];
        const reject = this.#rejecters[id] as Reject;
        const convert = this.#converters[id];
        const args = convert ? this.#args[id] : undefined;
        if (convert) this.#args[id] = undefined; // let go before the id goes back (below)
        if (resolve) this.#settle(id);
        this.#freeIds.push(id);
        // Its thread is free: a job waiting for the budget may start now, in this very id.
        this.#lease.leave(this.#weights[id] as number);
        if (!resolve) continue; // settled already (aborted, timed out or destroyed)
        if (kind === 2) {
          const [code, message] = value as [ErrorCode, string];
          reject(makeError(code, message));
        } else {
          resolve((convert ? convert(value, args) : value) as never);
        }
      }
      if (n < DRAIN_BATCH) return;
    }
  }

  stats(): PoolStats {
    const figures = this.#figures();
    // Jobs waiting for the budget are accepted and not started: queued, as the Rust pool's.
    return { engine: 'native', ...figures, queued: figures.queued + this.#waiters, pending: this.#pending };
  }

  /** The live pool's figures, counting those of the pools let go before it. */
  #figures(): Figures {
    const before = this.#carried;
    if (!this.#native) return before ?? noFigures(this.threads);
    const now = this.#native.stats();
    if (!before) return now;
    return {
      ...now,
      completed: now.completed + before.completed,
      failed: now.failed + before.failed,
      cancelled: now.cancelled + before.cancelled,
    };
  }

  /** Lets go of the Rust pool (its threads join on a helper thread), keeping its figures. */
  #release(): void {
    if (!this.#native) return;
    this.#carried = { ...this.#figures(), queued: 0, running: 0 };
    // Jobs not drained (aborted, still stopping) end with the threads: their slots go back.
    this.#lease.leave(this.#lease.load);
    this.#native.release();
    this.#native = null;
  }

  /** Idle: the threads go; the next job starts a new Rust pool. Not while a completion is owed. */
  sleep(): boolean {
    if (this.#state !== 'open' || this.#pending > 0) return true;
    if (this.#undrained > 0) return false;
    this.#release();
    return true;
  }

  close(): Promise<void> {
    if (this.#state === 'open') this.#state = 'closed';
    this.#native?.close();
    if (this.#pending === 0) {
      this.#release();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  destroy(): void {
    this.#state = 'destroyed';
    this.#native?.destroy();
    this.#lease.clear(new OffthreadError('ERR_POOL_CLOSED', 'the pool was destroyed before the job started'));
    for (const [id, reject] of this.#rejecters.entries()) {
      if (!reject) continue;
      this.#settle(id);
      reject(new OffthreadError('ERR_POOL_CLOSED', 'the pool was destroyed before the job finished'));
    }
    this.#release();
  }
}
