/**
 * The shared-memory mailbox of one pool worker (host-neutral; used where workers can
 * share memory). A small call — a function named by three numbers, bytes in, bytes out:
 * today the guests' calls — travels through it instead of a postMessage each way:
 *
 *   caller: writes the call into the box, sets CALL, bumps SIGNAL, Atomics.notify.
 *   worker: spins briefly on SIGNAL after a lone call, then Atomics.wait(SIGNAL); runs
 *           the call, writes the result (or error) into the box, then exchanges DONE.
 *   caller: a lone call spins ≤ 20 µs on DONE (workers.ts); otherwise, or after
 *           the spin, it sets DONE to ASLEEP and the worker, seeing ASLEEP in the value
 *           it exchanged, posts a tiny 'mail' message to wake it.
 *
 * A worker blocked in Atomics.wait cannot receive postMessage traffic (setup messages,
 * calls whose payload does not fit): the caller counts what it posts in POSTED and bumps
 * SIGNAL; a worker whose count of received messages differs returns to its event loop.
 * terminate() interrupts Atomics.wait, so timeouts still replace a stuck worker.
 */

/** A call the box carries (the guests' `GuestCall` of kind 'call' has this shape). */
export interface MailCall {
  kind: 'call';
  module: number;
  export: number;
  function: number;
  /** Bytes, or null; other inputs (shared memory) are posted, not mailed (`fitsBox`). */
  input: unknown;
  /** Bytes the result may take, or null. */
  outputLimit: number | null;
}

/** What a worker writes back: bytes (a view it still owns), or an error. */
export type MailOutcome =
  | { ok: true; view?: Uint8Array | undefined }
  | { ok: false; error: { code: string; message: string } };

/** Int32 slots of the header. CANCEL is the worker engine's cancel flag (kernels). */
export const CANCEL = 0;
/** Bumped by the caller on every call or message; the worker waits on it. */
export const SIGNAL = 1;
/** 1: a call waits in the box (the worker sets it back to 0 when it takes it). */
export const CALL = 2;
/** Messages the caller has posted to this worker (the worker counts what it received). */
export const POSTED = 3;
/** The call's state, below. */
export const DONE = 4;
const ID = 5;
const MODULE = 6;
const EXPORT = 7;
const FUNCTION = 8;
const IN_LEN = 9;
const STATUS = 10;
const OUT_LEN = 11;
/** 1: the caller has nothing else pending (a lone call): the worker watches the box after it. */
export const LONE = 12;
/** Float64 slot (outputLimit can reach 4 GiB). */
const OUT_LIMIT = 8;

/** DONE: running. */
export const RUNNING = 0;
/** DONE: the result (or error) is in the box. */
export const IN_BOX = 1;
/** DONE: the caller stopped watching; the worker posts 'mail' when it finishes. */
export const ASLEEP = 2;
/** DONE: the result did not fit; it comes as a 'done' message. */
export const BY_MESSAGE = 3;
/** DONE: the caller stopped spinning and waits with Atomics.waitAsync; the worker notifies DONE. */
export const WATCHING = 4;

const HEADER = 128;
/** Bytes of input or result the box carries (a 64 KiB message and its framing fit). */
export const BOX_DATA = 128 * 1024 - HEADER;
export const BOX_BYTES = HEADER + BOX_DATA;

export interface Box {
  i32: Int32Array;
  f64: Float64Array;
  data: Uint8Array;
}

export function openBox(buffer: SharedArrayBuffer): Box {
  return {
    i32: new Int32Array(buffer, 0, HEADER / 4),
    f64: new Float64Array(buffer, 0, HEADER / 8),
    data: new Uint8Array(buffer, HEADER, BOX_DATA),
  };
}

/** The call can travel through the box: a plain call whose input fits. */
export function fitsBox(call: unknown): boolean {
  const c = call as { kind?: unknown; input?: unknown };
  if (c.kind !== 'call') return false;
  return c.input === null || (c.input instanceof Uint8Array && c.input.length <= BOX_DATA);
}

/** Caller: writes call `id` into the box (the worker is not reading it: it is idle). */
export function writeCall(box: Box, id: number, call: MailCall, done: number, lone: boolean): void {
  if (call.kind !== 'call') throw new Error('only calls go through the mailbox');
  const { i32 } = box;
  i32[ID] = id;
  i32[MODULE] = call.module;
  i32[EXPORT] = call.export;
  i32[FUNCTION] = call.function;
  const input = call.input as Uint8Array | null;
  i32[IN_LEN] = input === null ? -1 : input.length;
  if (input !== null) box.data.set(input);
  box.f64[OUT_LIMIT] = call.outputLimit ?? -1;
  i32[LONE] = lone ? 1 : 0;
  Atomics.store(i32, DONE, done);
  Atomics.store(i32, CALL, 1);
  Atomics.add(i32, SIGNAL, 1);
  Atomics.notify(i32, SIGNAL);
}

/** Caller: a message is on its way to the worker; a worker waiting in the box returns to its loop. */
export function noteMessage(box: Box): void {
  Atomics.add(box.i32, POSTED, 1);
  Atomics.add(box.i32, SIGNAL, 1);
  Atomics.notify(box.i32, SIGNAL);
}

export type BoxResult =
  | { id: number; ok: true; value: Uint8Array }
  | { id: number; ok: false; code: string; message: string };

/** Caller: the outcome in the box (DONE is IN_BOX). */
export function readResult(box: Box): BoxResult {
  const { i32 } = box;
  const id = i32[ID] as number;
  const len = i32[OUT_LEN] as number;
  const bytes = box.data.slice(0, len); // a copy the caller owns (not shared)
  if (i32[STATUS] === 0) return { id, ok: true, value: bytes };
  const text = new TextDecoder().decode(bytes);
  const cut = text.indexOf('\n');
  return { id, ok: false, code: text.slice(0, cut), message: text.slice(cut + 1) };
}

/** Worker: the call waiting in the box; its input is a view of the box. */
export function readCall(box: Box): { id: number; call: MailCall } {
  const { i32 } = box;
  const inLen = i32[IN_LEN] as number;
  const limit = box.f64[OUT_LIMIT] as number;
  return {
    id: i32[ID] as number,
    call: {
      kind: 'call',
      module: i32[MODULE] as number,
      export: i32[EXPORT] as number,
      function: i32[FUNCTION] as number,
      input: inLen < 0 ? null : box.data.subarray(0, inLen),
      outputLimit: limit < 0 ? null : limit,
    },
  };
}

const encoder = new TextEncoder();

/**
 * Worker: writes the outcome into the box and returns the DONE value the caller had
 * (ASLEEP: it must be woken). A result that does not fit is not written: false.
 */
export function writeResult(box: Box, out: MailOutcome): number | false {
  const { i32 } = box;
  if (out.ok) {
    const view = out.view;
    if (!view || view.length > BOX_DATA) return false;
    box.data.set(view);
    i32[STATUS] = 0;
    i32[OUT_LEN] = view.length;
  } else {
    const text = encoder.encode(`${out.error.code}\n${out.error.message}`).subarray(0, BOX_DATA);
    box.data.set(text);
    i32[STATUS] = 1;
    i32[OUT_LEN] = text.length;
  }
  return Atomics.exchange(i32, DONE, IN_BOX);
}
