/**
 * Filters as Node Transform streams: usable in `stream.pipeline`, with backpressure
 * (at most `inFlight` chunks pending on the pool, then the writer waits) and chunks in
 * input order. Record filters (csv, ndjson) are object-mode on their readable side:
 * each chunk is one batch message, read in place with the schema's generated reader.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { makeError } from '../errors.js';
import type { GuestHost } from '../guests/load.js';
import { builders, type FilterBuilders, type StreamOptions } from './builders.js';
import { type FilterBackend, type FilterCore, OrderedPushes, openFilter } from './core.js';
import { type GuestFilterOptions, guestFilter } from './guest.js';
import { fileSink, fileSource, Source, source } from './nexus.js';
import type { RecordStats } from './records.js';
import { emitsBatches, type FilterSpec } from './spec.js';
import { task } from './task.js';
import { web } from './web.js';

/**
 * Chunks that queued up while the filter was busy go to the pool together, up to this
 * many bytes a push: a stream of small pieces (sockets, line writers) then pays one round
 * trip per batch instead of one per piece. Larger chunks are pushed as they are.
 */
const BATCH_BYTES = 64 * 1024;

type Written = { chunk: unknown; encoding: BufferEncoding };

function toBytes(chunk: unknown, encoding: BufferEncoding): Uint8Array | undefined {
  return chunk instanceof Uint8Array ? chunk : typeof chunk === 'string' ? Buffer.from(chunk, encoding) : undefined;
}

export class FilterTransform extends Transform {
  readonly #core: FilterCore;
  readonly #pushes: OrderedPushes;
  /** Bytes of queued chunks joined into one push (0: each chunk alone). */
  readonly #batchBytes: number;
  /** The filter's spec (what runs in Rust). */
  readonly spec: FilterSpec;
  /** The readable side's buffer was full at the last push (push() said false). */
  #full = false;
  /** Resolves a decompressor's wait for the reader (see the constructor). */
  #wantMore: (() => void) | undefined;

  /** `core`: a filter already opened elsewhere (a guest filter); by default `spec` is opened on the pool. */
  constructor(spec: FilterSpec, run: StreamOptions = {}, core?: FilterCore) {
    super({ readableObjectMode: emitsBatches(spec) });
    this.spec = spec;
    this.#core = core ?? openFilter(spec, run);
    this.#pushes = new OrderedPushes(
      this.#core,
      (out) => {
        // Record filters without a schema emit RecordBatch objects.
        const chunk = out instanceof Uint8Array ? Buffer.from(out.buffer, out.byteOffset, out.length) : out;
        this.#full = !this.push(chunk);
      },
      // A decompressor goes on with the input it kept back only once the reader has
      // taken what was pushed (Node's zlib waits for _read the same way).
      () => (this.#full && !this.destroyed ? new Promise((resolve) => (this.#wantMore = resolve)) : undefined),
    );
    // A guest sees the chunks as they were written (its function runs per chunk).
    this.#batchBytes = core === undefined ? BATCH_BYTES : 0;
  }

  /** 'native' (the addon's pool threads), 'workers' (offthread.wasm or a guest on a pool worker) or 'wasm' (in place on this thread). */
  get backend(): FilterBackend {
    return this.#core.backend;
  }

  /** Record filters (csv, ndjson): rows and batches emitted, rows skipped and their lines; else undefined. */
  stats(): RecordStats | undefined {
    return this.#core.stats?.();
  }

  /** Chunks of this stream that may be on the pool at once. */
  get inFlight(): number {
    return this.#core.inFlight;
  }

  override _transform(chunk: unknown, encoding: BufferEncoding, callback: TransformCallback): void {
    const bytes = toBytes(chunk, encoding);
    if (!bytes) {
      callback(makeError('ERR_INVALID_ARG', 'a filter takes Buffers, Uint8Arrays or strings'));
      return;
    }
    this.#pushes.write(bytes).then(() => callback(), callback);
  }

  /** Every chunk written while the filter was busy, in order: small ones joined into pushes of ≤ BATCH_BYTES. */
  override _writev(chunks: Written[], callback: (error?: Error | null) => void): void {
    const pushes: Uint8Array[] = [];
    let run: Uint8Array[] = [];
    let runBytes = 0;
    const endRun = () => {
      if (run.length > 0) pushes.push(run.length === 1 ? (run[0] as Uint8Array) : Buffer.concat(run, runBytes));
      run = [];
      runBytes = 0;
    };
    for (const { chunk, encoding } of chunks) {
      const bytes = toBytes(chunk, encoding);
      if (!bytes) {
        callback(makeError('ERR_INVALID_ARG', 'a filter takes Buffers, Uint8Arrays or strings'));
        return;
      }
      if (runBytes + bytes.length > this.#batchBytes) endRun();
      run.push(bytes);
      runBytes += bytes.length;
    }
    endRun();
    (async () => {
      for (const bytes of pushes) await this.#pushes.write(bytes);
    })().then(() => callback(), callback);
  }

  override _read(size: number): void {
    this.#full = false;
    const more = this.#wantMore;
    this.#wantMore = undefined;
    more?.();
    super._read(size);
  }

  override _flush(callback: TransformCallback): void {
    this.#pushes.end().then(() => callback(), callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#pushes.abort();
    this.#wantMore?.();
    callback(error);
  }
}

const node: FilterBuilders<FilterTransform> = builders((spec, run) => new FilterTransform(spec, run));

/**
 * `filters.gzip()`, `filters.transcode('utf8', 'utf16le')`, … as Node Transforms;
 * `filters.web.*` as TransformStreams; `filters.source(readable)` the Nexus shape.
 */
export const filters = {
  ...node,
  /** A user's WebAssembly guest function per chunk (filters/guest.ts), on the host's workers. */
  guest(host: GuestHost, options: GuestFilterOptions): FilterTransform {
    const [spec, core] = guestFilter(host, options);
    return new FilterTransform(spec, {}, core);
  },
  /** A task module's export run over the stream on one worker (filters/task.ts). */
  task,
  web,
  source,
  fileSource,
  fileSink,
  Source,
  FilterTransform,
};
