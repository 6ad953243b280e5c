/**
 * The calling side of a job pool: worker threads that run registered functions, fed
 * through shared memory (pool/layout.ts; the workers' loop is pool/serve.ts). It knows no
 * feature: a feature registers its functions with setup messages and its worker script.
 *
 * A call takes a free slot, writes its arguments into it (pool/codec.ts) and pushes it on
 * a shared queue every worker takes from; arguments that are not plain data, that do not
 * fit, or that come with a transfer list go by message to one worker (its direct queue).
 * Completions come back on per-worker queues: the caller waits on one word with
 * Atomics.waitAsync and reads every completion that arrived in one wake-up; a lone call
 * spins briefly for its answer instead (a wake-up through the event loop costs tens of µs).
 *
 * Abort and timeout reject the call at once. A job still queued is dropped; a running one
 * sees its signal abort and has `grace` ms to stop before its worker is replaced. A worker
 * that dies fails only the job it was running (ERR_WORKER_DIED); jobs it had taken but not
 * started go back on a queue. Nothing runs twice.
 */

import { makeError } from '../errors.js';
import { host, type Transferable, type WorkerPort } from '../host.js';
import { moveCopies } from './big-buffers.js';
import { Budget, type Lease } from './budget.js';
import { decode, encode, NO_FIT, type Region, region } from './codec.js';
import type { TaskStats } from './engine.js';
import {
  enterBudget,
  holdArgs,
  type Job,
  type JobOptions,
  type JobPoolOptions,
  jobMessage,
  newJob,
  type Parking,
  refusal,
} from './job.js';
import {
  CLAIMED,
  DONE,
  DROPPED,
  F_BY_MESSAGE,
  F_LONE,
  FREE,
  Layout,
  MAIN,
  PRIORITIES,
  QUEUED,
  RUNNING,
  S_CANCEL,
  S_FLAGS,
  S_FN,
  S_ID,
  S_NEED,
  S_OWNER,
  S_STATE,
  SLOT_DATA,
  SLOTS,
  W_BUSY,
  W_POSTED,
  W_SIGNAL,
  W_SLEEP,
} from './layout.js';
import { MessageJobPool } from './message-jobs.js';
import type { FromWorker, ToWorker } from './serve.js';
import { nextTurn, turnAfter } from './turn.js';
import { findUncloneable } from './wire.js';

export type { JobOptions, JobPoolOptions, ParkSwitch, ResourceLimits } from './job.js';
export type { Priority } from './layout.js';

interface Thread {
  index: number;
  port: WorkerPort;
  ready: boolean;
}
const waitAsync = (
  Atomics as unknown as {
    waitAsync(a: Int32Array, i: number, v: number): { async: boolean; value: Promise<unknown> | string };
  }
).waitAsync;

/** How long a lone call spins for its answer before it waits (the answer usually comes first). */
const LONE_CALL_SPIN_MS = 0.03;

export class JobPool {
  readonly threads: number;
  readonly #options: JobPoolOptions;
  #L: Layout | null = null;
  #threads: Thread[] = [];
  readonly #bySlot: (Job | null)[] = new Array(SLOTS).fill(null);
  readonly #regions: Region[] = [];
  #free: number[] = [];
  readonly #overflow: Job[][] = PRIORITIES.map(() => []);
  #overflowCount = 0;
  #overflowTakes = 0;
  readonly #setups: unknown[] = [];
  #nextId = 1;
  #pending = 0;
  #inSlots = 0;
  #busy = false;
  /** The workers keep the process alive (JobOptions.park: jobs their callers parked do not). */
  #ref = false;
  /** Pending jobs parked by their callers. */
  #parked = 0;
  #toWake = 0;
  #flushQueued = false;
  #waiting = false;
  /** Reading completions (a freed slot places a waiting job, which must not re-enter #arm). */
  #draining = false;
  #spinQueued = false;
  #spinSkip = 0;
  #spinMisses = 0;
  #rotate = 0;
  #state: 'open' | 'closed' | 'destroyed' = 'open';
  #broken: Error | null = null;
  #idle: (() => void)[] = [];
  readonly #counts = { completed: 0, failed: 0, cancelled: 0, replaced: 0 };
  readonly #next: [number] = [0];
  /** This pool's share of the run budget: a job is written into a slot only with a slot of it. */
  readonly #lease: Lease;
  readonly #abortJob = (job: Job, err: Error): void => this.#abort(job, err);
  readonly #admitJob = (job: Job): void => this.#admit(job);
  readonly #settleJob = (job: Job, err: Error): void => this.#settle(job, err);
  /** What its jobs' park switches use (JobOptions.park). */
  readonly #parking: Parking;
  /** Called with true when the first job is pending and false when the last settles. */
  onBusy: (busy: boolean) => void = () => {};
  /** A feature's answer to a setup message (its worker-side runner's `reply`). */
  onReply: (body: unknown) => void = () => {};

  constructor(options: JobPoolOptions) {
    this.#options = options;
    this.threads = options.threads;
    this.#lease = (options.budget ?? new Budget(options.threads)).lease(options.threads);
    this.#parking = {
      lease: this.#lease,
      parked: (job, parked) => this.#park(job, parked),
      fail: (job, err) => this.#settle(job, err),
    };
  }

  /** Sends `body` to every worker, those started later included (a feature registering functions). */
  setup(body: unknown): void {
    this.#setups.push(body);
    for (const t of this.#threads) this.#post(t, { type: 'setup', body });
  }

  /** Runs registered function `fn` with `args` on a worker. */
  run(fn: number, args: unknown[], options: JobOptions): Promise<unknown> {
    const refused = refusal(this.#state, this.#broken, options, this.#queued(), this.#options.maxQueue);
    if (refused) return refused;
    this.#start();
    const [job, promise] = newJob(this.#nextId++, fn, args, options, this.#abortJob, this.#parking);
    this.#pending++;
    this.#updateBusy();
    enterBudget(this.#lease, job, this.#admitJob, this.#settleJob);
    return promise;
  }

  /** `job` is inside the run budget: into a slot, or behind the others when all 1,024 are taken. */
  #admit(job: Job): void {
    job.waiter = undefined;
    job.admitted = true;
    if (this.#free.length > 0) this.#place(job);
    else {
      const bad = holdArgs(job);
      if (bad) {
        this.#leave(job);
        this.#settle(job, bad);
        return;
      }
      (this.#overflow[job.priority] as Job[]).push(job);
      this.#overflowCount++;
    }
  }

  /** `job` left (its worker let go of it, or it never reached one): its budget slot goes back. */
  #leave(job: Job | null | undefined): void {
    if (!job?.admitted) return;
    job.admitted = false;
    this.#lease.leave();
  }

  stats(): TaskStats {
    const L = this.#L;
    let running = 0;
    if (L) for (const t of this.#threads) running += Atomics.load(L.i32, L.w(t.index, W_BUSY));
    return {
      threads: this.threads,
      queued: this.#queued(),
      running,
      ...this.#counts,
    };
  }

  /** Stops accepting; resolves once every accepted job has settled and its worker let go of it. */
  close(): Promise<void> {
    if (this.#state === 'open') this.#state = 'closed';
    if (this.#pending === 0 && this.#inSlots === 0) {
      this.#stopAll();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Stops accepting, rejects what is pending with ERR_POOL_CLOSED, stops the workers. */
  destroy(): void {
    this.#state = 'destroyed';
    // A pool whose workers cannot start fails its pending calls with why, as its later ones.
    const err = this.#broken ?? makeError('ERR_POOL_CLOSED', 'the pool was destroyed before the job finished');
    this.#lease.clear(err); // jobs waiting for the budget fail too; every slot goes back
    for (const list of this.#overflow) for (const job of list.splice(0)) this.#settle(job, err);
    this.#overflowCount = 0;
    for (const job of this.#bySlot) if (job) this.#settle(job, err);
    this.#stopAll();
    for (const done of this.#idle.splice(0)) done();
  }

  /** Idle: the workers stop; the next call starts new ones, given the same setup messages. */
  sleep(): boolean {
    if (this.#state === 'open' && this.#pending === 0 && this.#inSlots === 0) this.#stopAll();
    return true;
  }

  #queued(): number {
    return this.#overflowCount + this.#lease.waiting + (this.#L ? this.#L.sharedQueued() : 0);
  }

  #start(): void {
    if (this.#L) return;
    this.#L = new Layout(this.threads);
    this.#free = [];
    for (let s = SLOTS - 1; s >= 0; s--) this.#free.push(s);
    for (let i = 0; i < this.threads; i++) this.#threads.push(this.#spawn(i));
  }

  #spawn(index: number): Thread {
    const port = host().spawnWorker(`offthread-task-${index}`, {
      script: this.#options.script,
      resourceLimits: this.#options.resourceLimits,
    });
    const thread: Thread = { index, port, ready: false };
    // Through a WeakRef: a running worker is a GC root; a strong reference would keep a
    // dropped pool (and its threads) alive forever.
    const self = new WeakRef(this);
    port.onMessage((msg) => {
      const pool = self.deref();
      if (pool) pool.#onMessage(thread, msg as FromWorker);
    });
    port.onError((message) => {
      const pool = self.deref();
      if (pool) pool.#onDeath(thread, message);
    });
    port.ref(this.#ref);
    const L = this.#L as Layout;
    this.#post(thread, { type: 'init', buffer: L.buffer, index, workers: this.threads, nice: this.#options.nice });
    for (const body of this.#setups) this.#post(thread, { type: 'setup', body });
    return thread;
  }

  /**
   * Posts to a worker and tells it a message is due (it may be serving the queues). The
   * count moves before the message leaves: a worker that read the message before the count
   * moved would see one more message "due", go back to its event loop for it, and wait
   * there for good (found as a hang once in ~100 streams aborted mid-way).
   */
  #post(thread: Thread, msg: ToWorker, transfer?: Transferable[]): void {
    this.#postQuietly(thread, msg, transfer);
    this.#signal(thread.index);
  }

  /** `#post` without the wake-up: the caller signals once it has queued more. */
  #postQuietly(thread: Thread, msg: ToWorker, transfer?: Transferable[]): void {
    const L = this.#L as Layout;
    Atomics.add(L.i32, L.w(thread.index, W_POSTED), 1);
    try {
      thread.port.post(msg, transfer);
    } catch (err) {
      thread.port.post({ type: 'nop' } satisfies ToWorker); // the counted message, so the count holds
      this.#signal(thread.index);
      throw err;
    }
  }

  #signal(index: number): void {
    const L = this.#L as Layout;
    const at = L.w(index, W_SIGNAL);
    Atomics.add(L.i32, at, 1);
    Atomics.notify(L.i32, at);
  }

  #region(slot: number): Region {
    let r = this.#regions[slot];
    if (!r) {
      r = region((this.#L as Layout).buffer, (this.#L as Layout).data(slot), SLOT_DATA);
      this.#regions[slot] = r;
    }
    return r;
  }

  /** Writes `job` into a free slot and queues it. */
  #place(job: Job): void {
    const L = this.#L as Layout;
    const { i32 } = L;
    const slot = this.#free.pop() as number;
    job.slot = slot;
    this.#bySlot[slot] = job;
    this.#inSlots++;
    this.#updateBusy();
    const lone = this.#pending === 1;
    i32[L.s(slot, S_ID)] = job.id;
    i32[L.s(slot, S_FN)] = job.fn;
    i32[L.s(slot, S_NEED)] = this.#setups.length;
    Atomics.store(i32, L.s(slot, S_CANCEL), 0);
    const at = job.transfer ? NO_FIT : encode(this.#region(slot), 0, job.args);
    if (at !== NO_FIT) {
      i32[L.s(slot, S_FLAGS)] = lone ? F_LONE : 0;
      Atomics.store(i32, L.s(slot, S_STATE), QUEUED);
      L.pushShared(job.priority, slot);
      this.#toWake++;
      if (!this.#flushQueued) {
        this.#flushQueued = true;
        queueMicrotask(this.#flush);
      }
    } else if (!this.#placeByMessage(job, slot, lone)) {
      return;
    }
    if (this.#draining) return; // #arm's loop looks again after the drain
    if (lone) this.#spinForLoneCall();
    else this.#arm();
  }

  /** Arguments that need structured clone (or a transfer) go to one worker by message. */
  #placeByMessage(job: Job, slot: number, lone: boolean): boolean {
    const L = this.#L as Layout;
    const bad = job.transfer ? null : findUncloneable(job.args, 'args');
    const fail = (message: string) => {
      this.#settle(job, makeError('ERR_TASK_DATA', message));
      this.#freeSlot(slot);
      return false;
    };
    if (bad) return fail(`an argument cannot cross to a worker: ${bad}`);
    const thread = this.#pickThread();
    L.i32[L.s(slot, S_FLAGS)] = F_BY_MESSAGE | (lone ? F_LONE : 0);
    Atomics.store(L.i32, L.s(slot, S_STATE), QUEUED);
    try {
      // One wake-up, once the slot is queued too: a worker woken by the message alone
      // found no slot yet and went back to sleep, to be woken again.
      const { args, transfer } = moveCopies(job.args, job.transfer);
      this.#postQuietly(thread, { type: 'args', slot, id: job.id, args }, transfer);
    } catch (err) {
      return fail(`an argument cannot cross to a worker: ${(err as Error).message}`);
    }
    L.pushDirect(thread.index, slot);
    this.#signal(thread.index);
    return true;
  }

  /** An idle worker if there is one, else the next in turn. */
  #pickThread(): Thread {
    const L = this.#L as Layout;
    const n = this.#threads.length;
    for (let k = 0; k < n; k++) {
      const t = this.#threads[(this.#rotate + k) % n] as Thread;
      if (Atomics.load(L.i32, L.w(t.index, W_BUSY)) === 0 && L.directEmpty(t.index)) {
        this.#rotate = (t.index + 1) % n;
        return t;
      }
    }
    const t = this.#threads[this.#rotate] as Thread;
    this.#rotate = (this.#rotate + 1) % n;
    return t;
  }

  /** Wakes as many sleeping workers as jobs were queued since the last flush (one notify per burst). */
  readonly #flush = (): void => {
    this.#flushQueued = false;
    const L = this.#L;
    let n = this.#toWake;
    this.#toWake = 0;
    if (!L) return;
    for (const t of this.#threads) {
      if (n <= 0) return;
      if (Atomics.load(L.i32, L.w(t.index, W_SLEEP)) === 1) {
        this.#signal(t.index);
        n--;
      }
    }
  };

  #anyDone(): boolean {
    const L = this.#L as Layout;
    for (const t of this.#threads) if (L.hasDone(t.index)) return true;
    return false;
  }

  #drain(): void {
    const L = this.#L;
    if (!L || this.#draining) return;
    this.#draining = true;
    try {
      for (const t of this.#threads) L.drainDone(t.index, this.#completed);
    } finally {
      this.#draining = false;
    }
  }

  /** Waits (Atomics.waitAsync) for the next completion while jobs are in slots. */
  #arm(): void {
    if (this.#waiting || this.#spinQueued) return;
    const L = this.#L as Layout;
    while (this.#inSlots > 0) {
      Atomics.store(L.i32, MAIN, 1);
      if (this.#anyDone()) {
        Atomics.store(L.i32, MAIN, 0);
        this.#drain();
        continue;
      }
      const r = waitAsync(L.i32, MAIN, 1);
      if (!r.async) continue;
      this.#waiting = true;
      void (r.value as Promise<unknown>).then(this.#woken);
      return;
    }
  }

  readonly #woken = (): void => {
    this.#waiting = false;
    const L = this.#L;
    if (!L) return;
    Atomics.store(L.i32, MAIN, 0);
    this.#drain();
    this.#arm();
  };

  /** A lone call: spin on the completion queues briefly (skipped after misses, as the worker engine does). */
  #spinForLoneCall(): void {
    if (this.#spinQueued || this.#waiting) return;
    if (this.#spinSkip > 0) {
      this.#spinSkip--;
      this.#arm();
      return;
    }
    this.#spinQueued = true;
    nextTurn(this.#spin);
  }

  readonly #spin = (): void => {
    this.#spinQueued = false;
    if (!this.#L || this.#inSlots === 0) return;
    const end = performance.now() + LONE_CALL_SPIN_MS;
    let found = this.#anyDone();
    for (let n = 1; !found; n++) {
      if ((n & 15) === 0 && performance.now() > end) break;
      found = this.#anyDone();
    }
    if (found) {
      this.#spinMisses = 0;
      this.#drain();
    } else {
      this.#spinMisses = Math.min(this.#spinMisses + 1, 6);
      this.#spinSkip = 2 ** this.#spinMisses - 1;
    }
    this.#arm();
  };

  readonly #completed = (slot: number): void => {
    const L = this.#L as Layout;
    const job = this.#bySlot[slot];
    if (job && !job.settled && Atomics.load(L.i32, L.s(slot, S_STATE)) === DONE) {
      const args = decode(this.#region(slot), 0, this.#next);
      this.#counts.completed++;
      this.#settle(job, null, args);
    }
    this.#freeSlot(slot);
  };

  #onMessage(thread: Thread, msg: FromWorker): void {
    if (msg.type === 'ready') {
      thread.ready = true;
      return;
    }
    if (msg.type === 'reply') {
      this.onReply(msg.body);
      return;
    }
    const job = this.#bySlot[msg.slot];
    if (!job || job.id !== msg.id) return;
    const outcome = jobMessage(
      job,
      msg,
      this.#counts,
      (n) => this.#post(thread, { type: 'pull', slot: msg.slot, id: job.id, n }),
      (err) => this.#abort(job, err),
    );
    if (!outcome) return;
    this.#settle(job, outcome.err, outcome.value);
    this.#freeSlot(msg.slot);
  }

  #settle(job: Job, err: unknown, value?: unknown): void {
    if (job.settled) return;
    job.settled = true;
    if (job.parked) {
      job.parked = false;
      this.#parked--;
    }
    if (job.waiter) {
      // Waiting for a slot (first, or again after parking): it leaves the wait.
      this.#lease.cancel(job.waiter);
      job.waiter = undefined;
      job.resumes = undefined;
    }
    job.stop();
    if (err !== null) job.reject(err);
    else job.resolve(value);
    this.#pending--;
    this.#updateBusy();
    this.#maybeIdle();
  }

  #maybeIdle(): void {
    if (this.#state === 'open' || this.#pending > 0 || this.#inSlots > 0) return;
    this.#stopAll();
    for (const done of this.#idle.splice(0)) done();
  }

  #freeSlot(slot: number): void {
    const L = this.#L as Layout;
    const job = this.#bySlot[slot];
    if (job === null) return;
    this.#bySlot[slot] = null;
    Atomics.store(L.i32, L.s(slot, S_STATE), FREE);
    this.#free.push(slot);
    this.#inSlots--;
    this.#updateBusy();
    this.#leave(job); // last: it may start a waiting job, here (into this slot) or elsewhere
    if (this.#overflowCount > 0 && this.#state !== 'destroyed') this.#placeOverflow();
    this.#maybeIdle();
  }

  #placeOverflow(): void {
    const n = this.#overflowTakes++;
    const first = (n & 15) === 15 ? 2 : (n & 3) === 3 ? 1 : 0;
    const order = [first, ...[0, 1, 2].filter((p) => p !== first)];
    for (const p of order) {
      const job = (this.#overflow[p] as Job[]).shift();
      if (!job) continue;
      this.#overflowCount--;
      this.#place(job);
      return;
    }
  }

  #abort(job: Job, err: Error): void {
    if (job.settled) return;
    this.#counts.cancelled++;
    job.stream?.deref()?.fail(err);
    this.#settle(job, err); // ends its wait for a budget slot, if any (a parked job's worker is told below)
    if (job.slot < 0) {
      const list = this.#overflow[job.priority] as Job[];
      const at = list.indexOf(job);
      if (at >= 0) {
        list.splice(at, 1);
        this.#overflowCount--;
        this.#leave(job);
      }
      return;
    }
    const L = this.#L as Layout;
    const slot = job.slot;
    const was = Atomics.compareExchange(L.i32, L.s(slot, S_STATE), QUEUED, DROPPED);
    if (was === QUEUED || was === FREE) return; // the worker that takes it gives it back
    Atomics.store(L.i32, L.s(slot, S_CANCEL), 1);
    const owner = this.#threads[Atomics.load(L.i32, L.s(slot, S_OWNER))];
    if (!owner) return;
    this.#post(owner, { type: 'cancel', slot, id: job.id });
    turnAfter(this.#options.grace, () => {
      const state = Atomics.load(L.i32, L.s(slot, S_STATE));
      if (this.#bySlot[slot] === job && (state === RUNNING || state === CLAIMED) && this.#threads.includes(owner)) {
        owner.port.terminate();
        this.#onDeath(owner, `its task did not stop within ${this.#options.grace} ms of its abort`);
      }
    });
  }

  /** A worker died or was stopped: fail the job it ran, requeue what it had taken, start another. */
  #onDeath(thread: Thread, message: string): void {
    if (!this.#threads.includes(thread) || this.#state === 'destroyed') return;
    const L = this.#L as Layout;
    if (!thread.ready && this.#counts.completed === 0 && this.#counts.failed === 0) {
      this.#broken = makeError('ERR_BACKEND_UNAVAILABLE', `a task worker failed to start: ${message}`);
      this.destroy();
      return;
    }
    thread.port.terminate();
    this.#drain();
    const requeue: Job[] = [];
    for (const slot of L.takeDirect(thread.index)) {
      const job = this.#bySlot[slot];
      if (job) requeue.push(job);
    }
    for (let slot = 0; slot < SLOTS; slot++) {
      const job = this.#bySlot[slot];
      if (!job || Atomics.load(L.i32, L.s(slot, S_OWNER)) !== thread.index) continue;
      const state = Atomics.load(L.i32, L.s(slot, S_STATE));
      if (state === CLAIMED) requeue.push(job);
      else if (state === RUNNING) {
        this.#counts.failed++;
        const err = makeError('ERR_WORKER_DIED', `the worker running this task died: ${message}`);
        job.stream?.deref()?.fail(err);
        this.#settle(job, err);
        this.#freeSlot(slot);
      }
    }
    this.#counts.replaced++;
    L.resetWorker(thread.index);
    const next = this.#spawn(thread.index);
    this.#threads[thread.index] = next;
    for (const job of requeue) {
      this.#bySlot[job.slot] = null;
      Atomics.store(L.i32, L.s(job.slot, S_STATE), FREE);
      this.#free.push(job.slot);
      this.#inSlots--;
      if (job.settled) {
        this.#leave(job);
        continue;
      }
      if (job.transfer) {
        this.#leave(job);
        this.#counts.failed++;
        this.#settle(
          job,
          makeError('ERR_WORKER_DIED', `the worker holding this task died before it started: ${message}`),
        );
        continue;
      }
      this.#place(job);
    }
    this.#updateBusy();
    this.#maybeIdle();
  }

  /**
   * Busy while a call is pending or a slot is in use — an aborted task still running, a
   * result on its way, which close() waits for: the workers keep the process alive (ref)
   * only then. (Counting calls alone let the loop drain while close() waited for an
   * aborted task's answer: the process exited with close() pending.)
   */
  #updateBusy(): void {
    const on = this.#pending > 0 || this.#inSlots > 0;
    this.#updateRef(on);
    if (on === this.#busy) return;
    this.#busy = on;
    this.onBusy(on);
  }

  #park(job: Job, parked: boolean): void {
    job.parked = parked;
    this.#parked += parked ? 1 : -1;
    this.#updateRef(this.#busy);
  }

  /**
   * Busy, less the jobs their callers parked (JobOptions.park): a stream left open
   * between chunks holds its state on its worker but not the process, as Node's own streams.
   * A slot held past its job's settling (an aborted task still running) still counts.
   */
  #updateRef(busy: boolean): void {
    const on =
      busy && (this.#parked === 0 || this.#pending > this.#parked || this.#bySlot.some((job) => job?.settled === true));
    if (on === this.#ref) return;
    this.#ref = on;
    for (const t of this.#threads) t.port.ref(on);
  }

  #stopAll(): void {
    const threads = this.#threads;
    this.#threads = [];
    for (const t of threads) t.port.terminate();
    const L = this.#L;
    this.#L = null;
    this.#regions.length = 0;
    this.#bySlot.fill(null);
    this.#inSlots = 0;
    this.#updateBusy();
    if (L && this.#waiting) {
      Atomics.store(L.i32, MAIN, 0);
      Atomics.notify(L.i32, MAIN); // let the pending waitAsync go (it would hold the memory)
    }
  }
}

/** What a feature sees of a job pool, over shared memory or by message. */
export type Jobs = Pick<JobPool, 'threads' | 'setup' | 'run' | 'stats' | 'close' | 'destroy' | 'sleep'> & {
  onBusy: (busy: boolean) => void;
  onReply: (body: unknown) => void;
};

/** A job pool for this host: over shared memory where it has it, else by message. */
export function jobPool(options: JobPoolOptions): Jobs {
  return host().sharedMemory() ? new JobPool(options) : new MessageJobPool(options);
}
