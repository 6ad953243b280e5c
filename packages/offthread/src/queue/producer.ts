/**
 * The producer side of offthread/queue: the same calls as the local API (π, MD5, QR),
 * each one or more BullMQ jobs on Redis, run by `offthread worker` processes anywhere.
 * Results equal the local calls'; arguments are checked here exactly as locally, so a
 * bad call never reaches Redis.
 */
import { randomUUID } from 'node:crypto';
import { type JobsOptions, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, makeError } from '../errors.js';
import type { PiResult } from '../kernels/pi.js';
import type { QrOptions } from '../kernels/qr.js';
import { checkRunOptions, raceAbort } from '../pool/call.js';
import { MAX_SAMPLES, toCount, toOptions, toSeed } from '../validate.js';
import {
  blobKey,
  type ConnectionChoice,
  cancelChannel,
  Reachability,
  type RedisConnection,
  redisOptions,
  redisTimeoutOf,
} from './connection.js';
import { EventStream, type StreamEvent } from './events.js';
import {
  decodeValue,
  encodeValue,
  errorOfTaskReason,
  guestJobName,
  hashOf,
  MODULE_NAME,
  moduleFile,
  readModule,
  taskJobName,
} from './task-wire.js';
import {
  type AnyFunction,
  type QueueTaskCallOptions,
  type QueueTaskModule,
  type QueueTasksOptions,
  type TaskIdentity,
  taskIdentity,
  taskModule,
} from './tasks.js';
import { checkMd5Args, checkQrArgs } from './validate.js';
import {
  decode,
  encode,
  errorFromReason,
  fromBase64,
  getBlob,
  INLINE_MAX,
  isBase64,
  type JobData,
  type JobName,
  type JobReturn,
  toBase64,
} from './wire.js';

export interface QueueClientOptions extends ConnectionChoice {
  /** BullMQ queue name (default 'offthread'); workers must use the same. */
  name?: string;
  /** BullMQ key prefix (default 'bull'). */
  prefix?: string;
  /** Attempts per job before it fails (default 3): a lost worker's job runs again elsewhere. */
  attempts?: number;
  /** π calls above this many samples split into jump-ahead chunks, one job each (default 2^28). */
  piChunkSamples?: number;
  /** Lifetime of payload blobs nobody collected (a producer that died), ms (default 24 h). */
  blobTtlMs?: number;
}

/** Options of every queued call. */
export interface QueueCallOptions {
  signal?: AbortSignal;
  /** ms until the call rejects with ERR_TIMEOUT; workers stop the kernel at the same deadline. */
  timeout?: number;
  /** Fraction done, 0…1 (π: chunks finished; MD5 loops: rounds checkpointed). */
  onProgress?: (fraction: number) => void;
}

export interface QueuePiOptions extends QueueCallOptions {
  seed?: number | bigint;
  /** Number of jobs to split into (default: samples / piChunkSamples, rounded up). */
  chunks?: number;
}

/** π over the queue: the local result's fields, `variant` 'queue'. */
export interface QueuePiResult extends Omit<PiResult, 'variant'> {
  variant: 'queue';
  /** Jobs the call was split into. */
  jobs: number;
}

export interface QueueCounts {
  waiting: number;
  active: number;
  delayed: number;
  completed: number;
  failed: number;
}

const CALL_KEYS = ['signal', 'timeout', 'onProgress'] as const;
const SWEEP_MS = 1000;
const SWEEP_BATCH = 5000;
/**
 * A pending job's own state is read after 30 s, then 60, 120 … 480 s: a net under the event
 * stream for losses nothing detected. Not sooner: jobs queued behind busy workers wait that
 * long, and reading each of them every second cost the producer more than the jobs did.
 */
const RECHECK_FIRST_MS = 30_000;
const RECHECK_MAX_MS = 480_000;
/** Jobs per addBulk pipeline: one round trip per tick of calls, in pieces Redis digests quickly. */
const BULK_MAX = 1000;
const MAX_CHUNKS = 4096;

interface Pending {
  /** When the job's own hash is next read if no event came (ms, performance.now). */
  check: number;
  /** The gap before the following read (doubles up to RECHECK_MAX_MS). */
  gap: number;
  /** Redis has the job (before that, a missing hash means "not added yet", not "expired"). */
  added: boolean;
  resolve: (ret: JobReturn) => void;
  reject: (err: unknown) => void;
  /** The progress entry's data as BullMQ wrote it (JSON). */
  onProgress: ((data: string) => void) | undefined;
  /** What the call rejects with for a job's `failedReason`. */
  failure: (reason: string) => unknown;
}

/** One job of a call: its BullMQ name, its data beyond the payload, how its progress and failure read. */
interface JobSpec {
  name: string;
  data?: Pick<JobData, 'h' | 'mv'>;
  onProgress?: ((data: string) => void) | undefined;
  failure?: (reason: string) => unknown;
}

/** A job waiting for this tick's addBulk. */
interface Add {
  name: string;
  data: JobData;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function checkCall(opts: Partial<QueueCallOptions>): QueueCallOptions {
  const { signal, timeout } = checkRunOptions(opts); // the pool's one check of { signal, timeout }
  const { onProgress } = opts;
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw makeError('ERR_INVALID_ARG', 'options.onProgress must be a function');
  }
  return { ...(signal ? { signal } : {}), ...(timeout ? { timeout } : {}), ...(onProgress ? { onProgress } : {}) };
}

/** A guest's interfaces on the queue (`queue.guests(file)`). */
export interface QueueGuest {
  /** `fn` of interface `iface` with an encoded message, on a worker; the encoded result. */
  call(
    iface: string,
    fn: string,
    input?: Uint8Array | null,
    options?: Pick<QueueCallOptions, 'signal' | 'timeout'>,
  ): Promise<Uint8Array>;
}

/** A kernel's job: its progress entries are fractions done. */
function kernelJob(name: JobName, call: QueueCallOptions): JobSpec {
  const { onProgress } = call;
  return {
    name,
    onProgress:
      onProgress &&
      ((data) => {
        const done = Number(data);
        if (Number.isFinite(done)) onProgress(done);
      }),
  };
}

function positiveInt(value: unknown, name: string, fallback: number, max = 2 ** 53): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw makeError('ERR_INVALID_ARG', `${name} must be an integer from 1 to ${max}, got ${describe(value)}`);
  }
  return value;
}

export class QueueClient {
  readonly name: string;
  readonly prefix: string;
  readonly #queue: Queue;
  readonly #events: EventStream;
  readonly #blobs: Redis;
  /** Whether Redis answers (seen on #blobs): bounds every wait for it. */
  readonly #reach: Reachability;
  readonly #jobOpts: JobsOptions;
  readonly #piChunk: number;
  readonly #blobTtl: number;
  readonly #pending = new Map<string, Pending>();
  /** Jobs of this tick, added together by one addBulk (one pipeline, one round trip). */
  #batch = new Map<string, Add>();
  #flushQueued = false;
  readonly #ready: Promise<unknown>;
  #closed = false;
  readonly #sweeper: ReturnType<typeof setInterval>;
  #sweeping = false;
  /** Events were lost (trimmed unread, or a connection dropped): every pending job is read once. */
  #suspect = false;

  constructor(options: QueueClientOptions) {
    const opts = toOptions<QueueClientOptions>(options ?? {}, [
      'url',
      'connection',
      'name',
      'prefix',
      'attempts',
      'piChunkSamples',
      'blobTtlMs',
      'redisTimeout',
    ]);
    const connection: RedisConnection = redisOptions(opts);
    const redisTimeout = redisTimeoutOf(opts.redisTimeout);
    if (opts.name !== undefined && (typeof opts.name !== 'string' || !/^[\w.-]{1,100}$/.test(opts.name))) {
      throw makeError('ERR_INVALID_ARG', `name must be 1-100 characters of [A-Za-z0-9_.-], got ${describe(opts.name)}`);
    }
    if (opts.prefix !== undefined && (typeof opts.prefix !== 'string' || opts.prefix.length === 0)) {
      throw makeError('ERR_INVALID_ARG', `prefix must be a non-empty string, got ${describe(opts.prefix)}`);
    }
    this.name = opts.name ?? 'offthread';
    this.prefix = opts.prefix ?? 'bull';
    this.#jobOpts = {
      attempts: positiveInt(opts.attempts, 'attempts', 3, 100),
      backoff: { type: 'fixed', delay: 100 },
      // Kept a while so a producer that missed the event can still read the outcome: by
      // age only. A count bound lost results: with more jobs finishing than it kept before
      // the producer read their events (16,000 tiny jobs, 4 workers), the oldest outcomes
      // were deleted unread and their calls never settled.
      removeOnComplete: { age: 600 },
      removeOnFail: { age: 3600 },
    };
    this.#piChunk = positiveInt(opts.piChunkSamples, 'piChunkSamples', 2 ** 28);
    this.#blobTtl = positiveInt(opts.blobTtlMs, 'blobTtlMs', 24 * 3600_000);
    this.#queue = new Queue(this.name, { connection, prefix: this.prefix });
    this.#blobs = new Redis({ ...connection, lazyConnect: false });
    // Errors surface through the calls (ioredis reconnects by itself); unhandled 'error'
    // events would crash the process during a Redis restart. A dropped connection may have
    // cost events: the next sweep reads every pending job.
    this.#queue.on('error', () => {});
    this.#blobs.on('error', () => {
      this.#suspect = true;
    });
    this.#reach = new Reachability(this.#blobs, redisTimeout);
    // One reader for every call, dispatching by job id (no per-job subscription). It knows
    // when BullMQ trimmed events it had not read (a burst of more than ~10,000): then the
    // sweep reads the outcomes from the jobs themselves.
    const reader = new Redis({ ...connection, lazyConnect: false });
    reader.on('error', () => {
      this.#suspect = true;
    });
    this.#events = new EventStream(
      reader,
      `${this.prefix}:${this.name}:events`,
      (event) => this.#onEvent(event),
      () => {
        this.#suspect = true;
        void this.#sweep();
      },
      // What settles or informs a call; BullMQ's other entries (added, waiting, active,
      // drained …: three a job) are skipped inside Redis.
      ['completed', 'failed', 'progress'],
    );
    this.#ready = Promise.all([this.#events.start(), this.#queue.waitUntilReady()]);
    this.#ready.catch(() => {});
    // The sweep also reads each pending job's own hash now and again (30 s, 60 s … 8 min):
    // a net for losses nothing detected.
    this.#sweeper = setInterval(() => void this.#sweep(), SWEEP_MS);
    this.#sweeper.unref();
  }

  /** One entry of the event stream: settles or reports progress to the call waiting on it. */
  #onEvent(event: StreamEvent): void {
    const { jobId } = event;
    if (jobId === undefined) return;
    switch (event.event) {
      case 'completed': {
        let ret: JobReturn | undefined;
        try {
          ret = JSON.parse(event.returnvalue ?? 'null') as JobReturn;
        } catch {}
        this.#settle(jobId, (p) =>
          ret && typeof ret === 'object'
            ? p.resolve(ret)
            : p.reject(makeError('ERR_QUEUE_PAYLOAD', `job ${jobId} completed with a malformed result`)),
        );
        break;
      }
      case 'failed':
        this.#settle(jobId, (p) => p.reject(p.failure(event.failedReason ?? 'unknown')));
        break;
      case 'progress': {
        const p = this.#pending.get(jobId);
        if (p?.onProgress && event.data !== undefined) p.onProgress(event.data);
        break;
      }
    }
  }

  async #sweep(): Promise<void> {
    if (this.#sweeping || this.#pending.size === 0) return;
    this.#sweeping = true;
    try {
      const now = performance.now();
      if (this.#suspect) {
        // Events were lost: every pending job is due now (SWEEP_BATCH per sweep, in order).
        this.#suspect = false;
        for (const p of this.#pending.values()) p.check = 0;
      }
      const ids: string[] = [];
      for (const [id, p] of this.#pending) {
        if (ids.length >= SWEEP_BATCH) break;
        if (!p.added || p.check > now) continue;
        ids.push(id);
        p.check = now + p.gap;
        p.gap = Math.min(2 * p.gap, RECHECK_MAX_MS);
      }
      if (ids.length === 0) return;
      const pipe = this.#blobs.pipeline();
      for (const id of ids)
        pipe.hmget(`${this.prefix}:${this.name}:${id}`, 'finishedOn', 'returnvalue', 'failedReason', 'name');
      const replies = (await pipe.exec()) ?? [];
      replies.forEach(([err, fields], i) => {
        const id = ids[i] as string;
        if (err || !Array.isArray(fields)) return;
        const [finishedOn, returnvalue, failedReason, jobName] = fields as (string | null)[];
        if (jobName === null) {
          // Added, and now gone: its outcome outlived the retention unread. Say so, never hang.
          this.#settle(id, (p) =>
            p.reject(errorFromReason('its outcome expired from Redis before this producer read it')),
          );
          return;
        }
        let ret: JobReturn | null = null;
        try {
          ret = returnvalue ? (JSON.parse(returnvalue) as JobReturn | null) : null;
        } catch {
          ret = null;
        }
        if (ret && (ret.b !== undefined || ret.k !== undefined)) this.#settle(id, (p) => p.resolve(ret));
        else if (finishedOn) this.#settle(id, (p) => p.reject(p.failure(failedReason ?? 'unknown')));
      });
    } catch {
      // Redis away: read everything once it is back.
      this.#suspect = true;
    } finally {
      this.#sweeping = false;
    }
  }

  #settle(jobId: string, fn: (p: Pending) => void): void {
    const p = this.#pending.get(jobId);
    if (!p) return;
    this.#pending.delete(jobId);
    fn(p);
  }

  /** Queues the job for this tick's addBulk; resolves once Redis has it. */
  #add(id: string, name: string, data: JobData): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#batch.set(id, { name, data, resolve, reject });
      if (this.#flushQueued) return;
      this.#flushQueued = true;
      // setImmediate, not a microtask: every call made in this tick (and the awaits in
      // between) is in the batch by then.
      setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    this.#flushQueued = false;
    const adds = [...this.#batch];
    this.#batch = new Map();
    for (let i = 0; i < adds.length; i += BULK_MAX) {
      const part = adds.slice(i, i + BULK_MAX);
      const jobs = part.map(([id, a]) => ({ name: a.name, data: a.data, opts: { ...this.#jobOpts, jobId: id } }));
      this.#queue.addBulk(jobs).then(
        () => {
          for (const [, a] of part) a.resolve();
        },
        (err: unknown) => {
          for (const [, a] of part) a.reject(err);
        },
      );
    }
  }

  /** Adds one job and resolves with its result message. */
  async #run(job: JobSpec, payload: Uint8Array, call: Omit<QueueCallOptions, 'onProgress'>): Promise<Uint8Array> {
    if (this.#closed) throw makeError('ERR_QUEUE_CLOSED', 'the queue client is closed');
    if (call.signal?.aborted) throw makeError('ERR_ABORTED', 'The operation was aborted', call.signal.reason);
    // Redis away for the whole wait already: say so now instead of waiting again.
    if (this.#reach.unavailable) throw this.#reach.error();
    const id = randomUUID();
    const data: JobData = { v: 1, ...job.data };
    if (call.timeout !== undefined) data.dl = Date.now() + call.timeout;
    const inKey = blobKey(this.prefix, this.name, `${id}:in`);
    const outKey = blobKey(this.prefix, this.name, `${id}:out`);
    const blobs: string[] = [];
    let gaveUp = false;
    const done = new Promise<JobReturn>((resolve, reject) => {
      const p = { check: performance.now() + RECHECK_FIRST_MS, gap: RECHECK_FIRST_MS };
      const failure = job.failure ?? errorFromReason;
      this.#pending.set(id, { ...p, added: false, resolve, reject, onProgress: job.onProgress, failure });
    });
    const accept = async () => {
      if (payload.byteLength <= INLINE_MAX) data.b = toBase64(payload);
      else {
        blobs.push(inKey);
        await this.#blobs.set(
          inKey,
          Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength),
          'PX',
          this.#blobTtl,
        );
        data.k = inKey;
      }
      await this.#ready;
      // The caller may have given up while the blob was written: then the job never exists.
      if (gaveUp) throw makeError('ERR_ABORTED', 'The operation was aborted');
      await this.#add(id, job.name, data);
    };
    const work = (async () => {
      // Until Redis has the job, a Redis that stays away fails the call (ERR_QUEUE_UNAVAILABLE):
      // ioredis would hold the commands for ever. Once added, the job is Redis's: the call
      // waits for its outcome (bounded by the caller's timeout or signal).
      await this.#reach.bound(accept());
      const pending = this.#pending.get(id);
      if (pending) pending.added = true;
      const ret = await done;
      // The result as Redis kept it: inline base64, or this job's own result blob (never
      // another key: the producer reads and then deletes it).
      if (typeof ret.b === 'string' && ret.k === undefined && isBase64(ret.b)) return fromBase64(ret.b);
      if (ret.k !== outKey || ret.b !== undefined) {
        throw makeError(
          'ERR_QUEUE_PAYLOAD',
          `job ${id} returned a malformed result (not its own inline or blob result)`,
        );
      }
      blobs.push(outKey);
      const bytes = await getBlob(this.#blobs, outKey, `the result of job ${id}`);
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    })();
    try {
      return await raceAbort(work, call);
    } catch (err) {
      gaveUp = true;
      work.catch(() => {});
      if (this.#pending.delete(id)) {
        const queued = this.#batch.get(id);
        if (queued) {
          // Still in this tick's batch: it never reaches Redis.
          this.#batch.delete(id);
          queued.reject(err);
        } else {
          // Gave up after the add (or while it waited for Redis): drop the job if it has not
          // started, stop it if it has. (The remove follows the addBulk on the same
          // connection, so it finds the job; while Redis is away both wait their turn.)
          this.#queue.remove(id).catch(() => {});
          this.#blobs.publish(cancelChannel(this.prefix, this.name), id).catch(() => {});
        }
      }
      throw err;
    } finally {
      if (blobs.length > 0) this.#blobs.del(...blobs).catch(() => {});
    }
  }

  readonly pi = {
    /** π over the queue: `inside` equals the local `pi.estimate(samples, { seed })`. */
    estimate: async (samples: number | bigint, options?: QueuePiOptions): Promise<QueuePiResult> => {
      const opts = toOptions<QueuePiOptions>(options, ['seed', 'chunks', ...CALL_KEYS]);
      const n = toCount(samples, 'samples', MAX_SAMPLES, 'ERR_INVALID_SAMPLES');
      const seed = toSeed(opts.seed, 1);
      const call = checkCall(opts);
      if (n === 0) return { estimate: Number.NaN, inside: 0, samples: 0, seed, variant: 'queue', jobs: 0 };
      const chunks = positiveInt(
        opts.chunks,
        'chunks',
        Math.min(MAX_CHUNKS, Math.max(1, Math.ceil(n / this.#piChunk))),
        MAX_CHUNKS,
      );
      const size = Math.max(1, Math.ceil(n / chunks));
      const ranges: { first: number; count: number }[] = [];
      for (let first = 0; first < n; first += size) ranges.push({ first, count: Math.min(size, n - first) });
      // One signal for the siblings: the first failure stops the rest (one job needs none).
      const siblings = ranges.length > 1 ? new AbortController() : undefined;
      const signal = !siblings
        ? call.signal
        : call.signal
          ? AbortSignal.any([call.signal, siblings.signal])
          : siblings.signal;
      let finished = 0;
      const parts = ranges.map(async (r) => {
        const res = await this.#run({ name: 'pi' }, encode.pi({ ...r, seed }), {
          ...(signal ? { signal } : {}),
          ...(call.timeout ? { timeout: call.timeout } : {}),
        });
        finished++;
        call.onProgress?.(finished / ranges.length);
        return decode.inside(res);
      });
      let inside = 0;
      try {
        for (const c of await Promise.all(parts)) inside += c;
      } catch (err) {
        siblings?.abort(err);
        for (const p of parts) p.catch(() => {});
        throw err;
      }
      return { estimate: (4 * inside) / n, inside, samples: n, seed, variant: 'queue', jobs: ranges.length };
    },
  };

  readonly md5 = {
    /** d_N of dᵢ = hex(MD5(text ‖ dᵢ₋₁)) on a worker; long loops checkpoint (a retry resumes). */
    iterate: async (text: string, rounds: number, options?: QueueCallOptions & { start?: string }): Promise<string> => {
      const opts = toOptions<QueueCallOptions & { start?: string }>(options, ['start', ...CALL_KEYS]);
      const args = checkMd5Args(text, rounds, opts.start);
      const call = checkCall(opts);
      return decode.digest(await this.#run(kernelJob('md5.iterate', call), encode.md5Iterate(args), call));
    },
    /** MD5 of a string (UTF-8) or bytes, lowercase hex, computed by a worker. */
    hex: async (data: string | Uint8Array, options?: QueueCallOptions): Promise<string> => {
      const call = checkCall(toOptions<QueueCallOptions>(options, CALL_KEYS));
      if (typeof data !== 'string' && !(data instanceof Uint8Array)) {
        throw makeError('ERR_INVALID_ARG', `data must be a string or Uint8Array, got ${describe(data)}`);
      }
      const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
      return decode.digest(await this.#run(kernelJob('md5.hex', call), encode.md5Hex(bytes), call));
    },
  };

  readonly qr = {
    /** The PNG file's bytes (a Buffer), encoded by a worker. */
    toPNG: async (text: string, options?: QrOptions & QueueCallOptions): Promise<Buffer> => {
      const opts = toOptions<QrOptions & QueueCallOptions>(options, ['size', 'ecc', 'margin', ...CALL_KEYS]);
      const args = checkQrArgs(text, opts);
      const call = checkCall(opts);
      const png = decode.bytes(await this.#run(kernelJob('qr.png', call), encode.qr(args), call));
      return Buffer.from(png.buffer, png.byteOffset, png.byteLength);
    },
  };

  /**
   * A task module's exports as queued jobs, run by `offthread worker --tasks ./work.js`
   * processes: `queue.tasks<typeof import('./work.js')>(new URL('./work.js', import.meta.url))`
   * (the file is hashed: a worker with other bytes fails the job with ERR_QUEUE_TASK_VERSION),
   * or `queue.tasks('work', { version: '1.4.0' })` (the `version` the module exports).
   * Results, errors and progress arrive as a local `tasks()` call's would.
   */
  tasks<M = Record<string, AnyFunction>>(module: string | URL, options?: QueueTasksOptions): QueueTaskModule<M> {
    const identity = taskIdentity(module, options);
    return taskModule<M>(
      (fn, args, call) => this.#runTask(identity, fn, args, call),
      (call) => checkCall(call as Partial<QueueCallOptions>) as QueueTaskCallOptions,
    );
  }

  async #runTask(identity: TaskIdentity, fn: string, args: unknown[], call: QueueTaskCallOptions): Promise<unknown> {
    const name = taskJobName(identity.name, fn);
    const payload = encodeValue(args, 'args');
    const { onProgress } = call;
    const job: JobSpec = {
      name,
      data: identity.data,
      // A task's error whole (its class, code, own properties) when the worker wrote it so.
      failure: (reason) => errorOfTaskReason(reason) ?? errorFromReason(reason),
    };
    if (onProgress) {
      job.onProgress = (data) => {
        let progress: { t?: unknown } | null = null;
        try {
          progress = JSON.parse(data) as { t?: unknown } | null;
        } catch {}
        if (typeof progress?.t !== 'string' || !isBase64(progress.t)) return;
        let value: unknown;
        try {
          value = decodeValue(fromBase64(progress.t), `progress of ${name}`);
        } catch {
          return; // a progress entry no worker of ours wrote: not the caller's concern
        }
        onProgress(value);
      };
    }
    const bytes = await this.#run(job, payload, call);
    return decodeValue(bytes, `the result of ${name}`);
  }

  /**
   * A WebAssembly guest's interfaces as queued jobs, run by `offthread worker --guest
   * app.wasm` processes: `queue.guests(new URL('./app.wasm', import.meta.url)).call('words',
   * 'count', bytes)` resolves to the bytes a local `host.call('words', 'count', bytes)`
   * gives. The file is hashed: a worker with other bytes fails the job with
   * ERR_QUEUE_TASK_VERSION. `name`: the module's name on the workers (default the file's).
   */
  guests(module: string | URL, options?: { name?: string }): QueueGuest {
    const o = toOptions<{ name?: string }>(options, ['name'], 'queue.guests options');
    const file = moduleFile(module, 'queue.guests()');
    const name = o.name ?? file.name;
    if (typeof name !== 'string' || !MODULE_NAME.test(name)) {
      throw makeError(
        'ERR_INVALID_ARG',
        `a guest's name must be 1-100 characters of [A-Za-z0-9_-], got ${describe(name)} (set options.name)`,
      );
    }
    const h = hashOf(readModule(file.path));
    return {
      call: async (iface, fn, input, options) => {
        const call = checkCall(toOptions<QueueCallOptions>(options, ['signal', 'timeout']));
        const bytes = input ?? new Uint8Array(0);
        if (!(bytes instanceof Uint8Array)) {
          throw makeError('ERR_INVALID_ARG', `input must be a Uint8Array (an encoded message), got ${describe(input)}`);
        }
        const out = await this.#run({ name: guestJobName(name, iface, fn), data: { h } }, bytes, call);
        // A Buffer, as a local host.call resolves to.
        return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
      },
    };
  }

  /** Job counts of the queue (for /metrics and dashboards). */
  async counts(): Promise<QueueCounts> {
    const c = await this.#reach.bound(this.#queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed'));
    return {
      waiting: c.waiting ?? 0,
      active: c.active ?? 0,
      delayed: c.delayed ?? 0,
      completed: c.completed ?? 0,
      failed: c.failed ?? 0,
    };
  }

  /** Calls still waiting for a result. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Resolves once Redis answered (the event stream is being read). */
  async ready(): Promise<void> {
    await this.#reach.bound(this.#ready);
  }

  /** Closes the connections; calls still waiting reject with ERR_QUEUE_CLOSED (their jobs still run). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#sweeper);
    // Jobs of this tick not yet sent are never added.
    const closed = makeError('ERR_QUEUE_CLOSED', 'the queue client was closed before the job was added');
    for (const [, a] of this.#batch) a.reject(closed);
    this.#batch = new Map();
    for (const [id, p] of this.#pending) {
      this.#pending.delete(id);
      p.reject(makeError('ERR_QUEUE_CLOSED', 'the queue client was closed before the job finished'));
    }
    // BullMQ's close() sends QUIT, which ioredis holds (behind any unsent command) until
    // Redis is back: with Redis away now the connection is dropped (a forced close), and
    // one that goes away during the close is dropped after the wait.
    const queueClosed = this.#reach.up
      ? this.#reach.bound(this.#queue.close()).catch(() => {
          this.#queue.disconnect().catch(() => {});
        })
      : this.#queue.getBackend().close(true);
    await Promise.allSettled([this.#events.close(), queueClosed]);
    this.#reach.stop();
    this.#blobs.disconnect();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** A producer: `queue.pi.estimate(…)`, `queue.md5.iterate(…)`, `queue.qr.toPNG(…)` over BullMQ. */
export function createQueue(options: QueueClientOptions): QueueClient {
  return new QueueClient(options);
}
