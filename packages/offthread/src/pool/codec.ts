/**
 * The small-value codec of the pool's shared-memory slots: a call's arguments and its
 * result are written straight into the slot when they are plain data that fits
 * (undefined, null, booleans, numbers, strings, typed arrays, dense arrays and plain
 * objects of those), so most calls cross without a postMessage. Anything else — a Map,
 * a Date, a class instance, a SharedArrayBuffer, a transfer list, a value too big for
 * the slot — makes `encode` answer NO_FIT and the call goes by structured clone.
 *
 * The format is ours and private to one pool (both ends are the same build): a tag byte,
 * then the value. Numbers are little-endian; strings are UTF-8 with a u32 length.
 */

/** `encode`'s answer when the value is not plain data or does not fit: clone it instead. */
export const NO_FIT = -1;

const T_UNDEFINED = 0;
const T_NULL = 1;
const T_FALSE = 2;
const T_TRUE = 3;
const T_INT = 4;
const T_FLOAT = 5;
const T_STRING = 6;
const T_ARRAY = 7;
const T_OBJECT = 8;
const T_TYPED = 9;

/** Deeper values go by clone (and a cyclic value never recurses forever here). */
const MAX_DEPTH = 32;

/** The typed arrays the codec carries, by index (the byte after T_TYPED). */
const TYPED = [
  Uint8Array,
  Int8Array,
  Uint8ClampedArray,
  Uint16Array,
  Int16Array,
  Uint32Array,
  Int32Array,
  Float32Array,
  Float64Array,
  BigUint64Array,
  BigInt64Array,
] as const;
type Typed = InstanceType<(typeof TYPED)[number]>;

const utf8 = new TextEncoder();
let decoder: TextDecoder | undefined;

/** A slot's bytes: `u8` and `view` over the same region. */
export interface Region {
  u8: Uint8Array;
  view: DataView;
}

export function region(buffer: SharedArrayBuffer, offset: number, length: number): Region {
  return { u8: new Uint8Array(buffer, offset, length), view: new DataView(buffer, offset, length) };
}

/** Writes `value` at `at`; returns the offset after it, or NO_FIT. */
export function encode(r: Region, at: number, value: unknown, depth = 0): number {
  const { u8, view } = r;
  const end = u8.length;
  if (at >= end) return NO_FIT;
  switch (typeof value) {
    case 'number':
      if ((value | 0) === value && !(value === 0 && 1 / value < 0)) {
        if (at + 5 > end) return NO_FIT;
        u8[at] = T_INT;
        view.setInt32(at + 1, value, true);
        return at + 5;
      }
      if (at + 9 > end) return NO_FIT;
      u8[at] = T_FLOAT;
      view.setFloat64(at + 1, value, true);
      return at + 9;
    case 'string':
      return encodeString(r, at, value);
    case 'boolean':
      u8[at] = value ? T_TRUE : T_FALSE;
      return at + 1;
    case 'undefined':
      u8[at] = T_UNDEFINED;
      return at + 1;
    case 'object': {
      if (value === null) {
        u8[at] = T_NULL;
        return at + 1;
      }
      if (depth >= MAX_DEPTH) return NO_FIT;
      if (ArrayBuffer.isView(value)) return encodeTyped(r, at, value);
      const proto = Object.getPrototypeOf(value);
      if (proto === Array.prototype) {
        const list = value as unknown[];
        if (at + 5 > end) return NO_FIT;
        u8[at] = T_ARRAY;
        view.setUint32(at + 1, list.length, true);
        let p = at + 5;
        for (let i = 0; i < list.length; i++) {
          p = encode(r, p, list[i], depth + 1);
          if (p === NO_FIT) return NO_FIT;
        }
        return p;
      }
      if (proto === Object.prototype || proto === null) {
        const keys = Object.keys(value);
        if (at + 5 > end) return NO_FIT;
        u8[at] = T_OBJECT;
        view.setUint32(at + 1, keys.length, true);
        let p = at + 5;
        for (const key of keys) {
          p = encodeString(r, p, key);
          if (p === NO_FIT) return NO_FIT;
          p = encode(r, p, (value as Record<string, unknown>)[key], depth + 1);
          if (p === NO_FIT) return NO_FIT;
        }
        return p;
      }
      return NO_FIT;
    }
    default:
      return NO_FIT; // bigint, symbol, function: the clone path says what it thinks of them
  }
}

function encodeString(r: Region, at: number, s: string): number {
  const { u8, view } = r;
  const start = at + 5;
  // A one-byte loop beats encodeInto for the short ASCII strings most calls carry.
  if (s.length <= 32 && start + s.length <= u8.length) {
    let i = 0;
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c > 0x7f) break;
      u8[start + i] = c;
    }
    if (i === s.length) {
      u8[at] = T_STRING;
      view.setUint32(at + 1, s.length, true);
      return start + s.length;
    }
  }
  if (start + s.length > u8.length) return NO_FIT; // UTF-8 is never shorter than the UTF-16 length
  const { read, written } = utf8.encodeInto(s, u8.subarray(start));
  if (read !== s.length) return NO_FIT;
  u8[at] = T_STRING;
  view.setUint32(at + 1, written, true);
  return start + written;
}

function encodeTyped(r: Region, at: number, value: ArrayBufferView): number {
  const kind = TYPED.findIndex((T) => Object.getPrototypeOf(value) === T.prototype || value instanceof T);
  // A DataView, a view of a SharedArrayBuffer (it is shared, not copied: clone keeps that)
  // or an unknown subclass goes by clone.
  if (kind < 0 || value.buffer instanceof SharedArrayBuffer) return NO_FIT;
  const bytes = value.byteLength;
  const start = at + 6;
  if (start + bytes > r.u8.length) return NO_FIT;
  r.u8[at] = T_TYPED;
  r.u8[at + 1] = kind;
  r.view.setUint32(at + 2, bytes, true);
  r.u8.set(new Uint8Array(value.buffer, value.byteOffset, bytes), start);
  return start + bytes;
}

/** Reads the value written at `at`; `next[0]` gets the offset after it. */
export function decode(r: Region, at: number, next: [number]): unknown {
  const { u8, view } = r;
  switch (u8[at]) {
    case T_UNDEFINED:
      next[0] = at + 1;
      return undefined;
    case T_NULL:
      next[0] = at + 1;
      return null;
    case T_FALSE:
      next[0] = at + 1;
      return false;
    case T_TRUE:
      next[0] = at + 1;
      return true;
    case T_INT:
      next[0] = at + 5;
      return view.getInt32(at + 1, true);
    case T_FLOAT:
      next[0] = at + 9;
      return view.getFloat64(at + 1, true);
    case T_STRING:
      return decodeString(r, at, next);
    case T_ARRAY: {
      const n = view.getUint32(at + 1, true);
      const list = new Array(n);
      next[0] = at + 5;
      for (let i = 0; i < n; i++) list[i] = decode(r, next[0], next);
      return list;
    }
    case T_OBJECT: {
      const n = view.getUint32(at + 1, true);
      const out: Record<string, unknown> = {};
      next[0] = at + 5;
      for (let i = 0; i < n; i++) {
        const key = decodeString(r, next[0], next);
        out[key] = decode(r, next[0], next);
      }
      return out;
    }
    case T_TYPED: {
      const T = TYPED[u8[at + 1] as number] as (typeof TYPED)[number];
      const bytes = view.getUint32(at + 2, true);
      const copy = u8.slice(at + 6, at + 6 + bytes); // the receiver owns it: not shared
      next[0] = at + 6 + bytes;
      return new T(copy.buffer, 0, bytes / T.BYTES_PER_ELEMENT) as Typed;
    }
    default:
      throw new Error(`offthread: corrupt slot (tag ${u8[at]} at ${at})`);
  }
}

function decodeString(r: Region, at: number, next: [number]): string {
  const { u8, view } = r;
  const n = view.getUint32(at + 1, true);
  const start = at + 5;
  next[0] = start + n;
  if (n <= 32) {
    let s = '';
    let i = start;
    for (; i < start + n; i++) {
      const c = u8[i] as number;
      if (c > 0x7f) break;
      s += String.fromCharCode(c);
    }
    if (i === start + n) return s;
  }
  decoder ??= new TextDecoder();
  try {
    return decoder.decode(u8.subarray(start, start + n));
  } catch {
    return decoder.decode(u8.slice(start, start + n)); // browsers refuse shared views
  }
}
