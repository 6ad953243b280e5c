/**
 * One worker of a job pool (the calling side is pool/jobs.ts; the memory is pool/layout.ts).
 * It knows no feature: a feature (tasks/) gives it a `JobRunner` that turns a function id
 * and arguments into a result, and setup messages that register functions.
 *
 * The loop takes a job from its direct queue, else from the shared queues (high first;
 * every 4th take prefers normal and every 16th low, so no priority starves), runs it,
 * writes the result into the slot and pushes the slot on its completion queue. It goes
 * back to its event loop when a message is due (the caller counts them in W_POSTED), when
 * a job returns a promise, every YIELD_MS of continuous work (so the module's timers run),
 * and when there is nothing to do: it then waits on W_SIGNAL with Atomics.waitAsync,
 * after a brief spin when the last job was a lone call (the next one usually follows).
 */
import type { Transferable } from '../host.js';
import { moveCopies } from './big-buffers.js';
import { decode, encode, NO_FIT, type Region, region } from './codec.js';
import {
  CLAIMED,
  DONE,
  DROPPED,
  F_BY_MESSAGE,
  F_LONE,
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
  SKIPPED,
  SLOT_DATA,
  W_BUSY,
  W_POSTED,
  W_SIGNAL,
  W_SLEEP,
} from './layout.js';
import { isIterator, StreamPump } from './streams.js';
import { nextTurn } from './turn.js';
import { CodedFailure, findUncloneable, toWire } from './wire.js';

/** What a running job can see of its call. */
export interface JobContext {
  /** Aborted when the caller aborts or times out the call; reading `aborted` polls shared memory. */
  readonly signal: AbortSignal;
  /** Sends a progress value to the caller's `onProgress`. */
  progress(value: unknown): void;
  /**
   * An async job that waits on its caller between bursts of work (a stream between chunks,
   * its caller's side using JobOptions.park) says so: while it waits (true) its worker may
   * run other jobs, and its own work, when it comes, waits for the worker's loop; false as
   * soon as it works again. Absent where the loop runs one job at a time whatever (the
   * message transport).
   */
  park?(waiting: boolean): void;
}

/** A feature's side of the worker: registers functions, runs them. */
export interface JobRunner {
  /** A setup message; `reply` sends an answer to the caller side's `onReply`. */
  setup(body: unknown, reply: (body: unknown) => void): void;
  /** null when function `fn` can run now; else a promise that settles when it can (or rejects why not). */
  pending(fn: number): Promise<unknown> | null;
  run(fn: number, args: unknown[], context: JobContext): unknown;
}

export type ToWorker =
  | { type: 'init'; buffer: SharedArrayBuffer; index: number; workers: number; nice: number }
  | { type: 'init'; buffer: null; index: number; workers: number; nice: number }
  | { type: 'setup'; body: unknown }
  | { type: 'job'; slot: number; id: number; fn: number; args: unknown[] }
  | { type: 'args'; slot: number; id: number; args: unknown[] }
  | { type: 'cancel'; slot: number; id: number }
  | { type: 'pull'; slot: number; id: number; n: number }
  | { type: 'nop' };

export type FromWorker =
  | { type: 'ready' }
  | { type: 'result'; slot: number; id: number; value: unknown }
  | { type: 'error'; slot: number; id: number; error: unknown }
  | { type: 'progress'; slot: number; id: number; value: unknown }
  | { type: 'stream'; slot: number; id: number }
  | { type: 'reply'; body: unknown }
  | { type: 'item'; slot: number; id: number; value: unknown };

/** How long a worker keeps serving jobs before it lets its event loop run (timers, messages). */
const YIELD_MS = 5;
/** How often, at most, a worker with more queued work wakes the caller for its completions. */
const NOTIFY_MS = 0.03;
/** Longest an idle worker blocks in Atomics.wait before its event loop gets a turn. */
const BLOCK_MS = 50;
/** How long a worker watches the queues after a lone call before it sleeps. */
const LONE_SPIN_MS = 0.05;

const abortedGetter = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')?.get as (
  this: AbortSignal,
) => boolean;

const abortReason = () => new DOMException('The task was aborted by its caller', 'AbortError');

const waitAsync = (
  Atomics as unknown as {
    waitAsync(a: Int32Array, i: number, v: number): { async: boolean; value: Promise<unknown> | string };
  }
).waitAsync;

/** Starts a worker's loop; `post` sends to the caller. Returns the message handler. */
/** What the worker's host can do beyond posting (Node: read its port synchronously, see its loop). */
export interface ServeHost {
  /** The next message already sent to this worker, taken without its event loop; undefined if none. */
  receive?: () => ToWorker | undefined;
  /** Whether this thread's event loop has nothing pending but its ports (no timers, no I/O). */
  loopIdle?: () => boolean;
}

export function serveJobs(
  runner: JobRunner,
  post: (msg: FromWorker, transfer?: Transferable[]) => void,
  host: ServeHost = {},
): (msg: ToWorker) => void {
  const shared = serveShared(runner, post, host);
  let handle: ((msg: ToWorker) => void) | null = null;
  return (msg) => {
    // The caller's first message says which transport: a buffer to share, or none.
    if (handle === null) handle = msg.type === 'init' && msg.buffer === null ? serveByMessage(runner, post) : shared;
    handle(msg);
  };
}

/**
 * The loop without shared memory (a browser page that is not cross-origin isolated): the
 * caller sends each job by message to an idle worker and keeps the queue itself, so this
 * side runs what it is sent, one at a time, and answers by message. A running task's
 * signal aborts only when the 'cancel' message is read, i.e. when the task awaits; a CPU
 * loop that never does is stopped by the caller's grace timer (its worker is replaced).
 */
function serveByMessage(runner: JobRunner, post: (msg: FromWorker, transfer?: Transferable[]) => void) {
  const pumps = new Map<number, StreamPump>();
  let current: { id: number; controller: AbortController | null } | null = null;
  const queue: Extract<ToWorker, { type: 'job' }>[] = [];
  let busy = false;

  const fail = (slot: number, id: number, thrown: unknown) => post({ type: 'error', slot, id, error: toWire(thrown) });
  function answer(slot: number, id: number, value: unknown): void {
    const bad = findUncloneable(value, 'result');
    if (bad) {
      fail(slot, id, new CodedFailure('ERR_TASK_DATA', `the task's ${bad}`));
      return;
    }
    try {
      postResult(post, slot, id, value);
    } catch (err) {
      fail(
        slot,
        id,
        new CodedFailure('ERR_TASK_DATA', `the task's result cannot be cloned: ${(err as Error)?.message ?? err}`),
      );
    }
  }
  function done(): void {
    current = null;
    busy = false;
    next();
  }

  function next(): void {
    const job = queue[0];
    if (busy || !job) return;
    const waiting = runner.pending(job.fn);
    if (waiting) {
      busy = true;
      waiting.then(done, done);
      return;
    }
    queue.shift();
    busy = true;
    const { slot, id } = job;
    const me: { id: number; controller: AbortController | null } = { id, controller: null };
    current = me;
    const context: JobContext = {
      get signal() {
        me.controller ??= new AbortController();
        return me.controller.signal;
      },
      progress: (value) => post({ type: 'progress', slot, id, value }),
    };
    let out: unknown;
    try {
      out = runner.run(job.fn, job.args, context);
    } catch (err) {
      fail(slot, id, err);
      done();
      return;
    }
    const settle = (value: unknown): void => {
      if (!isIterator(value)) {
        answer(slot, id, value);
        done();
        return;
      }
      const pump = new StreamPump(
        value,
        (item) => {
          const bad = findUncloneable(item, 'item');
          if (bad) throw new CodedFailure('ERR_TASK_DATA', `the task's stream ${bad}`);
          post({ type: 'item', slot, id, value: item });
        },
        (err, result) => {
          pumps.delete(id);
          if (err === null) answer(slot, id, result);
          else fail(slot, id, err);
          done();
        },
      );
      pumps.set(id, pump);
      post({ type: 'stream', slot, id });
    };
    if (out !== null && typeof out === 'object' && typeof (out as PromiseLike<unknown>).then === 'function') {
      (out as PromiseLike<unknown>).then(settle, (err) => {
        fail(slot, id, err);
        done();
      });
    } else settle(out);
  }

  return (msg: ToWorker): void => {
    switch (msg.type) {
      case 'init':
        post({ type: 'ready' });
        break;
      case 'setup':
        runner.setup(msg.body, (body) => post({ type: 'reply', body }));
        break;
      case 'job':
        queue.push(msg);
        next();
        break;
      case 'pull':
        pumps.get(msg.id)?.pull(msg.n);
        break;
      case 'cancel': {
        const at = queue.findIndex((j) => j.id === msg.id);
        if (at >= 0) {
          // Not started: answered at once, so the caller frees this worker for the next job.
          const [job] = queue.splice(at, 1);
          if (job) fail(job.slot, job.id, abortReason());
        }
        if (current?.id === msg.id && current.controller && !current.controller.signal.aborted) {
          current.controller.abort(abortReason());
        }
        pumps.get(msg.id)?.cancel();
        break;
      }
    }
  };
}

function serveShared(
  runner: JobRunner,
  post: (msg: FromWorker, transfer?: Transferable[]) => void,
  host: ServeHost,
): (msg: ToWorker) => void {
  let L: Layout;
  let me = 0;
  let received = 0; // messages read (the caller's W_POSTED counts what it sent)
  let setups = 0; // setup messages read (a slot's S_NEED)
  let serving = false;
  /** Async jobs running and not parked: take nothing else while any is. */
  let awaiting = 0;
  /** Async jobs parked (JobContext.park): waiting on their callers, with this worker free. */
  let parked = 0;
  let sleeping = false;
  let takes = 0;
  let lastLone = false;
  let owed = false;
  let owedSince = 0;
  /** Recent run time (ms, moving average) of each function, by id: whether a wake-up can wait for it. */
  const runMs: number[] = [];
  const args = new Map<number, { id: number; args: unknown[] }>();
  /** Claimed slots waiting for their arguments or their function's module. */
  const stash: number[] = [];
  const next: [number] = [0];
  const regions: Region[] = [];
  const pumps = new Map<number, StreamPump>();
  /**
   * The jobs this worker runs, by slot: one at a time, besides those parked on their
   * callers (a parked job's state stays in this worker's heap while others run).
   */
  const live = new Map<number, Running>();

  const slotRegion = (slot: number): Region => {
    let r = regions[slot];
    if (!r) {
      r = region(L.buffer, L.data(slot), SLOT_DATA);
      regions[slot] = r;
    }
    return r;
  };

  function take(): number {
    const direct = L.popDirect(me);
    if (direct >= 0) return direct;
    const n = takes++;
    const first = (n & 15) === 15 ? 2 : (n & 3) === 3 ? 1 : 0;
    let slot = L.popShared(first);
    for (let p = 0; slot < 0 && p < PRIORITIES.length; p++) if (p !== first) slot = L.popShared(p);
    return slot;
  }

  function nothingToDo(): boolean {
    if (Atomics.load(L.i32, L.w(me, W_POSTED)) !== received) return false;
    if (!L.directEmpty(me)) return false;
    for (let p = 0; p < PRIORITIES.length; p++) if (!L.sharedEmpty(p)) return false;
    return true;
  }

  /**
   * Publishes a finished slot. A caller waiting for completions is woken at once when this
   * worker has nothing else queued; otherwise the wake-up is owed and paid before a job
   * that may take a while (its function's recent runs took NOTIFY_MS or more, or it is
   * new), NOTIFY_MS after the first owed completion, or when the worker goes back to its
   * event loop — so one wake-up carries a batch, and none waits behind a long job.
   */
  function complete(slot: number): void {
    L.pushDone(me, slot);
    if (Atomics.load(L.i32, MAIN) !== 1) return; // the caller looks at the queues before it waits
    if (nothingToDo()) wakeCaller();
    else if (!owed) {
      owed = true;
      owedSince = performance.now();
    }
  }

  function wakeCaller(): void {
    owed = false;
    if (Atomics.compareExchange(L.i32, MAIN, 1, 0) === 1) Atomics.notify(L.i32, MAIN);
  }

  /** Sends the result: in the slot when it fits, else by message (also after progress messages, to keep their order). */
  function answer(slot: number, id: number, value: unknown, messaged: boolean): void {
    const at = messaged ? NO_FIT : encode(slotRegion(slot), 0, value);
    if (at !== NO_FIT) {
      Atomics.store(L.i32, L.s(slot, S_STATE), DONE);
      complete(slot);
      return;
    }
    const bad = findUncloneable(value, 'result');
    if (bad) {
      post({ type: 'error', slot, id, error: new CodedFailure('ERR_TASK_DATA', `the task's ${bad}`).toWire() });
      return;
    }
    try {
      postResult(post, slot, id, value);
    } catch (err) {
      const why = `the task's result cannot be cloned: ${(err as Error)?.message ?? err}`;
      post({ type: 'error', slot, id, error: new CodedFailure('ERR_TASK_DATA', why).toWire() });
    }
  }

  function fail(slot: number, id: number, thrown: unknown): void {
    post({ type: 'error', slot, id, error: toWire(thrown) });
  }

  /**
   * The running job's context. Its signal is made only when the task reads it (an
   * AbortController per call costs more than a trivial task): it aborts when a 'cancel'
   * message arrives, and — since a CPU-bound task never yields to its event loop, where
   * that message would be read — reading `aborted` (or throwIfAborted) polls the slot's
   * cancel flag too.
   */
  class Running implements JobContext {
    readonly slot: number;
    readonly id: number;
    controller: AbortController | null = null;
    /** It sent progress: its result goes by message too, after them. */
    messaged = false;
    /** It runs async (a promise or a stream): only such a job may park. */
    async = false;
    /** Parked (JobContext.park): waiting on its caller while this worker runs other jobs. */
    parked = false;
    constructor(slot: number, id: number) {
      this.slot = slot;
      this.id = id;
    }

    get signal(): AbortSignal {
      if (this.controller) return this.controller.signal;
      const controller = new AbortController();
      this.controller = controller;
      const { signal } = controller;
      const poll = (): boolean => {
        if (abortedGetter.call(signal)) return true;
        if (live.get(this.slot) === this && Atomics.load(L.i32, L.s(this.slot, S_CANCEL)) === 1) {
          controller.abort(abortReason());
          return true;
        }
        return false;
      };
      Object.defineProperty(signal, 'aborted', { get: poll });
      Object.defineProperty(signal, 'throwIfAborted', {
        value() {
          if (poll()) throw signal.reason;
        },
      });
      poll();
      return signal;
    }

    progress(value: unknown): void {
      this.messaged = true;
      post({ type: 'progress', slot: this.slot, id: this.id, value });
    }

    abort(): void {
      if (this.controller && !abortedGetter.call(this.controller.signal)) this.controller.abort(abortReason());
    }

    park(waiting: boolean): void {
      if (!this.async || this.parked === waiting || live.get(this.slot) !== this) return;
      this.parked = waiting;
      parked += waiting ? 1 : -1;
      awaiting += waiting ? -1 : 1;
      setBusy();
      // Free again: take what is queued (or sleep). Its own work, when it comes, arrives
      // through the event loop, between the jobs this worker takes meanwhile.
      if (waiting) nextTurn(serve);
    }
  }

  /** Tells the caller whether this worker is busy (it picks idle ones for messages, counts running jobs). */
  function setBusy(): void {
    Atomics.store(L.i32, L.w(me, W_BUSY), awaiting > 0 ? 1 : 0);
  }

  /** Runs the claimed slot; false when it must wait (stashed) or went async. */
  function run(slot: number): boolean {
    const { i32 } = L;
    const id = i32[L.s(slot, S_ID)] as number;
    const fn = i32[L.s(slot, S_FN)] as number;
    const flags = i32[L.s(slot, S_FLAGS)] as number;
    if (Atomics.load(i32, L.s(slot, S_CANCEL)) === 1) {
      args.delete(slot);
      Atomics.store(i32, L.s(slot, S_STATE), SKIPPED);
      complete(slot);
      return true;
    }
    const byMessage = (flags & F_BY_MESSAGE) !== 0;
    const waiting = runner.pending(fn);
    if (setups < (i32[L.s(slot, S_NEED)] as number) || (byMessage && args.get(slot)?.id !== id) || waiting) {
      stash.push(slot);
      waiting?.then(serve, serve);
      return false;
    }
    const t0 = performance.now();
    if (owed && !((runMs[fn] ?? NOTIFY_MS) < NOTIFY_MS && t0 - owedSince < NOTIFY_MS)) wakeCaller();
    Atomics.store(i32, L.s(slot, S_STATE), RUNNING);
    Atomics.store(i32, L.w(me, W_BUSY), 1);
    lastLone = (flags & F_LONE) !== 0;
    let list: unknown[];
    if (byMessage) {
      list = (args.get(slot) as { args: unknown[] }).args;
      args.delete(slot);
    } else {
      list = decode(slotRegion(slot), 0, next) as unknown[];
    }
    let out: unknown;
    const job = new Running(slot, id);
    live.set(slot, job);
    try {
      out = runner.run(fn, list, job);
    } catch (err) {
      live.delete(slot);
      setBusy();
      fail(slot, id, err);
      return true;
    }
    if (isIterator(out)) {
      job.async = true;
      awaiting++;
      stream(job, out);
      return false;
    }
    if (out !== null && typeof out === 'object' && typeof (out as PromiseLike<unknown>).then === 'function') {
      job.async = true;
      awaiting++;
      (out as PromiseLike<unknown>).then(
        (value) => {
          if (isIterator(value)) stream(job, value);
          else settleAsync(job, () => answer(slot, id, value, job.messaged));
        },
        (err) => settleAsync(job, () => fail(slot, id, err)),
      );
      return false;
    }
    live.delete(slot);
    const ms = performance.now() - t0;
    const seen = runMs[fn];
    runMs[fn] = seen === undefined ? ms : seen * 0.75 + ms * 0.25;
    setBusy();
    answer(slot, id, out, job.messaged);
    return true;
  }

  /** Streams the job's items to the caller as it grants credit (pool/streams.ts). */
  function stream(job: Running, it: AsyncIterator<unknown> | Iterator<unknown>): void {
    const { slot, id } = job;
    const pump = new StreamPump(
      it,
      (value) => {
        const bad = findUncloneable(value, 'item');
        if (bad) throw new CodedFailure('ERR_TASK_DATA', `the task's stream ${bad}`);
        post({ type: 'item', slot, id, value });
      },
      (err, value) => {
        pumps.delete(slot);
        settleAsync(job, () => (err === null ? answer(slot, id, value, true) : fail(slot, id, err)));
      },
    );
    pumps.set(slot, pump);
    post({ type: 'stream', slot, id });
  }

  function settleAsync(job: Running, send: () => void): void {
    if (job.parked) parked--;
    else awaiting--;
    job.parked = false;
    live.delete(job.slot);
    setBusy();
    send();
    serve();
  }

  function claim(slot: number): boolean {
    const { i32 } = L;
    Atomics.store(i32, L.s(slot, S_OWNER), me);
    const was = Atomics.compareExchange(i32, L.s(slot, S_STATE), QUEUED, CLAIMED);
    if (was === QUEUED) return true;
    if (was === DROPPED) {
      Atomics.store(i32, L.s(slot, S_STATE), SKIPPED);
      complete(slot);
    }
    return false;
  }

  /** The loop: runs jobs until it must return to the event loop. */
  function serve(): void {
    if (serving || awaiting > 0 || !L) return;
    serving = true;
    const started = performance.now();
    try {
      for (;;) {
        if (awaiting > 0) return; // a parked job works again (its abort, read here)
        if (Atomics.load(L.i32, L.w(me, W_POSTED)) !== received) {
          // A message is due: read it here where the host can, else from the event loop.
          const msg = host.receive?.();
          if (msg === undefined) return;
          handle(msg);
          continue;
        }
        if (stash.length > 0) {
          const slot = stash.shift() as number;
          if (!run(slot)) return;
          continue;
        }
        if (performance.now() - started > YIELD_MS) {
          nextTurn(serve);
          return;
        }
        const slot = take();
        if (slot < 0) {
          if (lastLone && spin()) continue;
          // Not while a job is parked: its work comes through the event loop, which a
          // blocked thread would hold up for BLOCK_MS.
          if (parked === 0 && host.loopIdle?.()) {
            if (block()) continue;
            nextTurn(serve); // a turn for the event loop, then back
            return;
          }
          sleep();
          return;
        }
        if (claim(slot) && !run(slot)) return;
      }
    } finally {
      serving = false;
      if (owed) wakeCaller();
    }
  }

  /** After a lone call: watch the queues briefly; true when something came. */
  function spin(): boolean {
    lastLone = false;
    const end = performance.now() + LONE_SPIN_MS;
    for (let n = 1; ; n++) {
      if (!nothingToDo()) return true;
      if ((n & 31) === 0 && performance.now() > end) return false;
    }
  }

  /**
   * Idle, with nothing in the event loop but its ports: wait in Atomics.wait (woken in µs,
   * where waitAsync goes through the event loop) for up to BLOCK_MS. False when it timed
   * out, so the loop gets a turn (an unref'd timer, a late listener).
   */
  function block(): boolean {
    const { i32 } = L;
    const at = L.w(me, W_SIGNAL);
    const seen = Atomics.load(i32, at);
    Atomics.store(i32, L.w(me, W_SLEEP), 1);
    if (!nothingToDo()) {
      Atomics.store(i32, L.w(me, W_SLEEP), 0);
      return true;
    }
    const r = Atomics.wait(i32, at, seen, BLOCK_MS);
    Atomics.store(i32, L.w(me, W_SLEEP), 0);
    return r !== 'timed-out';
  }

  function sleep(): void {
    if (sleeping) return;
    const { i32 } = L;
    const at = L.w(me, W_SIGNAL);
    const seen = Atomics.load(i32, at);
    Atomics.store(i32, L.w(me, W_SLEEP), 1);
    if (!nothingToDo()) {
      Atomics.store(i32, L.w(me, W_SLEEP), 0);
      nextTurn(serve);
      return;
    }
    const r = waitAsync(i32, at, seen);
    const wake = (): void => {
      sleeping = false;
      Atomics.store(i32, L.w(me, W_SLEEP), 0);
      serve();
    };
    if (!r.async) {
      nextTurn(wake);
      return;
    }
    sleeping = true;
    void (r.value as Promise<unknown>).then(wake);
  }

  function handle(msg: ToWorker): void {
    received++;
    switch (msg.type) {
      case 'init':
        L = new Layout(msg.workers, msg.buffer as SharedArrayBuffer);
        me = msg.index;
        post({ type: 'ready' });
        break;
      case 'setup':
        setups++;
        runner.setup(msg.body, (body) => post({ type: 'reply', body }));
        break;
      case 'args':
        args.set(msg.slot, { id: msg.id, args: msg.args });
        break;
      case 'pull':
        if (Atomics.load(L.i32, L.s(msg.slot, S_ID)) === msg.id) pumps.get(msg.slot)?.pull(msg.n);
        break;
      case 'cancel': {
        const job = live.get(msg.slot);
        if (job?.id === msg.id) job.abort();
        pumps.get(msg.slot)?.cancel();
        break;
      }
    }
    serve();
  }

  return handle;
}

/** A result by message: its big buffers copied once and moved (big-buffers.ts), the rest cloned. */
function postResult(
  post: (msg: FromWorker, transfer?: Transferable[]) => void,
  slot: number,
  id: number,
  value: unknown,
): void {
  const { args, transfer } = moveCopies([value], undefined);
  post({ type: 'result', slot, id, value: args[0] }, transfer);
}
