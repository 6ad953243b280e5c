/**
 * The worker side of a task filter (filters/task.ts, filters/web.ts): itself a task
 * module, whose one export runs a user's export over a stream for the stream's whole
 * life on one worker (a job holds its worker until it settles, so the state stays in
 * that worker).
 *
 * Chunks come in and outputs go out on a MessagePort of the stream's own, by credit
 * both ways: the caller never has more than its window of chunks on their way in (this
 * side reports what the transform took), and this side pulls the transform only while
 * the caller has granted room for outputs — so a slow reader pauses the transform, not
 * memory. Whenever the transform waits on the caller (for input, or for credit) this
 * side says so with how many messages it had seen — a caller that sent nothing since
 * knows the stream is parked, gives its job's budget slot back and may let the process
 * go — and tells the worker's loop (JobContext.park), which runs other jobs meanwhile:
 * the transform's state stays in this worker's heap, and its next message waits for the
 * worker's event loop. The job's own settlement carries the outcome: a throw arrives
 * typed, as any task's; an abort of the job (the stream destroyed) ends the transform here.
 *
 * All of it is one function that reaches nothing outside itself (`streamDriver`), in
 * ES2020, so that its source is the driver module where no file of the package can be
 * imported by URL: a browser's task workers load it as a data: URL (filters/task-channel.ts).
 * A bundler lowering newer syntax would add helpers outside the function; ES2020 needs none.
 */
import type { Transferable } from '../host.js';

/**
 * Caller → worker, in one message per turn of the caller's loop: chunks (in order),
 * credit for more outputs (`n` outputs, `b` bytes of them: the transform pauses when
 * either runs out), the end of the input. A message per chunk cost each side a message
 * event per chunk, more than a 64 KiB copy's work (issue 34).
 */
export interface ToDriver {
  c?: unknown[];
  n?: number;
  b?: number;
  end?: true;
}
/**
 * Worker → caller (the outcome comes as the job's): outputs (in order) and how many
 * chunks the transform took since the last report, in one message; `wait`: the transform
 * waits on the caller now, with the messages seen so far; `end`: the transform ended.
 */
export interface FromDriver {
  o: unknown[];
  took: number;
  wait?: number;
  end?: true;
}
/**
 * When the driver reports (the caller's windows, halved, so that it writes the next
 * half while the transform works on this one): after `took` chunks or `tookBytes` bytes
 * taken, `outs` outputs or `outBytes` bytes made.
 */
export interface DriverLimits {
  took: number;
  tookBytes: number;
  outs: number;
  outBytes: number;
}

/** The part of a MessagePort both hosts share (Node's worker_threads and the web's). */
export interface DriverPort {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  onmessage: ((event: { data: unknown }) => void) | null;
  close(): void;
}

export type Drive = (
  port: DriverPort,
  url: string,
  name: string,
  args: unknown[],
  limits: DriverLimits,
) => Promise<void>;

/**
 * Makes `drive`, which imports task modules with `load`. Self-contained (see above): no
 * imports, no module-level names, ES2020.
 * Errors of its own cross as the pool's coded failures do ({ wire: 'code', … }: the
 * caller gets the registry's typed error), without importing their class.
 */
export function streamDriver(load: (url: string) => Promise<Record<string, unknown>>): Drive {
  /**
   * ms: outputs made wait for company at most this long (a timer, for an export that
   * awaits between outputs), and not at all behind a chunk or a step that took the
   * transform this long (a slow transform's outputs go one by one, at once). An output
   * made by a quick step may still wait for the next step, if that one computes without
   * a break: at most one step's time.
   */
  const HOLD_MS = 1;
  const coded = (code: string, message: string) => ({ wire: 'code', code, message });
  const tagOf = (v: unknown) => Object.prototype.toString.call(v);
  const isGeneratorFunction = (fn: unknown) =>
    tagOf(fn) === '[object AsyncGeneratorFunction]' || tagOf(fn) === '[object GeneratorFunction]';
  /** Values a postMessage always takes (a batch of them cannot fail to cross). */
  const plain = (v: unknown) =>
    v === null || (typeof v !== 'object' && typeof v !== 'function' && typeof v !== 'symbol');

  /** The export `name` of the module at `url`, as tasks/runner.ts finds it (CommonJS's on `default`). */
  async function findExport(url: string, name: string): Promise<(...args: unknown[]) => unknown> {
    // The worker's runner loaded the module (the filter registered it first), with the
    // functions it exposed (exposeTasks); imported here, those would be missing.
    const loaded = (globalThis as { [k: symbol]: Map<string, Promise<unknown>> | undefined })[
      Symbol.for('offthread.taskModules')
    ];
    const known = loaded ? loaded.get(url) : undefined;
    let ns = (known ? await known : undefined) as Record<string, unknown> | undefined;
    if (!ns) {
      try {
        ns = await load(url);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        throw coded('ERR_TASK_MODULE', `cannot load the task module ${url}: ${why}`);
      }
    }
    let value = ns[name];
    const fallback = ns.default as Record<string, unknown> | undefined;
    if (value === undefined && fallback && typeof fallback === 'object') value = fallback[name];
    if (typeof value !== 'function') {
      throw coded('ERR_TASK_EXPORT', `the task module ${url} has no exported function ${JSON.stringify(name)}`);
    }
    return value as (...args: unknown[]) => unknown;
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
   * Runs export `name` of the module at `url` over the chunks that arrive on `port`:
   * an (async) generator export as `fn(chunks, ...args)`, any other as `fn(chunk, state,
   * ...args)` per chunk (a result of undefined passes nothing on). Resolves once the
   * transform has ended and every output was sent.
   */
  return async function drive(port, url, name, args, limits) {
    const KEY = Symbol.for('offthread.currentTask');
    const holder = globalThis as Record<symbol, unknown>;
    const context = holder[KEY] as { signal: AbortSignal; park?: (waiting: boolean) => void } | undefined;
    if (!context) throw coded('ERR_NOT_IN_TASK', 'the stream driver runs only as a task');
    const signal = context.signal;
    const shared = typeof SharedArrayBuffer === 'function' ? SharedArrayBuffer : null;
    /**
     * Tells the worker's loop the transform waits on the caller (it may run other jobs
     * meanwhile) or works again — then, since another task may have run here meanwhile,
     * the transform's currentTask() is this job's again.
     */
    const park = (waiting: boolean) => {
      if (typeof context.park === 'function') context.park(waiting);
      if (!waiting) holder[KEY] = context;
    };
    // The chunks as an async iterable (the inbox); it reports what was taken so the caller sends more.
    const chunks: unknown[] = [];
    let ended = false;
    let failed: unknown = null;
    let inputWait: { resolve(r: IteratorResult<unknown>): void; reject(err: unknown): void } | null = null;
    let seen = 0;
    let credit = 0;
    let creditBytes = 0;
    let creditCame: (() => void) | null = null;
    let aborted = false;
    // What the next report carries: outputs (and the buffers they move), chunks taken.
    let outs: unknown[] = [];
    let moved: ArrayBuffer[] = [];
    let outBytes = 0;
    let firstOutAt = 0;
    let took = 0;
    let tookBytes = 0;
    /** When the transform last took a chunk: how long it worked on it, by the next take. */
    let tookAt = 0;
    /** How long the transform's last step (to its last output) took. */
    let stepMs = 0;
    /** Sends held outputs once they waited HOLD_MS (an export awaiting between outputs). */
    let holdTimer: ReturnType<typeof setTimeout> | null = null;

    /** Sends what waited: outputs, chunks taken; `wait`: the transform waits on the caller. */
    const report = (wait: boolean, end: boolean) => {
      const msg: FromDriver = { o: outs, took };
      if (wait) msg.wait = seen;
      if (end) msg.end = true;
      const transfer = moved;
      if (holdTimer !== null) {
        clearTimeout(holdTimer);
        holdTimer = null;
      }
      outs = [];
      moved = [];
      outBytes = 0;
      took = 0;
      tookBytes = 0;
      port.postMessage(msg, transfer);
    };
    /** The transform takes `chunk`: reported once half the caller's window was taken (it sends more meanwhile). */
    const take = (chunk: unknown): unknown => {
      const now = performance.now();
      took++;
      if (chunk instanceof Uint8Array) tookBytes += chunk.byteLength;
      // Outputs held long enough, or made by a transform that is slow per chunk, go now.
      const due = outs.length > 0 && (now - firstOutAt >= HOLD_MS || now - tookAt >= HOLD_MS);
      tookAt = now;
      if (due || took >= limits.took || tookBytes >= limits.tookBytes) report(false, false);
      return chunk;
    };
    /**
     * An output for the caller: bytes that are a whole ArrayBuffer of their own are moved
     * (a transform must not touch what it yielded, as with a Readable's push); a view into
     * a larger buffer, or a buffer already moving in this report, is copied here. Bytes,
     * strings and primitives wait for company (see report); anything else goes at once,
     * alone, so a value structured clone refuses fails here, in the driver's loop.
     */
    const emit = (value: unknown): number => {
      let size = 0;
      if (value instanceof Uint8Array && !(shared && value.buffer instanceof shared)) {
        let out = value;
        const whole = value.byteOffset === 0 && value.byteLength === value.buffer.byteLength;
        if (!whole || moved.indexOf(value.buffer as ArrayBuffer) >= 0) {
          out = new Uint8Array(value.byteLength); // not slice(): a Buffer's is a view
          out.set(value);
        }
        moved.push(out.buffer as ArrayBuffer);
        size = out.byteLength;
        outBytes += size;
        value = out;
      } else if (!plain(value)) {
        if (outs.length > 0 || took > 0) report(false, false);
        port.postMessage({ o: [value], took: 0 } satisfies FromDriver);
        // Counted as the caller counts it (a shared buffer's bytes too).
        return value instanceof Uint8Array ? value.byteLength : 0;
      }
      const now = performance.now();
      if (outs.length === 0) firstOutAt = now;
      outs.push(value);
      // Out of credit after this one (the caller took `credit--` already), the wait that
      // follows reports them: one message, not two.
      const more = credit > 0 && creditBytes > size;
      if (!more) return size;
      if (
        stepMs >= HOLD_MS ||
        outs.length >= limits.outs ||
        outBytes >= limits.outBytes ||
        now - firstOutAt >= HOLD_MS
      ) {
        report(false, false);
      } else if (holdTimer === null) {
        holdTimer = setTimeout(() => {
          holdTimer = null;
          if (outs.length > 0 && !aborted) report(false, false);
        }, HOLD_MS);
      }
      return size;
    };
    /** The transform waits on the caller: what waited goes, with the messages seen (the caller's park check). */
    const waiting = () => {
      report(true, false);
      park(true);
    };
    const inbox: AsyncIterableIterator<unknown> = {
      next() {
        if (failed !== null) return Promise.reject(failed);
        if (chunks.length > 0) return Promise.resolve({ value: take(chunks.shift()), done: false });
        if (ended) return Promise.resolve({ value: undefined, done: true });
        waiting();
        return new Promise((resolve, reject) => {
          inputWait = { resolve, reject };
        });
      },
      return() {
        ended = true;
        chunks.length = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    /** The stream was destroyed: the transform's wait for input throws (its `finally` runs). */
    const stop = () => {
      park(false);
      aborted = true;
      failed = signal.reason !== undefined ? signal.reason : coded('ERR_ABORTED', 'the stream was destroyed');
      const w = inputWait;
      inputWait = null;
      if (w) w.reject(failed);
      if (creditCame) creditCame();
    };
    port.onmessage = ({ data }) => {
      park(false);
      const msg = data as ToDriver;
      seen++;
      if (msg.c) {
        for (const chunk of msg.c) {
          const w = inputWait;
          inputWait = null;
          if (w) w.resolve({ value: take(chunk), done: false });
          else chunks.push(chunk);
        }
      }
      if (msg.end) {
        ended = true;
        const w = inputWait;
        inputWait = null;
        if (w) w.resolve({ value: undefined, done: true });
      }
      if (msg.n || msg.b) {
        credit += msg.n || 0;
        creditBytes += msg.b || 0;
        const wake = creditCame;
        creditCame = null;
        if (wake) wake();
      }
      // Still waiting on the caller after this message (credit while waiting for input, a
      // chunk while waiting for credit): say so again, with the new count.
      if (inputWait || creditCame) waiting();
    };
    signal.addEventListener('abort', stop, { once: true });
    try {
      const fn = await findExport(url, name);
      const made = isGeneratorFunction(fn) ? fn(inbox, ...args) : perChunk(fn, inbox, args);
      const it = made as Partial<AsyncIterator<unknown> & Iterator<unknown>> | null;
      if (!it || typeof it.next !== 'function') {
        throw coded('ERR_TASK_EXPORT', `${name}() is a generator function that returned no iterator`);
      }
      try {
        for (;;) {
          while ((credit <= 0 || creditBytes <= 0) && !aborted) {
            await new Promise<void>((resolve) => {
              creditCame = resolve;
              waiting();
            });
          }
          if (aborted) throw signal.reason;
          const stepAt = performance.now();
          const r = await it.next();
          stepMs = performance.now() - stepAt;
          if (r.done) break;
          credit--;
          creditBytes -= emit(r.value);
        }
      } catch (err) {
        // What the transform made before it failed still reaches the caller, as before the failure.
        if (!aborted && outs.length > 0) report(false, false);
        throw err;
      } finally {
        if (holdTimer !== null) clearTimeout(holdTimer);
        holdTimer = null;
        // A transform stopped early (the stream destroyed, its own error) still runs its `finally`.
        if (aborted && it.return) await it.return();
      }
      report(false, true);
    } finally {
      park(false);
      signal.removeEventListener('abort', stop);
      port.onmessage = null;
      port.close();
    }
  };
}

/**
 * The driver, as this file's export (Node's task workers import this file). A CommonJS
 * build turns `import()` into `require()`; a task module may be ESM or TypeScript.
 */
export const drive: Drive = streamDriver(
  new Function('url', 'return import(url)') as (url: string) => Promise<Record<string, unknown>>,
);
