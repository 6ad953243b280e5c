/**
 * A user's own JavaScript stream transform, run off the loop: `filters.task(work.upper)`
 * is a Node Transform whose chunks are transformed by the task module's export on one
 * worker of the pool, for the stream's whole life (its state — a generator's locals, the
 * per-chunk `state` object — stays in that worker).
 *
 * ```js
 * // work.mjs (a task module)
 * export async function* upper(chunks) { for await (const c of chunks) yield c.map(toUpper); }
 * export function count(chunk, state) { state.n = (state.n ?? 0) + 1; return chunk; }
 * // main
 * await pipeline(createReadStream(a), filters.task(work.upper), createWriteStream(b));
 * ```
 *
 * The stream is one job of the tasks feature (tasks/stream-driver.ts runs the export) and
 * a MessagePort of its own carries the chunks both ways, by credit: at most IN_WINDOW
 * chunks or IN_BYTES on their way in (a writer waits beyond), at most OUT_WINDOW outputs sent
 * ahead of what the reader took (the transform pauses beyond that). Outputs come in
 * order; a throw in the transform fails the stream with that error (name, message, code,
 * stack, as any task's); destroying the stream aborts the job, which ends the transform
 * on its worker (its `finally` runs). Node only (Transform); the pool keeps its threads
 * (`hold()`) while the stream is open.
 */
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { describe, makeError } from '../errors.js';
import type { Transferable } from '../host.js';
import type { Offloaded } from '../pool/fanout.js';
import { defaultPool, Pool } from '../pool/pool.js';
import { type TaskModule, tasks } from '../tasks/index.js';
import { taskRef } from '../tasks/ref.js';
import type { DriverPort, FromDriver, ToDriver } from '../tasks/stream-driver.js';
import { isArray, isInstance, toOptions } from '../validate.js';

export interface TaskFilterOptions {
  /** More arguments for the export: after the chunks (a generator) or after `state` (per chunk). */
  args?: unknown[] | undefined;
  /**
   * Any structured-cloneable value per chunk, both ways. Default: bytes — Buffers or
   * strings written, Uint8Arrays seen by the transform, Buffers read (it may pass
   * Uint8Arrays or strings on).
   */
  objectMode?: boolean | undefined;
  /** The pool whose worker runs the transform (default: the module's, else the default pool). */
  pool?: Pool | undefined;
  /** Aborting destroys the stream with ERR_ABORTED and ends the transform on its worker. */
  signal?: AbortSignal | undefined;
  /**
   * Bytes only: a written chunk that is its whole ArrayBuffer moves to the worker instead
   * of being copied (the writer must not touch a chunk after writing it; a Buffer from
   * Node's shared pool, or any view into a larger buffer, is still copied). Default false.
   */
  transfer?: boolean | undefined;
}

const KEYS = ['args', 'objectMode', 'pool', 'signal', 'transfer'] as const;
/**
 * Chunks written and not yet taken by the transform, at most, and their bytes: a writer
 * waits beyond either. Wide enough that a worker the OS keeps off its core for a few ms
 * (a shared machine) still has work queued: throughput is about window / round trip.
 */
const IN_WINDOW = 16;
const IN_BYTES = 4 * 1024 * 1024;
/** Outputs the worker may send ahead of what the reader took. */
const OUT_WINDOW = 16;

type Driver = TaskModule<typeof import('../tasks/stream-driver.js')>;
let driverModule: Driver | undefined;
/** The driver as a task module of its own (made once; each pool loads it on first use). */
const driver = (): Driver => {
  driverModule ??= tasks(pathToFileURL(join(__dirname, '..', 'tasks', 'stream-driver.js')));
  return driverModule;
};

/** A chunk that is all of its own ArrayBuffer (not a view into Node's Buffer pool or a larger buffer). */
const isWholeBuffer = (bytes: Uint8Array): boolean =>
  bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;

export class TaskTransform extends Transform {
  readonly #url: string;
  readonly #name: string;
  readonly #pool: Pool;
  readonly #args: unknown[];
  readonly #bytes: boolean;
  readonly #signal: AbortSignal | undefined;
  readonly #transfer: boolean;
  readonly #controller = new AbortController();
  #port: MessagePort | null = null;
  #release: (() => void) | null = null;
  /** Chunks sent and not yet reported taken, and their sizes (bytes; 0 in object mode). */
  #inFlight = 0;
  #inBytes = 0;
  readonly #sizes: number[] = [];
  /** A write waiting for the transform to take chunks. */
  #writeWaiting: TransformCallback | null = null;
  /** Outputs granted and not yet received. */
  #granted = 0;
  /** The transform has ended (every output received). */
  #outEnded = false;
  #flushed: (() => void) | null = null;
  readonly #onAbort = () => {
    this.destroy(makeError('ERR_ABORTED', 'The stream was aborted', this.#signal?.reason));
  };

  constructor(fn: unknown, options?: TaskFilterOptions) {
    const o = toOptions<TaskFilterOptions>(options, KEYS, 'task filter options');
    const ref = taskRef(fn);
    if (!ref) {
      throw makeError(
        'ERR_INVALID_ARG',
        `filters.task() takes a task module's export (tasks(url).name), got ${describe(fn)}`,
      );
    }
    if (o.args !== undefined && !isArray(o.args)) {
      throw makeError('ERR_INVALID_ARG', `options.args must be an array, got ${describe(o.args)}`);
    }
    if (o.objectMode !== undefined && typeof o.objectMode !== 'boolean') {
      throw makeError('ERR_INVALID_ARG', `options.objectMode must be a boolean, got ${describe(o.objectMode)}`);
    }
    if (o.transfer !== undefined && typeof o.transfer !== 'boolean') {
      throw makeError('ERR_INVALID_ARG', `options.transfer must be a boolean, got ${describe(o.transfer)}`);
    }
    if (o.pool !== undefined && !isInstance(o.pool, Pool)) {
      throw makeError('ERR_INVALID_ARG', 'options.pool must be an offthread Pool');
    }
    if (o.signal !== undefined && !isInstance(o.signal, AbortSignal)) {
      throw makeError('ERR_INVALID_ARG', `options.signal must be an AbortSignal, got ${describe(o.signal)}`);
    }
    super({ objectMode: o.objectMode === true });
    this.#url = ref.url;
    this.#name = ref.name;
    this.#pool = o.pool ?? ref.pool ?? defaultPool();
    this.#args = o.args ?? [];
    this.#bytes = o.objectMode !== true;
    this.#signal = o.signal;
    this.#transfer = o.transfer === true;
    if (o.signal?.aborted) process.nextTick(this.#onAbort);
    else o.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** Starts the job on the first chunk (or the end): an unused filter holds no worker. */
  #start(): MessagePort {
    if (this.#port) return this.#port;
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    this.#release = this.#pool.hold();
    port1.on('message', (msg: FromDriver) => this.#onMessage(msg));
    const run = driver().drive.with({
      pool: this.#pool,
      signal: this.#controller.signal,
      transfer: [port2 as unknown as Transferable],
    });
    run(port2 as unknown as DriverPort, this.#url, this.#name, this.#args).then(
      () => {},
      (err: unknown) => this.destroy(err as Error),
    );
    this.#grant();
    return port1;
  }

  #post(msg: ToDriver, transfer?: ArrayBuffer[]): void {
    (this.#port as MessagePort).postMessage(msg, transfer);
  }

  /** Lets the worker send more once half the window was read. */
  #grant(): void {
    const want = OUT_WINDOW - this.#granted;
    if (this.#port === null || this.#outEnded || want < OUT_WINDOW / 2) return;
    this.#granted += want;
    this.#post({ t: 'credit', n: want });
  }

  #onMessage(msg: FromDriver): void {
    if (this.destroyed) return;
    if (msg.t === 'took') {
      this.#inFlight -= msg.n;
      for (let i = 0; i < msg.n; i++) this.#inBytes -= this.#sizes.shift() ?? 0;
      this.#resumeWriter();
    } else if (msg.t === 'out') {
      this.#granted--;
      const value = msg.v;
      let room: boolean;
      if (this.#bytes) {
        if (value instanceof Uint8Array) room = this.push(Buffer.from(value.buffer, value.byteOffset, value.length));
        else if (typeof value === 'string') room = this.push(value);
        else {
          this.#badOutput(`${describe(value)}: a byte stream passes on Uint8Arrays or strings`);
          return;
        }
      } else if (value === null) {
        this.#badOutput('null: a stream cannot carry null (it means the end)');
        return;
      } else room = this.push(value);
      if (room) this.#grant();
    } else {
      this.#outEnded = true;
      this.#finished();
      this.#resumeWriter();
      const flushed = this.#flushed;
      this.#flushed = null;
      flushed?.();
    }
  }

  #badOutput(what: string): void {
    this.destroy(makeError('ERR_TASK_DATA', `the task filter ${this.#name}() passed on ${what}`));
  }

  #resumeWriter(): void {
    const write = this.#writeWaiting;
    if (write && (this.#roomIn() || this.#outEnded)) {
      this.#writeWaiting = null;
      write();
    }
  }

  #roomIn(): boolean {
    return this.#inFlight < IN_WINDOW && this.#inBytes < IN_BYTES;
  }

  /** The job is over or abandoned: the port closes, the pool may sleep again. */
  #finished(): void {
    this.#port?.close();
    this.#release?.();
    this.#release = null;
    this.#signal?.removeEventListener('abort', this.#onAbort);
  }

  override _transform(chunk: unknown, _encoding: BufferEncoding, callback: TransformCallback): void {
    // The transform returned before its input ended: the rest of the input is dropped.
    if (this.#outEnded) {
      callback();
      return;
    }
    this.#start();
    try {
      if (this.#bytes) {
        const bytes = chunk as Uint8Array;
        if (this.#transfer && isWholeBuffer(bytes)) this.#post({ t: 'chunk', v: bytes }, [bytes.buffer as ArrayBuffer]);
        else {
          // Its own copy, moved: the writer may reuse its chunk, and a view would clone its whole buffer.
          const own = new Uint8Array(bytes.byteLength);
          own.set(bytes);
          this.#post({ t: 'chunk', v: own }, [own.buffer]);
        }
      } else this.#post({ t: 'chunk', v: chunk });
    } catch (err) {
      callback(makeError('ERR_TASK_DATA', `a chunk cannot cross to the worker: ${(err as Error).message}`));
      return;
    }
    const size = this.#bytes ? (chunk as Uint8Array).byteLength : 0;
    this.#inFlight++;
    this.#inBytes += size;
    this.#sizes.push(size);
    if (this.#roomIn()) callback();
    else this.#writeWaiting = callback;
  }

  override _read(size: number): void {
    this.#grant();
    super._read(size);
  }

  override _flush(callback: TransformCallback): void {
    if (this.#outEnded) {
      callback();
      return;
    }
    this.#start();
    this.#flushed = () => callback();
    this.#post({ t: 'end' });
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.#port !== null && !this.#outEnded) {
      this.#controller.abort(error ?? makeError('ERR_ABORTED', 'the stream was destroyed'));
    }
    this.#writeWaiting = null;
    this.#flushed = null;
    this.#finished();
    callback(error);
  }
}

/** `filters.task(work.fn, options)`: the export run over the stream on one worker. */
export function task(fn: Offloaded, options?: TaskFilterOptions): TaskTransform {
  return new TaskTransform(fn, options);
}
