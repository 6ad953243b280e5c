/**
 * Reads a BullMQ queue's event stream (`<prefix>:<name>:events`) and knows exactly when
 * entries it had not read yet were trimmed away.
 *
 * BullMQ trims that stream to about 10,000 entries. Its own reader (QueueEvents) XREADs
 * from its last id; once the stream was trimmed past that id, XREAD quietly returns what
 * follows the gap, and a producer that missed a job's 'completed' waits for its safety net.
 * Here every read is one script that reads the entries and the stream's counts together.
 * Trimming removes the oldest entries, and Redis ≥ 7 counts every entry ever added
 * (`entries-added`): the first `entries-added − length` entries are gone. This reader
 * counts the entries at or before its position; when more than that are gone, some it
 * never read were among them. Redis 6.2 has no count: a stream whose first entry lies
 * past the position is taken as a loss (at worst a needless re-read of the outcomes).
 */
import type { Redis } from 'ioredis';

/** An entry's fields, as BullMQ wrote them (`event`, `jobId`, `returnvalue`, …). */
export type StreamEvent = Record<string, string>;

/**
 * The script's answer: the kept entries after the position (of at most ARGV[2] read), how
 * many entries it read, the first and last of their ids ('' for none), `entries-added`
 * (−1 where Redis does not count it: 6.2), length, the stream's first entry id and its last
 * generated id ('' for none).
 */
type ReadReply = [[string, string[]][], number, string, string, number, number, string, string];

/** A connection with the script defined on it (ioredis adds a method per defineCommand). */
type ScriptedRedis = Redis & {
  offthreadReadEvents(key: string, pos: string, count: number, ...events: string[]): Promise<ReadReply>;
};

/**
 * XRANGE after the position and the stream's counts in one script, so both see the same
 * stream. (A MULTI of XREAD and XINFO STREAM did the same, but XINFO's reply carries the
 * first and last entries whole, and the client parsed it on every read.) Entries whose
 * `event` is not among ARGV[3…] (when given) stay in Redis: BullMQ writes four entries a
 * job (added, waiting, active, completed) and a producer wants one, so three quarters of
 * the reply was parsed only to be dropped. A missing stream reads as empty.
 */
const READ_LUA = `
local entries, kept, firstRead, lastRead = {}, {}, '', ''
if tonumber(ARGV[2]) > 0 then
  entries = redis.call('XRANGE', KEYS[1], '(' .. ARGV[1], '+', 'COUNT', ARGV[2])
end
local wanted = nil
if #ARGV > 2 then
  wanted = {}
  for i = 3, #ARGV do wanted[ARGV[i]] = true end
end
for _, e in ipairs(entries) do
  local keep = wanted == nil
  if not keep then
    local f = e[2]
    for i = 1, #f, 2 do
      if f[i] == 'event' then keep = wanted[f[i + 1]] == true break end
    end
  end
  if keep then kept[#kept + 1] = e end
end
if #entries > 0 then firstRead, lastRead = entries[1][1], entries[#entries][1] end
local ok, info = pcall(redis.call, 'XINFO', 'STREAM', KEYS[1])
local added, length, first, last = -1, 0, '', ''
if ok then
  for i = 1, #info, 2 do
    local k, v = info[i], info[i + 1]
    if k == 'entries-added' then added = v
    elseif k == 'length' then length = v
    elseif k == 'first-entry' and v then first = v[1]
    elseif k == 'last-generated-id' then last = v end
  end
end
return {kept, #entries, firstRead, lastRead, added, length, first, last}
`;

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

export class EventStream {
  readonly #db: ScriptedRedis;
  readonly #key: string;
  readonly #onEvent: (event: StreamEvent, id: string) => void;
  readonly #onLost: () => void;
  /** The `event` values delivered (empty: all). */
  readonly #events: readonly string[];
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
   * @param events deliver only entries whose `event` is one of these (the others are read,
   *   counted and skipped inside Redis); all when empty.
   */
  constructor(
    db: Redis,
    key: string,
    onEvent: (event: StreamEvent, id: string) => void,
    onLost: () => void,
    events: readonly string[] = [],
  ) {
    db.defineCommand('offthreadReadEvents', { numberOfKeys: 1, lua: READ_LUA });
    this.#db = db as ScriptedRedis;
    this.#key = key;
    this.#onEvent = onEvent;
    this.#onLost = onLost;
    this.#events = events;
  }

  /** Fixes the position at the stream's newest entry, then reads from there on. */
  async start(): Promise<void> {
    const [, , , , added, , , last] = await this.#read(0);
    if (last !== '') {
      this.#pos = last;
      this.#upToPos = added >= 0 ? added : undefined;
    }
    this.#loop = this.#run();
  }

  /** One atomic read (the script): up to `count` entries after the position, and the stream's counts. */
  #read(count: number): Promise<ReadReply> {
    return this.#db.offthreadReadEvents(this.#key, this.#pos, count, ...this.#events);
  }

  /**
   * Blocks the connection until an entry after the position exists (at once if one does):
   * a read sent next waits behind it, since Redis runs a blocked client's next command as
   * soon as the block ends. The wait and the read then take one round trip; the XREAD's
   * own entry (one) is only a wake-up, and its failures show in the read's. (Two plain
   * commands, not an ioredis pipeline: the pipeline object cost the producer more than
   * the round trip it saved.)
   */
  #blockUntilNext(): void {
    this.#db.xread('COUNT', 1, 'BLOCK', BLOCK_MS, 'STREAMS', this.#key, this.#pos).catch(() => {});
  }

  async #run(): Promise<void> {
    let wait = false;
    while (!this.#closing) {
      let reply: ReadReply;
      try {
        if (wait) this.#blockUntilNext();
        reply = await this.#read(READ_COUNT);
      } catch {
        if (this.#closing) return;
        // The connection failed mid-read: what happened meanwhile is unknown.
        this.#onLost();
        await new Promise((r) => setTimeout(r, 100));
        wait = false;
        continue;
      }
      if (this.#closing) return; // nothing is delivered after close()
      const [kept, read, firstRead, lastRead, added, length, firstId] = reply;
      if (read === 0 && added >= 0 && this.#upToPos !== undefined && added < this.#upToPos) {
        // Deleted and made anew with ids at or below the position (within the same
        // millisecond, or given): XRANGE after it finds nothing, and the new entries
        // were never read (a reader waited for them for ever). Read it from its start.
        this.#onLost();
        this.#pos = '0-0';
        this.#upToPos = 0;
        wait = false;
        continue;
      }
      if (read > 0) {
        const gone = this.#lostBefore(added, length, firstId, firstRead);
        if (gone !== false) this.#onLost();
        // Entries at or before the new position: the ones not lost, or (after a loss) every
        // trimmed one, then the entries read now.
        if (this.#upToPos !== undefined) this.#upToPos = (gone === false ? this.#upToPos : gone) + read;
        this.#pos = lastRead;
        for (const [id, flat] of kept) {
          const event: StreamEvent = {};
          for (let i = 0; i + 1 < flat.length; i += 2) event[flat[i] as string] = flat[i + 1] as string;
          this.#onEvent(event, id);
        }
      }
      // A full batch: more are waiting; read on at once.
      wait = read < READ_COUNT;
    }
  }

  /**
   * Whether entries after the position were trimmed unread: false, or the number of entries
   * trimmed (the count the position then stands after).
   */
  #lostBefore(added: number, length: number, firstId: string, firstRead: string): number | false {
    if (added >= 0 && this.#upToPos !== undefined) {
      const trimmed = added - length;
      // Fewer added than already read: the stream was deleted and made anew.
      return trimmed > this.#upToPos || added < this.#upToPos ? trimmed : false;
    }
    // Redis 6.2: the position is before the first entry left, and what we read next is that
    // entry: anything between them is unknowable, so take it as lost.
    return firstId !== '' && firstId === firstRead && streamIdLess(this.#pos, firstId) && this.#pos !== '0-0'
      ? 0
      : false;
  }

  /**
   * Stops reading and closes the connection. The loop is not awaited: a read that waits
   * for a reconnection never settles once disconnect() clears ioredis's reconnect timer
   * (its offline queue is never flushed), and close() must return with Redis away too.
   */
  async close(): Promise<void> {
    this.#closing = true;
    this.#db.disconnect();
    this.#loop?.catch(() => {});
  }
}
