// The browser pool: Web Workers, each with its own instance of offthread.wasm, fed from
// one FIFO queue of tasks (an idle worker takes the next task, so uneven chunks balance
// themselves). One call may be several tasks (π chunks); it settles once.
//
// Transport: on a cross-origin isolated page each worker gets a small SharedArrayBuffer
// (a cancel flag the kernel loop polls, and the slot its π count comes back in) and text
// inputs travel in SharedArrayBuffers; otherwise inputs are transferred ArrayBuffers and
// a running task is cancelled by terminating its worker (a fresh one takes its place).
// A worker that crashes (uncaught error, wasm trap, test hook) rejects its call with
// ERR_KERNEL_PANIC and is replaced.
import { AbortError, fromWire, makeError } from './errors.mjs';
import { compileWasm } from './wasm.mjs';

const WORKER_URL = new URL('./worker.mjs', import.meta.url);
const encoder = new TextEncoder();

function defaultThreads() {
  const n = globalThis.navigator?.hardwareConcurrency;
  return Number.isInteger(n) && n > 0 ? Math.min(n, 1024) : 1;
}

/** Can this page share memory with its workers? */
export function sharedMemoryAvailable() {
  return globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
}

function checkInt(value, name, max) {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw makeError('ERR_INVALID_POOL_OPTIONS', `${name} must be an integer from 1 to ${max}, got ${String(value)}`);
  }
  return value;
}

/** Validates `{ pool, signal, timeout }`. */
export function checkCallOptions(opts) {
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
  return { pool, signal, timeout };
}

export class Pool {
  #threads;
  #maxQueue;
  #shared;
  #module; // Promise<WebAssembly.Module>
  #slots = []; // { worker, ready, task, control, flags, slot, started }
  #queue = [];
  #nextId = 1;
  #closed = false;
  #broken = null; // error once workers cannot start at all
  #crashNext = false;
  #drained = null;
  #stats = { completed: 0, failed: 0, cancelled: 0, crashed: 0, replaced: 0 };

  /**
   * @param {{ threads?: number, maxQueue?: number, transport?: 'auto'|'shared'|'message',
   *           wasm?: string | URL | WebAssembly.Module | Promise<WebAssembly.Module> }} [options]
   */
  constructor(options = {}) {
    if (options === null || typeof options !== 'object') {
      throw makeError('ERR_INVALID_POOL_OPTIONS', 'pool options must be an object');
    }
    const { threads = defaultThreads(), maxQueue, transport = 'auto', wasm } = options;
    this.#threads = checkInt(threads, 'threads', 1024);
    this.#maxQueue = maxQueue === undefined ? Number.POSITIVE_INFINITY : checkInt(maxQueue, 'maxQueue', 2 ** 31 - 1);
    if (!['auto', 'shared', 'message'].includes(transport)) {
      throw makeError('ERR_INVALID_POOL_OPTIONS', `transport must be 'auto', 'shared' or 'message', got ${transport}`);
    }
    if (transport === 'shared' && !sharedMemoryAvailable()) {
      throw makeError(
        'ERR_INVALID_POOL_OPTIONS',
        'transport "shared" needs a cross-origin isolated page (COOP: same-origin, COEP: require-corp)',
      );
    }
    this.#shared = transport === 'shared' || (transport === 'auto' && sharedMemoryAvailable());
    this.#module =
      wasm instanceof WebAssembly.Module
        ? Promise.resolve(wasm)
        : wasm && typeof wasm.then === 'function'
          ? wasm
          : null;
    this.wasmUrl = this.#module ? null : wasm === undefined ? undefined : String(wasm);
  }

  get threads() {
    return this.#threads;
  }

  /** 'shared' (SharedArrayBuffer + Atomics) or 'message' (postMessage + transferables). */
  get transport() {
    return this.#shared ? 'shared' : 'message';
  }

  stats() {
    const running = this.#slots.filter((s) => s.task).length;
    return {
      threads: this.#threads,
      transport: this.transport,
      workers: this.#slots.filter((s) => s.ready).length,
      queued: this.#queue.length,
      running,
      pending: this.#queue.length + running,
      ...this.#stats,
    };
  }

  /** Test hook: the next task sent to a worker makes that worker crash (uncaught error). */
  crashNextTask() {
    this.#crashNext = true;
  }

  /**
   * Runs tasks `{ op, args, text?, checkable? }` as one call; resolves their values in
   * order. Rejects (and cancels the rest) as soon as one task fails.
   */
  run(tasks, { signal, timeout } = {}) {
    if (this.#closed) return Promise.reject(makeError('ERR_POOL_CLOSED', 'the pool was closed'));
    if (this.#broken) return Promise.reject(this.#broken);
    if (this.#queue.length + tasks.length > this.#maxQueue) {
      return Promise.reject(makeError('ERR_QUEUE_FULL', `the pool already holds ${this.#queue.length} queued tasks`));
    }
    if (signal?.aborted) return Promise.reject(new AbortError(undefined, { cause: signal.reason }));
    this.#start();
    return new Promise((resolve, reject) => {
      const values = new Array(tasks.length);
      let left = tasks.length;
      const call = { settled: false, tasks: [] };
      const settle = (err, value) => {
        if (call.settled) return;
        call.settled = true;
        signal?.removeEventListener('abort', onAbort);
        clearTimeout(timer);
        if (err) {
          for (const t of call.tasks) this.#cancel(t);
          reject(err);
        } else resolve(value);
      };
      const onAbort = () => settle(new AbortError(undefined, { cause: signal.reason }));
      signal?.addEventListener('abort', onAbort, { once: true });
      const timer =
        timeout === undefined
          ? undefined
          : setTimeout(() => settle(makeError('ERR_TIMEOUT', `the call did not finish within ${timeout} ms`)), timeout);
      tasks.forEach((spec, i) => {
        const task = {
          id: this.#nextId++,
          ...spec,
          input: spec.text === undefined ? undefined : this.#encode(spec.text),
          call,
          done: (value) => {
            task.finished = true;
            values[i] = value;
            if (--left === 0) settle(null, values);
          },
          fail: (err) => {
            task.finished = true;
            settle(err);
          },
        };
        call.tasks.push(task);
        this.#queue.push(task);
      });
      this.#pump();
    });
  }

  /** Finishes accepted work, refuses new calls, then ends the workers. */
  close() {
    this.#closed = true;
    if (!this.#drained) {
      this.#drained = new Promise((resolve) => {
        this.#onIdle = () => {
          for (const s of this.#slots) s.worker.terminate();
          this.#slots = [];
          resolve();
        };
      });
      this.#checkIdle();
    }
    return this.#drained;
  }

  /** Rejects every queued and running call with ERR_POOL_CLOSED and ends the workers. */
  destroy() {
    this.#closed = true;
    this.#stopAll(makeError('ERR_POOL_CLOSED', 'the pool was destroyed'));
    this.#onIdle?.();
    return Promise.resolve();
  }

  /** Ends every worker, then fails every queued and running task with `err`. */
  #stopAll(err) {
    const slots = this.#slots;
    const queued = this.#queue;
    this.#slots = [];
    this.#queue = [];
    for (const s of slots) s.worker.terminate();
    for (const t of queued) t.fail(err);
    for (const s of slots) s.task?.fail(err);
  }

  #onIdle = null;

  #checkIdle() {
    if (this.#onIdle && this.#queue.length === 0 && this.#slots.every((s) => !s.task)) this.#onIdle();
  }

  #encode(text) {
    const bytes = typeof text === 'string' ? encoder.encode(text) : text;
    if (!this.#shared) {
      const copy = bytes.slice();
      return { buffer: copy.buffer, length: copy.length, transfer: true };
    }
    const buffer = new SharedArrayBuffer(Math.max(1, bytes.length));
    new Uint8Array(buffer).set(bytes);
    return { buffer, length: bytes.length, transfer: false };
  }

  #start() {
    if (this.#slots.length > 0) return;
    if (!this.#module) this.#module = compileWasm(this.wasmUrl);
    for (let i = 0; i < this.#threads; i++) this.#slots.push(this.#spawn(i));
  }

  #spawn(index) {
    const worker = new Worker(WORKER_URL, { type: 'module', name: `offthread-${index}` });
    const control = this.#shared ? new SharedArrayBuffer(16) : null;
    const s = {
      index,
      worker,
      control,
      ready: false,
      task: null,
      flags: control && new Int32Array(control, 0, 2),
      slot: control && new Float64Array(control, 8, 1),
    };
    worker.onmessage = (e) => this.#onMessage(s, e.data);
    worker.onerror = (e) => {
      e.preventDefault?.();
      this.#onCrash(s, e.message || 'the worker failed (script error or wrong MIME type)');
    };
    worker.onmessageerror = () => this.#onCrash(s, 'a message from the worker could not be deserialised');
    this.#module.then(
      (module) => {
        if (this.#slots.includes(s)) worker.postMessage({ type: 'init', module, control });
      },
      (err) => this.#fatal(err),
    );
    return s;
  }

  #fatal(err) {
    this.#broken ??= err.code ? err : makeError('ERR_BACKEND_UNAVAILABLE', String(err?.message ?? err));
    this.#stopAll(this.#broken);
  }

  #onMessage(s, msg) {
    if (msg.type === 'ready') {
      s.ready = true;
      this.#pump();
      return;
    }
    if (msg.type === 'init-error') {
      this.#fatal(makeError('ERR_BACKEND_UNAVAILABLE', `a worker cannot instantiate offthread.wasm: ${msg.message}`));
      return;
    }
    const task = s.task;
    if (!task || task.id !== msg.id) return;
    s.task = null;
    if (msg.type === 'done') {
      this.#stats.completed++;
      task.done(msg.shared ? s.slot[0] : msg.value);
    } else if (msg.type === 'cancelled') {
      this.#stats.cancelled++;
    } else {
      this.#stats.failed++;
      task.fail(fromWire(msg.error));
    }
    this.#pump();
  }

  #onCrash(s, message) {
    if (!this.#slots.includes(s)) return;
    s.worker.terminate();
    if (!s.ready && !s.task) {
      // It never started: a missing or mis-served worker.mjs; respawning would loop.
      this.#fatal(makeError('ERR_BACKEND_UNAVAILABLE', `offthread worker failed to start: ${message}`));
      return;
    }
    this.#stats.crashed++;
    const task = s.task;
    this.#replace(s);
    if (task) {
      this.#stats.failed++;
      task.fail(makeError('ERR_KERNEL_PANIC', `the worker running this call crashed: ${message}`));
    }
    this.#pump();
  }

  #replace(s) {
    s.worker.terminate();
    s.task = null;
    const i = this.#slots.indexOf(s);
    if (i < 0) return;
    this.#stats.replaced++;
    this.#slots[i] = this.#spawn(s.index);
  }

  /** A task whose call settled early: drop it if queued, stop it if running. */
  #cancel(task) {
    if (task.finished) return;
    task.finished = true;
    const q = this.#queue.indexOf(task);
    if (q >= 0) {
      this.#queue.splice(q, 1);
      this.#stats.cancelled++;
      return;
    }
    const s = this.#slots.find((x) => x.task === task);
    if (!s) return;
    if (s.flags && task.checkable) {
      Atomics.store(s.flags, 0, 1); // the kernel stops at its next check and answers 'cancelled'
    } else {
      this.#stats.cancelled++;
      this.#replace(s);
      this.#pump();
    }
  }

  #pump() {
    for (const s of this.#slots) {
      if (this.#queue.length === 0) break;
      if (!s.ready || s.task) continue;
      const task = this.#queue.shift();
      s.task = task;
      if (s.flags) Atomics.store(s.flags, 0, 0);
      const crash = this.#crashNext;
      this.#crashNext = false;
      const { input } = task;
      s.worker.postMessage(
        { type: 'task', id: task.id, op: task.op, args: task.args, input, crash },
        input?.transfer ? [input.buffer] : [],
      );
    }
    this.#checkIdle();
  }
}
