/** Redis connection options shared by producers and workers (ioredis underneath BullMQ). */
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
