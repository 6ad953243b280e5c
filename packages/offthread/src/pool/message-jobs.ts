/**
 * A job pool without shared memory: the caller keeps the queue and posts each job to an
 * idle worker, which answers by message (pool/serve.ts, serveByMessage). jobs.ts's
 * `jobPool()` picks it where the host has no SharedArrayBuffer.
 */
import { makeError } from '../errors.js';
import { host, type WorkerPort } from '../host.js';
import { moveCopies } from './big-buffers.js';
import { Budget, type Lease } from './budget.js';
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
import { PRIORITIES } from './layout.js';
import type { FromWorker, ToWorker } from './serve.js';
import { turnAfter } from './turn.js';
import { findUncloneable } from './wire.js';

interface MessageThread {
  index: number;
  port: WorkerPort;
  ready: boolean;
  /** The job it runs, or null when idle. */
  job: Job | null;
}

/**
 * A job pool without shared memory (a browser page that is not cross-origin isolated):
 * the caller keeps the queue (by priority, no starvation, as JobPool's workers take) and
 * posts each job to an idle worker; the worker answers by message (pool/serve.ts,
 * serveByMessage). Abort, timeout, grace, death, streams and progress behave as in
 * JobPool, except that a running task's signal aborts only once its worker reads the
 * 'cancel' message — when the task awaits — so a CPU loop is stopped by the grace timer.
 */
export class MessageJobPool {
  readonly threads: number;
  readonly #options: JobPoolOptions;
  #threads: MessageThread[] = [];
  readonly #queue: Job[][] = PRIORITIES.map(() => []);
  #queued = 0;
  #takes = 0;
  readonly #setups: unknown[] = [];
  #nextId = 1;
  #pending = 0;
  #busy = false;
  /** The workers keep the process alive (JobOptions.park: jobs their callers parked do not). */
  #ref = false;
  /** Pending jobs parked by their callers. */
  #parked = 0;
  #state: 'open' | 'closed' | 'destroyed' = 'open';
  #broken: Error | null = null;
  #idle: (() => void)[] = [];
  readonly #counts = { completed: 0, failed: 0, cancelled: 0, replaced: 0 };
  /** This pool's share of the run budget: a job joins the queue only with a slot of it. */
  readonly #lease: Lease;
  readonly #abortJob = (job: Job, err: Error): void => this.#abort(job, err);
  readonly #admitJob = (job: Job): void => this.#admit(job);
  readonly #settleJob = (job: Job, err: Error): void => this.#settle(job, err);
  /** What its jobs' park switches use (JobOptions.park). */
  readonly #parking: Parking;
  onBusy: (busy: boolean) => void = () => {};
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

  setup(body: unknown): void {
    this.#setups.push(body);
    for (const t of this.#threads) t.port.post({ type: 'setup', body } satisfies ToWorker);
  }

  run(fn: number, args: unknown[], options: JobOptions): Promise<unknown> {
    const refused = refusal(
      this.#state,
      this.#broken,
      options,
      this.#queued + this.#lease.waiting,
      this.#options.maxQueue,
    );
    if (refused) return refused;
    const bad = options.transfer ? null : findUncloneable(args, 'args');
    if (bad) return Promise.reject(makeError('ERR_TASK_DATA', `an argument cannot cross to a worker: ${bad}`));
    if (this.#threads.length === 0) for (let i = 0; i < this.threads; i++) this.#threads.push(this.#spawn(i));
    const [job, promise] = newJob(this.#nextId++, fn, args, options, this.#abortJob, this.#parking);
    this.#pending++;
    this.#updateBusy();
    enterBudget(this.#lease, job, this.#admitJob, this.#settleJob);
    return promise;
  }

  /** `job` is inside the run budget: it joins the queue. */
  #admit(job: Job): void {
    job.waiter = undefined;
    job.admitted = true;
    if (!this.#threads.some((t) => !t.job)) {
      const bad = holdArgs(job);
      if (bad) {
        this.#leave(job);
        this.#settle(job, bad);
        return;
      }
    }
    (this.#queue[job.priority] as Job[]).push(job);
    this.#queued++;
    this.#dispatch();
  }

  /** `job` left (its worker let go of it, or it never reached one): its budget slot goes back. */
  #leave(job: Job | null): void {
    if (!job?.admitted) return;
    job.admitted = false;
    this.#lease.leave();
  }

  stats(): TaskStats {
    let running = 0;
    for (const t of this.#threads) if (t.job) running++;
    return { threads: this.threads, queued: this.#queued + this.#lease.waiting, running, ...this.#counts };
  }

  close(): Promise<void> {
    if (this.#state === 'open') this.#state = 'closed';
    if (this.#pending === 0 && !this.#threads.some((t) => t.job)) {
      this.#stopAll();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  destroy(): void {
    this.#state = 'destroyed';
    // A pool whose workers cannot start fails its pending calls with why, as its later ones.
    const err = this.#broken ?? makeError('ERR_POOL_CLOSED', 'the pool was destroyed before the job finished');
    this.#lease.clear(err); // jobs waiting for the budget fail too; every slot goes back
    for (const list of this.#queue) for (const job of list.splice(0)) this.#settle(job, err);
    this.#queued = 0;
    for (const t of this.#threads) if (t.job) this.#settle(t.job, err);
    this.#stopAll();
    for (const done of this.#idle.splice(0)) done();
  }

  sleep(): boolean {
    if (this.#state === 'open' && this.#pending === 0 && !this.#threads.some((t) => t.job)) this.#stopAll();
    return true;
  }

  #spawn(index: number): MessageThread {
    const port = host().spawnWorker(`offthread-task-${index}`, {
      script: this.#options.script,
      resourceLimits: this.#options.resourceLimits,
    });
    const thread: MessageThread = { index, port, ready: false, job: null };
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
    const init: ToWorker = { type: 'init', buffer: null, index, workers: this.threads, nice: this.#options.nice };
    port.post(init);
    for (const body of this.#setups) port.post({ type: 'setup', body } satisfies ToWorker);
    return thread;
  }

  /** The next queued job: high first, but every 4th take prefers normal and every 16th low. */
  #take(): Job | undefined {
    const n = this.#takes++;
    const first = (n & 15) === 15 ? 2 : (n & 3) === 3 ? 1 : 0;
    for (const p of [first, ...[0, 1, 2].filter((q) => q !== first)]) {
      const job = (this.#queue[p] as Job[]).shift();
      if (job) {
        this.#queued--;
        return job;
      }
    }
    return undefined;
  }

  #dispatch(): void {
    for (const t of this.#threads) {
      if (t.job || this.#queued === 0) continue;
      const job = this.#take() as Job;
      t.job = job;
      job.slot = t.index;
      try {
        const { args, transfer } = moveCopies(job.args, job.transfer);
        t.port.post({ type: 'job', slot: t.index, id: job.id, fn: job.fn, args }, transfer);
      } catch (err) {
        t.job = null;
        this.#leave(job);
        this.#counts.failed++;
        this.#settle(
          job,
          makeError('ERR_TASK_DATA', `an argument cannot cross to a worker: ${(err as Error).message}`),
        );
      }
    }
  }

  #onMessage(thread: MessageThread, msg: FromWorker): void {
    if (msg.type === 'ready') {
      thread.ready = true;
      return;
    }
    if (msg.type === 'reply') {
      this.onReply(msg.body);
      return;
    }
    const job = thread.job;
    if (!job || job.id !== msg.id) return;
    const outcome = jobMessage(
      job,
      msg,
      this.#counts,
      (n) => thread.port.post({ type: 'pull', slot: thread.index, id: job.id, n } satisfies ToWorker),
      (err) => this.#abort(job, err),
    );
    if (!outcome) return;
    this.#settle(job, outcome.err, outcome.value);
    thread.job = null;
    this.#leave(job);
    this.#dispatch();
    this.#updateBusy(); // an aborted job's worker let go: the last use may be over
    this.#maybeIdle();
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

  #abort(job: Job, err: Error): void {
    if (job.settled) return;
    this.#counts.cancelled++;
    job.stream?.deref()?.fail(err);
    this.#settle(job, err); // ends its wait for a budget slot, if any (a parked job's worker is told below)
    const thread = this.#threads.find((t) => t.job === job);
    if (!thread) {
      const list = this.#queue[job.priority] as Job[];
      const at = list.indexOf(job);
      if (at >= 0) {
        list.splice(at, 1);
        this.#queued--;
        this.#leave(job);
      }
      return;
    }
    thread.port.post({ type: 'cancel', slot: thread.index, id: job.id } satisfies ToWorker);
    const check = (): void => {
      if (thread.job !== job || !this.#threads.includes(thread)) return;
      // A worker still starting has not run the job (its 'cancel' will drop it): wait, not kill.
      if (!thread.ready) {
        turnAfter(this.#options.grace, check);
        return;
      }
      this.#onDeath(thread, `its task did not stop within ${this.#options.grace} ms of its abort`);
    };
    turnAfter(this.#options.grace, check);
  }

  #onDeath(thread: MessageThread, message: string): void {
    if (!this.#threads.includes(thread) || this.#state === 'destroyed') return;
    if (!thread.ready && this.#counts.completed === 0 && this.#counts.failed === 0) {
      this.#broken = makeError('ERR_BACKEND_UNAVAILABLE', `a task worker failed to start: ${message}`);
      this.destroy();
      return;
    }
    thread.port.terminate();
    const job = thread.job;
    thread.job = null;
    this.#leave(job);
    if (job && !job.settled) {
      this.#counts.failed++;
      const err = makeError('ERR_WORKER_DIED', `the worker running this task died: ${message}`);
      job.stream?.deref()?.fail(err);
      this.#settle(job, err);
    }
    this.#counts.replaced++;
    this.#threads[this.#threads.indexOf(thread)] = this.#spawn(thread.index);
    this.#dispatch();
    this.#updateBusy();
    this.#maybeIdle();
  }

  #maybeIdle(): void {
    if (this.#state === 'open' || this.#pending > 0 || this.#threads.some((t) => t.job)) return;
    this.#stopAll();
    for (const done of this.#idle.splice(0)) done();
  }

  #updateBusy(): void {
    const on = this.#pending > 0 || this.#threads.some((t) => t.job);
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

  /** Busy, less the jobs their callers parked, as JobPool's (a worker still on a settled job counts). */
  #updateRef(busy: boolean): void {
    const on =
      busy &&
      (this.#parked === 0 || this.#pending > this.#parked || this.#threads.some((t) => t.job?.settled === true));
    if (on === this.#ref) return;
    this.#ref = on;
    for (const t of this.#threads) t.port.ref(on);
  }

  #stopAll(): void {
    const threads = this.#threads;
    this.#threads = [];
    for (const t of threads) t.port.terminate();
    this.#updateBusy();
  }
}
