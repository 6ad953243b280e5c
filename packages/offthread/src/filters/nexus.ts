/**
 * The Nexus.js shape over Node streams, as a thin layer: a source device, filters
 * pushed onto it, several sinks fed at once, and `await source.resume()` to run it.
 *
 * ```js
 * const src = filters.source(filters.fileSource('in.txt'));
 * src.pushFilter(filters.transcode('utf8', 'utf16le'));
 * src.pipe(filters.fileSink('a.txt'), filters.fileSink('b.txt'));
 * await src.resume();
 * ```
 * Every sink gets every chunk; the slowest sink sets the pace (a chunk is taken from
 * the filters only when every sink has room). An error in the source, a filter or any
 * sink destroys the whole graph and rejects `resume()` (a sink's as
 * ERR_STREAM_SINK_FAILED with the sink's error as `cause`; a sink closed before the end
 * fails the same way), and the error's `partialFiles` names every file a sink left
 * behind, so no partial file goes unreported.
 */
import { createReadStream, createWriteStream, existsSync, WriteStream } from 'node:fs';
import { type Duplex, type Readable, Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { describe, makeError } from '../errors.js';
import { toOptions } from '../validate.js';

/** Writes every chunk to every sink; ends them all, waits for all to finish. */
class FanOut extends Writable {
  readonly #sinks: Writable[];

  constructor(sinks: Writable[]) {
    super({ objectMode: true, highWaterMark: 1 });
    this.#sinks = sinks;
    // A sink that errors, or closes before the end without an error (a response whose
    // client went away, a destroyed socket), fails the graph: its 'drain' never comes.
    for (const [i, sink] of sinks.entries()) {
      finished(sink).catch((e: Error) => {
        this.destroy(makeError('ERR_STREAM_SINK_FAILED', `sink ${i} failed: ${e.message}`, e));
      });
    }
  }

  override _write(chunk: unknown, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    let waiting = 1;
    const done = () => {
      if (--waiting === 0) callback();
    };
    for (const sink of this.#sinks) {
      if (!sink.write(chunk)) {
        waiting++;
        sink.once('drain', done);
      }
    }
    done();
  }

  override _final(callback: (error?: Error | null) => void): void {
    for (const sink of this.#sinks) sink.end();
    Promise.all(this.#sinks.map((s) => finished(s))).then(() => callback(), callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    for (const sink of this.#sinks) if (!sink.destroyed) sink.destroy(error ?? undefined);
    callback(error);
  }
}

export class Source {
  readonly #input: Readable;
  readonly #filters: Duplex[] = [];
  readonly #sinks: Writable[] = [];
  #started = false;

  constructor(input: Readable) {
    this.#input = input;
  }

  #open(): void {
    if (this.#started) throw makeError('ERR_INVALID_ARG', 'this source has already been resumed');
  }

  /** Adds a filter (any Transform/Duplex: offthread's, zlib's, yours) after the previous one. */
  pushFilter(filter: Duplex): this {
    this.#open();
    this.#filters.push(filter);
    return this;
  }

  /** Adds sinks; every sink receives every chunk. */
  pipe(...sinks: Writable[]): this {
    this.#open();
    if (sinks.length === 0) throw makeError('ERR_INVALID_ARG', 'pipe() needs at least one sink');
    this.#sinks.push(...sinks);
    return this;
  }

  /**
   * Runs the graph; resolves when every sink has finished. On a failure it rejects with
   * the first error, which gets `partialFiles`: the paths of the file sinks
   * (`fs.WriteStream`s, `fileSink`s among them) that created or truncated their file,
   * each now holding whatever was written before the failure.
   */
  async resume(): Promise<void> {
    this.#open();
    if (this.#sinks.length === 0) throw makeError('ERR_INVALID_ARG', 'pipe() at least one sink before resume()');
    this.#started = true;
    try {
      await pipeline([this.#input, ...this.#filters, new FanOut(this.#sinks)]);
    } catch (e) {
      // A frozen error stays as it is: the failure itself must come through.
      if (typeof e === 'object' && e !== null && Object.isExtensible(e))
        (e as PartialFiles).partialFiles = await partialFiles(this.#sinks);
      throw e;
    }
  }
}

/** What a failed `resume()` adds to its error. */
export interface PartialFiles {
  /** The files the graph's file sinks left behind, each holding a partial output. */
  partialFiles: string[];
}

/** The paths of `sinks`' files that exist once each file sink has closed. */
async function partialFiles(sinks: Writable[]): Promise<string[]> {
  const paths: string[] = [];
  for (const sink of sinks) {
    if (!(sink instanceof WriteStream) || typeof sink.path !== 'string') continue;
    // A file stream destroyed while its open is under way opens, then closes, the file.
    await finished(sink).catch(() => {});
    // Its own failed open left any file there as it was (a source's failed open comes
    // here too, as the error the sinks were destroyed with: its path is another).
    const own = sink.errored as NodeJS.ErrnoException | null;
    if (own?.syscall === 'open' && own.path === sink.path) continue;
    if (existsSync(sink.path)) paths.push(sink.path);
  }
  return paths;
}

export interface FileSourceOptions {
  /** Bytes per chunk read (default 1 MiB). */
  highWaterMark?: number | undefined;
}

/** A file as a source device. */
export function fileSource(path: string, options?: FileSourceOptions): Readable {
  const { highWaterMark = 1 << 20 } = toOptions<FileSourceOptions>(options, ['highWaterMark']);
  if (!Number.isSafeInteger(highWaterMark) || highWaterMark < 1)
    throw makeError('ERR_INVALID_ARG', `highWaterMark must be a positive integer, got ${describe(highWaterMark)}`);
  return createReadStream(path, { highWaterMark });
}

/** A file as a sink device. */
export function fileSink(path: string): Writable {
  return createWriteStream(path);
}

export function source(input: Readable): Source {
  return new Source(input);
}
