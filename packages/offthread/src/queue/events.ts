/**
 * Reads a BullMQ queue's event stream (`<prefix>:<name>:events`) and knows exactly when
 * entries it had not read yet were trimmed away.
 *
 * BullMQ trims that stream to about 10,000 entries. Its own reader (QueueEvents) XREADs
 * from its last id; once the stream was trimmed past that id, XREAD quietly returns what
 * follows the gap, and a producer that missed a job's 'completed' waits for its safety net.
 * Here every read is one MULTI of XREAD and XINFO STREAM, so both see the same stream.
 * Trimming removes the oldest entries, and Redis ≥ 7 counts every entry ever added
 * (`entries-added`): the first `entries-added − length` entries are gone. This reader
 * counts the entries at or before its position; when more than that are gone, some it
 * never read were among them. Redis 6.2 has no count: a stream whose first entry lies
 * past the position is taken as a loss (at worst a needless re-read of the outcomes).
 */
import type { Redis } from 'ioredis';

/** An entry's fields, as BullMQ wrote them (`event`, `jobId`, `returnvalue`, …). */
export type StreamEvent = Record<string, string>;

type Reply = [Error | null, unknown][] | null;

/** Entries per read: one round trip catches up this far. */
const READ_COUNT = 1000;
/** Upper bound of one blocking wait for the next entry (it returns at once when one arrives). */
const BLOCK_MS = 5000;

/** `ms-seq` stream ids in order. */
export function streamIdLess(a: string, b: string): boolean {
  const [am = '0', as = '0'] = a.split('-');
  const [bm = '0', bs = '0'] = b.split('-');
  return am.length !== bm.length ? am.length < bm.length : am !== bm ? am < bm : Number(as) < Number(bs);
}

/** XINFO STREAM's flat [name, value, …] reply as a map. */
function infoFields(reply: unknown): Map<string, unknown> | undefined {
  if (!Array.isArray(reply)) return undefined;
  const info = new Map<string, unknown>();
  for (let i = 0; i + 1 < reply.length; i += 2) info.set(String(reply[i]), reply[i + 1]);
  return info;
}

export class EventStream {
  readonly #db: Redis;
  readonly #key: string;
  readonly #onEvent: (event: StreamEvent, id: string) => void;
  readonly #onLost: () => void;
  /** Id of the last entry read ('0-0': before the first). */
  #pos = '0-0';
  /** Entries ever added up to and including #pos; undefined where Redis does not count (6.2). */
  #upToPos: number | undefined = 0;
  #closing = false;
  #loop: Promise<void> | undefined;

  /**
   * @param db a connection of its own: the reader blocks on it between entries.
   * @param onLost called when entries this reader never saw were trimmed (or the stream
   *   was deleted): the caller must read what it waits for some other way.
   */
  constructor(db: Redis, key: string, onEvent: (event: StreamEvent, id: string) => void, onLost: () => void) {
    this.#db = db;
    this.#key = key;
    this.#onEvent = onEvent;
    this.#onLost = onLost;
  }

  /** Fixes the position at the stream's newest entry, then reads from there on. */
  async start(): Promise<void> {
    const reply = (await this.#db.multi().xinfo('STREAM', this.#key).exec()) as Reply;
    const [err, raw] = reply?.[0] ?? [null, undefined];
    const info = err ? undefined : infoFields(raw);
    if (info) {
      this.#pos = String(info.get('last-generated-id') ?? '0-0');
      const added = info.get('entries-added');
      this.#upToPos = typeof added === 'number' ? added : undefined;
    }
    this.#loop = this.#run();
  }

  async #run(): Promise<void> {
    while (!this.#closing) {
      let reply: Reply;
      try {
        reply = (await this.#db
          .multi()
          .xread('COUNT', READ_COUNT, 'STREAMS', this.#key, this.#pos)
          .xinfo('STREAM', this.#key)
          .exec()) as Reply;
      } catch {
        if (this.#closing) return;
        // The connection failed mid-read: what happened meanwhile is unknown.
        this.#onLost();
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      const [readErr, read] = reply?.[0] ?? [null, null];
      const [infoErr, rawInfo] = reply?.[1] ?? [null, undefined];
      const entries = readErr ? [] : ((read as [string, [string, string[]][]][] | null)?.[0]?.[1] ?? []);
      if (entries.length === 0) {
        // Nothing new: wait for the next entry, which the next MULTI reads with its check.
        try {
          await this.#db.xread('COUNT', 1, 'BLOCK', BLOCK_MS, 'STREAMS', this.#key, this.#pos);
        } catch {
          if (this.#closing) return;
          await new Promise((r) => setTimeout(r, 100));
        }
        continue;
      }
      const gone = this.#lostBefore(infoErr ? undefined : infoFields(rawInfo), entries[0]?.[0] as string);
      if (gone !== false) this.#onLost();
      // Entries at or before the new position: the ones not lost, or (after a loss) every
      // trimmed one, then the entries read now.
      if (this.#upToPos !== undefined) this.#upToPos = (gone === false ? this.#upToPos : gone) + entries.length;
      for (const [id, flat] of entries) {
        this.#pos = id;
        const event: StreamEvent = {};
        for (let i = 0; i + 1 < flat.length; i += 2) event[flat[i] as string] = flat[i + 1] as string;
        this.#onEvent(event, id);
      }
    }
  }

  /**
   * Whether entries after the position were trimmed unread: false, or the number of entries
   * trimmed (the count the position then stands after).
   */
  #lostBefore(info: Map<string, unknown> | undefined, firstRead: string): number | false {
    if (!info) return false;
    const added = info.get('entries-added');
    const length = info.get('length');
    if (typeof added === 'number' && typeof length === 'number' && this.#upToPos !== undefined) {
      const trimmed = added - length;
      // Fewer added than already read: the stream was deleted and made anew.
      return trimmed > this.#upToPos || added < this.#upToPos ? trimmed : false;
    }
    // Redis 6.2: the position is before the first entry left, and what we read next is that
    // entry: anything between them is unknowable, so take it as lost.
    const first = info.get('first-entry');
    const firstId = Array.isArray(first) ? String(first[0]) : undefined;
    return firstId !== undefined && firstId === firstRead && streamIdLess(this.#pos, firstId) && this.#pos !== '0-0'
      ? 0
      : false;
  }

  /** Stops reading and closes the connection. */
  async close(): Promise<void> {
    this.#closing = true;
    this.#db.disconnect();
    await this.#loop?.catch(() => {});
  }
}
