/**
 * Filters as WHATWG TransformStreams (browsers, Deno, Node's stream/web): the same
 * filters, ordering and backpressure as the Node Transforms. Host-neutral.
 */
import { host } from '../host.js';
import { builders, type FilterBuilders, type StreamOptions } from './builders.js';
import { OrderedPushes, openFilter } from './core.js';
import type { FilterSpec } from './spec.js';

export function filterStream(spec: FilterSpec, run: StreamOptions = {}): TransformStream<Uint8Array, Uint8Array> {
  const core = openFilter(spec, run);
  let pushes: OrderedPushes;
  return new TransformStream<Uint8Array, Uint8Array>(
    {
      start(controller) {
        pushes = new OrderedPushes(core, (out) => controller.enqueue(host().binary(out)));
      },
      // Resolving late is the backpressure: the writer waits while `inFlight` are pending.
      transform: (chunk) => pushes.write(chunk),
      flush: () => pushes.end(),
    },
    { highWaterMark: 1 },
    { highWaterMark: 1 },
  );
}

/** `web.gzip()`, `web.transcode('utf8', 'utf16le')`, …: TransformStreams. */
export const web: FilterBuilders<TransformStream<Uint8Array, Uint8Array>> = builders(filterStream);
