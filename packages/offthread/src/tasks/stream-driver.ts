/**
 * The worker side of a task filter (filters/task.ts): itself a task module, whose one
 * export runs a user's export over a stream for the stream's whole life on one worker
 * (a job holds its worker until it settles, so the state stays in that worker).
 *
 * Chunks come in and outputs go out on a MessagePort of the stream's own, by credit
 * both ways: the caller never has more than its window of chunks on their way in (this
 * side reports what the transform took), and this side pulls the transform only while
 * the caller has granted room for outputs — so a slow reader pauses the transform, not
 * memory. The job's own settlement carries the outcome: a throw arrives typed, as any
 * task's; an abort of the job (the stream destroyed) ends the transform here.
 */
import type { Transferable } from '../host.js';
import { CodedFailure } from '../pool/wire.js';
import { currentTask } from './context.js';

/** Caller → worker. */
export type ToDriver = { t: 'chunk'; v: unknown } | { t: 'end' } | { t: 'credit'; n: number };
/** Worker → caller (the outcome comes as the job's). */
export type FromDriver = { t: 'out'; v: unknown } | { t: 'took'; n: number } | { t: 'end' };

/** The part of a MessagePort both hosts share (Node's worker_threads and the web's). */
export interface DriverPort {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  onmessage: ((event: { data: unknown }) => void) | null;
  close(): void;
}

/** Chunks taken and not yet reported: reported by fours, or when the transform waits for input. */
const REPORT_EVERY = 4;

// A CommonJS build turns `import()` into `require()`; a task module may be ESM or TypeScript.
const load = new Function('url', 'return import(url)') as (url: string) => Promise<Record<string, unknown>>;

const tagOf = (v: unknown) => Object.prototype.toString.call(v);
const isGeneratorFunction = (fn: unknown) =>
  tagOf(fn) === '[object AsyncGeneratorFunction]' || tagOf(fn) === '[object GeneratorFunction]';

/** The export `name` of the module at `url`, as tasks/runner.ts finds it (CommonJS's on `default`). */
async function findExport(url: string, name: string): Promise<(...args: unknown[]) => unknown> {
  let ns: Record<string, unknown>;
  try {
    ns = await load(url);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new CodedFailure('ERR_TASK_MODULE', `cannot load the task module ${url}: ${why}`);
  }
  let value = ns[name];
  const fallback = ns.default as Record<string, unknown> | undefined;
  if (value === undefined && fallback && typeof fallback === 'object') value = fallback[name];
  if (typeof value !== 'function') {
    throw new CodedFailure(
      'ERR_TASK_EXPORT',
      `the task module ${url} has no exported function ${JSON.stringify(name)}`,
    );
  }
  return value as (...args: unknown[]) => unknown;
}

/** The stream's chunks as an async iterable; it reports what was taken so the caller sends more. */
class Inbox implements AsyncIterableIterator<unknown> {
  readonly #port: DriverPort;
  readonly #chunks: unknown[] = [];
  #ended = false;
  #failed: unknown = null;
  #waiting: { resolve(r: IteratorResult<unknown>): void; reject(err: unknown): void } | null = null;
  #unreported = 0;

  constructor(port: DriverPort) {
    this.#port = port;
  }

  put(value: unknown): void {
    const w = this.#waiting;
    if (w) {
      this.#waiting = null;
      this.#took();
      w.resolve({ value, done: false });
    } else this.#chunks.push(value);
  }

  end(): void {
    this.#ended = true;
    const w = this.#waiting;
    this.#waiting = null;
    w?.resolve({ value: undefined, done: true });
  }

  /** The stream was destroyed: the transform's wait for input throws (its `finally` runs). */
  fail(err: unknown): void {
    this.#failed = err;
    const w = this.#waiting;
    this.#waiting = null;
    w?.reject(err);
  }

  #took(): void {
    if (++this.#unreported >= REPORT_EVERY) this.#report();
  }

  #report(): void {
    if (this.#unreported === 0) return;
    this.#port.postMessage({ t: 'took', n: this.#unreported } satisfies FromDriver);
    this.#unreported = 0;
  }

  next(): Promise<IteratorResult<unknown>> {
    if (this.#failed !== null) return Promise.reject(this.#failed);
    if (this.#chunks.length > 0) {
      this.#took();
      return Promise.resolve({ value: this.#chunks.shift(), done: false });
    }
    if (this.#ended) return Promise.resolve({ value: undefined, done: true });
    this.#report(); // about to wait: let the caller send what it holds back
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<unknown>> {
    this.#ended = true;
    this.#chunks.length = 0;
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/** A per-chunk export as a transform: called once per chunk, in order, with one state object for the stream. */
async function* perChunk(
  fn: (...args: unknown[]) => unknown,
  chunks: AsyncIterable<unknown>,
  args: unknown[],
): AsyncGenerator<unknown> {
  const state: Record<string, unknown> = {};
  for await (const chunk of chunks) {
    const out = await fn(chunk, state, ...args);
    if (out !== undefined) yield out;
  }
}

/**
 * An output crossing to the caller: bytes that are a whole ArrayBuffer of their own are
 * moved (a transform must not touch what it yielded, as with a Readable's push); a view
 * into a larger buffer is copied here (moving it would take the rest of the buffer too).
 */
function send(port: DriverPort, value: unknown): void {
  if (value instanceof Uint8Array && !(value.buffer instanceof SharedArrayBuffer)) {
    let moved = value;
    if (value.byteOffset !== 0 || value.byteLength !== value.buffer.byteLength) {
      moved = new Uint8Array(value.byteLength); // not slice(): a Buffer's is a view
      moved.set(value);
    }
    port.postMessage({ t: 'out', v: moved } satisfies FromDriver, [moved.buffer]);
    return;
  }
  port.postMessage({ t: 'out', v: value } satisfies FromDriver);
}

/**
 * Runs export `name` of the module at `url` over the chunks that arrive on `port`:
 * an (async) generator export as `fn(chunks, ...args)`, any other as `fn(chunk, state,
 * ...args)` per chunk (a result of undefined passes nothing on). Resolves once the
 * transform has ended and every output was sent.
 */
export async function drive(port: DriverPort, url: string, name: string, args: unknown[]): Promise<void> {
  const { signal } = currentTask();
  const inbox = new Inbox(port);
  let credit = 0;
  let creditCame: (() => void) | null = null;
  let aborted = false;
  const stop = () => {
    aborted = true;
    inbox.fail(signal.reason ?? new CodedFailure('ERR_ABORTED', 'the stream was destroyed'));
    creditCame?.();
  };
  port.onmessage = ({ data }) => {
    const msg = data as ToDriver;
    if (msg.t === 'chunk') inbox.put(msg.v);
    else if (msg.t === 'end') inbox.end();
    else {
      credit += msg.n;
      const wake = creditCame;
      creditCame = null;
      wake?.();
    }
  };
  signal.addEventListener('abort', stop, { once: true });
  try {
    const fn = await findExport(url, name);
    const made = isGeneratorFunction(fn) ? fn(inbox, ...args) : perChunk(fn, inbox, args);
    const it = made as Partial<AsyncIterator<unknown> & Iterator<unknown>> | null;
    if (!it || typeof it.next !== 'function') {
      throw new CodedFailure('ERR_TASK_EXPORT', `${name}() is a generator function that returned no iterator`);
    }
    try {
      for (;;) {
        while (credit === 0 && !aborted) await new Promise<void>((resolve) => (creditCame = resolve));
        if (aborted) throw signal.reason;
        const r = await it.next();
        if (r.done) break;
        credit--;
        send(port, r.value);
      }
    } finally {
      // A transform stopped early (the stream destroyed, its own error) still runs its `finally`.
      if (aborted) await it.return?.();
    }
    port.postMessage({ t: 'end' } satisfies FromDriver);
  } finally {
    signal.removeEventListener('abort', stop);
    port.onmessage = null;
    port.close();
  }
}
