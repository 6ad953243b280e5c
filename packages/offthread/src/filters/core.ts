/**
 * One stream's filter, whichever backend runs it: the native addon's pool (chunks
 * copied during the submit call, the work on the pool's threads), a worker pool's
 * offthread.wasm (browsers, Node without the addon: the filter lives in one worker and
 * every step of the stream goes there, in order), or — a pool without WASM workers —
 * offthread.wasm on the calling thread. Host-neutral; the stream classes (node.ts,
 * web.ts) sit on top.
 */
import type { NativeFilter } from '../../native/binding';
import { makeError } from '../errors.js';
import { host } from '../host.js';
import type { WorkerFilterArgs } from '../kernels/kernels.js';
import { WasmFilter } from '../kernels/wasm-filter.js';
import { defaultPool, Pool } from '../pool/pool.js';
import { type RecordBatch, RecordOutput, type RecordStats } from './records.js';
import { emitsBatches, type FilterSpec, isParallel, outputPiece } from './spec.js';

export interface FilterRunOptions {
  /** The pool whose threads run the filter (default: the default pool). Native engine only. */
  pool?: Pool | undefined;
  /**
   * Chunks of one stream in flight at once (transcoding only; sequential filters always
   * use 1). Default: the pool's thread count.
   */
  inFlight?: number | undefined;
}

export type FilterBackend = 'native' | 'workers' | 'wasm';

export interface FilterCore {
  readonly parallel: boolean;
  /** 'native': the addon's pool; 'workers': offthread.wasm on a pool worker; 'wasm': offthread.wasm on this thread. */
  readonly backend: FilterBackend;
  /** How many pushes may be pending at once. */
  readonly inFlight: number;
  /**
   * Decompressors: the most one push hands back. A push whose output is this long kept
   * input back; pushes of an empty chunk go on from there (each at most this long).
   */
  readonly piece?: number;
  /**
   * Record filters on the native pool: while at least `eager` pushes are pending (each
   * pool thread has one), chunks of at least `min` bytes are gathered (copied) into one
   * push of up to `bytes` and `chunks` chunks (see `OrderedPushes.write`).
   */
  readonly gather?: { readonly min: number; readonly bytes: number; readonly chunks: number; readonly eager: number };
  push(chunk: Uint8Array): Promise<Uint8Array>;
  /** The end of the stream: the bytes held back (a digest, a deflate trailer, a last row). */
  finish(): Promise<Uint8Array>;
  /** Frees the filter without finishing (an aborted stream). */
  close(): void;
  /**
   * Record filters: an output as what the stream emits (a RecordBatch, or the batch
   * message's bytes), its report split off; undefined when it held no rows. Called in
   * stream order.
   */
  decode?(out: Uint8Array): RecordBatch | Uint8Array | undefined;
  /** Record filters: rows, batches and skipped rows so far. */
  stats?(): RecordStats;
}

const NO_BYTES = new Uint8Array(0);

/**
 * The most a record filter gathers into one push while the pool is behind. Each push
 * costs both threads a fixed amount — a job, a piece's parser, a batch message and its
 * RecordBatch, a stream chunk — so pieces of 64 KiB spent about a third of a CSV
 * stream's CPU on it; pieces of 256 KiB cut the CPU of 100 MiB of CSV from ≈ 0.72–0.86
 * to ≈ 0.53–0.57 s (docs/streams.md, Performance).
 */
const GATHER_BYTES = 256 * 1024;
/** …and at most this many chunks: a stream of small chunks keeps pieces to go round. */
const GATHER_CHUNKS = 4;
/**
 * Only chunks this big are gathered (a file's reads: 64 KiB). Smaller ones go as they
 * are: a Node stream joins those queued while the pool is busy anyway (`_writev`, up to
 * its highWaterMark). Either way only where batches end changes, never their rows.
 */
const GATHER_MIN = 16 * 1024;
/** A push's result: its bytes, or 0 where it produced none (the addon sends no Buffer then). */
const bytesOf = (r: Uint8Array | number): Uint8Array => (typeof r === 'number' ? NO_BYTES : r);

function checkInFlight(n: number | undefined, fallback: number): number {
  if (n === undefined) return fallback;
  if (!Number.isInteger(n) || n < 1 || n > 1024)
    throw makeError('ERR_INVALID_ARG', `inFlight must be an integer from 1 to 1024, got ${String(n)}`);
  return n;
}

/** Streams opened on worker pools: each gets the next key, and the worker `key % threads`. */
let workerFilters = 0;

/**
 * A stream dropped without a finish or a close (neither ended, destroyed, cancelled nor
 * aborted) would keep its filter until the pool closes (held by a worker) or for the
 * thread's life (offthread.wasm in place): its collection frees it. The held value frees
 * the filter and must not reach the core.
 */
const abandoned = new FinalizationRegistry<() => void>((free) => free());
// The freeing closures are made here, not where the core is: a closure shares its
// function's context, and one that held the core's would keep the core alive forever.
const closeOnWorker = (pool: Pool, worker: number, key: number, release: () => void) => () => {
  pool.runOn(worker, 'workerFilter', { op: 'close', key }).then(release, release);
};
const freeInPlace = (filter: WasmFilter) => () => filter.free();

/**
 * A filter held by one worker of `pool` (a 'wasm' worker engine). Every step is queued
 * for that worker right away, so they run in call order; a push reports the open's
 * error when the open failed. Each chunk is copied once, into a buffer the job owns
 * and transfers (a caller may reuse its chunk, and a view would clone its whole buffer).
 */
function onWorker(
  pool: Pool,
  json: string,
  parallel: boolean,
  inFlight: number | undefined,
  piece: number,
): FilterCore {
  const key = workerFilters++;
  const worker = key % pool.threads;
  // The filter's state is in that worker: the pool's idle timeout must not stop it.
  const release = pool.hold();
  const step = (args: WorkerFilterArgs, transfer?: Transferable[]) =>
    pool.runOn(worker, 'workerFilter', args, transfer).then(bytesOf);
  const opened = step({ op: 'open', key, spec: json });
  opened.catch(() => {}); // reported by the first push or the finish
  /** A step's outcome, or the open's error when the open failed (then the step's is not reported). */
  const afterOpen = (queued: Promise<Uint8Array>) => {
    queued.catch(() => {});
    return opened.then(() => queued);
  };
  let closed = false;
  const core: FilterCore = {
    parallel,
    backend: 'workers',
    // Steps queue for the filter's one worker and run there in order, so even a
    // sequential filter may have a second chunk on its way: it hides the message hop.
    inFlight: parallel ? checkInFlight(inFlight, 2) : 2,
    piece,
    push: (chunk) => {
      const own = new Uint8Array(chunk);
      return afterOpen(step({ op: 'push', key, chunk: own }, [own.buffer]));
    },
    finish: () => {
      closed = true;
      abandoned.unregister(core);
      const done = afterOpen(step({ op: 'finish', key }));
      done.then(release, release);
      return done;
    },
    close: () => {
      if (closed) return;
      closed = true;
      abandoned.unregister(core);
      // A closed pool has freed its workers already.
      step({ op: 'close', key }).then(release, release);
    },
  };
  abandoned.register(core, closeOnWorker(pool, worker, key, release), core);
  return core;
}

/**
 * A filter made while a browser's offthread.wasm loads: every step waits for the filter
 * `opening` opens then, so a bad spec is reported by the first step instead of thrown.
 * One push at a time until then (each write waits for its push: the chunk is not reused
 * meanwhile). Only WHATWG streams meet one (Node has nothing to wait for), and those do
 * not show `backend`.
 */
function deferred(opening: Promise<FilterCore>, parallel: boolean, piece: number): FilterCore {
  let core: FilterCore | undefined;
  opening.then(
    (c) => {
      core = c;
    },
    () => {},
  );
  return {
    parallel,
    get backend() {
      return core?.backend ?? 'workers';
    },
    get inFlight() {
      return core?.inFlight ?? 1;
    },
    piece,
    push: (chunk) => (core ? core.push(chunk) : opening.then((c) => c.push(chunk))),
    finish: () => (core ? core.finish() : opening.then((c) => c.finish())),
    close: () => {
      opening.then(
        (c) => c.close(),
        () => {},
      );
    },
  };
}

type Job = Promise<Uint8Array | number>;
const isQueueFull = (e: unknown) => (e as { code?: unknown } | null)?.code === 'ERR_QUEUE_FULL';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A native stream's pushes in stream order when the pool's queue is full (`maxQueue`):
 * the binding takes a refused push back (the filter is as before it; `accepted` did not
 * move), so it is pushed again once there is room — waiting 1, 2, 4 … 64 ms — and the
 * pushes after it wait behind it, never overtaking. A stream waits, as a writer waits
 * for `inFlight`, instead of failing mid-stream.
 */
function waitingForRoom(filter: NativeFilter): (run: () => Job) => Job {
  /** Set while a push waits for room: later pushes go after it. */
  let tail: Promise<unknown> | undefined;
  /** Pushes until the pool takes `run` (or refuses it for another reason); the job boxed. */
  const take = async (run: () => Job): Promise<{ job: Job }> => {
    for (let ms = 1; ; ms = Math.min(2 * ms, 64)) {
      const before = filter.accepted;
      const job = run();
      if (filter.accepted !== before) return { job };
      if (
        !isQueueFull(
          await job.then(
            () => undefined,
            (e: unknown) => e,
          ),
        )
      )
        return { job };
      await sleep(ms);
    }
  };
  const behind = (taken: Promise<{ job: Job }>): Job => {
    const settled = taken.then(
      () => {},
      () => {},
    );
    tail = settled;
    settled.then(() => {
      if (tail === settled) tail = undefined;
    });
    return taken.then(({ job }) => job);
  };
  return (run) => {
    if (tail !== undefined) return behind(tail.then(() => take(run)));
    const before = filter.accepted;
    const job = run();
    if (filter.accepted !== before) return job;
    return behind(
      job.then(
        () => ({ job }),
        (e: unknown) => (isQueueFull(e) ? take(run) : { job }),
      ),
    );
  };
}

/**
 * Opens `spec` on the native pool when the addon is loaded, else on a worker of the
 * (default) pool, else on this thread's offthread.wasm. A record filter's outputs are
 * decoded (their reports split off) by the stream, in order.
 */
export function openFilter(spec: FilterSpec, options: FilterRunOptions = {}): FilterCore {
  const core = openCore(spec, options);
  if (!emitsBatches(spec) || !('report' in spec) || spec.report !== true) return core;
  const output = new RecordOutput('layout' in spec && spec.layout === 'records');
  return Object.assign(core, { decode: (out: Uint8Array) => output.decode(out), stats: () => output.stats() });
}

function openCore(spec: FilterSpec, options: FilterRunOptions): FilterCore {
  if (options.pool !== undefined && !(options.pool instanceof Pool))
    throw makeError('ERR_INVALID_ARG', 'pool must be a Pool');
  const json = JSON.stringify(spec);
  const parallel = isParallel(spec);
  const piece = outputPiece(spec);
  const h = host();
  // A browser's offthread.wasm still loading (before `ready`): the filter opens once it
  // has, as async calls wait for it (the default pool made now would be the JS tier's).
  const loading = options.pool === undefined ? h.loading() : null;
  if (loading)
    return deferred(
      loading.then(() => openCore(spec, options)),
      parallel,
      piece,
    );
  const native = h.native();
  const pool = options.pool ?? defaultPool();
  const engine = pool.engine;
  if (native && engine === 'native') {
    const filter: NativeFilter = new native.NativeFilter(json);
    // A record piece waits on this thread between its pushes (the cut, the next read,
    // the batch's decode): two per pool thread keep the threads busy meanwhile. With one
    // per thread an NDJSON stream's pieces went mostly to the thread that had just
    // finished one (Node 24, 64 KiB reads: 229 against 90–116 ms of CPU; 4 in flight:
    // 126–141 against 166–192, and 12% less wall time).
    const depth = emitsBatches(spec) ? 2 * pool.threads : pool.threads;
    const inFlight = parallel ? checkInFlight(options.inFlight, Math.max(2, depth)) : 1;
    const submit = waitingForRoom(filter);
    return {
      parallel,
      backend: 'native',
      inFlight,
      piece,
      // Pieces of whole records parse independently, so joining chunks changes only
      // how rows fall into batches.
      ...(parallel && emitsBatches(spec)
        ? { gather: { min: GATHER_MIN, bytes: GATHER_BYTES, chunks: GATHER_CHUNKS, eager: pool.threads } }
        : {}),
      // Transcoding writes into a Buffer the binding makes and hands out when the job is done.
      push: (chunk) => submit(() => pool.run('filter', { filter, chunk }, {})).then(bytesOf),
      finish: () => submit(() => pool.run('filter', { filter, chunk: null }, {})).then(bytesOf),
      close: () => {},
    };
  }
  const instance = h.wasmInstance();
  if (engine === 'wasm') {
    // A bad spec throws here, as on the other backends (the workers' copy would only
    // say so at the first push).
    if (instance) new WasmFilter(instance, json).free();
    return onWorker(pool, json, parallel, options.inFlight, piece);
  }
  if (!instance)
    throw makeError(
      'ERR_BACKEND_UNAVAILABLE',
      `filters need the native addon or offthread.wasm (${h.nativeError() ?? 'no addon'}; ${h.wasmError() ?? 'wasm not loaded'})`,
    );
  const filter = new WasmFilter(instance, json);
  checkInFlight(options.inFlight, 1);
  const settle = (f: () => Uint8Array): Promise<Uint8Array> => {
    try {
      return Promise.resolve(f());
    } catch (e) {
      return Promise.reject(e);
    }
  };
  const core: FilterCore = {
    parallel,
    backend: 'wasm',
    inFlight: 1,
    piece,
    push: (chunk) => settle(() => filter.push(chunk)),
    finish: () => {
      abandoned.unregister(core);
      return settle(() => filter.finish());
    },
    close: () => {
      abandoned.unregister(core);
      filter.free();
    },
  };
  abandoned.register(core, freeInPlace(filter), core);
  return core;
}

const NO_CHUNK = new Uint8Array(0);

/**
 * Runs pushes with up to `core.inFlight` pending and hands their outputs on in input
 * order. Both stream classes use it: `write` resolves when the caller may send the
 * next chunk (backpressure), `emit` receives outputs in order, an error stops it.
 *
 * A decompressor's push hands back at most `core.piece` bytes and keeps the rest of its
 * input: after a full piece, once `room()` says the reader wants more, an empty push
 * goes on from there — so a 4 MB chunk of gzip that holds 4 GiB comes out as 1 MiB
 * pieces at the reader's pace, never as one 4 GiB Buffer, and `write` resolves only
 * once the chunk is all out.
 */
export class OrderedPushes {
  readonly #core: FilterCore;
  readonly #emit: (out: Uint8Array | RecordBatch) => void;
  /** Resolves once the reader wants more output (undefined: it has room now). */
  readonly #room: () => Promise<void> | undefined;
  readonly #pending: Promise<Uint8Array>[] = [];
  /** Pending pushes that have settled (their output can go out without waiting). */
  readonly #settled = new WeakSet<Promise<Uint8Array>>();
  /** Bytes gathered for the next push (`core.gather`), `#heldLength` of them used. */
  #held: Uint8Array | undefined = undefined;
  #heldLength = 0;
  #heldChunks = 0;
  #failed: unknown = undefined;
  #aborted = false;

  constructor(
    core: FilterCore,
    emit: (out: Uint8Array | RecordBatch) => void,
    room: () => Promise<void> | undefined = () => undefined,
  ) {
    this.#core = core;
    this.#emit = emit;
    this.#room = room;
  }

  #push(chunk: Uint8Array): void {
    const p = this.#core.push(chunk);
    // Rejections are observed in drainOne, in order; do not report them twice.
    const settled = () => {
      this.#settled.add(p);
    };
    p.then(settled, settled);
    this.#pending.push(p);
  }

  /**
   * Starts a push; resolves once fewer than `inFlight` pushes are pending. With
   * `core.gather`, a chunk (of `min` bytes or more) written while every pool thread has a push is copied into
   * the next push instead, and the writer goes on: that push is sent once `bytes` or
   * `chunks` chunks are in, or at once when a thread has none. Pieces grow only while the pool is behind:
   * a stream the pool keeps up with has a push per chunk, as without.
   */
  async write(chunk: Uint8Array): Promise<void> {
    if (this.#failed !== undefined) throw this.#failed;
    const gather = this.#core.gather;
    // A small chunk goes alone, unless bytes are held: it must follow them.
    if (gather === undefined || (this.#held === undefined && chunk.length < gather.min)) {
      this.#push(chunk);
      while (this.#pending.length >= this.#core.inFlight) await this.#drainOne();
      return;
    }
    // Outputs already done go out now, in order, and free their slots.
    while (this.#pending.length > 0 && this.#settled.has(this.#pending[0] as Promise<Uint8Array>))
      await this.#drainOne();
    const idle = this.#pending.length < gather.eager;
    if (this.#held === undefined && (idle || chunk.length >= gather.bytes)) {
      await this.#waitForRoom();
      this.#push(chunk);
      return;
    }
    if (this.#held !== undefined && this.#heldLength + chunk.length > this.#held.length) await this.#pushHeld();
    // A copy: the writer may reuse its chunk once this resolves.
    this.#held ??= new Uint8Array(Math.max(gather.bytes, chunk.length));
    this.#held.set(chunk, this.#heldLength);
    this.#heldLength += chunk.length;
    this.#heldChunks++;
    if (idle || this.#heldLength >= gather.bytes || this.#heldChunks >= gather.chunks) await this.#pushHeld();
  }

  async #waitForRoom(): Promise<void> {
    while (this.#pending.length >= this.#core.inFlight) await this.#drainOne();
  }

  /** Sends the gathered bytes as one push (once a push may start). */
  async #pushHeld(): Promise<void> {
    await this.#waitForRoom();
    const held = this.#held;
    if (held === undefined || this.#aborted) return;
    this.#push(held.subarray(0, this.#heldLength));
    this.#held = undefined;
    this.#heldLength = 0;
    this.#heldChunks = 0;
  }

  async #drainOne(): Promise<void> {
    const head = this.#pending.shift();
    if (!head) return;
    let out: Uint8Array;
    try {
      out = await head;
    } catch (e) {
      this.#failed = e;
      throw e;
    }
    if (this.#aborted) return;
    if (out.length > 0) this.#pass(out);
    const piece = this.#core.piece ?? 0;
    // A full piece: input is left. A later push still pending goes on with it anyway.
    if (piece > 0 && out.length === piece && this.#pending.length === 0) {
      await this.#room();
      if (!this.#aborted) this.#push(NO_CHUNK);
    }
  }

  /** Waits for every pending push, then finishes the filter. */
  async end(): Promise<void> {
    if (this.#held !== undefined) await this.#pushHeld();
    while (this.#pending.length > 0) await this.#drainOne();
    if (this.#aborted) return;
    const last = await this.#core.finish();
    if (last.length > 0) this.#pass(last);
  }

  /** Emits an output (a record filter's decoded: its batch, if it has rows). */
  #pass(out: Uint8Array): void {
    const decode = this.#core.decode;
    if (decode === undefined) {
      this.#emit(out);
      return;
    }
    let value: RecordBatch | Uint8Array | undefined;
    try {
      value = decode(out);
    } catch (e) {
      this.#failed = e;
      throw e;
    }
    if (value !== undefined) this.#emit(value);
  }

  abort(): void {
    this.#aborted = true;
    this.#pending.length = 0;
    this.#held = undefined;
    this.#core.close();
  }
}
