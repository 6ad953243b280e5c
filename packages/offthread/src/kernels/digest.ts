/**
 * The hash kernels' inputs (md5.ts, sha256.ts): one check for their sync and async
 * calls, so both take the same values and refuse the rest alike, and the async digest,
 * which never copies a large input on the event loop in one go (issue 30).
 *
 * A job cannot read a detachable buffer in place: a transfer during the job would free
 * the memory under it (issue 11, crates/offthread-node/src/bytes.rs). So a large input
 * goes piece by piece: on the native engine each piece (1 MiB) is copied by the submit
 * call and added to a running digest on the pool (a `NativeFilter`), the loop free
 * between pieces; on a worker engine the pieces are copied into a SharedArrayBuffer
 * between loop turns and the job reads that in place. A view of a SharedArrayBuffer
 * is read in place already (it cannot be detached) and goes as one job.
 */
import { describe, makeError } from '../errors.js';
import { host } from '../host.js';
import { raceAbort } from '../pool/call.js';
import { type CallOptions, checkCallOptions, type Pool, poolOf } from '../pool/pool.js';
import { nextTurn } from '../pool/turn.js';
import { CALL_KEYS, isInstance, toOptions } from '../validate.js';
import { callAsync } from './registry.js';

/** What `md5.hex`/`sha256.hex` and their async forms hash: a string (its UTF-8) or bytes. */
export type HashData = string | Uint8Array;

/** The one check of a hash input, sync and async: a string or a Uint8Array (Buffer included). */
export function checkHashData(data: unknown): HashData {
  if (typeof data === 'string' || isInstance(data, Uint8Array)) return data;
  throw makeError('ERR_INVALID_ARG', `data must be a string or Uint8Array, got ${describe(data)}`);
}

/**
 * Inputs longer than this (bytes, or UTF-16 units of a string) go in pieces this long:
 * copying one takes ≈ 0.1 ms on the loop, hashing it ≈ 1–2 ms on a pool thread.
 */
export const PIECE = 1 << 20;

type Kind = 'md5' | 'sha256';
/** Each kind's registry kernel: constant names (a name built per call is hashed per lookup). */
const HEX = { md5: 'md5.hex', sha256: 'sha256.hex' } as const;
const NO_BYTES = new Uint8Array(0);

const isShared = (bytes: Uint8Array) =>
  typeof SharedArrayBuffer !== 'undefined' && isInstance(bytes.buffer, SharedArrayBuffer);

/**
 * `md5.hexAsync` / `sha256.hexAsync`: their checks, then `digestAsync`. Not async: a
 * small input's call is the pool's own promise (no extra promise and tick); bad input
 * rejects, never throws.
 */
export function hexAsync(kind: Kind, data: unknown, options: unknown): Promise<string> {
  try {
    return digestAsync(kind, checkHashData(data), checkCallOptions(toOptions<CallOptions>(options, CALL_KEYS)));
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * The digest of `data` as pool jobs, lowercase hex. Honours `{ pool, signal, timeout }`
 * (the timeout covers the whole call). The bytes must not change until it settles; a
 * buffer detached or shrunk meanwhile rejects the call with ERR_INVALID_ARG.
 */
export function digestAsync(kind: Kind, input: HashData, call: CallOptions): Promise<string> {
  // A detached view reads as no bytes, as `hex` reads it; posted as is to a worker it
  // would fail to clone (and leave the worker engine's slot taken).
  const data = typeof input !== 'string' && input.byteLength === 0 ? NO_BYTES : input;
  const small = typeof data === 'string' ? data.length <= PIECE : data.byteLength <= PIECE || isShared(data);
  // The common case stays one pool call, no extra async step (services/http calls it per round).
  if (small) return callAsync(call, { kernel: HEX[kind], input: data }) as Promise<string>;
  return large(kind, data, call);
}

async function large(kind: Kind, data: HashData, call: CallOptions): Promise<string> {
  // The length as it is now, before the caller runs again (and may detach the buffer).
  const parts = pieces(data);
  const byteLength = typeof data === 'string' ? 0 : data.byteLength;
  const pool = await poolOf(call);
  // Strings go whole to worker engines (structured clone copies them; only the native
  // engine encodes them piece by piece).
  if (pool.engine !== 'native' && typeof data === 'string') {
    return (await callAsync(call, { kernel: HEX[kind], input: data })) as string;
  }
  if (call.signal?.aborted) throw makeError('ERR_ABORTED', 'The operation was aborted', call.signal.reason);
  // The pieces run under this call's own signal, aborted when the call fails (abort,
  // timeout, a failed piece), so nothing is left running for it.
  const inner = new AbortController();
  const work =
    pool.engine === 'native'
      ? inPieces(pool, kind, parts, inner.signal)
      : viaShared(pool, kind, data as Uint8Array, byteLength, parts, inner.signal);
  try {
    return await raceAbort(work, call);
  } catch (err) {
    inner.abort(err);
    work.catch(() => {}); // reported through `err`
    throw err;
  }
}

/** Native engine: a running digest on the pool, fed one piece per job. */
async function inPieces(pool: Pool, kind: Kind, parts: (() => Uint8Array)[], signal: AbortSignal): Promise<string> {
  const native = host().native();
  if (!native) throw makeError('ERR_BACKEND_UNAVAILABLE', 'the native engine needs the addon');
  pool.assertOpen();
  const filter = new native.NativeFilter(JSON.stringify({ kind }));
  const call = { signal };
  for (const piece of parts) {
    if (signal.aborted) throw signal.reason;
    await pool.run('filter', { filter, chunk: piece() }, call);
  }
  const digest = await pool.run('filter', { filter, chunk: null }, call);
  return toHex(digest as Uint8Array);
}

/** Worker engines: the bytes copied into shared memory between loop turns, then one job. */
async function viaShared(
  pool: Pool,
  kind: Kind,
  bytes: Uint8Array,
  length: number,
  parts: (() => Uint8Array)[],
  signal: AbortSignal,
): Promise<string> {
  // A browser page without cross-origin isolation has no SharedArrayBuffer: the job
  // gets the bytes by postMessage, a copy on this thread.
  if (typeof SharedArrayBuffer === 'undefined') {
    return (await pool.run('registry', { kernel: HEX[kind], input: bytes }, { signal })) as string;
  }
  pool.assertOpen();
  const shared = new Uint8Array(new SharedArrayBuffer(length));
  let at = 0;
  for (const piece of parts) {
    if (signal.aborted) throw signal.reason;
    const p = piece();
    shared.set(p, at);
    at += p.byteLength;
    await new Promise<void>((resolve) => nextTurn(resolve));
  }
  return (await pool.run('registry', { kernel: HEX[kind], input: shared }, { signal })) as string;
}

const encoder = new TextEncoder();

/**
 * The input's pieces in order, each made only when asked for (after the previous one was
 * hashed). The length is taken now, at the call: a piece of bytes first checks that
 * its buffer was not detached or shrunk since. Strings are never cut inside a surrogate
 * pair (so their UTF-8 equals the whole string's, lone surrogates → U+FFFD alike).
 */
function pieces(data: HashData): (() => Uint8Array)[] {
  const out: (() => Uint8Array)[] = [];
  if (typeof data === 'string') {
    for (let at = 0; at < data.length; ) {
      let end = Math.min(at + PIECE, data.length);
      const last = data.charCodeAt(end - 1);
      if (end < data.length && last >= 0xd800 && last <= 0xdbff) end--;
      const [from, to] = [at, end];
      out.push(() => encoder.encode(data.slice(from, to)));
      at = end;
    }
    return out;
  }
  const length = data.byteLength;
  for (let at = 0; at < length; at += PIECE) {
    const from = at;
    out.push(() => {
      if (data.byteLength < length) {
        throw makeError('ERR_INVALID_ARG', 'data was detached or shrunk while it was being hashed');
      }
      return data.subarray(from, Math.min(from + PIECE, length));
    });
  }
  return out;
}

function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}
