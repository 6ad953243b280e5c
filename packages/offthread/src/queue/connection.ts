/** Redis connection options shared by producers and workers (ioredis underneath BullMQ). */
import type { Redis } from 'ioredis';
import { describe, makeError } from '../errors.js';

/** The subset of ioredis options offthread/queue passes on (host, port, auth, db, tls). */
export interface RedisConnection {
  host?: string;
  port?: number;
  username?: string;
  password?: string;
  db?: number;
  tls?: object;
}

export interface ConnectionChoice {
  /** `redis://[user:pass@]host:port[/db]` (or `rediss://` for TLS). */
  url?: string | undefined;
  /** ioredis options instead of a URL. */
  connection?: RedisConnection | undefined;
  /**
   * ms Redis may stay unreachable (refused, silent, failing its handshake) before
   * `ready()`, calls not yet in Redis and `close()` give up with ERR_QUEUE_UNAVAILABLE
   * (default 10,000). ioredis itself retries for ever; this is what bounds the wait.
   */
  redisTimeout?: number | undefined;
}

/** Default of `redisTimeout`. */
export const REDIS_TIMEOUT_MS = 10_000;

/** `redisTimeout` checked: an integer of ms from 1 to 2^31-1 (a timer's range). */
export function redisTimeoutOf(value: unknown): number {
  if (value === undefined) return REDIS_TIMEOUT_MS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 2 ** 31 - 1) {
    throw makeError(
      'ERR_INVALID_ARG',
      `redisTimeout must be an integer of ms from 1 to 2^31-1, got ${describe(value)}`,
    );
  }
  return value;
}

/**
 * ioredis options for one of our connections. `maxRetriesPerRequest: null`: commands
 * wait through a Redis restart instead of failing (BullMQ requires it for workers; the
 * caller's `timeout`/`signal` bound a producer's wait).
 */
export function redisOptions(choice: ConnectionChoice): RedisConnection & { maxRetriesPerRequest: null } {
  const { url, connection } = choice;
  if ((url === undefined) === (connection === undefined)) {
    throw makeError('ERR_INVALID_ARG', 'give exactly one of `url` (redis://host:port) or `connection`');
  }
  if (connection !== undefined) {
    if (connection === null || typeof connection !== 'object') {
      throw makeError('ERR_INVALID_ARG', `connection must be an object, got ${describe(connection)}`);
    }
    return { ...connection, maxRetriesPerRequest: null };
  }
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    throw makeError('ERR_INVALID_ARG', `url must be a redis:// URL, got ${describe(url)}`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw makeError('ERR_INVALID_ARG', `url must be a redis:// or rediss:// URL, got ${describe(url)}`);
  }
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw makeError('ERR_INVALID_ARG', `bad database number in ${describe(url)}`);
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 6379,
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    db,
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
  };
}

/** Key of a payload blob beside the queue's own keys. */
export function blobKey(prefix: string, queue: string, id: string): string {
  return `${prefix}:${queue}:offthread-blob:${id}`;
}

/** Pub/sub channel on which producers name jobs whose callers gave up (abort, timeout). */
export function cancelChannel(prefix: string, queue: string): string {
  return `${prefix}:${queue}:offthread-cancel`;
}

/**
 * Whether Redis answers, as one ioredis connection sees it. ioredis reconnects for ever
 * and (with `maxRetriesPerRequest: null`, which BullMQ needs) holds commands until it is
 * back, so without this a producer's call or a worker's close() waits for ever on a Redis
 * that is not there. Down = not `ready` (refused, silent, or its handshake failing);
 * once down for `timeout` ms the watchers are told, and `unavailable()` says since when
 * and why (the last connection error).
 */
export class Reachability {
  readonly timeout: number;
  readonly #client: Redis;
  readonly #where: string;
  /** performance.now() when it went down; undefined while ready. */
  #downSince: number | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #lastError = '';
  readonly #watchers = new Set<() => void>();
  /** Called as soon as the connection goes down (not after `timeout`). */
  readonly #downWatchers = new Set<() => void>();

  constructor(client: Redis, timeout: number) {
    this.#client = client;
    this.timeout = timeout;
    const o = client.options;
    this.#where = o.path ? String(o.path) : `${o.host ?? '127.0.0.1'}:${o.port ?? 6379}`;
    client.on('ready', () => {
      this.#downSince = undefined;
      clearTimeout(this.#timer);
      this.#timer = undefined;
    });
    client.on('error', (err: Error) => {
      this.#lastError = err.message;
    });
    // 'close' comes when a connection (or an attempt) ends; ready-but-closed is down.
    client.on('close', () => this.#down());
    client.on('end', () => this.#down());
    if (client.status !== 'ready') this.#down();
  }

  #down(): void {
    if (this.#downSince !== undefined) return;
    this.#downSince = performance.now();
    for (const w of [...this.#downWatchers]) w();
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      for (const w of [...this.#watchers]) w();
    }, this.timeout);
    this.#timer.unref();
  }

  /** Connected and past its handshake now. */
  get up(): boolean {
    return this.#client.status === 'ready';
  }

  /** Down for `timeout` ms or more. */
  get unavailable(): boolean {
    return this.#downSince !== undefined && performance.now() - this.#downSince >= this.timeout;
  }

  /** Calls `fn` each time Redis has been down for `timeout` ms; returns the unsubscribe. */
  watch(fn: () => void): () => void {
    this.#watchers.add(fn);
    return () => this.#watchers.delete(fn);
  }

  /** Calls `fn` when the connection goes down (at once if it is down); returns the unsubscribe. */
  onDown(fn: () => void): () => void {
    if (this.#downSince !== undefined) {
      queueMicrotask(fn);
      return () => {};
    }
    this.#downWatchers.add(fn);
    return () => this.#downWatchers.delete(fn);
  }

  /** Resolves with `p`, or rejects with the typed error once Redis has been down `timeout` ms. */
  bound<T>(p: Promise<T>): Promise<T> {
    if (this.unavailable) {
      p.catch(() => {});
      return Promise.reject(this.error());
    }
    return new Promise<T>((resolve, reject) => {
      const stop = this.watch(() => reject(this.error()));
      p.then(resolve, reject).finally(stop);
    });
  }

  error(): Error {
    const why = this.#lastError ? ` (${this.#lastError})` : '';
    return makeError('ERR_QUEUE_UNAVAILABLE', `Redis at ${this.#where} did not answer for ${this.timeout} ms${why}`);
  }

  /** Stops the timer (the client is being closed). */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#watchers.clear();
    this.#downWatchers.clear();
  }
}
