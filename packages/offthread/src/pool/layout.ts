/**
 * The shared memory of one job pool (pool/jobs.ts on the calling thread, pool/serve.ts on
 * each worker): one SharedArrayBuffer holding
 *
 *   header     the caller's wake-up word and the heads and tails of three shared queues
 *   workers    one block per worker: its wake-up word, sleep flag, message count, and
 *              the positions of its direct queue and its completion queue
 *   queues     three shared queues of slot indices (high, normal, low priority) that every
 *              worker takes from (a compare-and-swap on the head), a direct queue per
 *              worker (jobs whose arguments came to it by message), and a completion queue
 *              per worker (slot indices the caller reads back, one wake-up per batch)
 *   slots      SLOTS fixed-size slots: a job's header (state, owner, id, function, flags,
 *              cancel flag) and its arguments, then its result, in the same bytes.
 *
 * A slot is taken from the caller's free list, written, pushed on one queue, and given
 * back only when its completion is read: so a queue (capacity SLOTS) never overflows and
 * a slot index is on at most one queue. The caller is the only producer of the shared and
 * direct queues and the only consumer of the completion queues.
 */

/** Slots per pool: jobs beyond it wait in the caller's own queue until one frees. */
export const SLOTS = 1024;
const MASK = SLOTS - 1;
/** Bytes per slot: 32 of header, the rest for the arguments or the result. */
export const SLOT_BYTES = 1024;
export const SLOT_HEADER = 32;
export const SLOT_DATA = SLOT_BYTES - SLOT_HEADER;

// Header words (Int32 indices).
/** 1 while the caller waits on it (Atomics.waitAsync): a worker that completes a job notifies. */
export const MAIN = 0;
const HEADS = 1; // 1, 2, 3
const TAILS = 4; // 4, 5, 6
const HEADER_WORDS = 8;

// One worker's block (Int32 offsets in it).
/** The worker waits on it; the caller bumps it (and notifies) for work or a message. */
export const W_SIGNAL = 0;
/** 1 while the worker is (about to be) waiting on W_SIGNAL. */
export const W_SLEEP = 1;
/** Messages the caller posted to this worker (it returns to its event loop to read them). */
export const W_POSTED = 2;
const W_DHEAD = 3;
const W_DTAIL = 4;
const W_CHEAD = 5;
const W_CTAIL = 6;
/** 1 while the worker runs a job. */
export const W_BUSY = 7;
const WORKER_WORDS = 8;

// A slot's header (Int32 offsets from the slot's first word).
export const S_STATE = 0;
export const S_OWNER = 1;
export const S_ID = 2;
export const S_FN = 3;
export const S_FLAGS = 4;
/** Setup messages (registered functions) the worker must have read before it runs the job. */
export const S_NEED = 5;
/** 1: the caller aborted the job (its signal reads this while it runs). */
export const S_CANCEL = 6;

// S_STATE.
export const FREE = 0;
export const QUEUED = 1;
/** Taken by a worker that has not started it yet (waiting for its module or its arguments). */
export const CLAIMED = 2;
export const RUNNING = 3;
/** The result is in the slot. */
export const DONE = 4;
/** Dropped before it started; the worker gave the slot back. */
export const SKIPPED = 5;
/** The caller dropped it while queued; the worker that takes it answers SKIPPED. */
export const DROPPED = 6;

// S_FLAGS.
/** The arguments came by message (structured clone / transfer). */
export const F_BY_MESSAGE = 1;
/** The caller had nothing else in flight: the worker watches for the next job a while. */
export const F_LONE = 2;

export const PRIORITIES = ['high', 'normal', 'low'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** Views over one pool's shared memory; the same on the caller's and the workers' side. */
export class Layout {
  readonly buffer: SharedArrayBuffer;
  readonly i32: Int32Array;
  readonly workers: number;
  readonly #workerBase: number;
  readonly #shared: number;
  readonly #direct: number;
  readonly #done: number;
  readonly #slotWords: number;

  constructor(workers: number, buffer?: SharedArrayBuffer) {
    this.workers = workers;
    this.#workerBase = HEADER_WORDS;
    this.#shared = this.#workerBase + workers * WORKER_WORDS;
    this.#direct = this.#shared + PRIORITIES.length * SLOTS;
    this.#done = this.#direct + workers * SLOTS;
    this.#slotWords = this.#done + workers * SLOTS;
    this.buffer = buffer ?? new SharedArrayBuffer(this.#slotWords * 4 + SLOTS * SLOT_BYTES);
    this.i32 = new Int32Array(this.buffer);
  }

  /** Int32 index of word `w` of worker `i`'s block. */
  w(i: number, w: number): number {
    return this.#workerBase + i * WORKER_WORDS + w;
  }

  /** Int32 index of word `s` of slot `slot`'s header. */
  s(slot: number, s: number): number {
    return this.#slotWords + slot * (SLOT_BYTES / 4) + s;
  }

  /** Byte offset of slot `slot`'s data. */
  data(slot: number): number {
    return this.#slotWords * 4 + slot * SLOT_BYTES + SLOT_HEADER;
  }

  // Shared queues: the caller pushes, any worker pops.
  pushShared(priority: number, slot: number): void {
    const { i32 } = this;
    const t = i32[TAILS + priority] as number;
    i32[this.#shared + priority * SLOTS + (t & MASK)] = slot;
    Atomics.store(i32, TAILS + priority, (t + 1) | 0);
  }

  /** A worker takes the next slot of queue `priority`, or -1 when it is empty. */
  popShared(priority: number): number {
    const { i32 } = this;
    for (;;) {
      const h = Atomics.load(i32, HEADS + priority);
      if (h === Atomics.load(i32, TAILS + priority)) return -1;
      const slot = i32[this.#shared + priority * SLOTS + (h & MASK)] as number;
      if (Atomics.compareExchange(i32, HEADS + priority, h, (h + 1) | 0) === h) return slot;
    }
  }

  sharedEmpty(priority: number): boolean {
    return Atomics.load(this.i32, HEADS + priority) === Atomics.load(this.i32, TAILS + priority);
  }

  /** Jobs waiting on the shared queues. */
  sharedQueued(): number {
    let n = 0;
    for (let p = 0; p < PRIORITIES.length; p++) {
      n += (Atomics.load(this.i32, TAILS + p) - Atomics.load(this.i32, HEADS + p)) | 0;
    }
    return n;
  }

  // Direct queues: the caller pushes, worker `i` pops.
  pushDirect(i: number, slot: number): void {
    const { i32 } = this;
    const t = i32[this.w(i, W_DTAIL)] as number;
    i32[this.#direct + i * SLOTS + (t & MASK)] = slot;
    Atomics.store(i32, this.w(i, W_DTAIL), (t + 1) | 0);
  }

  popDirect(i: number): number {
    const { i32 } = this;
    const h = i32[this.w(i, W_DHEAD)] as number;
    if (h === Atomics.load(i32, this.w(i, W_DTAIL))) return -1;
    const slot = i32[this.#direct + i * SLOTS + (h & MASK)] as number;
    Atomics.store(i32, this.w(i, W_DHEAD), (h + 1) | 0);
    return slot;
  }

  /** The slots still on worker `i`'s direct queue (the caller, after the worker died). */
  takeDirect(i: number): number[] {
    const out: number[] = [];
    for (let s = this.popDirect(i); s >= 0; s = this.popDirect(i)) out.push(s);
    return out;
  }

  directEmpty(i: number): boolean {
    return Atomics.load(this.i32, this.w(i, W_DHEAD)) === Atomics.load(this.i32, this.w(i, W_DTAIL));
  }

  // Completion queues: worker `i` pushes, the caller pops.
  pushDone(i: number, slot: number): void {
    const { i32 } = this;
    const t = i32[this.w(i, W_CTAIL)] as number;
    i32[this.#done + i * SLOTS + (t & MASK)] = slot;
    Atomics.store(i32, this.w(i, W_CTAIL), (t + 1) | 0);
  }

  /** Calls `each` for every slot worker `i` completed since the last drain. */
  drainDone(i: number, each: (slot: number) => void): void {
    const { i32 } = this;
    const at = this.w(i, W_CHEAD);
    let h = i32[at] as number;
    const t = Atomics.load(i32, this.w(i, W_CTAIL));
    if (h === t) return;
    for (; h !== t; h = (h + 1) | 0) each(i32[this.#done + i * SLOTS + (h & MASK)] as number);
    Atomics.store(i32, at, t);
  }

  hasDone(i: number): boolean {
    return Atomics.load(this.i32, this.w(i, W_CHEAD)) !== Atomics.load(this.i32, this.w(i, W_CTAIL));
  }

  /** Clears worker `i`'s block for its replacement (the caller has drained and emptied it). */
  resetWorker(i: number): void {
    for (let w = 0; w < WORKER_WORDS; w++) Atomics.store(this.i32, this.w(i, w), 0);
  }
}
