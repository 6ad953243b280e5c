/**
 * The worker side of offthread/queue: a BullMQ Worker whose processor decodes the job's
 * schema message and runs the kernel on an offthread Pool. The kernels never run on the
 * event loop, so BullMQ's lock renewals keep their timing with every core busy: no job
 * is marked stalled because its worker was computing (BullMQ's reason for sandboxed
 * processors, which pay a child process per worker and JSON for every job instead).
 */
import { type JobJson, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, errorRegistry, makeError, OffthreadError } from '../errors.js';
import { type GuestHost, load as loadGuests } from '../guests/load.js';
import { host } from '../host.js';
import { hex } from '../kernels/md5.js';
import { piChunks } from '../kernels/pi-variants.js';
import { raceAbort } from '../pool/call.js';
import { Pool, runAll } from '../pool/pool.js';
import { tasks } from '../tasks/index.js';
import { MAX_SAMPLES, toOptions } from '../validate.js';
import {
  blobKey,
  type ConnectionChoice,
  cancelChannel,
  Reachability,
  redisOptions,
  redisTimeoutOf,
} from './connection.js';
import {
  decodeValue,
  encodeValue,
  hashOf,
  MODULE_NAME,
  moduleFile,
  moduleHash,
  parseGuestJobName,
  parseTaskJobName,
  readModule,
  taskReason,
} from './task-wire.js';
import type { AnyFunction, QueueTaskFunction } from './tasks.js';
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
  /**
   * Task modules whose exports run as jobs (`queue.tasks(…)` on the producer), on this
   * worker's pool: absolute paths or file: URLs, known by their base name (`work` for
   * /srv/work.js), or `{ name: path }`.
   */
  tasks?: (string | URL)[] | Record<string, string | URL> | undefined;
  /**
   * WebAssembly guests (docs/guests.md) whose interfaces run as jobs (`queue.guests(…)`),
   * loaded together into one guest host of `threads` workers: files as for `tasks`.
   */
  guests?: (string | URL)[] | Record<string, string | URL> | undefined;
}

/** A task module this worker serves. */
interface ServedModule {
  name: string;
  path: string;
  url: string;
  /** Content hash of the file (task-wire.ts moduleHash). */
  hash: string;
  /** The `version` string the module exports, read at load. */
  version?: string | undefined;
  /** Its exports that are functions, and those that stream (generators: not jobs). */
  functions: Set<string>;
  streams: Set<string>;
  run: Record<string, QueueTaskFunction<AnyFunction>>;
}

// This build is CommonJS, where tsc would turn `import()` into `require()`: a task module
// may be ESM (or TypeScript where Node strips types), which only import() loads.
const importModule = new Function('url', 'return import(url)') as (url: string) => Promise<Record<string, unknown>>;

/** What the worker reads of a module on its own thread: its `version` and which exports are functions. */
async function inspectModule(url: string): Promise<{ version?: string; functions: string[]; streams: string[] }> {
  const ns = await importModule(url);
  // A CommonJS module imported from ESM puts module.exports on `default`.
  const fallback = ns.default && typeof ns.default === 'object' ? (ns.default as Record<string, unknown>) : {};
  const all: Record<string, unknown> = { ...fallback, ...ns };
  const functions = Object.keys(all).filter((k) => typeof all[k] === 'function');
  const streams = functions.filter((k) => {
    const tag = Object.prototype.toString.call(all[k]);
    return tag === '[object AsyncGeneratorFunction]' || tag === '[object GeneratorFunction]';
  });
  return { ...(typeof all.version === 'string' ? { version: all.version } : {}), functions, streams };
}

/** The `tasks` option as [name, file] pairs, checked: absolute paths or file: URLs, names unique. */
function moduleFiles(option: unknown, what: string): { name: string; path: string; url: string }[] {
  if (option === undefined) return [];
  let entries: [string | undefined, unknown][];
  if (Array.isArray(option)) entries = option.map((m) => [undefined, m]);
  else if (option !== null && typeof option === 'object' && !(option instanceof URL)) entries = Object.entries(option);
  else {
    throw makeError(
      'ERR_INVALID_ARG',
      `options.${what} must be an array of module files or { name: file }, got ${describe(option)}`,
    );
  }
  const seen = new Set<string>();
  return entries.map(([given, m]) => {
    const file = moduleFile(m as string | URL, `options.${what}`);
    const name = given ?? file.name;
    if (!MODULE_NAME.test(name)) {
      throw makeError(
        'ERR_INVALID_ARG',
        `module ${file.path}: its name ${describe(name)} is not 1-100 characters of [A-Za-z0-9_-] (give it one: { name: file })`,
      );
    }
    if (seen.has(name)) throw makeError('ERR_INVALID_ARG', `two ${what} modules are named ${JSON.stringify(name)}`);
    seen.add(name);
    return { name, path: file.path, url: file.url };
  });
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
/** A task job's: no checkpoint, and the module identity (a content hash, a declared version). */
const TASK_DATA_KEYS = new Set(['v', 'b', 'k', 'dl', 'h', 'mv']);
/** A guest job's: the payload is the guest's own message; the identity is the module's hash. */
const GUEST_DATA_KEYS = new Set(['v', 'b', 'k', 'dl', 'h']);
const HASH = /^[0-9a-f]{16}$/;
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
  /** A task job's module and export (then `name` is not read). */
  task?: { module: string; fn: string } | undefined;
  /** A guest job's module, interface and function. */
  guest?: { module: string; iface: string; fn: string } | undefined;
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

/**
 * A task's progress values on their way to Redis: one update in flight at a time, and
 * while one is, only the latest value waits (a task reporting in a tight loop costs
 * Redis one write per round trip, not one per report; the last value always goes).
 */
class ProgressSender {
  readonly #job: { updateProgress(p: object): Promise<unknown> };
  #latest: { value: unknown } | undefined;
  #sending: Promise<void> | undefined;

  constructor(job: { updateProgress(p: object): Promise<unknown> }) {
    this.#job = job;
  }

  send(value: unknown): void {
    this.#latest = { value };
    this.#sending ??= this.#pump();
  }

  async #pump(): Promise<void> {
    while (this.#latest) {
      const { value } = this.#latest;
      this.#latest = undefined;
      try {
        await this.#job.updateProgress({ t: toBase64(encodeValue(value, 'progress')) });
      } catch {
        // A value that cannot cross, or Redis away: progress is advisory, the job goes on.
      }
    }
    this.#sending = undefined;
  }

  flush(): Promise<void> {
    return this.#sending ?? Promise.resolve();
  }
}

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
  /** The task modules served, by name; filled once #loaded settles. */
  readonly #served = new Map<string, ServedModule>();
  /** Every task module imported (on this thread, to read its exports and version) and hashed. */
  readonly #loaded: Promise<void>;
  /** The guests served: their host (one for all, so they can call each other) and each module's hash. */
  #guestHost: GuestHost | undefined;
  readonly #guests = new Map<string, { path: string; hash: string }>();
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
      'tasks',
      'guests',
    ]);
    const connection = redisOptions(opts);
    const files = moduleFiles(opts.tasks, 'tasks');
    const guestFiles = moduleFiles(opts.guests, 'guests');
    // Hashed now: a missing file stops the worker before it takes a job.
    const hashes = files.map((f) => moduleHash(f.path));
    const guestBytes = guestFiles.map((f) => readModule(f.path));
    for (const [i, f] of guestFiles.entries()) {
      this.#guests.set(f.name, { path: f.path, hash: hashOf(guestBytes[i] as Buffer) });
    }
    const modules = files.length + guestFiles.length;
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
      // With task modules, jobs are taken only once every module loaded: a module that
      // cannot load stops this worker (ready() rejects), it never fails jobs others could run.
      autorun: modules === 0,
    });
    this.#loaded = this.#load(files, hashes, guestFiles, guestBytes as Buffer[]);
    this.#loaded.then(
      () => {
        if (modules > 0 && this.#closing === undefined) this.worker.run().catch(() => {});
      },
      () => {},
    );
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
    await this.#loaded;
    await this.#reach.bound(Promise.all([this.worker.waitUntilReady(), this.#subscribed]));
  }

  /** The task modules this worker serves: name, file, content hash, declared version. */
  get tasks(): { name: string; path: string; hash: string; version?: string }[] {
    return [...this.#served.values()].map((m) => ({
      name: m.name,
      path: m.path,
      hash: m.hash,
      ...(m.version === undefined ? {} : { version: m.version }),
    }));
  }

  /** The guests this worker serves: name, file, content hash. */
  get guests(): { name: string; path: string; hash: string }[] {
    return [...this.#guests].map(([name, m]) => ({ name, ...m }));
  }

  /** Imports each task module here once (its `version`, its exports) and makes its `tasks()` on the pool. */
  async #load(
    files: { name: string; path: string; url: string }[],
    hashes: string[],
    guestFiles: { name: string; path: string }[],
    guestBytes: Buffer[],
  ): Promise<void> {
    for (const [i, f] of files.entries()) {
      let info: Awaited<ReturnType<typeof inspectModule>>;
      try {
        info = await inspectModule(f.url);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        throw makeError('ERR_TASK_MODULE', `cannot load the task module ${f.path}: ${why}`, err);
      }
      this.#served.set(f.name, {
        ...f,
        hash: hashes[i] as string,
        version: info.version,
        functions: new Set(info.functions),
        streams: new Set(info.streams),
        run: tasks(f.url, { pool: this.pool }) as unknown as Record<string, QueueTaskFunction<AnyFunction>>,
      });
    }
    if (guestFiles.length > 0) {
      // guests.load's own checks (ERR_GUEST_MODULE …) stop the worker as a task module's would.
      this.#guestHost = await loadGuests(
        guestFiles.map((f, i) => ({ name: f.name, bytes: guestBytes[i] as Buffer })),
        { threads: this.pool.threads },
      );
    }
  }

  /**
   * Every field of the job as Redis gave it, checked: the name, the data's keys and wire
   * version, exactly one payload (inline base64, or this job's own blob key: never
   * another key), the deadline (a time within a timer's range), the checkpoint's shape.
   * Anything else is ERR_QUEUE_PAYLOAD: the job fails once, unretried.
   */
  #check(job: { id?: string | undefined; name: string; data: unknown }): CheckedJob {
    const bad = (why: string) => makeError('ERR_QUEUE_PAYLOAD', `job ${job.id}: ${why}`);
    const task = parseTaskJobName(job.name) ?? undefined;
    const guest = parseGuestJobName(job.name) ?? undefined;
    if (!task && !guest && !JOB_NAMES.includes(job.name as JobName)) {
      throw bad(`not an offthread job: name ${describe(job.name)}`);
    }
    const name = job.name as JobName;
    const data = job.data as JobData;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) throw bad(`its data is ${describe(data)}`);
    const keys = task ? TASK_DATA_KEYS : guest ? GUEST_DATA_KEYS : DATA_KEYS;
    for (const key of Object.keys(data)) if (!keys.has(key)) throw bad(`unknown field ${describe(key)}`);
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
    if (task) {
      if (data.h !== undefined && !(typeof data.h === 'string' && HASH.test(data.h))) {
        throw bad(`module hash ${describe(data.h)} is not 16 hex digits`);
      }
      if (data.mv !== undefined && typeof data.mv !== 'string') throw bad(`module version ${describe(data.mv)}`);
      if (data.h === undefined && data.mv === undefined) throw bad('it names no module hash or version');
    }
    if (guest && !(typeof data.h === 'string' && HASH.test(data.h))) {
      throw bad(`module hash ${describe(data.h)} is not 16 hex digits`);
    }
    return { name, task, guest, data, timeout };
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
      updateProgress(p: number | object): Promise<unknown>;
    },
    signal: AbortSignal | undefined,
  ): Promise<JobReturn> {
    this.#stats.active++;
    let isTask = false;
    try {
      const { name, task, guest, data, timeout } = this.#check(job);
      isTask = task !== undefined;
      const call = { ...(signal ? { signal } : {}), ...(timeout ? { timeout } : {}) };
      const result = task
        ? await this.#runTask(task, data, await this.#payload(job, data), call, job)
        : guest
          ? await this.#runGuest(guest, data, await this.#payload(job, data), call)
          : await this.#run(name, await this.#payload(job, data), call, job, data);
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
      if (isTask) {
        // Only offthread's worker-side conditions are retried. A task's own error fails the
        // job once, as a local call fails once (a retry would run its side effects again),
        // and it travels whole: class, code, own properties.
        if (err instanceof OffthreadError && typeof code === 'string' && RETRIABLE.has(code)) {
          throw new Error(reasonOf(err));
        }
        throw new UnrecoverableError(taskReason(err));
      }
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

  /** A task job: the module's identity checked against this worker's, then the export on the pool. */
  async #runTask(
    task: { module: string; fn: string },
    data: JobData,
    bytes: Uint8Array,
    call: { signal?: AbortSignal; timeout?: number },
    job: { id?: string | undefined; updateProgress(p: object): Promise<unknown> },
  ): Promise<Uint8Array> {
    await this.#loaded;
    const m = this.#served.get(task.module);
    const label = `${task.module}.${task.fn}`;
    if (!m) {
      const names = [...this.#served.keys()];
      throw makeError(
        'ERR_TASK_MODULE',
        `this worker serves no task module named ${JSON.stringify(task.module)} ` +
          (names.length > 0 ? `(it serves ${names.join(', ')})` : '(start it with --tasks <file>)'),
      );
    }
    if (data.h !== undefined && data.h !== m.hash) {
      throw makeError(
        'ERR_QUEUE_TASK_VERSION',
        `task module ${m.name}: the producer's file has content hash ${data.h}, this worker's (${m.path}) ${m.hash}`,
      );
    }
    if (data.mv !== undefined && data.mv !== m.version) {
      throw makeError(
        'ERR_QUEUE_TASK_VERSION',
        `task module ${m.name}: the producer wants version ${JSON.stringify(data.mv)}, this worker's (${m.path}) ` +
          (m.version === undefined ? 'exports no version' : `is version ${JSON.stringify(m.version)}`),
      );
    }
    if (m.streams.has(task.fn)) {
      throw makeError('ERR_TASK_EXPORT', `${label} is a generator function: streams do not run as queue jobs`);
    }
    if (!m.functions.has(task.fn) || task.fn === 'then') {
      throw makeError(
        'ERR_TASK_EXPORT',
        `the task module ${m.name} (${m.path}) has no exported function ${JSON.stringify(task.fn)} ` +
          `(its functions: ${[...m.functions].join(', ') || 'none'})`,
      );
    }
    const args = decodeValue(bytes, `job ${job.id}'s arguments`);
    if (!Array.isArray(args)) throw makeError('ERR_QUEUE_PAYLOAD', `job ${job.id}: its arguments are not a list`);
    const progress = new ProgressSender(job);
    const fn = m.run[task.fn] as QueueTaskFunction<AnyFunction>;
    const result = await fn.with({ ...call, onProgress: (value) => progress.send(value) })(...args);
    // Progress entries go to Redis before the completion: the producer sees them in order.
    await progress.flush();
    return encodeValue(result, 'result');
  }

  /** A guest job: the module's hash checked against this worker's, then its interface's function. */
  async #runGuest(
    guest: { module: string; iface: string; fn: string },
    data: JobData,
    bytes: Uint8Array,
    call: { signal?: AbortSignal; timeout?: number },
  ): Promise<Uint8Array> {
    await this.#loaded;
    const m = this.#guests.get(guest.module);
    const host = this.#guestHost;
    if (!m || !host) {
      const names = [...this.#guests.keys()];
      throw makeError(
        'ERR_GUEST_MODULE',
        `this worker serves no guest named ${JSON.stringify(guest.module)} ` +
          (names.length > 0 ? `(it serves ${names.join(', ')})` : '(start it with --guest <file.wasm>)'),
      );
    }
    if (data.h !== m.hash) {
      throw makeError(
        'ERR_QUEUE_TASK_VERSION',
        `guest ${guest.module}: the producer's file has content hash ${data.h}, this worker's (${m.path}) ${m.hash}`,
      );
    }
    // The module named runs it (an interface several modules export would otherwise go to the first).
    // No bytes: a call without an input message (a message of the schema is never empty).
    const input = bytes.byteLength === 0 ? null : bytes;
    return host.call(guest.iface, guest.fn, input, { ...call, exporter: guest.module });
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
        let hungTimer: ReturnType<typeof setInterval> | undefined;
        const downWhileIdle = new Promise<'down'>((resolve) => {
          stopWatching = this.#reach.onDown(() => {
            if (this.#stats.active === 0) resolve('down');
          });
          // A Redis that hangs with its connections open (a stopped process, a firewall
          // dropping packets) never looks down: with nothing running, BullMQ's close
          // (its QUIT) waiting `redisTimeout` ms is taken as the same.
          let idleFor = 0;
          hungTimer = setInterval(() => {
            idleFor = this.#stats.active === 0 ? idleFor + HUNG_CHECK_MS : 0;
            if (idleFor >= this.#reach.timeout) resolve('down');
          }, HUNG_CHECK_MS);
        });
        try {
          if ((await this.#reach.bound(Promise.race([graceful, downWhileIdle]))) === 'down') {
            graceful.catch(() => {});
            this.worker.disconnect().catch(() => {});
            stopLockRenewal(this.worker);
          }
        } catch (err) {
          gaveUp = err as Error;
          this.#forcing = true;
          this.worker.cancelAllJobs('the worker stopped while Redis was away');
          // Not awaited: BullMQ waits for a connection that never became ready.
          this.worker.disconnect().catch(() => {});
          stopLockRenewal(this.worker);
        } finally {
          stopWatching();
          clearInterval(hungTimer);
        }
      }
      this.#reach.stop();
      this.#blobs.disconnect();
      this.#cancels.disconnect();
      await this.#loaded.catch(() => {});
      if (this.#guestHost) await (gaveUp ? this.#guestHost.destroy() : this.#guestHost.close());
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

/** How often close() looks whether a worker with nothing running still waits on BullMQ. */
const HUNG_CHECK_MS = 100;

/**
 * BullMQ's close stops its lock manager only after its blocking read has ended, which it
 * never does while Redis is gone: the lock-renewal timer (re-armed every lockRenewTime/2)
 * then keeps the process alive after our close() resolved. `lockManager` is protected in
 * bullmq 6 (the peer range), so it is reached by name; close() is idempotent there.
 */
function stopLockRenewal(worker: Worker): void {
  (worker as unknown as { lockManager?: { close(): Promise<void> } }).lockManager?.close().catch(() => {});
}

/** A worker: takes offthread jobs from the queue and runs them on an offthread Pool. */
export function createWorker(options: QueueWorkerOptions): QueueWorker {
  return new QueueWorker(options);
}
