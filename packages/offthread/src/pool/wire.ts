/**
 * What crosses between the caller and a job's worker besides the slot codec: errors with
 * everything a caller looks at (name, message, stack, code, cause, own properties), and
 * the check that names the part of a value that cannot cross.
 */
import { describe, type ErrorCode, errorRegistry, makeError, OffthreadError } from '../errors.js';

/** An error as it travels: structured clone alone keeps neither `code` nor own properties. */
export interface WireError {
  wire: 'error';
  name: string;
  message: string;
  stack: string | undefined;
  cause?: unknown;
  props: Record<string, unknown>;
  /** An offthread error on the worker (a task's call into offthread failed): one on the caller's side too. */
  offthread?: true;
}

const BUILTIN_ERRORS: Record<string, ErrorConstructor> = {
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

/** Turns a thrown value into something structured clone carries whole. */
export function toWire(thrown: unknown, depth = 0): unknown {
  if (thrown instanceof CodedFailure) return thrown.toWire();
  if (!(thrown instanceof Error) || depth > 8) return cloneable(thrown) ? thrown : describe(thrown);
  const props: Record<string, unknown> = {};
  for (const key of Object.keys(thrown)) {
    if (key === 'cause') continue;
    const value = (thrown as unknown as Record<string, unknown>)[key];
    props[key] = value instanceof Error ? toWire(value, depth + 1) : cloneable(value) ? value : describe(value);
  }
  const out: WireError = { wire: 'error', name: thrown.name, message: thrown.message, stack: thrown.stack, props };
  if (thrown instanceof OffthreadError) out.offthread = true;
  if ('cause' in thrown) out.cause = toWire(thrown.cause, depth + 1);
  return out;
}

/** Rebuilds a thrown value on the caller's side (an error of the same built-in class where there is one). */
export function fromWire(value: unknown): unknown {
  const w = value as WireError | null;
  if (typeof w !== 'object' || w === null) return value;
  if ((w as unknown as WireFailure).wire === 'code') {
    const f = w as unknown as WireFailure;
    return makeError(f.code in errorRegistry ? f.code : 'ERR_KERNEL_PANIC', f.message);
  }
  if (w.wire !== 'error') return value;
  const err = w.offthread ? offthreadError(w) : builtinError(w);
  if (err.name !== w.name) {
    Object.defineProperty(err, 'name', { value: w.name, configurable: true, writable: true });
  }
  if (w.stack !== undefined) err.stack = w.stack;
  for (const [k, v] of Object.entries(w.props)) (err as unknown as Record<string, unknown>)[k] = fromWire(v);
  return err;
}

/**
 * A task's own error stays its own: the built-in class of its name (or Error), never an
 * OffthreadError, even with an `ERR_*` code — offthread did not raise it.
 */
function builtinError(w: WireError): Error {
  const Ctor = BUILTIN_ERRORS[w.name] ?? Error;
  return 'cause' in w ? new Ctor(w.message, { cause: fromWire(w.cause) }) : new Ctor(w.message);
}

/** An error offthread raised on the worker: the registry's class for its code, as a local one would be. */
function offthreadError(w: WireError): Error {
  const code = w.props.code as ErrorCode;
  if (typeof code !== 'string' || !(code in errorRegistry)) return builtinError(w);
  return makeError(code, w.message, 'cause' in w ? fromWire(w.cause) : undefined);
}

function cloneable(value: unknown): boolean {
  return findUncloneable(value) === null;
}

/** Prototypes structured clone keeps (a value of another class would arrive as a plain object). */
const CLONED = new Set<object>(
  [
    Object.prototype,
    Array.prototype,
    Date.prototype,
    RegExp.prototype,
    Map.prototype,
    Set.prototype,
    ArrayBuffer.prototype,
    DataView.prototype,
    Boolean.prototype,
    Number.prototype,
    String.prototype,
    BigInt.prototype,
    ...Object.values(BUILTIN_ERRORS).map((E) => E.prototype),
    typeof SharedArrayBuffer === 'undefined' ? null : SharedArrayBuffer.prototype,
    typeof Blob === 'undefined' ? null : Blob.prototype,
  ].filter((p): p is object => p !== null),
);

/**
 * Where `value` holds something that cannot cross to another thread intact: a function,
 * a symbol, a WeakMap, a Promise, or an instance of a class (structured clone would drop
 * its class, its methods and its private fields, and hand over a plain object). Returns
 * a description with the path (`args[1].user.save: a function`), or null.
 */
export function findUncloneable(value: unknown, path = 'value', seen = new Set<object>()): string | null {
  switch (typeof value) {
    case 'function':
      return `${path}: a function`;
    case 'symbol':
      return `${path}: a Symbol`;
    case 'object': {
      if (value === null || seen.has(value)) return null;
      seen.add(value);
      if (ArrayBuffer.isView(value)) return null;
      const proto = Object.getPrototypeOf(value);
      if (proto !== null && !CLONED.has(proto)) {
        if (value instanceof Error) return findInEntries(Object.entries(value), path, seen);
        const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
        return `${path}: an instance of ${typeof name === 'string' && name ? name : 'a class'} (only plain data crosses: its class, methods and private fields would be lost)`;
      }
      if (value instanceof Map) {
        let i = 0;
        for (const [k, v] of value) {
          const found =
            findUncloneable(k, `${path}.<key ${i}>`, seen) ?? findUncloneable(v, `${path}.get(${describe(k)})`, seen);
          if (found) return found;
          i++;
        }
        return null;
      }
      if (value instanceof Set) {
        let i = 0;
        for (const v of value) {
          const found = findUncloneable(v, `${path}.<entry ${i++}>`, seen);
          if (found) return found;
        }
        return null;
      }
      return findInEntries(Object.entries(value), path, seen);
    }
    default:
      return null;
  }
}

function findInEntries(entries: [string, unknown][], path: string, seen: Set<object>): string | null {
  for (const [key, v] of entries) {
    const found = findUncloneable(v, /^\d+$/.test(key) ? `${path}[${key}]` : `${path}.${key}`, seen);
    if (found) return found;
  }
  return null;
}

/**
 * A failure of the pool's or a feature's own (not the job's code): crosses as its
 * registry code and message and becomes an offthread error on the caller's side.
 */
export class CodedFailure extends Error {
  readonly code: string;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.code = code;
  }

  toWire(): WireFailure {
    return { wire: 'code', code: this.code as ErrorCode, message: this.message };
  }
}

export interface WireFailure {
  wire: 'code';
  code: ErrorCode;
  message: string;
}
