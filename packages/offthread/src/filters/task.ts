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
 * a MessagePort of its own carries the chunks both ways, by credit (filters/task-channel.ts,
 * which `filters.web.task()` shares). Outputs come in order; a throw in the transform
 * fails the stream with that error (name, message, code, stack, as any task's);
 * destroying the stream aborts the job, which ends the transform on its worker (its
 * `finally` runs). The pool keeps its threads (`hold()`) while the stream is open; while
 * the transform waits on this side (parked) the stream holds no slot of the pool's thread
 * budget and its worker runs other jobs, and with nothing written unanswered it does not
 * keep the process alive (task-channel.ts).
 */
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { describe, makeError } from '../errors.js';
import type { Offloaded } from '../pool/fanout.js';
import { setDriverUrl, TaskChannel, type TaskFilterOptions, taskFilterSetup } from './task-channel.js';

export type { TaskFilterOptions } from './task-channel.js';

// Node's task workers import the driver's own file (the CommonJS build's).
setDriverUrl(pathToFileURL(join(__dirname, '..', 'tasks', 'stream-driver.js')).href);

export class TaskTransform extends Transform {
  readonly #channel: TaskChannel;
  readonly #name: string;
  readonly #bytes: boolean;
  readonly #signal: AbortSignal | undefined;
  /** A write waiting for the transform to take chunks. */
  #writeWaiting: TransformCallback | null = null;
  #flushed: (() => void) | null = null;
  readonly #onAbort = () => {
    this.destroy(makeError('ERR_ABORTED', 'The stream was aborted', this.#signal?.reason));
  };

  constructor(fn: unknown, options?: TaskFilterOptions) {
    const setup = taskFilterSetup(fn, options, 'filters.task');
    super({ objectMode: !setup.bytes });
    this.#name = setup.name;
    this.#bytes = setup.bytes;
    this.#signal = setup.signal;
    this.#channel = new TaskChannel(setup, {
      out: (value) => this.#onOutput(value),
      room: () => this.#resumeWriter(),
      held: () => this.writableLength > 0,
      ended: () => {
        this.#signal?.removeEventListener('abort', this.#onAbort);
        this.#resumeWriter();
        const flushed = this.#flushed;
        this.#flushed = null;
        flushed?.();
      },
      failed: (err) => this.destroy(err),
    });
    if (setup.signal?.aborted) process.nextTick(this.#onAbort);
    else setup.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** An output: pushed; returns whether the readable side has room for more. */
  #onOutput(value: unknown): boolean {
    if (this.destroyed) return false;
    if (this.#bytes) {
      if (value instanceof Uint8Array) return this.push(Buffer.from(value.buffer, value.byteOffset, value.length));
      if (typeof value === 'string') return this.push(value);
      this.#badOutput(`${describe(value)}: a byte stream passes on Uint8Arrays or strings`);
      return false;
    }
    if (value === null) {
      this.#badOutput('null: a stream cannot carry null (it means the end)');
      return false;
    }
    return this.push(value);
  }

  #badOutput(what: string): void {
    this.destroy(makeError('ERR_TASK_DATA', `the task filter ${this.#name}() passed on ${what}`));
  }

  #resumeWriter(): void {
    const write = this.#writeWaiting;
    if (write && (this.#channel.roomIn() || this.#channel.ended)) {
      this.#writeWaiting = null;
      write();
    }
  }

  override _transform(chunk: unknown, _encoding: BufferEncoding, callback: TransformCallback): void {
    // The transform returned before its input ended: the rest of the input is dropped.
    if (this.#channel.ended) {
      callback();
      return;
    }
    try {
      this.#channel.write(chunk);
    } catch (err) {
      callback(err as Error);
      return;
    }
    if (this.#channel.roomIn()) callback();
    else this.#writeWaiting = callback;
  }

  override _read(size: number): void {
    this.#channel.grant();
    super._read(size);
  }

  override _flush(callback: TransformCallback): void {
    if (this.#channel.ended) {
      callback();
      return;
    }
    this.#flushed = () => callback();
    this.#channel.end();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#channel.abort(error ?? makeError('ERR_ABORTED', 'the stream was destroyed'));
    this.#writeWaiting = null;
    this.#flushed = null;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    callback(error);
  }
}

/** `filters.task(work.fn, options)`: the export run over the stream on one worker. */
export function task(fn: Offloaded, options?: TaskFilterOptions): TaskTransform {
  return new TaskTransform(fn, options);
}
