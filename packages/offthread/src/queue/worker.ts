/**
 * The worker side of offthread/queue: a BullMQ Worker whose processor decodes the job's
 * schema message and runs the kernel on an offthread Pool. The kernels never run on the
 * event loop, so BullMQ's lock renewals keep their timing with every core busy: no job
 * is marked stalled because its worker was computing (BullMQ's reason for sandboxed
 * processors, which pay a child process per worker and JSON for every job instead).
 */
import { UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, makeError } from '../errors.js';
import { host } from '../host.js';
import { hex } from '../kernels/md5.js';
import { piChunks } from '../kernels/pi.js';
import { raceAbort } from '../pool/call.js';
import { Pool, runAll } from '../pool/pool.js';
import { MAX_SAMPLES, toOptions } from '../validate.js';
import { blobKey, type ConnectionChoice, cancelChannel, redisOptions } from './connection.js';
import {
  decode,
  encode,
  fromBase64,
  INLINE_MAX,
  JOB_NAMES,
  type JobData,
  type JobName,
  type JobReturn,
  reasonOf,
  toBase64,
} from './wire.js';

export interface QueueWorkerOptions extends ConnectionChoice {
  /** BullMQ queue name (default 'offthread'). */
  name?: string;
  /** BullMQ key prefix (default 'bull'). */
  prefix?: string;
  /** Jobs in flight at once (default: the pool's threads). */
  concurrency?: number;
  /** Pool threads (default: available parallelism). Ignored when `pool` is given. */
  threads?: number;
  /** Pool threads' nice value 0…19 (the Pool's default 10). Ignored when `pool` is given. */
  nice?: number;
  /** Run on this pool instead of a new one (the worker does not close it). */
  pool?: Pool;
  /** BullMQ lock duration, ms (default 30,000): a killed worker's job runs again after it. */
  lockDuration?: number;
  /** How often stalled jobs are looked for, ms (default 30,000). */
  stalledInterval?: number;
  /** Times a job may be found stalled before it fails (default 2). */
  maxStalledCount?: number;
  /** Rounds per MD5 checkpoint (default 2^20): a retried job resumes from its last one. */
  md5Segment?: number;
}

export interface QueueWorkerStats {
  completed: number;
  failed: number;
  /** Jobs running now. */
  active: number;
}

/** Codes that depend on the worker, not the job: another attempt (elsewhere) may succeed. */
const RETRIABLE = new Set(['ERR_QUEUE_FULL', 'ERR_POOL_CLOSED', 'ERR_BACKEND_UNAVAILABLE', 'ERR_POOL_SPAWN']);

const RESULT_TTL_MS = 24 * 3600_000;

function intOption(value: unknown, name: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw makeError('ERR_INVALID_ARG', `${name} must be an integer from ${min} to ${max}, got ${describe(value)}`);
  }
  return value;
}

export class QueueWorker {
  readonly pool: Pool;
  readonly worker: Worker;
  readonly #ownPool: boolean;
  readonly #blobs: Redis;
  /** Subscribed to the cancel channel: a caller's abort stops its running job here. */
  readonly #cancels: Redis;
  readonly #prefix: string;
  readonly #name: string;
  readonly #segment: number;
  readonly #stats: QueueWorkerStats = { completed: 0, failed: 0, active: 0 };
  readonly #subscribed: Promise<unknown>;
  #closing: Promise<void> | undefined;

  constructor(options: QueueWorkerOptions) {
    const opts = toOptions<QueueWorkerOptions>(options ?? {}, [
      'url',
      'connection',
      'name',
      'prefix',
      'concurrency',
      'threads',
      'nice',
      'pool',
      'lockDuration',
      'stalledInterval',
      'maxStalledCount',
      'md5Segment',
    ]);
    const connection = redisOptions(opts);
    if (opts.pool !== undefined && !(opts.pool instanceof Pool)) {
      throw makeError('ERR_INVALID_ARG', 'options.pool must be an offthread Pool');
    }
    this.#ownPool = opts.pool === undefined;
    this.pool =
      opts.pool ??
      new Pool({
        ...(opts.threads === undefined ? {} : { threads: opts.threads }),
        ...(opts.nice === undefined ? {} : { nice: opts.nice }),
      });
    const concurrency = intOption(opts.concurrency, 'concurrency', 1, 10_000) ?? this.pool.threads;
    const lockDuration = intOption(opts.lockDuration, 'lockDuration', 100, 2 ** 31 - 1);
    const stalledInterval = intOption(opts.stalledInterval, 'stalledInterval', 100, 2 ** 31 - 1);
    const maxStalledCount = intOption(opts.maxStalledCount, 'maxStalledCount', 0, 1000) ?? 2;
    this.#segment = intOption(opts.md5Segment, 'md5Segment', 1, 1e9) ?? 2 ** 20;
    this.#name = opts.name ?? 'offthread';
    this.#prefix = opts.prefix ?? 'bull';
    this.#blobs = new Redis(connection);
    this.#blobs.on('error', () => {}); // ioredis reconnects; jobs retry
    this.worker = new Worker(this.#name, (job, _token, signal) => this.#process(job, signal), {
      connection,
      prefix: this.#prefix,
      concurrency,
      maxStalledCount,
      ...(lockDuration ? { lockDuration } : {}),
      ...(stalledInterval ? { stalledInterval } : {}),
    });
    this.#cancels = new Redis(connection);
    this.#cancels.on('error', () => {});
    this.#cancels.on('message', (_channel: string, jobId: string) => {
      this.worker.cancelJob(jobId, 'cancelled by its caller');
    });
    this.#subscribed = this.#cancels.subscribe(cancelChannel(this.#prefix, this.#name));
    this.#subscribed.catch(() => {});
    this.worker.on('error', () => {}); // connection errors during a Redis restart; it reconnects
    this.worker.on('completed', () => {
      this.#stats.completed++;
    });
    this.worker.on('failed', () => {
      this.#stats.failed++;
    });
  }

  stats(): QueueWorkerStats {
    return { ...this.#stats };
  }

  /** Resolves once the worker is connected and taking jobs. */
  async ready(): Promise<void> {
    await Promise.all([this.worker.waitUntilReady(), this.#subscribed]);
  }

  async #payload(data: JobData): Promise<Uint8Array> {
    if (typeof data.b === 'string') return fromBase64(data.b);
    if (typeof data.k === 'string') {
      const b = await this.#blobs.getBuffer(data.k);
      if (b) return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
      throw makeError('ERR_QUEUE_PAYLOAD', `the job's payload blob ${data.k} is gone (expired or deleted)`);
    }
    throw makeError('ERR_QUEUE_PAYLOAD', 'the job carries no payload');
  }

  async #process(
    job: {
      id?: string | undefined;
      name: string;
      data: unknown;
      updateData(d: unknown): Promise<unknown>;
      updateProgress(p: number): Promise<unknown>;
    },
    signal: AbortSignal | undefined,
  ): Promise<JobReturn> {
    this.#stats.active++;
    try {
      const data = job.data as JobData;
      if (!JOB_NAMES.includes(job.name as JobName) || data === null || typeof data !== 'object' || data.v !== 1) {
        throw makeError('ERR_QUEUE_PAYLOAD', `not an offthread job: name ${describe(job.name)}`);
      }
      let timeout: number | undefined;
      if (typeof data.dl === 'number') {
        timeout = data.dl - Date.now();
        if (timeout <= 0) throw makeError('ERR_TIMEOUT', 'the caller’s deadline passed before the job started');
      }
      const call = { ...(signal ? { signal } : {}), ...(timeout ? { timeout } : {}) };
      const result = await this.#run(job.name as JobName, await this.#payload(data), call, job, data);
      if (result.byteLength <= INLINE_MAX) return { b: toBase64(result) };
      const key = blobKey(this.#prefix, this.#name, `${job.id}:out`);
      await this.#blobs.set(key, Buffer.from(result.buffer, result.byteOffset, result.byteLength), 'PX', RESULT_TTL_MS);
      return { k: key };
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      // Bad arguments, a kernel's own error, a passed deadline: the same on any worker, so
      // the job fails once (a poison job never loops through retries).
      if (typeof code === 'string' && !RETRIABLE.has(code)) throw new UnrecoverableError(reasonOf(err));
      throw new Error(reasonOf(err));
    } finally {
      this.#stats.active--;
    }
  }

  async #run(
    name: JobName,
    bytes: Uint8Array,
    call: { signal?: AbortSignal; timeout?: number },
    job: { updateData(d: unknown): Promise<unknown>; updateProgress(p: number): Promise<unknown> },
    data: JobData,
  ): Promise<Uint8Array> {
    const pool = this.pool;
    switch (name) {
      case 'pi': {
        const a = decode.pi(bytes);
        if (!(a.first >= 0 && a.count >= 0 && a.first + a.count <= MAX_SAMPLES && Number.isSafeInteger(a.seed))) {
          throw makeError('ERR_QUEUE_PAYLOAD', 'pi arguments out of range');
        }
        return encode.inside(await this.#pi(pool, a, call));
      }
      case 'md5.iterate': {
        const a = decode.md5Iterate(bytes);
        let [done, digest] = Array.isArray(data.ck) ? data.ck : [0, a.start];
        while (done < a.rounds) {
          const step = Math.min(this.#segment, a.rounds - done);
          digest = await pool.run('md5Iterate', { text: a.text, rounds: step, start: digest }, call);
          done += step;
          if (done < a.rounds) {
            // A checkpoint: if this worker dies now, the retry starts here.
            await job.updateData({ ...data, ck: [done, digest] });
            await job.updateProgress(done / a.rounds);
          }
        }
        return encode.digest(digest);
      }
      case 'md5.hex':
        // One digest: ~1.5 ms per MB on the calling thread, less than a pool round trip's bookkeeping.
        return encode.digest(hex(decode.md5Hex(bytes)));
      case 'qr.png': {
        const a = decode.qr(bytes);
        const png = await pool.run('qr', { ...a, format: 'png' }, call);
        return encode.bytes(png as Uint8Array);
      }
    }
  }

  /**
   * One jump-ahead range of π. The native pool starts whole calls only (first 0); a chunk
   * further on runs as the addon's range kernel on libuv's threads (the CLI sizes that
   * pool to --threads), still off the event loop.
   */
  async #pi(pool: Pool, a: { first: number; count: number; seed: number }, call: object): Promise<number> {
    if (a.count === 0) return 0;
    if (pool.engine === 'native') {
      if (a.first === 0) return pool.run('pi', { first: 0, count: a.count, seed: a.seed }, call);
      const native = host().native();
      if (!native) throw makeError('ERR_BACKEND_UNAVAILABLE', 'the native addon is gone');
      return raceAbort(native.piCountRangeUv(a.first, a.count, a.seed), call);
    }
    const parts = piChunks(a.count, pool.threads).map((c) => ({
      first: a.first + c.first,
      count: c.count,
      seed: a.seed,
    }));
    return (await runAll(pool, 'pi', parts, call)).reduce((x, y) => x + y, 0);
  }

  /** Stops taking jobs, lets running ones finish, closes the connections (and its own pool). */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.worker.close();
      this.#blobs.disconnect();
      this.#cancels.disconnect();
      if (this.#ownPool) await this.pool.close();
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** A worker: takes offthread jobs from the queue and runs them on an offthread Pool. */
export function createWorker(options: QueueWorkerOptions): QueueWorker {
  return new QueueWorker(options);
}
