/**
 * Filters as WHATWG TransformStreams (browsers, Deno, Node's stream/web): the same
 * filters, ordering and backpressure as the Node Transforms. Host-neutral.
 */
import type { GuestHost } from '../guests/load.js';
import { host } from '../host.js';
import { builders, type FilterBuilders, type StreamOptions } from './builders.js';
import { type FilterCore, OrderedPushes, openFilter } from './core.js';
import { type GuestFilterOptions, guestFilter } from './guest.js';
import type { RecordBatch, RecordStats, RecordStream } from './records.js';
import type { FilterSpec } from './spec.js';

const roomy = (c: TransformStreamDefaultController<Uint8Array>) => c.desiredSize === null || c.desiredSize > 0;

async function waitForRoom(c: TransformStreamDefaultController<Uint8Array>, cancelled: () => boolean): Promise<void> {
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
 * `web.gzip()`, `web.transcode('utf8', 'utf16le')`, …, `web.guest(host, …)`: TransformStreams.
 * `web.csv()` / `web.ndjson()` are `RecordStream`s: RecordBatch objects out (a schema's
 * batch messages with `schema` or a column array), and `stats()`.
 */
export const web: FilterBuilders<
  TransformStream<Uint8Array, Uint8Array>,
  RecordStream<RecordBatch>,
  RecordStream<Uint8Array>
> & {
  guest(host: GuestHost, options: GuestFilterOptions): TransformStream<Uint8Array, Uint8Array>;
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
};
