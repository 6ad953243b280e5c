/**
 * What a task job carries across Redis: its arguments, result and progress values in
 * V8's serialization format (the format of structured clone itself, so a value arrives as
 * a local task call's would: Map, Set, Date, bigint, typed arrays as their bytes, n bytes
 * costing n + a few), its errors whole (name, message, stack, code, cause, own
 * properties, as pool/wire.ts carries them between threads), and its module's identity.
 *
 * Why V8's format and not JSON or msgpack: BullMQ's JSON turns a Uint8Array into an
 * object of numbered keys (about 9 bytes a byte); msgpack keeps bytes but not structured
 * clone's value set (a Map, a bigint, a RegExp need extensions, a class instance passes
 * as a plain object). Every Node the package supports (20, 22, 24, 26) writes format
 * version 15 and reads the others' (checked: each version reads every other's bytes);
 * a producer and a worker that do not share one fail the job with ERR_QUEUE_PAYLOAD.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as v8 from 'node:v8';
import { describe, makeError } from '../errors.js';
import { findUncloneable, fromWire, toWire } from '../pool/wire.js';
import { fromBase64, isBase64, toBase64 } from './wire.js';

/** BullMQ job names of task jobs: `task:<module name>.<export>` (readable in dashboards). */
export const TASK_PREFIX = 'task:';
/** A task module's name: what `--tasks` files are known by (their base name). */
export const MODULE_NAME = /^[A-Za-z0-9_-]{1,100}$/;
/** An export's name in a job name (any property name a module can export, within reason). */
const EXPORT_NAME = /^[^\s]{1,200}$/;

/** Structured clone gives a view its own buffer, of its own class; Node's reader shares the message's. */
const readView = (v8.DefaultDeserializer.prototype as unknown as { _readHostObject(): ArrayBufferView })
  ._readHostObject;

class Reader extends v8.DefaultDeserializer {
  /** Node's hook for a view (not in its type declarations): the view made, then copied. */
  _readHostObject(): unknown {
    const view = readView.call(this);
    // A Buffer arrives as structured clone hands one to a local task: a Uint8Array.
    const Ctor = (Buffer.isBuffer(view) ? Uint8Array : view.constructor) as new (length: number) => ArrayBufferView;
    const own = new Ctor(
      view.byteLength / ((view as unknown as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 1),
    );
    new Uint8Array(own.buffer).set(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
    return own;
  }
}

const writeView = (v8.DefaultSerializer.prototype as unknown as { _writeHostObject(view: ArrayBufferView): void })
  ._writeHostObject;

/** Node's writer copies a view's bytes whatever its buffer: memory shared with this process's threads stays here. */
class Writer extends v8.DefaultSerializer {
  _writeHostObject(view: ArrayBufferView): void {
    if (typeof SharedArrayBuffer !== 'undefined' && view.buffer instanceof SharedArrayBuffer) {
      throw new TypeError('a view of a SharedArrayBuffer cannot be shared with another machine');
    }
    writeView.call(this, view);
  }
}

/**
 * `value` in V8's format. Refused with ERR_TASK_DATA (naming the path) exactly where a
 * local task call refuses it (a function, a Symbol, a class instance), and where only a
 * local call could take it: a SharedArrayBuffer cannot be shared with another machine.
 */
export function encodeValue(value: unknown, what: string): Uint8Array {
  const found = findUncloneable(value, what);
  if (found) throw makeError('ERR_TASK_DATA', `${found}: it cannot cross to a queue worker`);
  const s = new Writer();
  s.writeHeader();
  try {
    s.writeValue(value);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw makeError('ERR_TASK_DATA', `${what}: it cannot cross to a queue worker (${why})`, err);
  }
  return s.releaseBuffer();
}

export function decodeValue(bytes: Uint8Array, what: string): unknown {
  try {
    const r = new Reader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    r.readHeader();
    return r.readValue();
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw makeError(
      'ERR_QUEUE_PAYLOAD',
      `${what}: not a value in V8's serialization format this Node (${process.version}) reads (${why})`,
      err,
    );
  }
}

/** Marks the encoded error after the readable first line of a task job's `failedReason`. */
const ERROR_MARK = '\n[offthread error v8:';

/**
 * A task job's failure as BullMQ keeps it: a readable line (dashboards, logs), then the
 * error whole, so the producer rejects with what a local call would reject with.
 */
export function taskReason(err: unknown): string {
  const e = err as { name?: unknown; message?: unknown; code?: unknown } | null;
  const line =
    err instanceof Error
      ? `${typeof e?.code === 'string' ? `${e.code}: ` : ''}${err.name}: ${err.message}`
      : `thrown: ${describe(err)}`;
  let encoded: string;
  try {
    encoded = toBase64(encodeValue(toWire(err), 'error'));
  } catch {
    encoded = toBase64(encodeValue(toWire(new Error(line)), 'error'));
  }
  return `${line.split('\n')[0]}${ERROR_MARK}${encoded}]`;
}

/** The error a task job failed with, or undefined when `reason` was not written by taskReason. */
export function errorOfTaskReason(reason: string): unknown {
  const at = reason.lastIndexOf(ERROR_MARK);
  if (at < 0 || !reason.endsWith(']')) return undefined;
  const text = reason.slice(at + ERROR_MARK.length, -1);
  if (!isBase64(text)) return undefined;
  try {
    return fromWire(decodeValue(fromBase64(text), 'error'));
  } catch {
    return undefined;
  }
}

/** A task module's identity: its file's content hash, and the `version` it exports, if any. */
export interface ModuleIdentity {
  /** The first 16 hex digits of the SHA-256 of the module file's bytes. */
  hash: string;
  version?: string | undefined;
}

/** A module file's bytes; a file that cannot be read is ERR_TASK_MODULE. */
export function readModule(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw makeError('ERR_TASK_MODULE', `cannot read the task module ${path}: ${why}`, err);
  }
}

/** The first 16 hex digits of the SHA-256 of `bytes`: a module's identity on the wire. */
export function hashOf(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 16);
}

/** The content hash of a module file (its bytes only: not the files it imports). */
export function moduleHash(path: string): string {
  return hashOf(readModule(path));
}

/** A module file given as a URL or an absolute path: its path, URL and default name. */
export function moduleFile(module: string | URL, what: string): { path: string; url: string; name: string } {
  let url: URL;
  if (module instanceof URL) url = module;
  else if (typeof module === 'string' && module.startsWith('/')) url = pathToFileURL(module);
  else if (typeof module === 'string' && module.startsWith('file:')) url = new URL(module);
  else {
    throw makeError(
      'ERR_INVALID_ARG',
      `${what} needs an absolute path or a file: URL of the module, got ${describe(module)}`,
    );
  }
  if (url.protocol !== 'file:') {
    throw makeError('ERR_INVALID_ARG', `${what} needs a file: URL (its bytes are hashed), got ${url.href}`);
  }
  const path = fileURLToPath(url);
  const name = basename(path, extname(path));
  return { path, url: url.href, name };
}

/** Splits a task job's name into its module and export, or null when it is not one. */
export function parseTaskJobName(name: string): { module: string; fn: string } | null {
  if (!name.startsWith(TASK_PREFIX)) return null;
  const rest = name.slice(TASK_PREFIX.length);
  const dot = rest.indexOf('.');
  if (dot < 0) return null;
  const module = rest.slice(0, dot);
  const fn = rest.slice(dot + 1);
  return MODULE_NAME.test(module) && EXPORT_NAME.test(fn) ? { module, fn } : null;
}

/** BullMQ job names of guest jobs: `guest:<module>.<interface>.<function>`. */
export const GUEST_PREFIX = 'guest:';
const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,99}$/;

export function parseGuestJobName(name: string): { module: string; iface: string; fn: string } | null {
  if (!name.startsWith(GUEST_PREFIX)) return null;
  const [module, iface, fn, ...more] = name.slice(GUEST_PREFIX.length).split('.');
  if (more.length > 0 || module === undefined || iface === undefined || fn === undefined) return null;
  return MODULE_NAME.test(module) && IDENT.test(iface) && IDENT.test(fn) ? { module, iface, fn } : null;
}

export function guestJobName(module: string, iface: string, fn: string): string {
  for (const [what, v] of [
    ['interface', iface],
    ['function', fn],
  ] as const) {
    if (typeof v !== 'string' || !IDENT.test(v)) {
      throw makeError('ERR_INVALID_ARG', `a guest ${what} name must be an identifier, got ${describe(v)}`);
    }
  }
  return `${GUEST_PREFIX}${module}.${iface}.${fn}`;
}

export function taskJobName(module: string, fn: string): string {
  if (!EXPORT_NAME.test(fn)) throw makeError('ERR_INVALID_ARG', `task export name ${describe(fn)} cannot be queued`);
  return `${TASK_PREFIX}${module}.${fn}`;
}
