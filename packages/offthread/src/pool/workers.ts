/**
 * The worker engine: a pool of workers (worker_threads in Node, module Web Workers in
 * browsers) running the worker loop (worker-loop.ts), each given offthread.wasm — or, in
 * the pure-JS tier, none. It knows no feature: the kernels feature makes it for its
 * 'wasm' and 'js' engines (kernels/engines.ts) and the guests feature for its hosts
 * (guests/load.ts); what a worker does with a job is the features' own (kernels/worker.ts,
 * guests/worker.ts). It is what runs wherever the native addon is missing, and the
 * browser's only engine. One FIFO; an idle worker takes the next task, so uneven chunks
 * balance.
 *
 * Cancelling a running task: with shared memory each worker polls a cancel flag between
 * chunks (≈ 1 ms of work); without it (a browser page that is not cross-origin
 * isolated) the worker is terminated and a new one takes its place. A worker that dies
 * rejects its task with ERR_KERNEL_PANIC and is replaced; one that cannot start at all
 * fails every call with ERR_BACKEND_UNAVAILABLE instead of respawning forever.
 *
 * Guest engines (guests/load.ts) with shared memory give each worker a mailbox
 * (mailbox.ts): a call with a small input is written into it instead of posted,
 * and its result read from it; a lone call spins for its completion (below).
 */

import { type ErrorCode, errorRegistry, makeError } from '../errors.js';
import { host, type WorkerPort } from '../host.js';
import { Budget, type BudgetWaiter, type Lease } from './budget.js';
import { type RunOptions, watchCall } from './call.js';
import {
  type Engine,
  type EngineName,
  type JobArgs,
  type JobName,
  type JobResult,
  LatencyWindow,
  type PoolStats,
} from './engine.js';
import {
  ASLEEP,
  BOX_BYTES,
  type Box,
  DONE,
  fitsBox,
  IN_BOX,
  type MailCall,
  noteMessage,
  openBox,
  RUNNING,
  readResult,
  WATCHING,
  writeCall,
} from './mailbox.js';
import { nodeSetImmediate } from './turn.js';
import type { GuestTaskMessage, InitMessage, Reply, TaskMessage } from './worker-loop.js';

interface Task {
  id: number;
  kernel: string;
  args: unknown;
  /** A guest call (guests/): sent as a 'guest' message instead of a kernel task. */
  guest?: unknown;
  /** Only this worker (by index) may run it: a `single` guest or a stream filter lives on one worker. */
  target?: number | undefined;
  /** Moved, not copied, to the worker with the task (a chunk the task owns). */
  transfer?: Transferable[] | undefined;
  /** It went through the worker's mailbox (its answer is read from there). */
  mailed?: boolean;
  submitted: number;
  started: number;
  resolve(value: unknown): void;
  reject(err: unknown): void;
  stopWatching(): void;
  settled: boolean;
  /** Inside the pool's run budget (from its admission until its worker let go of it). */
  admitted: boolean;
  /** Waiting for the budget, until admitted. */
  waiter?: BudgetWaiter | undefined;
}

interface Slot {
  port: WorkerPort;
  ready: boolean;
  task: Task | null;
  flags: Int32Array | null;
  /** The guest mailbox (guest engines with shared memory), else null. */
  box: Box | null;
}

const now = () => performance.now();

/**
 * A lone mailbox call (nothing else pending) is usually answered within a few µs;
 * waking the caller by message costs tens. So, as the native engine does for a lone
 * job, one immediate spins up to this long on the mailbox (the loop polls I/O without
 * sleeping while it is queued). Each consecutive spin that finds nothing doubles the
 * number of lone calls that skip spinning (up to SPIN_BACKOFF), so long calls cost
 * next to no spinning and one preempted call costs one skipped spin.
 */
const LONE_CALL_SPIN_MS = 0.02;
const SPIN_BACKOFF = 64;
// Node's; in browsers the page's thread does not spin (the worker's 'mail' wakes it).
const waitAsync = (
  Atomics as unknown as {
    waitAsync?: (a: Int32Array, i: number, v: number) => { async: boolean; value: Promise<unknown> | string };
  }
).waitAsync;

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function fromWire(e: { code: string; message: string }): Error {
  const code = (e.code in errorRegistry ? e.code : 'ERR_KERNEL_PANIC') as ErrorCode;
  return makeError(code, e.message);
}

export class WorkerEngine implements Engine {
  readonly name: EngineName;
  readonly threads: number;
  readonly #maxQueue: number;
  readonly #module: WebAssembly.Module | null;
  readonly #shared: boolean;
  readonly #mailbox: boolean;
  #spinSlot: Slot | null = null;
  #spinSkip = 0;
  #spinMisses = 0;
  #slots: Slot[] = [];
  #queue: Task[] = [];
  /**
   * Steps for one worker (stream filters) that found the queue full: they wait here, in
   * order, instead of failing mid-stream, and join the queue as room frees. Bounded by
   * the streams' own windows (each has at most `inFlight` steps unanswered).
   */
  #waiting: Task[] = [];
  #nextId = 1;
  #pending = 0;
  #state: 'open' | 'closed' | 'destroyed' = 'open';
  #broken: Error | null = null;
  #idle: (() => void)[] = [];
  #setups: unknown[] = [];
  #crashNext = false;
  readonly #counts = { completed: 0, failed: 0, cancelled: 0, crashed: 0, replaced: 0 };
  readonly #wait = new LatencyWindow();
  readonly #run = new LatencyWindow();
  /** This engine's share of the run budget (pool/budget.ts): a task takes a slot before it is queued for a worker. */
  #lease: Lease;
  onBusy: (busy: boolean) => void = () => {};

  /**
   * `module` null: the pure-JS tier (π and MD5 only). `mailbox`: guest calls go through
   * a shared-memory mailbox per worker where the host can share memory.
   */
  constructor(
    module: WebAssembly.Module | null,
    threads: number,
    maxQueue: number,
    options?: { mailbox?: boolean | undefined },
  ) {
    this.name = module ? 'wasm' : 'js';
    this.#module = module;
    this.threads = threads;
    this.#maxQueue = maxQueue;
    this.#shared = host().sharedMemory();
    this.#mailbox = this.#shared && options?.mailbox === true;
    this.#lease = new Budget(threads).lease(threads);
  }

  /** The pool's run budget: a task runs on a worker only with a slot of it. */
  useBudget(budget: Budget): void {
    this.#lease = budget.lease(this.threads);
  }

  /** 'shared' (cancel flags in shared memory) or 'message' (cancel = replace the worker). */
  get transport(): 'shared' | 'message' {
    return this.#shared ? 'shared' : 'message';
  }

  /** Whether guest calls use the workers' mailboxes. */
  get mailbox(): boolean {
    return this.#mailbox;
  }

  /** @internal Tests: each worker's mailbox header (Int32Array), or null without one. */
  mailboxHeaders(): (Int32Array | null)[] {
    return this.#slots.map((s) => s.box?.i32 ?? null);
  }

  run<K extends JobName>(kernel: K, args: JobArgs<K>, call: RunOptions): Promise<JobResult<K>> {
    return this.#submit({ kernel, args }, call) as Promise<JobResult<K>>;
  }

  /**
   * Runs `kernel` on worker `worker` only (index from 0 below `threads`), after the
   * tasks queued for it before: a stream filter's steps, in order, where its state is.
   */
  runOn<K extends JobName>(
    worker: number,
    kernel: K,
    args: JobArgs<K>,
    transfer?: Transferable[],
  ): Promise<JobResult<K>> {
    return this.#submit({ kernel, args, target: worker, transfer }, {}) as Promise<JobResult<K>>;
  }

  #submit(work: Pick<Task, 'kernel' | 'args' | 'guest' | 'target' | 'transfer'>, call: RunOptions): Promise<unknown> {
    if (this.#state !== 'open') return Promise.reject(makeError('ERR_POOL_CLOSED', `the pool is ${this.#state}`));
    if (this.#broken) return Promise.reject(this.#broken);
    const full = this.#queue.length + this.#lease.waiting >= this.#maxQueue;
    const wait = work.target !== undefined && (full || this.#waiting.length > 0);
    if (full && !wait) {
      return Promise.reject(
        makeError('ERR_QUEUE_FULL', `the pool already holds ${this.#queue.length} queued jobs (maxQueue)`),
      );
    }
    this.#start();
    return new Promise<unknown>((resolve, reject) => {
      const task: Task = {
        id: this.#nextId++,
        ...work,
        submitted: now(),
        started: 0,
        resolve,
        reject,
        stopWatching: () => {},
        settled: false,
        admitted: false,
      };
      task.stopWatching = watchCall(call, (err) => {
        if (task.settled) return;
        this.#cancel(task);
        this.#finish(task, err);
      });
      if (this.#pending++ === 0) this.#busy(true);
      const admit = (): void => {
        task.waiter = undefined;
        task.admitted = true;
        (wait ? this.#waiting : this.#queue).push(task);
        this.#pump();
      };
      task.waiter = this.#lease.admit({ priority: 1, weight: 1, start: admit, fail: (err) => this.#finish(task, err) });
    });
  }

  /** `task` left its worker (or the queue): its slot of the budget goes back. */
  #leave(task: Task | null): void {
    if (!task?.admitted) return;
    task.admitted = false;
    this.#lease.leave();
  }

  /**
   * Guests (guests/host.ts): `message` goes to every worker after its init, workers
   * started later included, so a replacement worker loads the same guests.
   */
  addSetup(message: unknown): void {
    this.#setups.push(message);
    for (const s of this.#slots) this.#post(s, message);
  }

  /**
   * Runs a guest call on a worker (`target`: only that one). A guest cannot poll a
   * cancel flag, so abort and timeout terminate its worker and start another.
   */
  runGuest(call: unknown, options: RunOptions, target?: number): Promise<unknown> {
    return this.#submit({ kernel: 'guest', args: undefined, guest: call, target }, options);
  }

  stats(): PoolStats & { transport: 'shared' | 'message'; workers: number; crashed: number; replaced: number } {
    const running = this.#slots.filter((s) => s.task).length;
    const { completed, failed, cancelled, crashed, replaced } = this.#counts;
    return {
      engine: this.name,
      threads: this.threads,
      queued: this.#queue.length + this.#waiting.length + this.#lease.waiting,
      running,
      completed,
      failed,
      cancelled,
      waitTime: this.#wait.stats(),
      runTime: this.#run.stats(),
      pending: this.#pending,
      transport: this.transport,
      workers: this.#slots.filter((s) => s.ready).length,
      crashed,
      replaced,
    };
  }

  /** Test hook: the next task sent to a worker makes that worker crash. */
  crashNextTask(): void {
    this.#crashNext = true;
  }

  close(): Promise<void> {
    if (this.#state === 'open') this.#state = 'closed';
    if (this.#pending === 0) {
      this.#stopWorkers();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  destroy(): void {
    this.#state = 'destroyed';
    this.#failAll(makeError('ERR_POOL_CLOSED', 'the pool was destroyed before the job finished'));
  }

  /** Idle: the workers stop; the next job starts new ones, given the same setup messages. */
  sleep(): boolean {
    if (this.#pending === 0 && this.#state === 'open') this.#stopWorkers();
    return true;
  }

  #busy(on: boolean): void {
    for (const s of this.#slots) s.port.ref(on);
    this.onBusy(on);
  }

  /** Settles `task` with `err`, or with its value when `err` is null. */
  #finish(task: Task, err: unknown, value?: unknown): void {
    if (task.settled) return;
    task.settled = true;
    task.stopWatching();
    if (err) task.reject(err);
    else task.resolve(value);
    if (--this.#pending === 0) {
      this.#busy(false);
      if (this.#state !== 'open') {
        this.#stopWorkers();
        for (const done of this.#idle.splice(0)) done();
      }
    }
  }

  #failAll(err: Error): void {
    const queued = [...this.#queue, ...this.#waiting];
    const running = this.#slots.map((s) => s.task);
    this.#queue = [];
    this.#waiting = [];
    this.#stopWorkers();
    for (const t of queued) this.#leave(t);
    this.#lease.clear(err); // tasks waiting for the budget fail with `err` too
    for (const t of queued) this.#finish(t, err);
    for (const t of running) if (t) this.#finish(t, err);
  }

  #stopWorkers(): void {
    const slots = this.#slots;
    this.#slots = [];
    for (const s of slots) {
      this.#stop(s);
      this.#leave(s.task); // an aborted task still stopping: its worker is gone now
    }
  }

  /** Terminates a worker; a caller waiting on its mailbox (Atomics.waitAsync) is let go. */
  #stop(slot: Slot): void {
    slot.port.terminate();
    if (slot.box) Atomics.notify(slot.box.i32, DONE);
  }

  #start(): void {
    if (this.#slots.length > 0) return;
    for (let i = 0; i < this.threads; i++) this.#slots.push(this.#spawn(i));
  }

  /**
   * Posts to a worker; a worker serving its mailbox is told a message is on its way —
   * before it leaves: told after, a worker that had already read it would count one more
   * message due than will come, go back to its event loop and miss every later mailbox
   * call (pool/jobs.ts had the same race and hung).
   */
  #post(slot: Slot, message: unknown, transfer?: Transferable[]): void {
    if (slot.box) noteMessage(slot.box);
    try {
      slot.port.post(message, transfer);
    } catch (err) {
      if (slot.box) slot.port.post({ type: 'nop' }); // the message counted, so the count holds
      throw err;
    }
  }

  #spawn(index: number): Slot {
    const port = host().spawnWorker(`offthread-${index}`);
    const control = this.#shared ? new SharedArrayBuffer(this.#mailbox ? BOX_BYTES : 4) : null;
    const slot: Slot = {
      port,
      ready: false,
      task: null,
      flags: control && new Int32Array(control, 0, 1),
      box: control && this.#mailbox ? openBox(control) : null,
    };
    // Handlers reach the engine through a WeakRef: a running worker is a GC root, and a
    // strong reference would keep a dropped pool (and its threads) alive forever.
    const self = new WeakRef(this);
    port.onMessage((msg) => {
      const engine = self.deref();
      if (engine) engine.#onMessage(slot, msg as Reply);
    });
    port.onError((message) => {
      const engine = self.deref();
      if (engine) engine.#onCrash(slot, message);
    });
    port.ref(this.#pending > 0);
    const init: InitMessage = { type: 'init', module: this.#module, control, mailbox: slot.box !== null };
    this.#post(slot, init);
    for (const m of this.#setups) this.#post(slot, m);
    return slot;
  }

  #onMessage(slot: Slot, msg: Reply): void {
    if (msg.type === 'ready') {
      slot.ready = true;
      this.#pump();
      return;
    }
    if (msg.type === 'init-error') {
      this.#broken = makeError('ERR_BACKEND_UNAVAILABLE', `a worker cannot instantiate offthread.wasm: ${msg.message}`);
      this.#failAll(this.#broken);
      return;
    }
    const task = slot.task;
    if (!task || task.id !== msg.id) return;
    if (msg.type === 'mail') {
      this.#collect(slot);
      return;
    }
    slot.task = null;
    this.#leave(task);
    this.#run.add(now() - task.started);
    if (msg.type === 'done') {
      this.#counts.completed++;
      this.#finish(task, null, msg.value);
    } else if (msg.type === 'cancelled') {
      this.#counts.cancelled++;
    } else {
      this.#counts.failed++;
      this.#finish(task, fromWire(msg.error));
    }
    this.#pump();
  }

  /** Settles the task whose answer is in `slot`'s mailbox. */
  #collect(slot: Slot): void {
    const task = slot.task;
    if (!task?.mailed || !slot.box) return;
    const r = readResult(slot.box);
    if (r.id !== task.id) return;
    slot.task = null;
    this.#leave(task);
    this.#run.add(now() - task.started);
    if (r.ok) {
      this.#counts.completed++;
      this.#finish(task, null, r.value);
    } else {
      this.#counts.failed++;
      this.#finish(task, fromWire(r));
    }
    this.#pump();
  }

  /** The immediate of a lone mailbox call: spin on its mailbox, then leave it to 'mail'. */
  readonly #spinForLoneCall = (): void => {
    const slot = this.#spinSlot;
    this.#spinSlot = null;
    if (!slot?.box || !slot.task?.mailed) return; // settled (or cancelled) meanwhile
    const i32 = slot.box.i32;
    const end = now() + LONE_CALL_SPIN_MS;
    let state = Atomics.load(i32, DONE);
    for (let n = 1; state === RUNNING; n++) {
      if ((n & 31) === 0 && now() > end) break;
      state = Atomics.load(i32, DONE);
    }
    if (state === RUNNING) state = Atomics.compareExchange(i32, DONE, RUNNING, this.#wakeMode());
    if (state === RUNNING) {
      if (this.#wakeMode() === WATCHING) this.#watch(slot);
      // Missed: the worker posts 'mail'. Skip spinning for 1, 3, 7, … lone calls.
      this.#spinMisses = Math.min(this.#spinMisses + 1, 6);
      this.#spinSkip = Math.min(SPIN_BACKOFF, 2 ** this.#spinMisses - 1);
      return;
    }
    this.#spinMisses = 0;
    if (state === IN_BOX) this.#collect(slot);
    // BY_MESSAGE: the result did not fit; its 'done' message is on its way.
  };

  /** Writes `task` into `slot`'s mailbox; a lone call gets a spin, others a 'mail' wake-up. */
  #mail(slot: Slot, task: Task): void {
    const box = slot.box as Box;
    task.mailed = true;
    const lone = this.#pending === 1;
    let spin = false;
    if (lone && this.#spinSlot === null && nodeSetImmediate) {
      if (this.#spinSkip > 0) this.#spinSkip--;
      else spin = true;
    }
    writeCall(box, task.id, task.guest as MailCall, spin ? RUNNING : this.#wakeMode(), lone);
    if (spin) {
      this.#spinSlot = slot;
      nodeSetImmediate?.(this.#spinForLoneCall);
    } else if (this.#wakeMode() === WATCHING) this.#watch(slot);
  }

  /**
   * How a caller that is not spinning gets woken: Atomics.waitAsync where there is one
   * (cheaper than a message, measured), else a 'mail' message from the worker.
   */
  #wakeMode(): number {
    return waitAsync ? WATCHING : ASLEEP;
  }

  /**
   * With WATCHING: collect when the worker notifies. A wake-up is not proof of an answer:
   * the worker's notify for the previous call in this box can land after that call was
   * collected (the caller saw IN_BOX first) and wake this call's waiter. So each wake-up
   * looks at DONE, and a call still running is waited for again; without that re-arm the
   * answer's own notify found no waiter and the call hung (100 calls in flight, within
   * ~40,000 calls).
   */
  #watch(slot: Slot): void {
    const box = slot.box as Box;
    const wait = waitAsync;
    if (!wait) return;
    const task = slot.task;
    const arm = (): void => {
      if (slot.task !== task || !this.#slots.includes(slot)) return; // settled, or its worker stopped
      const state = Atomics.load(box.i32, DONE);
      if (state === IN_BOX) this.#collect(slot);
      else if (state === WATCHING) {
        const r = wait(box.i32, DONE, WATCHING);
        if (r.async) void (r.value as Promise<unknown>).then(arm);
        else arm();
      }
      // BY_MESSAGE: the answer did not fit; its 'done' message settles the call.
    };
    arm();
  }

  #onCrash(slot: Slot, message: string): void {
    if (!this.#slots.includes(slot)) return;
    if (!slot.ready && !slot.task) {
      // It never started (a missing or mis-served worker script): respawning would loop.
      this.#broken = makeError('ERR_BACKEND_UNAVAILABLE', `offthread worker failed to start: ${message}`);
      this.#failAll(this.#broken);
      return;
    }
    this.#counts.crashed++;
    const task = slot.task;
    this.#leave(task);
    this.#replace(slot);
    if (task) {
      this.#counts.failed++;
      const code = task.guest === undefined ? 'ERR_KERNEL_PANIC' : 'ERR_GUEST_TRAP';
      this.#finish(task, makeError(code, `the worker running this job crashed: ${message}`));
    }
    this.#pump();
  }

  #replace(slot: Slot): void {
    this.#stop(slot);
    const i = this.#slots.indexOf(slot);
    if (i < 0) return;
    this.#counts.replaced++;
    this.#slots[i] = this.#spawn(i);
  }

  /** A task whose call settled early: drop it if queued, stop it if running. */
  #cancel(task: Task): void {
    if (task.waiter && this.#lease.cancel(task.waiter)) {
      this.#counts.cancelled++;
      return;
    }
    const q = this.#queue.indexOf(task);
    if (q >= 0) {
      this.#queue.splice(q, 1);
      this.#counts.cancelled++;
      this.#leave(task);
      return;
    }
    const slot = this.#slots.find((s) => s.task === task);
    if (!slot) return;
    if (slot.flags && task.guest === undefined) {
      Atomics.store(slot.flags, 0, 1); // the kernel stops at its next check and answers 'cancelled'
    } else {
      this.#counts.cancelled++;
      slot.task = null;
      this.#leave(task);
      // Stop it now; start its successor after the caller has had its rejection (a
      // worker's start costs the calling thread milliseconds).
      this.#stop(slot);
      slot.ready = false;
      setTimeout(() => this.#replace(slot), 0);
      this.#pump();
    }
  }

  #pump(): void {
    for (const [index, slot] of this.#slots.entries()) {
      while (this.#waiting.length > 0 && this.#queue.length < this.#maxQueue) {
        this.#queue.push(this.#waiting.shift() as Task);
      }
      if (this.#queue.length === 0) return;
      if (!slot.ready || slot.task) continue;
      const at = this.#queue.findIndex((t) => t.target === undefined || t.target === index);
      if (at < 0) continue;
      const task = this.#queue.splice(at, 1)[0] as Task;
      slot.task = task;
      task.started = now();
      this.#wait.add(task.started - task.submitted);
      if (slot.flags) Atomics.store(slot.flags, 0, 0);
      try {
        this.#send(slot, task);
      } catch (err) {
        // Arguments structured clone refuses (a detached buffer, a function): this call
        // fails, the worker and the calls behind it go on. Thrown here it would have
        // escaped from a message handler and ended the process.
        slot.task = null;
        this.#leave(task);
        this.#finish(task, makeError('ERR_INVALID_ARG', `the job cannot be sent to a worker: ${messageOf(err)}`, err));
        this.#pump();
        return;
      }
    }
  }

  #send(slot: Slot, task: Task): void {
    if (task.guest !== undefined) {
      if (slot.box && fitsBox(task.guest)) {
        this.#mail(slot, task);
        return;
      }
      const msg: GuestTaskMessage = { type: 'guest', id: task.id, call: task.guest };
      this.#post(slot, msg);
      return;
    }
    const kernel = this.#crashNext ? 'testPanic' : task.kernel;
    this.#crashNext = false;
    const msg: TaskMessage = { type: 'task', id: task.id, kernel, args: task.args };
    this.#post(slot, msg, task.transfer);
  }
}
