/**
 * What both task filters share (filters/task.ts's Node Transform, filters/web.ts's
 * TransformStream): the stream as one job on one worker running tasks/stream-driver.ts,
 * and the MessagePort of its own that carries chunks both ways by credit. Host-neutral.
 *
 * At most IN_WINDOW chunks or IN_BYTES are on their way in (a writer waits beyond), at
 * most OUT_WINDOW outputs are sent ahead of what the reader took (the transform pauses
 * beyond that). While the transform waits on this side with everything sent seen (for
 * input, or for a reader), the stream is parked (JobOptions.park): its job gives its slot
 * of the pool's thread budget back and its worker runs other jobs; anything sent then
 * takes a slot again first (the messages wait here, in order, until it has one). Parked
 * with nothing written and unanswered, the job and the port stop keeping the process
 * alive too — an open filter nobody ends does not hold a process, as Node's own streams
 * do not; chunks written that the transform has not taken (it waits for a reader) are
 * work in flight and keep it alive until they are answered or the stream is destroyed.
 * The job stays on its worker throughout, with its state, and the pool keeps its threads
 * (`hold()`).
 */
import { describe, makeError } from '../errors.js';
import type { Transferable } from '../host.js';
import type { ParkSwitch } from '../pool/jobs.js';
import { defaultPool, Pool } from '../pool/pool.js';
import { nextTurn } from '../pool/turn.js';
import { registerTask, runTask } from '../tasks/index.js';
import { taskRef } from '../tasks/ref.js';
import {
  type DriverLimits,
  type DriverPort,
  type FromDriver,
  streamDriver,
  type ToDriver,
} from '../tasks/stream-driver.js';
import { isArray, isInstance, toOptions } from '../validate.js';

export interface TaskFilterOptions {
  /** More arguments for the export: after the chunks (a generator) or after `state` (per chunk). */
  args?: unknown[] | undefined;
  /**
   * Any structured-cloneable value per chunk, both ways. Default: bytes — Buffers,
   * Uint8Arrays or strings written, Uint8Arrays seen by the transform, bytes read (it
   * may pass Uint8Arrays or strings on; strings become UTF-8).
   */
  objectMode?: boolean | undefined;
  /** The pool whose worker runs the transform (default: the module's, else the default pool). */
  pool?: Pool | undefined;
  /** Aborting fails the stream with ERR_ABORTED and ends the transform on its worker. */
  signal?: AbortSignal | undefined;
  /**
   * Bytes only: a written chunk that is its whole ArrayBuffer moves to the worker instead
   * of being copied (the writer must not touch a chunk after writing it; a Buffer from
   * Node's shared pool, or any view into a larger buffer, is still copied). Default false.
   */
  transfer?: boolean | undefined;
}

const KEYS = ['args', 'objectMode', 'pool', 'signal', 'transfer'] as const;
/**
 * Chunks written and not yet taken by the transform, at most, and their bytes: a writer
 * waits beyond either. Wide enough that a worker the OS keeps off its core for a few ms
 * (a shared machine) still has work queued: throughput is about window / round trip.
 * 64 and 8 MiB: with 16 and 4 MiB, 64 KiB chunks, the loop sat idle half the time.
 */
const IN_WINDOW = 64;
const IN_BYTES = 8 * 1024 * 1024;
/**
 * Outputs the worker may send ahead of what the reader took, and their bytes (Uint8Arrays;
 * the transform pauses when either runs out). With 16 outputs, a copy of 64 KiB chunks
 * waited for credit once a window, ~540 times in 8,192 chunks (issue 34), for a turn of
 * the loop and a wake-up each.
 */
export const OUT_WINDOW = 64;
const OUT_BYTES = 8 * 1024 * 1024;
/**
 * The driver reports after half of each window (and whenever the transform waits): the
 * writer fills one half while the transform works on the other. Reporting at the window's
 * end left the loop and the worker taking turns, each idle while the other worked.
 */
const LIMITS: DriverLimits = {
  took: IN_WINDOW / 2,
  tookBytes: IN_BYTES / 2,
  outs: OUT_WINDOW / 2,
  outBytes: OUT_BYTES / 2,
};
/** An output's bytes, as the driver counts them against its credit. */
const bytesOf = (value: unknown): number => (value instanceof Uint8Array ? value.byteLength : 0);

/** A task filter's checked options, and its export. */
export interface TaskFilterSetup {
  url: string;
  name: string;
  pool: Pool;
  args: unknown[];
  bytes: boolean;
  signal: AbortSignal | undefined;
  transfer: boolean;
}

/** Checks `filters.task(fn, options)`'s arguments (ERR_INVALID_ARG), as both forms take them. */
export function taskFilterSetup(fn: unknown, options: unknown, what: string): TaskFilterSetup {
  const o = toOptions<TaskFilterOptions>(options, KEYS, 'task filter options');
  const ref = taskRef(fn);
  if (!ref) {
    throw makeError('ERR_INVALID_ARG', `${what}() takes a task module's export (tasks(url).name), got ${describe(fn)}`);
  }
  if (o.args !== undefined && !isArray(o.args)) {
    throw makeError('ERR_INVALID_ARG', `options.args must be an array, got ${describe(o.args)}`);
  }
  if (o.objectMode !== undefined && typeof o.objectMode !== 'boolean') {
    throw makeError('ERR_INVALID_ARG', `options.objectMode must be a boolean, got ${describe(o.objectMode)}`);
  }
  if (o.transfer !== undefined && typeof o.transfer !== 'boolean') {
    throw makeError('ERR_INVALID_ARG', `options.transfer must be a boolean, got ${describe(o.transfer)}`);
  }
  if (o.pool !== undefined && !isInstance(o.pool, Pool)) {
    throw makeError('ERR_INVALID_ARG', 'options.pool must be an offthread Pool');
  }
  if (o.signal !== undefined && !isInstance(o.signal, AbortSignal)) {
    throw makeError('ERR_INVALID_ARG', `options.signal must be an AbortSignal, got ${describe(o.signal)}`);
  }
  return {
    url: ref.url,
    name: ref.name,
    pool: o.pool ?? ref.pool ?? defaultPool(),
    args: o.args ?? [],
    bytes: o.objectMode !== true,
    signal: o.signal,
    transfer: o.transfer === true,
  };
}

let driverUrl: string | undefined;
/** @internal The driver module's URL where the package's files can be imported (Node: filters/task.ts sets it). */
export function setDriverUrl(url: string | undefined): void {
  driverUrl = url;
}
/**
 * The driver's module: the package's file where there is one, else its source as a
 * data: URL (a browser's task workers, wherever the bundler put this package).
 */
export function driverModule(): string {
  driverUrl ??= `data:text/javascript,${encodeURIComponent(
    `export const drive = (${streamDriver.toString()})((url) => import(url));\n`,
  )}`;
  return driverUrl;
}

/** A chunk that is all of its own ArrayBuffer (not a view into Node's Buffer pool or a larger buffer). */
const isWholeBuffer = (bytes: Uint8Array): boolean =>
  bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;

/** A MessagePort as both hosts have it; Node's also has ref()/unref(). */
interface CallerPort {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  onmessage: ((event: { data: unknown }) => void) | null;
  close(): void;
  ref?(): void;
  unref?(): void;
}

/** What a channel tells its stream. */
export interface ChannelEvents {
  /** An output arrived (as the worker sent it); returns whether the reader has room for more. */
  out(value: unknown): boolean;
  /** The transform took chunks: a writer held back may go on (see `roomIn`). */
  room(): void;
  /** Whether the writer holds chunks written to the stream and not yet sent. */
  held(): boolean;
  /** The transform has ended; every output was received. */
  ended(): void;
  /** The job failed (the task's error, typed) or could not start. */
  failed(err: Error): void;
}

/** One task filter's job and port (see the file's comment). */
export class TaskChannel {
  readonly setup: TaskFilterSetup;
  readonly #events: ChannelEvents;
  readonly #controller = new AbortController();
  #port: CallerPort | null = null;
  #release: (() => void) | null = null;
  /** Chunks sent and not yet reported taken, and their sizes (bytes; 0 in object mode). */
  #inFlight = 0;
  #inBytes = 0;
  readonly #sizes: number[] = [];
  /** Outputs granted and not yet received, and their bytes (the driver's credit, mirrored). */
  #granted = 0;
  #grantedBytes = 0;
  /** Messages sent to the driver; a 'wait' that had seen them all parks the stream. */
  #sent = 0;
  /** Parked: the job gave its budget slot back (see the file's comment). */
  #parked = false;
  /** Messages waiting, in order, for the parked job to take a budget slot again; null when none. */
  #outbox: [ToDriver, ArrayBuffer[] | undefined][] | null = null;
  /**
   * The next message, sent once the writes of this turn are in it (a microtask): chunks,
   * the buffers they move, credit, the end. A message per chunk cost the loop more than
   * a 64 KiB copy (issue 34).
   */
  #chunks: unknown[] = [];
  #moving: ArrayBuffer[] = [];
  #credit = 0;
  #creditBytes = 0;
  #end = false;
  #due = false;
  /** A 'wait' whose park is due at the loop's next turn: the messages it had seen; -1: none. */
  #waitSeen = -1;
  /** The job's park switch (JobOptions.park). */
  #switch: ParkSwitch | null = null;
  /** The transform has ended (every output received), or the channel was closed. */
  #over = false;
  /** Room for the writer and credit for the worker, due at the loop's next turn. */
  #roomDue = false;
  #grantDue = false;
  #turnDue = false;
  /** What the reader said last: an output left it room, or it asked for more. */
  #readerRoom = true;

  constructor(setup: TaskFilterSetup, events: ChannelEvents) {
    this.setup = setup;
    this.#events = events;
  }

  get started(): boolean {
    return this.#port !== null;
  }

  /** The transform has ended: later input is dropped. */
  get ended(): boolean {
    return this.#over;
  }

  /** Whether a writer may send more now. */
  roomIn(): boolean {
    return this.#inFlight < IN_WINDOW && this.#inBytes < IN_BYTES;
  }

  /** Starts the job on the first chunk (or the end): an unused filter holds no worker. */
  start(): void {
    if (this.#port || this.#over) return;
    const { port1, port2 } = new MessageChannel();
    const port = port1 as unknown as CallerPort;
    this.#port = port;
    const { pool, url, name, args } = this.setup;
    this.#release = pool.hold();
    port.onmessage = ({ data }) => this.#onMessage(data as FromDriver);
    try {
      registerTask(pool, url, name);
    } catch {
      // A closed pool: runTask says so.
    }
    runTask(pool, driverModule(), 'drive', [port2 as unknown as DriverPort, url, name, args, LIMITS], {
      signal: this.#controller.signal,
      transfer: [port2 as unknown as Transferable],
      park: (sw) => {
        this.#switch = sw;
      },
    }).then(
      () => {},
      (err: unknown) => {
        if (this.#over) return;
        this.close();
        this.#events.failed(err as Error);
      },
    );
    this.#grantNow();
  }

  /**
   * Sends one chunk, with the others written this turn (ERR_TASK_DATA if it cannot cross).
   * Bytes always can; an object-mode chunk goes at once, so that structured clone's
   * refusal reaches this write.
   */
  write(chunk: unknown): void {
    this.start();
    if (this.#over) return;
    const { bytes, transfer } = this.setup;
    let size = 0;
    if (bytes) {
      const data = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : (chunk as Uint8Array);
      size = data.byteLength;
      const moving = this.#moving;
      if ((data !== chunk || (transfer && isWholeBuffer(data))) && !moving.includes(data.buffer as ArrayBuffer)) {
        this.#chunks.push(data);
        moving.push(data.buffer as ArrayBuffer);
      } else {
        // Its own copy, moved: the writer may reuse its chunk, and a view would clone its whole buffer.
        const own = new Uint8Array(data.byteLength);
        own.set(data);
        this.#chunks.push(own);
        moving.push(own.buffer);
      }
      this.#queue();
    } else {
      this.#chunks.push(chunk);
      try {
        this.#sendQueued();
      } catch (err) {
        throw makeError('ERR_TASK_DATA', `a chunk cannot cross to the worker: ${(err as Error).message}`);
      }
    }
    this.#inFlight++;
    this.#inBytes += size;
    this.#sizes.push(size);
  }

  /** The input ended: the transform ends once it has taken everything. */
  end(): void {
    this.start();
    if (this.#over) return;
    this.#end = true;
    this.#queue();
  }

  /** The next message goes once this turn's synchronous writes are in it. */
  #queue(): void {
    if (this.#due) return;
    this.#due = true;
    queueMicrotask(this.#flushQueued);
  }

  readonly #flushQueued = (): void => {
    try {
      this.#sendQueued();
    } catch (err) {
      // A chunk that cannot move (transfer: true, and the writer moved or reused its buffer).
      const failure = makeError('ERR_TASK_DATA', `a chunk cannot cross to the worker: ${(err as Error).message}`);
      this.abort(failure);
      this.#events.failed(failure);
    }
  };

  /** Sends the queued chunks, credit and end as one message (none if nothing is queued). */
  #sendQueued(): void {
    this.#due = false;
    if (this.#over) return;
    // Chunks going anyway carry all the credit the reader has room for. Granted only in
    // halves, the credit ran out once a window: the driver reports after taking half a
    // window, one output short of half, so the grant waited for the next report and the
    // transform for the grant (150 stalls in 4,096 chunks of 64 KiB; 4 with this).
    if (this.#chunks.length > 0 && this.#readerRoom) this.#grant(0);
    const msg: ToDriver = {};
    if (this.#chunks.length > 0) msg.c = this.#chunks;
    if (this.#credit > 0) msg.n = this.#credit;
    if (this.#creditBytes > 0) msg.b = this.#creditBytes;
    if (this.#end) msg.end = true;
    const transfer = this.#moving;
    this.#chunks = [];
    this.#moving = [];
    this.#credit = 0;
    this.#creditBytes = 0;
    this.#end = false;
    if (msg.c || msg.n || msg.b || msg.end) this.#post(msg, transfer.length > 0 ? transfer : undefined);
  }

  /** Lets the worker send more once half the window was read (at the loop's next turn). */
  grant(): void {
    this.#readerRoom = true;
    this.#grantDue = true;
    this.#soon();
  }

  // Node's MessagePort delivers up to 1,000 messages in one callback, those arriving
  // meanwhile included. Credit sent from inside that callback lets the worker keep it
  // going — chunks in, outputs out, the loop held: 12–22 ms without a timer turn with
  // 64 KiB chunks (measured). So room and credit go out from the loop's next turn, and one
  // callback handles at most the windows' worth of messages. A park the driver asks for
  // waits for that turn too: a writer given room then sends more, and the stream goes on
  // without giving its budget slot back and taking it again for each window.
  #soon(): void {
    if (this.#turnDue) return;
    this.#turnDue = true;
    nextTurn(this.#turn);
  }

  readonly #turn = (): void => {
    this.#turnDue = false;
    if (this.#grantDue) {
      this.#grantDue = false;
      // Outputs that came after the grant was asked for may have filled the reader.
      if (this.#readerRoom) this.#grantNow();
    }
    if (this.#roomDue) {
      this.#roomDue = false;
      this.#events.room();
    }
    const seen = this.#waitSeen;
    this.#waitSeen = -1;
    // Parked only if nothing went (or is about to go) since the driver said it waits.
    if (seen === this.#sent && !this.#due && this.#outbox === null && !this.#over) this.#park();
  };

  /** Credit for a message of its own: only once half a window of it is due. */
  #grantNow(): void {
    if (this.#grant(2)) this.#queue();
  }

  /** Grants the worker the rest of the windows if a `1/part` of either is due (0: any). */
  #grant(part: number): boolean {
    const want = OUT_WINDOW - this.#granted;
    const wantBytes = OUT_BYTES - this.#grantedBytes;
    if (this.#port === null || this.#over || (want <= 0 && wantBytes <= 0)) return false;
    if (part > 0 && want < OUT_WINDOW / part && wantBytes < OUT_BYTES / part) return false;
    this.#granted += want;
    this.#grantedBytes += wantBytes;
    this.#credit += want;
    this.#creditBytes += wantBytes;
    return true;
  }

  /** The stream was destroyed or cancelled: the job aborts, which ends the transform on its worker. */
  abort(reason: unknown): void {
    if (this.#port !== null && !this.#over) this.#controller.abort(reason);
    this.close();
  }

  /** The job is over or abandoned: the port closes, the pool may sleep again. */
  close(): void {
    this.#over = true;
    this.#outbox = null;
    this.#chunks = [];
    this.#moving = [];
    this.#port?.close();
    this.#release?.();
    this.#release = null;
  }

  /** Sends `msg` to the driver; a parked job takes a budget slot again first (the message waits). */
  #post(msg: ToDriver, transfer?: ArrayBuffer[]): void {
    if (this.#outbox) {
      this.#outbox.push([msg, transfer]);
      return;
    }
    if (this.#parked) {
      this.#parked = false;
      this.#port?.ref?.();
      if (this.#switch) {
        this.#outbox = [[msg, transfer]];
        this.#switch.resume(() => this.#flush());
        return;
      }
    }
    this.#send(msg, transfer);
  }

  #send(msg: ToDriver, transfer?: ArrayBuffer[]): void {
    (this.#port as CallerPort).postMessage(msg, transfer);
    this.#sent++;
  }

  /** The job has a budget slot again: what waited goes to the driver, in order. */
  #flush(): void {
    const waiting = this.#outbox ?? [];
    this.#outbox = null;
    for (const [msg, transfer] of waiting) {
      if (this.#over) return;
      try {
        this.#send(msg, transfer);
      } catch (err) {
        // An object-mode chunk structured clone refuses, written while the job was parked.
        const failure = makeError('ERR_TASK_DATA', `a chunk cannot cross to the worker: ${(err as Error).message}`);
        this.abort(failure);
        this.#events.failed(failure);
        return;
      }
    }
  }

  /**
   * The transform waits on this side with everything sent seen: parked, the job's budget
   * slot goes back. Chunks written and not yet taken (it waits for a reader) keep the
   * process alive; with none, neither the job nor the port does.
   */
  #park(): void {
    // Chunks the writer holds back (no room, or a reader that does not read) count too:
    // room goes out a turn later, so they may not have been sent when the transform waits.
    const keepAlive = this.#inFlight > 0 || this.#events.held();
    this.#parked = true;
    this.#switch?.park({ keepAlive });
    if (keepAlive) this.#port?.ref?.();
    else this.#port?.unref?.();
  }

  #onMessage(msg: FromDriver): void {
    if (this.#over) return;
    if (msg.took > 0) {
      this.#inFlight -= msg.took;
      for (let i = 0; i < msg.took; i++) this.#inBytes -= this.#sizes.shift() ?? 0;
      this.#roomDue = true;
      this.#soon();
    }
    for (const value of msg.o) {
      this.#granted--;
      this.#grantedBytes -= bytesOf(value);
      if (this.#events.out(value)) this.grant();
      else this.#readerRoom = false;
      if (this.#over) return; // the reader destroyed the stream
    }
    if (msg.end) {
      this.close();
      this.#events.ended();
    } else if (msg.wait !== undefined) {
      // Parks at the next turn (see nextTurn) unless something is sent by then.
      this.#waitSeen = msg.wait;
      this.#soon();
    }
  }
}
