/**
 * Filters as WHATWG TransformStreams (browsers, Deno, Node's stream/web): the same
 * filters, ordering and backpressure as the Node Transforms. Host-neutral.
 */
import { describe, makeError } from '../errors.js';
import type { GuestHost } from '../guests/load.js';
import { host } from '../host.js';
import type { Offloaded } from '../pool/fanout.js';
import type { TaskFunction } from '../tasks/index.js';
import { builders, type FilterBuilders, type StreamOptions } from './builders.js';
import { type FilterCore, OrderedPushes, openFilter } from './core.js';
import { type GuestFilterOptions, guestFilter } from './guest.js';
import type { RecordBatch, RecordStats, RecordStream } from './records.js';
import type { FilterSpec } from './spec.js';
import { TaskChannel, type TaskFilterOptions, taskFilterSetup } from './task-channel.js';

const roomy = (c: TransformStreamDefaultController<unknown>) => c.desiredSize === null || c.desiredSize > 0;

async function waitForRoom(c: TransformStreamDefaultController<unknown>, cancelled: () => boolean): Promise<void> {
  while (!roomy(c) && !cancelled()) await new Promise((resolve) => setTimeout(resolve, 1));
}

export function filterStream(
  spec: FilterSpec,
  run: StreamOptions = {},
  core: FilterCore = openFilter(spec, run),
): TransformStream<Uint8Array, Uint8Array> {
  let pushes: OrderedPushes;
  let cancelled = false;
  // `cancel` (the Streams spec since 2023; Node 20, Chromium) is not in TypeScript's
  // Transformer type yet, hence the wider type.
  const transformer: Transformer<Uint8Array, Uint8Array> & { cancel(reason: unknown): void } = {
    start(controller) {
      pushes = new OrderedPushes(
        core,
        // Record filters without a schema emit RecordBatch objects.
        (out) => controller.enqueue(out instanceof Uint8Array ? host().binary(out) : (out as unknown as Uint8Array)),
        // A decompressor goes on with the input it kept back once the readable has room.
        // A transformer is not told when it is read from, so this looks every 1 ms; a
        // reader already waiting takes each piece at once (desiredSize stays > 0).
        () => (roomy(controller) ? undefined : waitForRoom(controller, () => cancelled)),
      );
    },
    // Resolving late is the backpressure: the writer waits while `inFlight` are pending.
    transform: (chunk) => pushes.write(chunk),
    flush: () => pushes.end(),
    // The readable cancelled or the writable aborted: the filter is freed now (on a
    // worker, its close step), not when the stream is collected.
    cancel: () => {
      cancelled = true;
      pushes.abort();
    },
  };
  return new TransformStream<Uint8Array, Uint8Array>(transformer, { highWaterMark: 1 }, { highWaterMark: 1 });
}

// biome-ignore lint/suspicious/noExplicitAny: the shape of any function, as TS spells it
type AnyFunction = (...args: any[]) => any;

/**
 * The chunks an export takes and passes on: a generator export's `(chunks:
 * AsyncIterable<In>, …) => AsyncGenerator<Out>`, a per-chunk one's `(chunk: In, state,
 * …) => Out | undefined` (undefined passes nothing on).
 */
export type TaskChunkIn<F> = F extends (chunks: AsyncIterable<infer I>, ...rest: never[]) => AsyncGenerator | Generator
  ? I
  : F extends (chunk: infer I, ...rest: never[]) => unknown
    ? I
    : unknown;
export type TaskChunkOut<F> = F extends (...args: never[]) => AsyncGenerator<infer O> | Generator<infer O>
  ? O
  : F extends (...args: never[]) => infer R
    ? Exclude<Awaited<R>, undefined>
    : unknown;

/** `filters.web.task()`'s options: those of `filters.task()`. */
export type WebTaskFilterOptions = TaskFilterOptions;

/**
 * `filters.web.task(work.fn, options)`: the task filter (filters/task.ts) as a
 * TransformStream — the same job on one worker, options, order, credit both ways and
 * typed errors. Cancelling the readable or aborting the writable ends the transform on
 * its worker (its `finally` runs). Bytes: Uint8Arrays or strings (UTF-8) in, bytes out;
 * object mode: any structured-cloneable value (null too), both ways.
 */
export function taskStream(fn: unknown, options?: TaskFilterOptions): TransformStream<unknown, unknown> {
  const setup = taskFilterSetup(fn, options, 'filters.web.task');
  let controller: TransformStreamDefaultController<unknown>;
  let failure: Error | null = null;
  /** A transform() waiting for the transform on the worker to take chunks, or a flush() for its end. */
  let writer: { resolve(): void; reject(err: unknown): void } | null = null;
  let flushing: { resolve(): void; reject(err: unknown): void } | null = null;
  let polling = false;
  const encoder = new TextEncoder();
  const fail = (err: Error) => {
    if (failure) return;
    failure = err;
    channel.abort(err);
    setup.signal?.removeEventListener('abort', onAbort);
    controller.error(err);
    writer?.reject(err);
    flushing?.reject(err);
    writer = flushing = null;
  };
  const onAbort = () => fail(makeError('ERR_ABORTED', 'The stream was aborted', setup.signal?.reason));
  const wakeWriter = () => {
    const w = writer;
    if (w && (channel.roomIn() || channel.ended)) {
      writer = null;
      w.resolve();
    }
  };
  // The readable has no pull for a transformer: while it is full, look every 1 ms (as
  // filterStream does, with the same ref'd timer: a read may be waiting on this look, so
  // the process must not end under it) and grant the worker more once it has room.
  const pollRoom = () => {
    if (polling) return;
    polling = true;
    void waitForRoom(controller, () => failure !== null || channel.ended).then(() => {
      polling = false;
      if (!failure && !channel.ended) channel.grant();
    });
  };
  const channel = new TaskChannel(setup, {
    out(value) {
      if (failure) return false;
      let chunk = value;
      if (setup.bytes) {
        if (value instanceof Uint8Array) chunk = host().binary(value);
        else if (typeof value === 'string') chunk = host().binary(encoder.encode(value));
        else {
          fail(
            makeError(
              'ERR_TASK_DATA',
              `the task filter ${setup.name}() passed on ${describe(value)}: a byte stream passes on Uint8Arrays or strings`,
            ),
          );
          return false;
        }
      }
      controller.enqueue(chunk);
      if (roomy(controller)) return true;
      pollRoom();
      return false;
    },
    room: wakeWriter,
    held: () => writer !== null,
    ended() {
      setup.signal?.removeEventListener('abort', onAbort);
      wakeWriter();
      const f = flushing;
      flushing = null;
      f?.resolve();
    },
    failed: fail,
  });
  // `cancel` (the Streams spec since 2023) is not in TypeScript's Transformer type yet.
  const transformer: Transformer<unknown, unknown> & { cancel(reason: unknown): void } = {
    start(c) {
      controller = c;
      if (setup.signal?.aborted) onAbort();
      else setup.signal?.addEventListener('abort', onAbort, { once: true });
    },
    transform(chunk) {
      if (failure) return Promise.reject(failure);
      // The transform returned before its input ended: the rest of the input is dropped.
      if (channel.ended) return;
      if (setup.bytes && !(chunk instanceof Uint8Array) && typeof chunk !== 'string') {
        const err = makeError(
          'ERR_INVALID_ARG',
          `filters.web.task(): a byte stream takes Uint8Arrays or strings, got ${describe(chunk)}`,
        );
        fail(err);
        return Promise.reject(err);
      }
      try {
        channel.write(chunk);
      } catch (err) {
        fail(err as Error);
        return Promise.reject(err);
      }
      if (channel.roomIn()) return;
      // Resolving late is the backpressure: the writer waits while the window is full.
      return new Promise<void>((resolve, reject) => {
        writer = { resolve, reject };
      });
    },
    flush() {
      if (failure) return Promise.reject(failure);
      if (channel.ended) return;
      return new Promise<void>((resolve, reject) => {
        flushing = { resolve, reject };
        channel.end();
      });
    },
    // The readable cancelled or the writable aborted: the transform on the worker ends now.
    cancel(reason) {
      if (failure || channel.ended) return;
      failure = reason instanceof Error ? reason : makeError('ERR_ABORTED', 'the stream was cancelled');
      setup.signal?.removeEventListener('abort', onAbort);
      channel.abort(failure);
    },
  };
  return new TransformStream<unknown, unknown>(transformer, { highWaterMark: 1 }, { highWaterMark: 1 });
}

/** `filters.web.task()`: typed by the export where the module is (`tasks<typeof import('./work.js')>(…)`). */
export interface WebTaskFilter {
  <F extends AnyFunction>(
    fn: TaskFunction<F>,
    options: TaskFilterOptions & { objectMode: true },
  ): TransformStream<TaskChunkIn<F>, TaskChunkOut<F>>;
  (fn: Offloaded, options: TaskFilterOptions & { objectMode: true }): TransformStream<unknown, unknown>;
  (
    fn: Offloaded,
    options?: TaskFilterOptions & { objectMode?: false | undefined },
  ): TransformStream<Uint8Array | string, Uint8Array>;
}

const NO_STATS: RecordStats = { rows: 0, batches: 0, skipped: 0, skippedLines: [] };

/**
 * A record filter's TransformStream, with `stats()`: rows and batches emitted so far,
 * rows skipped and their lines (the Node Transform's `stats()`; a TransformStream has
 * no place of its own for them).
 */
function recordStream<O>(spec: FilterSpec, run: StreamOptions): RecordStream<O> {
  const core = openFilter(spec, run);
  const stream = filterStream(spec, run, core) as unknown as RecordStream<O>;
  return Object.assign(stream, { stats: () => core.stats?.() ?? { ...NO_STATS, skippedLines: [] } });
}

/**
 * `web.gzip()`, `web.transcode('utf8', 'utf16le')`, …, `web.guest(host, …)`, `web.task(work.fn)`:
 * TransformStreams. `web.csv()` / `web.ndjson()` are `RecordStream`s: RecordBatch objects
 * out (a schema's batch messages with `schema` or a column array), and `stats()`.
 */
export const web: FilterBuilders<
  TransformStream<Uint8Array, Uint8Array>,
  RecordStream<RecordBatch>,
  RecordStream<Uint8Array>
> & {
  guest(host: GuestHost, options: GuestFilterOptions): TransformStream<Uint8Array, Uint8Array>;
  /** A task module's export run over the stream on one worker (filters/task.ts's, as a TransformStream). */
  task: WebTaskFilter;
} = {
  ...builders<TransformStream<Uint8Array, Uint8Array>, RecordStream<RecordBatch>, RecordStream<Uint8Array>>(
    (spec, run) => filterStream(spec, run),
    // Batches or messages, as the spec's layout says; the overloads type each.
    (spec, run) => recordStream<RecordBatch>(spec, run),
  ),
  guest(guestHost, options) {
    const [spec, core] = guestFilter(guestHost, options);
    return filterStream(spec, {}, core);
  },
  task: taskStream as WebTaskFilter,
};
