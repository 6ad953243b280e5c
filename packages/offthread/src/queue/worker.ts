/**
 * The worker side of offthread/queue: a BullMQ Worker whose processor decodes the job's
 * schema message and runs the kernel on an offthread Pool. The kernels never run on the
 * event loop, so BullMQ's lock renewals keep their timing with every core busy: no job
 * is marked stalled because its worker was computing (BullMQ's reason for sandboxed
 * processors, which pay a child process per worker and JSON for every job instead).
 */
import { type JobJson, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, errorRegistry, makeError } from '../errors.js';
import { host } from '../host.js';
import { hex } from '../kernels/md5.js';
import { piChunks } from '../kernels/pi-variants.js';
import { raceAbort } from '../pool/call.js';
import { Pool, runAll } from '../pool/pool.js';
import { MAX_SAMPLES, toOptions } from '../validate.js';
import {
  blobKey,
  type ConnectionChoice,
  cancelChannel,
  Reachability,
  redisOptions,
  redisTimeoutOf,
} from './connection.js';
import { checkMd5Args, checkQrArgs } from './validate.js';
import {
  decode,
  encode,
  fromBase64,
  getBlob,
  INLINE_MAX,
  isBase64,
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
const RETRIABLE = new Set([
  'ERR_QUEUE_FULL',
  'ERR_POOL_CLOSED',
  'ERR_BACKEND_UNAVAILABLE',
  'ERR_POOL_SPAWN',
  'ERR_QUEUE_UNAVAILABLE',
]);

/** The fields of a job's data (wire version 1); anything else is not our producer's. */
const DATA_KEYS = new Set(['v', 'b', 'k', 'dl', 'ck']);
/** The longest timeout a producer takes (a timer's range), ms. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;
/**
 * Producers' and workers' clocks differ a little: a deadline up to this much past the
 * longest timeout is that timeout; one beyond it no producer wrote.
 */
const DEADLINE_SLACK_MS = 3_600_000;
const DIGEST = /^[0-9a-f]{32}$/;

/** A job's fields as checked by the worker: nothing read from Redis is trusted unchecked. */
interface CheckedJob {
  name: JobName;
  data: JobData;
  /** ms left until the caller's deadline (clamped to a timer's range), if it gave one. */
  timeout: number | undefined;
}

/**
 * BullMQ parses a job's data before any processor sees it; data that is not JSON threw
 * there, the job stayed active with nobody renewing its lock, was found stalled, taken
 * again, and so on for ever. Such a job now fails at once, unretried, with
 * ERR_QUEUE_PAYLOAD (BullMQ's `deferredFailure`: failed before processing).
 */
class OffthreadBullWorker extends Worker {
  protected override createJob(json: JobJson, jobId: string) {
    try {
      return super.createJob(json, jobId);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      const reason = reasonOf(makeError('ERR_QUEUE_PAYLOAD', `job ${jobId}: its data is not JSON (${why})`));
      return super.createJob({ ...json, data: 'null', deferredFailure: reason }, jobId);
    }
  }
}

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
  /** Whether Redis answers (seen on #blobs): bounds ready() and close(). */
  readonly #reach: Reachability;
  #closing: Promise<void> | undefined;
  /** Set when close() gives up on Redis: cancelled jobs are then retried elsewhere, not failed. */
  #forcing = false;

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
      'redisTimeout',
    ]);
    const connection = redisOptions(opts);
    const redisTimeout = redisTimeoutOf(opts.redisTimeout);
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
    this.#reach = new Reachability(this.#blobs, redisTimeout);
    this.worker = new OffthreadBullWorker(this.#name, (job, _token, signal) => this.#process(job, signal), {
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
  /**
   * Resolves once the worker is connected and taking jobs; rejects with
   * ERR_QUEUE_UNAVAILABLE once Redis has not answered for `redisTimeout` ms.
   */
  async ready(): Promise<void> {
    await this.#reach.bound(Promise.all([this.worker.waitUntilReady(), this.#subscribed]));
  }

  /**
   * Every field of the job as Redis gave it, checked: the name, the data's keys and wire
   * version, exactly one payload (inline base64, or this job's own blob key: never
   * another key), the deadline (a time within a timer's range), the checkpoint's shape.
   * Anything else is ERR_QUEUE_PAYLOAD: the job fails once, unretried.
   */
  #check(job: { id?: string | undefined; name: string; data: unknown }): CheckedJob {
    const bad = (why: string) => makeError('ERR_QUEUE_PAYLOAD', `job ${job.id}: ${why}`);
    if (!JOB_NAMES.includes(job.name as JobName)) throw bad(`not an offthread job: name ${describe(job.name)}`);
    const name = job.name as JobName;
    const data = job.data as JobData;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) throw bad(`its data is ${describe(data)}`);
    for (const key of Object.keys(data)) if (!DATA_KEYS.has(key)) throw bad(`unknown field ${describe(key)}`);
    if (data.v !== 1) throw bad(`wire version ${describe(data.v)}; this worker reads 1`);
    if ((data.b === undefined) === (data.k === undefined)) {
      throw bad(data.b === undefined ? 'it carries no payload' : 'it carries both an inline payload and a blob');
    }
    if (data.b !== undefined && !(typeof data.b === 'string' && isBase64(data.b))) {
      throw bad('its inline payload is not base64');
    }
    if (data.k !== undefined && data.k !== blobKey(this.#prefix, this.#name, `${job.id}:in`)) {
      throw bad(`its payload key ${describe(data.k)} is not its own blob`);
    }
    let timeout: number | undefined;
    if (data.dl !== undefined) {
      if (typeof data.dl !== 'number' || !Number.isFinite(data.dl)) throw bad(`deadline ${describe(data.dl)}`);
      const left = data.dl - Date.now();
      if (left <= 0) throw makeError('ERR_TIMEOUT', 'the caller’s deadline passed before the job started');
      // A timer given more than 2^31-1 ms fires at once (TimeoutOverflowWarning).
      if (left > MAX_TIMEOUT_MS + DEADLINE_SLACK_MS) throw bad(`deadline ${left} ms away, past the longest timeout`);
      timeout = Math.min(left, MAX_TIMEOUT_MS);
    }
    if (data.ck !== undefined) {
      const ck: unknown = data.ck;
      if (name !== 'md5.iterate') throw bad(`a checkpoint on a ${name} job`);
      if (
        !Array.isArray(ck) ||
        ck.length !== 2 ||
        !Number.isSafeInteger(ck[0]) ||
        ck[0] < 1 ||
        typeof ck[1] !== 'string' ||
        !DIGEST.test(ck[1])
      ) {
        throw bad(`checkpoint ${describe(ck)} is not [rounds done ≥ 1, a 32-digit hex digest]`);
      }
    }
    return { name, data, timeout };
  }

  async #payload(job: { id?: string | undefined }, data: JobData): Promise<Uint8Array> {
    if (typeof data.b === 'string') return fromBase64(data.b);
    const b = await getBlob(this.#blobs, data.k as string, `job ${job.id}'s payload`);
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
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
      const { name, data, timeout } = this.#check(job);
      const call = { ...(signal ? { signal } : {}), ...(timeout ? { timeout } : {}) };
      const result = await this.#run(name, await this.#payload(job, data), call, job, data);
      if (result.byteLength <= INLINE_MAX) return { b: toBase64(result) };
      const key = blobKey(this.#prefix, this.#name, `${job.id}:out`);
      await this.#blobs.set(key, Buffer.from(result.buffer, result.byteOffset, result.byteLength), 'PX', RESULT_TTL_MS);
      return { k: key };
    } catch (err) {
      // Cancelled because close() gave up on Redis: the job is not at fault; another
      // attempt runs it (if this failure ever reaches Redis at all).
      if (this.#forcing) {
        throw new Error(reasonOf(makeError('ERR_QUEUE_UNAVAILABLE', 'the worker stopped while Redis was away')));
      }
      const code = (err as { code?: unknown } | null)?.code;
      // Bad arguments, a kernel's own error, a passed deadline: the same on any worker, so
      // the job fails once (a poison job never loops through retries).
      if (typeof code === 'string' && code in errorRegistry && !RETRIABLE.has(code)) {
        throw new UnrecoverableError(reasonOf(err));
      }
      // A schema reader's or writer's code (R000x, W000x): a message that is not one of
      // ours. Failed once, with the registry's code for it.
      if (typeof code === 'string' && /^[RW]\d{4}$/.test(code)) {
        const why = err instanceof Error ? err.message : String(err);
        throw new UnrecoverableError(reasonOf(makeError('ERR_QUEUE_PAYLOAD', `${code}: ${why}`)));
      }
      // Worker-side conditions and anything unforeseen: another attempt (then
      // ERR_QUEUE_JOB_FAILED for the caller).
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
        const d = decode.md5Iterate(bytes);
        const a = checkMd5Args(d.text, d.rounds, d.start);
        let [done, digest] = data.ck ?? [0, a.start];
        // Checkpoints are written before the last segment only: one at (or past) the end
        // would be returned as the result without a round run.
        if (done >= a.rounds && data.ck !== undefined) {
          throw makeError('ERR_QUEUE_PAYLOAD', `checkpoint at ${done} rounds of ${a.rounds}: not one a worker writes`);
        }
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
        checkQrArgs(a.text, a);
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

  /**
   * Stops taking jobs, lets running ones finish, closes the connections (and its own pool).
   * Bounded whatever Redis does: recording the running jobs' outcomes needs Redis, and
   * BullMQ's close (its QUIT, its blocking read) waits for it for ever. With Redis away and
   * nothing running, the connections are dropped at once; with jobs running, close waits
   * until Redis has been away `redisTimeout` ms, then cancels them and rejects with
   * ERR_QUEUE_UNAVAILABLE. Those jobs are not lost: their locks expire and another worker
   * runs them (from their last checkpoint).
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      let gaveUp: Error | undefined;
      if (!this.#reach.up && this.#stats.active === 0) {
        await this.worker.close(true).catch(() => {});
      } else {
        const graceful = this.worker.close();
        // Redis may go away after close began (a SIGTERM right after it died, before the
        // client saw its socket close): with nothing running there is nothing to record,
        // so the connections are dropped then, not after `redisTimeout`.
        let stopWatching = () => {};
        const downWhileIdle = new Promise<'down'>((resolve) => {
          stopWatching = this.#reach.onDown(() => {
            if (this.#stats.active === 0) resolve('down');
          });
        });
        try {
          if ((await this.#reach.bound(Promise.race([graceful, downWhileIdle]))) === 'down') {
            graceful.catch(() => {});
            this.worker.disconnect().catch(() => {});
          }
        } catch (err) {
          gaveUp = err as Error;
          this.#forcing = true;
          this.worker.cancelAllJobs('the worker stopped while Redis was away');
          // Not awaited: BullMQ waits for a connection that never became ready.
          this.worker.disconnect().catch(() => {});
        } finally {
          stopWatching();
        }
      }
      this.#reach.stop();
      this.#blobs.disconnect();
      this.#cancels.disconnect();
      if (this.#ownPool) await (gaveUp ? this.pool.destroy() : this.pool.close());
      if (gaveUp) {
        throw makeError(
          'ERR_QUEUE_UNAVAILABLE',
          `${gaveUp.message}: the worker stopped without recording its running jobs; ` +
            'each runs again on a worker once its lock expires',
          gaveUp,
        );
      }
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
