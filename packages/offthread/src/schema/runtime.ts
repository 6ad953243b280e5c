// offthread-schema TS runtime: bounds-checked views over a message and the
// append-only builder the generated writers fill. Mirrors crates/offthread-schema/src/rt;
// the byte layout is docs/schema-format.md. Hand-written (not generated).
import { makeError, SchemaReadError, SchemaWriteError } from '../errors';

/** A message: the whole buffer, or a window of one. */
export type Bytes = ArrayBuffer | SharedArrayBuffer | Uint8Array;

export interface KindArrays {
  u8: Uint8Array;
  u16: Uint16Array;
  u32: Uint32Array;
  u64: BigUint64Array;
  i8: Int8Array;
  i16: Int16Array;
  i32: Int32Array;
  i64: BigInt64Array;
  f32: Float32Array;
  f64: Float64Array;
}
/** A stored scalar kind (`bool` is stored as `u8`). */
export type Kind = keyof KindArrays;

type AnyCtor = {
  new (length: number): KindArrays[Kind];
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): KindArrays[Kind];
  readonly BYTES_PER_ELEMENT: number;
};

const CTORS: Record<Kind, AnyCtor> = {
  u8: Uint8Array,
  u16: Uint16Array,
  u32: Uint32Array,
  u64: BigUint64Array,
  i8: Int8Array,
  i16: Int16Array,
  i32: Int32Array,
  i64: BigInt64Array,
  f32: Float32Array,
  f64: Float64Array,
} as unknown as Record<Kind, AnyCtor>;

/**
 * Bytes per value of each kind. The module itself uses these private constants: tsc
 * compiles every use of an exported const to a load of `exports.X`, which V8 cannot fold
 * into the code (`% 64` stays a division, `SIZES[kind]` a lookup): a third of a 10-item read.
 */
const SIZE_OF: Record<Kind, number> = {
  u8: 1,
  u16: 2,
  u32: 4,
  u64: 8,
  i8: 1,
  i16: 2,
  i32: 4,
  i64: 8,
  f32: 4,
  f64: 8,
};

/** A small index per kind (the Builder's cache of whole-buffer views is an array). */
const KIND_SLOT: Record<Kind, number> = {
  u8: 0,
  u16: 1,
  u32: 2,
  u64: 3,
  i8: 4,
  i16: 5,
  i32: 6,
  i64: 7,
  f32: 8,
  f64: 9,
};

// Typed arrays use the host's byte order; the format is little-endian.
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

const ALIGN_ARRAY = 64;
const ALIGN_STRUCT = 8;

/**
 * The typed-array `buffer` getter, called directly by `Message.typed`: V8 cannot inline
 * `u8.buffer` (a C++ builtin), so it compiles it to a generic load IC that finds and then
 * calls this getter on every read; calling the getter itself skips the IC.
 */
const bufferOf = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), 'buffer')!.get as (
  this: Uint8Array,
) => ArrayBufferLike;

export const SIZES: Record<Kind, number> = SIZE_OF;
export const ARRAY_ALIGN = ALIGN_ARRAY;
export const STRUCT_ALIGN = ALIGN_STRUCT;

export function alignUp(n: number, align: number): number {
  return Math.ceil(n / align) * align;
}

// The error classes live with the one registry of codes (errors.ts): both are
// OffthreadErrors, their R/W codes registered there and documented in §3 of
// docs/schema-format.md.
export { type ReadErrorCode, SchemaReadError, SchemaWriteError, type WriteErrorCode } from '../errors';

/**
 * What generated `encodeX` rethrows: a SchemaWriteError as it is, anything else (the
 * caller's getter or Proxy threw while the writer read the value) as W0011 with the cause.
 */
export function writeFailure(err: unknown): SchemaWriteError {
  if (err instanceof SchemaWriteError) return err;
  return new SchemaWriteError('W0011', 'reading the value to encode threw', { cause: err });
}

/** Thrown by generated union writers for a value whose tag is not one of `union`'s variants. */
export function unknownTag(union: string, value: unknown): never {
  const tag = value !== null && typeof value === 'object' ? (value as { tag?: unknown }).tag : undefined;
  const shown = typeof tag === 'string' ? `'${tag}'` : describe(tag);
  throw new SchemaWriteError('W0005', `${union}: no variant has the tag ${shown}`);
}

/**
 * What writers accept for a plain type `T`: 64-bit integers as `bigint` or as a `number`
 * that is a safe integer (|n| ≤ 2^53 − 1; JS timestamps, counters). Numbers skip the
 * BigInt allocation per value; anything a number cannot hold exactly is refused (W0004),
 * never rounded. Readers always return `bigint`.
 */
export type Writable<T> = T extends bigint
  ? bigint | number
  : T extends string | number | boolean | null | undefined
    ? T
    : T extends ReadonlyArray<infer E>
      ? ReadonlyArray<Writable<E>>
      : T extends ArrayLike<infer E>
        ? ArrayLike<Writable<E>>
        : { [K in keyof T]: Writable<T[K]> };

/** W0007: `what` should have been `expected`. */
export function wrongType(what: string, expected: string, got: unknown): never {
  throw new SchemaWriteError('W0007', `${what}: expected ${expected}, got ${describe(got)}`);
}

/**
 * The error for value `v` a field of `kind` cannot hold: W0007 for the wrong JS type,
 * W0008 for a number (or bigint) outside the kind's range. Only called once a check failed.
 */
export function badScalar(kind: Kind | 'bool', v: unknown): never {
  const wide = kind === 'i64' || kind === 'u64';
  if (kind === 'bool' || !(typeof v === 'number' || (wide && typeof v === 'bigint'))) {
    const expected = kind === 'bool' ? 'a boolean' : wide ? 'a bigint or a safe-integer number' : 'a number';
    throw new SchemaWriteError('W0007', `${kind} field: expected ${expected}, got ${describe(v)}`);
  }
  if (wide && typeof v === 'number') checkInt64(v, kind === 'u64');
  throw new SchemaWriteError('W0008', `${kind} field: ${String(v)} is outside the type`);
}

/** `v` when it is a non-null object (a struct value); W0007 otherwise. */
export function struct<T>(v: T, what: string): T {
  if (typeof v !== 'object' || v === null) wrongType(what, 'an object', v);
  return v;
}

/**
 * Checks the items given to a struct array writer: an Array of objects, and exactly
 * `count` of them when the array was allocated first (W0006: the rest would be dropped).
 */
export function items<T>(v: ReadonlyArray<T>, what: string, count?: number): void {
  if (!Array.isArray(v)) wrongType(what, 'an array', v);
  if (count !== undefined && v.length !== count) {
    throw new SchemaWriteError('W0006', `${what}: ${v.length} items for an array allocated with ${count}`);
  }
  for (let i = 0; i < v.length; i++) {
    const x: unknown = v[i];
    if (typeof x !== 'object' || x === null) wrongType(`${what}[${i}]`, 'an object', x);
  }
}

/**
 * `items` checks without the per-item pass: an Array of `count` (the generated SoA fill
 * checks each item in its first column's loop, `notItem`).
 */
export function array<T>(v: ReadonlyArray<T>, what: string, count: number): void {
  if (!Array.isArray(v)) wrongType(what, 'an array', v);
  if (v.length !== count) {
    throw new SchemaWriteError('W0006', `${what}: ${v.length} items for an array allocated with ${count}`);
  }
}

/** W0007 for item `i` of an array of `what` structs that is not an object. */
export function notItem(what: string, i: number, v: unknown): never {
  return wrongType(`${what}[${i}]`, 'an object', v);
}

/** The length of Array `v` (a struct or union slice); W0007 for anything else. */
export function count(v: ReadonlyArray<unknown>, what: string): number {
  if (!Array.isArray(v)) wrongType(what, 'an array', v);
  return v.length;
}

/** An Array or a typed array (what scalar slices take); W0007 for anything else. */
function arrayLike(v: unknown, what: string): ArrayLike<unknown> {
  if (Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView))) return v as ArrayLike<unknown>;
  return wrongType(what, 'an array or a typed array', v);
}

/** `v` when it is an array of exactly `len` values (a fixed-size array field); W0007 otherwise. */
export function fixed<T extends ArrayLike<unknown>>(v: T, len: number, what: string): T {
  if (arrayLike(v, what).length !== len) wrongType(what, `an array of ${len}`, `an array of ${v.length}`);
  return v;
}

/** Values of a `[]T` field or column: an Array or a typed array, its length. */
export function varLength(v: ArrayLike<unknown>): number {
  return arrayLike(v, 'slice').length;
}

const LONE_SURROGATE = /\p{Cs}/u;
const wellFormed: (s: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function'
    ? (s) => (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (s) => !LONE_SURROGATE.test(s);

/** `s` when it is a well-formed string: W0007 for another type, W0009 for a lone surrogate. */
export function text(s: string): string {
  if (typeof s !== 'string') wrongType('string field', 'a string', s);
  if (!wellFormed(s)) {
    throw new SchemaWriteError('W0009', 'string field: a lone surrogate is not Unicode text (UTF-8 cannot hold it)');
  }
  return s;
}

/** UTF-16 code units of a well-formed string `s` (the measure of a UTF-16 column). */
export function utf16Length(s: string): number {
  return text(s).length;
}

/**
 * Copies `values` into `view` (a `kind` column) value by value, refusing what the kind
 * cannot hold (W0007 / W0008) where a typed-array `set` would store NaN, wrap or round.
 */
function copyChecked(kind: Kind, view: KindArrays[Kind], values: ArrayLike<unknown>): void {
  const n = values.length;
  if (kind === 'u64' || kind === 'i64') {
    putInt64s(view as BigInt64Array, values as ArrayLike<bigint | number>, kind === 'u64');
    return;
  }
  const out = view as Float64Array;
  const vs = values as ArrayLike<number>;
  for (let i = 0; i < n; i++) {
    const x = vs[i]!;
    if (!fits(kind, x)) badScalar(kind, x);
    out[i] = x;
  }
}

/** Whether `x` is a value a `kind` field holds exactly (floats: any number). */
function fits(kind: Kind, x: number): boolean {
  if (typeof x !== 'number') return false; // bitwise operators throw on bigints and symbols
  switch (kind) {
    case 'u8':
      return (x & 0xff) === x;
    case 'u16':
      return (x & 0xffff) === x;
    case 'u32':
      return x >>> 0 === x;
    case 'i8':
      return (x << 24) >> 24 === x;
    case 'i16':
      return (x << 16) >> 16 === x;
    case 'i32':
      return (x | 0) === x;
    default:
      return true;
  }
}

const TWO_32 = 4294967296;

/** W0004 unless `v` is a safe integer (and ≥ 0 for u64): the numbers an i64/u64 takes. */
function checkInt64(v: number, unsigned: boolean): void {
  if (Number.isSafeInteger(v) && !(unsigned && v < 0)) return;
  throw new SchemaWriteError(
    'W0004',
    `${v} is not a safe integer${unsigned ? ' ≥ 0' : ''}: pass a bigint for 64-bit values beyond ±2^53`,
  );
}

/**
 * The high 32 bits of safe integer `v` as a 64-bit two's-complement value (the low ones
 * are `v >>> 0`, which keeps v mod 2^32): the floored quotient by 2^32, wrapped to u32.
 */
function highWord(v: number): number {
  return Math.floor(v / TWO_32) >>> 0;
}

/**
 * Stores number `v` as the 64-bit integer at index `i` of `halves`, a Uint32Array over a
 * little-endian i64/u64 column (two entries per value). Exact for every safe integer.
 */
export function putInt64Number(halves: Uint32Array, i: number, v: number, unsigned: boolean): void {
  checkInt64(v, unsigned);
  halves[2 * i] = v >>> 0;
  halves[2 * i + 1] = highWord(v);
}

/** The Uint32Array over the same memory as a 64-bit column (for `putInt64Number`). */
export function halvesOf(column: BigInt64Array | BigUint64Array): Uint32Array {
  return new Uint32Array(column.buffer, column.byteOffset, column.length * 2);
}

/** Writes 64-bit `values` (bigints or safe-integer numbers) into `column`. */
export function putInt64s(
  column: BigInt64Array | BigUint64Array,
  values: ArrayLike<bigint | number>,
  unsigned: boolean,
): void {
  const halves = halvesOf(column);
  for (let i = 0; i < values.length; i++) putInt64(column, halves, i, values[i]!, unsigned);
}

/**
 * Stores `v` (a bigint, or a safe-integer number as two u32 halves) at index `i` of a
 * 64-bit column: W0004 for an unsafe number, W0008 for a bigint outside 64 bits, W0007
 * for anything else (a string would otherwise throw a SyntaxError, 1.5 a RangeError).
 */
export function putInt64(
  column: BigInt64Array | BigUint64Array,
  halves: Uint32Array,
  i: number,
  v: bigint | number,
  unsigned: boolean,
): void {
  if (typeof v === 'number') putInt64Number(halves, i, v, unsigned);
  else if (typeof v === 'bigint' && (unsigned ? BigInt.asUintN(64, v) : BigInt.asIntN(64, v)) === v) column[i] = v;
  else badScalar(unsigned ? 'u64' : 'i64', v);
}

export interface ReadOptions {
  /** Deepest chain of offsets followed from the root (default 64). */
  maxDepth?: number;
  /** Most columns a SoA lookup table may list (default 256). */
  maxSoaColumns?: number;
  /** Most items a decode to plain objects may visit (default 8 per byte + 1024). */
  maxTraversal?: number;
}

/** Items a decode may still visit (stops DAGs of shared offsets). */
export class Budget {
  declare private left: number;
  declare readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
    this.left = limit;
  }
  spend(n: number): void {
    this.left -= n;
    if (this.left < 0) throw new SchemaReadError('R0010', `decoding visited more than ${this.limit} items`);
  }
}

/**
 * The bytes of `input` without copying. Anything but an ArrayBuffer, a SharedArrayBuffer or
 * a view of one is refused at once: `new Uint8Array({ length: 1e8 })` would allocate first.
 */
function asBytes(input: unknown): Uint8Array {
  try {
    if (input instanceof Uint8Array) return input;
  } catch {
    // instanceof throws on a revoked Proxy: refused by otherBytes like any other non-bytes.
  }
  return otherBytes(input);
}

/** `asBytes` for anything but a Uint8Array (kept apart so `asBytes` inlines). */
function otherBytes(input: unknown): Uint8Array {
  try {
    if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    if (input instanceof ArrayBuffer) return new Uint8Array(input);
    if (typeof SharedArrayBuffer !== 'undefined' && input instanceof SharedArrayBuffer) return new Uint8Array(input);
  } catch {
    // instanceof throws on a revoked Proxy: refused below like any other non-bytes.
  }
  throw makeError(
    'ERR_INVALID_ARG',
    `a schema message must be an ArrayBuffer, SharedArrayBuffer or Uint8Array, not ${describe(input)}`,
  );
}

function describe(x: unknown): string {
  if (x === null || x === undefined) return String(x);
  if (typeof x !== 'object') return `a ${typeof x}`;
  // toString reads Symbol.toStringTag: a Proxy's trap may throw, a message must not.
  try {
    return `an object (${Object.prototype.toString.call(x)})`;
  } catch {
    return 'an object';
  }
}

/** A read limit: `fallback` when undefined, else a non-negative integer (NaN would disable it). */
function limit(v: unknown, name: string, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return v;
  return badLimit(v, name);
}

function badLimit(v: unknown, name: string): never {
  throw makeError('ERR_INVALID_ARG', `${name} must be a non-negative integer, not ${describe(v)}`);
}

// The R-code errors of the hot checks, built out of line (see `Message.range`).
function outOfRange(offset: number, len: number, size: number): never {
  throw new SchemaReadError('R0001', `${len} bytes at offset ${offset} reach past the end of a ${size}-byte buffer`);
}
function misaligned(offset: number, align: number): never {
  throw new SchemaReadError('R0003', `offset ${offset} is not ${align}-byte aligned`);
}
function badCount(count: number, capacity: number, size: number): never {
  if (count > capacity) throw new SchemaReadError('R0004', `array count ${count} exceeds its capacity ${capacity}`);
  throw new SchemaReadError('R0009', `array count ${count} is larger than the ${size}-byte buffer`);
}
function badStructHeader(header: number, at: number): never {
  throw new SchemaReadError('R0002', `invalid dynamic struct header 0x${header.toString(16)} at offset ${at}`);
}
function tooDeep(maxDepth: number): never {
  throw new SchemaReadError('R0006', `nesting deeper than ${maxDepth}`);
}
function tooManyColumns(columns: number, limit: number): never {
  throw new SchemaReadError('R0005', `SoA table has ${columns} columns, the limit is ${limit}`);
}
function noColumns(count: number): never {
  throw new SchemaReadError('R0009', `SoA count ${count} with no columns`);
}

/**
 * Sets `msg`'s maxDepth, maxSoaColumns and maxTraversal from the caller's read options
 * (each getter read once, a copy first; an undefined one keeps the default), or throws
 * ERR_INVALID_ARG.
 */
function limitsOf(msg: Message, opts: unknown): void {
  if (typeof opts !== 'object' || opts === null) {
    throw makeError('ERR_INVALID_ARG', `read options must be an object, not ${describe(opts)}`);
  }
  let read: ReadOptions;
  try {
    const o = opts as ReadOptions;
    read = { maxDepth: o.maxDepth, maxSoaColumns: o.maxSoaColumns, maxTraversal: o.maxTraversal };
  } catch (err) {
    // A getter or Proxy of the caller's threw: typed, with the error as the cause.
    throw makeError('ERR_INVALID_ARG', 'read options cannot be read', err);
  }
  const m = msg as { maxDepth: number; maxSoaColumns: number; maxTraversal: number };
  m.maxDepth = limit(read.maxDepth, 'maxDepth', m.maxDepth);
  m.maxSoaColumns = limit(read.maxSoaColumns, 'maxSoaColumns', m.maxSoaColumns);
  m.maxTraversal = limit(read.maxTraversal, 'maxTraversal', m.maxTraversal);
}

/** The message a view reads: its bytes and limits. */
export class Message {
  declare readonly u8: Uint8Array;
  /** `u8.byteOffset`, read once: V8 compiles the typed-array `byteOffset` and `byteLength`
   * getters to calls here, `length` to a load (each check below uses `u8.length`). */
  declare private readonly base: number;
  declare private dataView: DataView | null;
  declare readonly maxDepth: number;
  declare readonly maxSoaColumns: number;
  declare readonly maxTraversal: number;

  // Kept short (the options' safe copy is `limitsOf`): V8 inlines the whole read path
  // of a small message into its caller only while the inlined bytecode stays under a budget.
  constructor(bytes: Bytes, opts?: ReadOptions) {
    const u8 = asBytes(bytes);
    this.u8 = u8;
    this.base = u8.byteOffset;
    this.dataView = null;
    this.maxDepth = 64;
    this.maxSoaColumns = 256;
    this.maxTraversal = u8.length * 8 + 1024;
    if (opts !== undefined) limitsOf(this, opts);
  }

  get length(): number {
    return this.u8.length;
  }

  /**
   * A DataView of the message, made on first use: offsets and counts are read from the
   * bytes (`at32`), so a small read that only needs a column (the common case) never
   * pays for one.
   */
  get dv(): DataView {
    if (this.dataView === null) this.dataView = new DataView(this.u8.buffer, this.u8.byteOffset, this.u8.byteLength);
    return this.dataView;
  }

  /** The little-endian u32 at `offset` (in bounds: checked by the caller). */
  at32(offset: number): number {
    const b = this.u8;
    return (b[offset]! | (b[offset + 1]! << 8) | (b[offset + 2]! << 16) | (b[offset + 3]! << 24)) >>> 0;
  }

  budget(): Budget {
    return new Budget(this.maxTraversal);
  }

  // The checks below stay a few bytecodes long (messages built in cold functions) so
  // V8 inlines them into every caller: a 10-item read is mostly these checks.

  /** Throws R0001 unless `len` bytes at `offset` are inside the message. */
  range(offset: number, len: number): void {
    if (!(offset + len <= this.u8.length)) outOfRange(offset, len, this.u8.length);
  }

  aligned(offset: number, align: number): void {
    if (offset % align !== 0) misaligned(offset, align);
  }

  word(offset: number): number {
    this.range(offset, 4);
    return this.at32(offset);
  }

  /** A zero-copy typed array when aligned (a copy otherwise) of `count` values at `offset`. */
  typed<K extends Kind>(kind: K, offset: number, count: number): KindArrays[K] {
    const size = SIZE_OF[kind];
    const n = this.u8.length;
    if (!(offset + count * size <= n)) outOfRange(offset, count * size, n);
    const at = this.base + offset;
    if (LITTLE_ENDIAN && at % size === 0) return new CTORS[kind](bufferOf.call(this.u8), at, count) as KindArrays[K];
    return this.copied(kind, offset, count);
  }

  /** `typed` for values that are not aligned in memory: a copy (cold). */
  private copied<K extends Kind>(kind: K, offset: number, count: number): KindArrays[K] {
    const size = SIZE_OF[kind];
    const ctor = CTORS[kind];
    const copy = new ctor(count) as KindArrays[K];
    new Uint8Array(copy.buffer).set(this.u8.subarray(offset, offset + count * size));
    if (!LITTLE_ENDIAN) throw new SchemaReadError('R0001', 'big-endian hosts are not supported');
    return copy;
  }

  arrayHeader(at: number): { count: number; a: number; b: number } {
    this.aligned(at, ALIGN_ARRAY);
    this.range(at, 16);
    const count = this.at32(at);
    const capacity = this.at32(at + 4);
    if (count > capacity || count > this.u8.length) badCount(count, capacity, this.u8.length);
    return { count, a: this.at32(at + 8), b: this.at32(at + 12) };
  }
}

/** The bytes of one struct; fields past `used` read as zero (older writers). */
export class StructView {
  declare readonly msg: Message;
  declare readonly start: number;
  declare readonly used: number;
  declare readonly depth: number;

  constructor(msg: Message, start: number, used: number, depth: number) {
    this.msg = msg;
    this.start = start;
    this.used = used;
    this.depth = depth;
  }

  /**
   * `dynamicAt(msg, 0, 0)` written out for the root (offset 0 is aligned; the header read
   * from a local): the same checks (R0001, R0002) in a third of the bytecode, so the whole
   * read path of a small message stays inside V8's inlining budget.
   */
  static rootDynamic(bytes: Bytes, opts?: ReadOptions): StructView {
    const msg = new Message(bytes, opts);
    const b = msg.u8;
    const n = b.length;
    if (!(4 <= n)) outOfRange(0, 4, n);
    const header = (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
    const size = (header & 0x1fffffff) * 8;
    const used = size - (header >>> 29);
    if (size < 8 || used < 4) badStructHeader(header, 0);
    if (!(size <= n)) outOfRange(0, size, n);
    return new StructView(msg, 0, used, 0);
  }

  static rootInline(bytes: Bytes, size: number, opts?: ReadOptions): StructView {
    const msg = new Message(bytes, opts);
    msg.range(0, size);
    return new StructView(msg, 0, size, 0);
  }

  static dynamicAt(msg: Message, at: number, depth: number): StructView {
    msg.aligned(at, ALIGN_STRUCT);
    const header = msg.word(at);
    const size = (header & 0x1fffffff) * 8;
    const wasted = header >>> 29;
    if (size < 8 || size - wasted < 4) badStructHeader(header, at);
    msg.range(at, size);
    return new StructView(msg, at, size - wasted, depth);
  }

  private childDepth(): number {
    if (this.depth >= this.msg.maxDepth) tooDeep(this.msg.maxDepth);
    return this.depth + 1;
  }

  private has(off: number, size: number): boolean {
    return off + size <= this.used;
  }

  u8(off: number): number {
    return this.has(off, 1) ? this.msg.dv.getUint8(this.start + off) : 0;
  }
  u16(off: number): number {
    return this.has(off, 2) ? this.msg.dv.getUint16(this.start + off, true) : 0;
  }
  u32(off: number): number {
    return this.has(off, 4) ? this.msg.at32(this.start + off) : 0;
  }
  u64(off: number): bigint {
    return this.has(off, 8) ? this.msg.dv.getBigUint64(this.start + off, true) : 0n;
  }
  i8(off: number): number {
    return this.has(off, 1) ? this.msg.dv.getInt8(this.start + off) : 0;
  }
  i16(off: number): number {
    return this.has(off, 2) ? this.msg.dv.getInt16(this.start + off, true) : 0;
  }
  i32(off: number): number {
    return this.has(off, 4) ? this.msg.dv.getInt32(this.start + off, true) : 0;
  }
  i64(off: number): bigint {
    return this.has(off, 8) ? this.msg.dv.getBigInt64(this.start + off, true) : 0n;
  }
  f32(off: number): number {
    return this.has(off, 4) ? this.msg.dv.getFloat32(this.start + off, true) : 0;
  }
  f64(off: number): number {
    return this.has(off, 8) ? this.msg.dv.getFloat64(this.start + off, true) : 0;
  }
  bool(off: number): boolean {
    return this.u8(off) !== 0;
  }

  /** The inline struct of `size` bytes embedded at `off`. */
  inline(off: number, size: number): StructView {
    const used = Math.min(Math.max(this.used - off, 0), size);
    return new StructView(this.msg, used === 0 ? this.start : this.start + off, used, this.depth);
  }

  /** The dynamic struct the offset at `off` points to, or null. */
  dynamic(off: number): StructView | null {
    return this.derefDynamic(this.u32(off));
  }

  derefDynamic(ptr: number): StructView | null {
    if (ptr === 0) return null;
    return StructView.dynamicAt(this.msg, ptr, this.childDepth());
  }

  derefInline(ptr: number, size: number): StructView | null {
    if (ptr === 0) return null;
    const depth = this.childDepth();
    this.msg.aligned(ptr, ALIGN_STRUCT);
    this.msg.range(ptr, size);
    return new StructView(this.msg, ptr, size, depth);
  }

  /** Tag (0 = empty) and absolute value offset of the union at `off`. */
  unionTagPtr(off: number, tag: 'u8' | 'u16' | 'u32'): [number, number] {
    return [this[tag](off), this.u32(off + 4)];
  }

  /** The scalar slice at `off` as a typed array (a view when aligned). */
  scalars<K extends Kind>(off: number, kind: K): KindArrays[K] {
    const ptr = this.u32(off);
    if (ptr === 0) return new CTORS[kind](0) as KindArrays[K];
    this.childDepth();
    const h = this.msg.arrayHeader(ptr);
    if (h.b !== SIZE_OF[kind])
      throw new SchemaReadError('R0007', `array element size ${h.b}, the schema says ${SIZE_OF[kind]}`);
    this.msg.aligned(h.a, ALIGN_ARRAY);
    return this.msg.typed(kind, h.a, h.count);
  }

  utf8(off: number): string {
    const bytes = this.scalars(off, 'u8');
    try {
      return UTF8.decode(unshared(bytes));
    } catch {
      throw new SchemaReadError('R0008', `invalid string at offset ${this.u32(off)}`);
    }
  }

  utf16(off: number): string {
    const units = this.scalars(off, 'u16');
    try {
      return UTF16.decode(unshared(new Uint8Array(units.buffer, units.byteOffset, units.byteLength)));
    } catch {
      throw new SchemaReadError('R0008', `invalid string at offset ${this.u32(off)}`);
    }
  }

  aos(off: number, itemSize: number, evolving: boolean): AosView {
    return this.aosAt(this.u32(off), itemSize, evolving);
  }

  /** `aos` for the array header at absolute offset `ptr` (0: empty). */
  aosAt(ptr: number, itemSize: number, evolving: boolean): AosView {
    const depth = this.childDepth();
    if (ptr === 0) return new AosView(this.msg, 0, 0, itemSize, depth);
    const h = this.msg.arrayHeader(ptr);
    const ok = evolving ? h.b >= 8 && h.b % ALIGN_STRUCT === 0 : h.b === itemSize;
    if (!ok) throw new SchemaReadError('R0007', `array element size ${h.b}, the schema says ${itemSize}`);
    this.msg.aligned(h.a, ALIGN_ARRAY);
    this.msg.range(h.a, h.count * h.b);
    return new AosView(this.msg, h.a, h.count, h.b, depth);
  }

  soa(off: number): SoaView {
    // `u32(off)` written out (one function instead of three in V8's inlining budget).
    const b = this.msg.u8;
    const o = this.start + off;
    return this.soaAt(
      off + 4 <= this.used ? (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0 : 0,
    );
  }

  /** `soa` for the array header at absolute offset `ptr` (0: empty). */
  soaAt(ptr: number): SoaView {
    const msg = this.msg;
    if (ptr === 0) return new SoaView(msg, 0, 0, 0, 0);
    if (this.depth >= msg.maxDepth) tooDeep(msg.maxDepth);
    return soaTable(msg, ptr);
  }
}

/**
 * The little-endian u32 at `o` of `b` (in bounds: checked by the caller). The hot read
 * path (`rootDynamic`, `soa`, `soaTable`, `columnAt`) mostly writes this expression out
 * instead: V8 inlines a small read into its caller only while the inlined bytecode stays
 * under a budget (about 920 bytes), every inlined copy of a helper counts against it,
 * and when it runs out which calls stay calls changes from run to run (the candidates
 * tie on call frequency), so the read's cost became bimodal.
 */
function rd32(b: Uint8Array, o: number): number {
  return (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
}

/**
 * Checks the SoA table whose array header is at `ptr` (R0003 alignment, R0001 bounds of
 * the header, the hash and block columns and every column's `count` bytes, R0004/R0009
 * count, R0005 column limit, R0009 count without columns) and returns its view. One
 * function with the message's bytes in a local: no header object, no per-check call.
 */
function soaTable(msg: Message, ptr: number): SoaView {
  const b = msg.u8;
  const n = b.length;
  if (ptr % ALIGN_ARRAY !== 0) misaligned(ptr, ALIGN_ARRAY);
  if (!(ptr + 16 <= n)) outOfRange(ptr, 16, n);
  const count = (b[ptr]! | (b[ptr + 1]! << 8) | (b[ptr + 2]! << 16) | (b[ptr + 3]! << 24)) >>> 0;
  const capacity = (b[ptr + 4]! | (b[ptr + 5]! << 8) | (b[ptr + 6]! << 16) | (b[ptr + 7]! << 24)) >>> 0;
  if (count > capacity || count > n) badCount(count, capacity, n);
  const columns = (b[ptr + 8]! | (b[ptr + 9]! << 8) | (b[ptr + 10]! << 16) | (b[ptr + 11]! << 24)) >>> 0;
  const hashes = (b[ptr + 12]! | (b[ptr + 13]! << 8) | (b[ptr + 14]! << 16) | (b[ptr + 15]! << 24)) >>> 0;
  if (columns > msg.maxSoaColumns) tooManyColumns(columns, msg.maxSoaColumns);
  if (hashes % ALIGN_ARRAY !== 0) misaligned(hashes, ALIGN_ARRAY);
  if (!(hashes + columns * 4 <= n)) outOfRange(hashes, columns * 4, n);
  const blocks = hashes + alignUp(columns * 4, ALIGN_ARRAY);
  if (!(blocks + columns * 4 <= n)) outOfRange(blocks, columns * 4, n);
  // Every column a writer wrote holds >= 1 byte per item (structs are never empty), so a
  // count no column can hold is forged: an empty table would otherwise make `count`
  // zero-filled items out of nothing, decode work and allocation unbounded by the input.
  if (count > 0 && columns === 0) noColumns(count);
  for (let i = 0, o = blocks; i < columns; i++, o += 4) {
    const at = ((b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0) * ALIGN_ARRAY;
    if (!(at + count <= n)) outOfRange(at, count, n);
  }
  return new SoaView(msg, count, columns, hashes, blocks);
}

/** Where the column `hash` of a checked SoA table starts, or -1 when the table lacks it. */
function columnAt(soa: SoaView, hash: number): number {
  const b = soa.msg.u8;
  for (let i = 0, o = soa.hashes; i < soa.columns; i++, o += 4) {
    if ((b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0 === hash) {
      return rd32(b, soa.blocks + i * 4) * ALIGN_ARRAY;
    }
  }
  return -1;
}

export type TagKind = 'u8' | 'u16' | 'u32';

/** The tag and offset columns of a SoA union slice at `off` of `view`. */
export function unionSoa<K extends TagKind>(view: StructView, off: number, tag: K): [KindArrays[K], Uint32Array] {
  const ptr = view.u32(off);
  if (ptr === 0) return [new CTORS[tag](0) as KindArrays[K], new Uint32Array(0)];
  if (view.depth >= view.msg.maxDepth) throw new SchemaReadError('R0006', `nesting deeper than ${view.msg.maxDepth}`);
  const h = view.msg.arrayHeader(ptr);
  view.msg.aligned(h.a, ALIGN_ARRAY);
  view.msg.aligned(h.b, ALIGN_ARRAY);
  return [view.msg.typed(tag, h.a, h.count), view.msg.typed('u32', h.b, h.count)];
}

/** The (tag, array offset) table of a BoVoA / BoVoS union slice. */
export class VariantTable {
  declare readonly view: StructView;
  declare readonly length: number;
  declare readonly entries: number;
  declare readonly variants: number;

  constructor(view: StructView, length: number, entries: number, variants: number) {
    this.view = view;
    this.length = length;
    this.entries = entries;
    this.variants = variants;
  }

  static read(view: StructView, off: number): VariantTable {
    const ptr = view.u32(off);
    if (ptr === 0) return new VariantTable(view, 0, 0, 0);
    if (view.depth >= view.msg.maxDepth) throw new SchemaReadError('R0006', `nesting deeper than ${view.msg.maxDepth}`);
    const h = view.msg.arrayHeader(ptr);
    if (h.a > view.msg.maxSoaColumns) {
      throw new SchemaReadError('R0005', `SoA table has ${h.a} columns, the limit is ${view.msg.maxSoaColumns}`);
    }
    view.msg.aligned(h.b, ALIGN_ARRAY);
    view.msg.range(h.b, h.a * 8);
    return new VariantTable(view, h.count, h.b, h.a);
  }

  private array(tag: number): number {
    for (let i = 0; i < this.variants; i++) {
      if (this.view.msg.at32(this.entries + i * 8) === tag) {
        return this.view.msg.at32(this.entries + i * 8 + 4);
      }
    }
    return 0;
  }

  aos(tag: number, itemSize: number, evolving: boolean): AosView {
    return this.view.aosAt(this.array(tag), itemSize, evolving);
  }

  soa(tag: number): SoaView {
    return this.view.soaAt(this.array(tag));
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const UTF16 = new TextDecoder('utf-16le', { fatal: true, ignoreBOM: true });

/** TextDecoder refuses views of a SharedArrayBuffer: copy those first. */
function unshared(bytes: Uint8Array): Uint8Array {
  return typeof SharedArrayBuffer !== 'undefined' && bytes.buffer instanceof SharedArrayBuffer ? bytes.slice() : bytes;
}

export class AosView {
  declare readonly msg: Message;
  declare readonly data: number;
  declare readonly length: number;
  declare readonly stride: number;
  declare readonly depth: number;

  constructor(msg: Message, data: number, length: number, stride: number, depth: number) {
    this.msg = msg;
    this.data = data;
    this.length = length;
    this.stride = stride;
    this.depth = depth;
  }

  get(i: number): StructView | undefined {
    if (!(i >= 0 && i < this.length)) return undefined;
    return new StructView(this.msg, this.data + i * this.stride, this.stride, this.depth);
  }
}

export class SoaView {
  declare readonly msg: Message;
  declare readonly length: number;
  declare readonly columns: number;
  declare readonly hashes: number;
  declare readonly blocks: number;

  constructor(msg: Message, length: number, columns: number, hashes: number, blocks: number) {
    this.msg = msg;
    this.length = length;
    this.columns = columns;
    this.hashes = hashes;
    this.blocks = blocks;
  }

  /** Column `hash` as `length × perItem` values; zeros when the writer had no such column. */
  column<K extends Kind>(hash: number, kind: K, perItem: number): KindArrays[K] {
    const len = this.length * perItem;
    const start = columnAt(this, hash);
    return start < 0 ? (new CTORS[kind](len) as KindArrays[K]) : this.msg.typed(kind, start, len);
  }

  /** Where column `hash` starts, or -1 when the table lacks it. */
  private columnStart(hash: number): number {
    return columnAt(this, hash);
  }

  /**
   * Variable-length column `hash`: `length + 1` u32 offsets, then (at the next 64-byte
   * boundary) the values. Offsets must start at 0 and never decrease (R0011); both
   * parts must lie in the message (R0001). Absent: `length` empty items.
   */
  varColumn<K extends Kind>(hash: number, kind: K): VarColumn<K> {
    const n = this.length + 1;
    const start = this.columnStart(hash);
    if (start < 0) return new VarColumn(new Uint32Array(n), new CTORS[kind](0) as KindArrays[K]);
    const offsets = this.msg.typed('u32', start, n);
    let prev = 0;
    for (let i = 0; i < n; i++) {
      const o = offsets[i]!;
      if ((i === 0 && o !== 0) || o < prev) {
        throw new SchemaReadError('R0011', `offsets column at ${start} does not start at 0 or decreases`);
      }
      prev = o;
    }
    const values = this.msg.typed(kind, alignUp(start + n * 4, ALIGN_ARRAY), prev);
    return new VarColumn(offsets, values);
  }

  /** A `#string` column; each string is decoded (and checked, R0008) when read. */
  stringColumn(hash: number, encoding: 'utf8' | 'utf16'): StringColumn {
    return new StringColumn(this.varColumn(hash, encoding === 'utf8' ? 'u8' : 'u16'));
  }
}

/** A variable-length SoA column: item `i` is `values[offsets[i] .. offsets[i + 1]]`. */
export class VarColumn<K extends Kind> {
  declare readonly offsets: Uint32Array;
  declare readonly values: KindArrays[K];
  constructor(offsets: Uint32Array, values: KindArrays[K]) {
    this.offsets = offsets;
    this.values = values;
  }

  get length(): number {
    return this.offsets.length - 1;
  }

  /** Item `i` as a view of `values` (no copy), or undefined past the end. */
  get(i: number): KindArrays[K] | undefined {
    if (!(Number.isInteger(i) && i >= 0 && i < this.length)) return undefined;
    return this.values.subarray(this.offsets[i]!, this.offsets[i + 1]!) as KindArrays[K];
  }
}

/** A `#string` SoA column (UTF-8 bytes or UTF-16 units in `raw.values`). */
export class StringColumn {
  declare readonly raw: VarColumn<'u8' | 'u16'>;
  constructor(raw: VarColumn<'u8' | 'u16'>) {
    this.raw = raw;
  }

  get length(): number {
    return this.raw.length;
  }

  /** String `i` (R0008 when it is not valid text), or undefined past the end. */
  get(i: number): string | undefined {
    const v = this.raw.get(i);
    if (v === undefined) return undefined;
    try {
      const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
      return (v instanceof Uint8Array ? UTF8 : UTF16).decode(unshared(bytes));
    } catch {
      throw new SchemaReadError('R0008', `invalid string at item ${i}`);
    }
  }
}

/** The offsets and values views of a variable-length column being written. */
export interface VarColumnWriter<K extends Kind> {
  readonly offsets: Uint32Array;
  readonly values: KindArrays[K];
}

/** UTF-8 bytes of string `s` (W0007 for a non-string, W0009 for a lone surrogate). */
export function utf8Length(s: string): number {
  text(s);
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Sum of `measure(get(item))` over `items`: the values a variable-length column needs. */
export function varTotal<T, V>(items: ReadonlyArray<T>, get: (item: T) => V, measure: (v: V) => number): number {
  let n = 0;
  for (const item of items) n += measure(get(item));
  return n;
}

function varMismatch(): never {
  throw new SchemaWriteError('W0006', 'a variable-length column got more or fewer values than alloc reserved');
}

/** Fills a `#string` column: UTF-8 encoded once, straight into the message. */
export function fillUtf8<T>(col: VarColumnWriter<'u8'>, items: ReadonlyArray<T>, get: (item: T) => string): void {
  let o = 0;
  for (let i = 0; i < items.length; i++) {
    const s = text(get(items[i]!));
    const r = UTF8_ENC.encodeInto(s, col.values.subarray(o));
    if (r.read !== s.length) varMismatch();
    o += r.written;
    col.offsets[i + 1] = o;
  }
  if (o !== col.values.length) varMismatch();
}

/** Fills a UTF-16 `#string` column with the strings' code units. */
export function fillUtf16<T>(col: VarColumnWriter<'u16'>, items: ReadonlyArray<T>, get: (item: T) => string): void {
  let o = 0;
  for (let i = 0; i < items.length; i++) {
    const s = text(get(items[i]!));
    if (o + s.length > col.values.length) varMismatch();
    for (let j = 0; j < s.length; j++) col.values[o + j] = s.charCodeAt(j);
    o += s.length;
    col.offsets[i + 1] = o;
  }
  if (o !== col.values.length) varMismatch();
}

/** Fills a `[]T` column from arrays / typed arrays (bools as 0/1, 64-bit as bigint or safe integer). */
export function fillVar<T>(
  col: VarColumnWriter<Kind>,
  items: ReadonlyArray<T>,
  get: (item: T) => ArrayLike<number | bigint | boolean>,
  bools = false,
): void {
  const values = col.values;
  const kind = kindOf(values);
  let o = 0;
  for (let i = 0; i < items.length; i++) {
    const v = get(items[i]!);
    const len = varLength(v);
    if (o + len > values.length) varMismatch();
    const at = values.subarray(o, o + len) as KindArrays[Kind];
    if (v instanceof CTORS[kind]) (at as { set(v: ArrayLike<number | bigint>): void }).set(v);
    else if (bools) copyBools(at as Uint8Array, v);
    else copyChecked(kind, at, v);
    o += len;
    col.offsets[i + 1] = o;
  }
  if (o !== values.length) varMismatch();
}

/** The kind of a typed array this runtime made. */
function kindOf(a: KindArrays[Kind]): Kind {
  for (const k of Object.keys(CTORS) as Kind[]) if (a instanceof CTORS[k]) return k;
  throw new SchemaWriteError('W0007', 'not a column view');
}

function copyBools(out: Uint8Array, values: ArrayLike<unknown>): void {
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    if (typeof x !== 'boolean') badScalar('bool', x);
    out[i] = x ? 1 : 0;
  }
}

/** The header word of a dynamic struct whose fields end at `used`. */
export function dynamicHeader(used: number): number {
  const size = alignUp(used, ALIGN_STRUCT);
  return ((size / 8) | ((size - used) << 29)) >>> 0;
}

/**
 * Append-only, zero-filled output: a growing private buffer (`new Builder()`), or a
 * caller's buffer written in place (`Builder.onBuffer`, e.g. a SharedArrayBuffer a
 * worker reads). Typed-array views it hands out (SoA columns) stay valid until the
 * next allocation, which may move a growing buffer: fill them first.
 */
export class Builder {
  private buf: Uint8Array;
  private dv: DataView;
  /** Typed arrays over the whole buffer, made on first use (`whole`), dropped when it grows. */
  private wholeViews: Array<KindArrays[Kind] | undefined> = [];
  private len = 0;
  private readonly fixed: boolean;

  /** A growing builder (a number: initial capacity) or one over a fixed `Uint8Array`. */
  constructor(initialCapacity: number | Uint8Array = 1024) {
    this.fixed = initialCapacity instanceof Uint8Array;
    this.buf = initialCapacity instanceof Uint8Array ? initialCapacity : new Uint8Array(Math.max(64, initialCapacity));
    this.dv = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  /**
   * Writes in place into `out` from its start (never grows; W0002 when it is too small).
   * Allocated bytes are zeroed first, so stale contents never leak into padding. The
   * start must be 8-byte aligned (W0003) so columns can be typed arrays; 64 is best.
   */
  static onBuffer(out: Bytes): Builder {
    const u8 = out instanceof Uint8Array ? out : new Uint8Array(out);
    if (u8.byteOffset % 8 !== 0) {
      throw new SchemaWriteError(
        'W0003',
        `output starts at byte ${u8.byteOffset} of its buffer, not on an 8-byte boundary`,
      );
    }
    return new Builder(u8);
  }

  get length(): number {
    return this.len;
  }

  /** Bytes the current buffer holds before it must grow. */
  get capacity(): number {
    return this.buf.byteLength;
  }

  alloc(size: number, align: number): number {
    const at = alignUp(this.len, align);
    const end = at + size;
    if (end > 0xffffffff)
      throw new SchemaWriteError('W0001', `message needs ${end} bytes, past the 32-bit offset limit`);
    if (end > this.buf.byteLength) {
      if (this.fixed) {
        throw new SchemaWriteError(
          'W0002',
          `message needs at least ${end} bytes, the output has ${this.buf.byteLength}`,
        );
      }
      const next = new Uint8Array(Math.max(end, this.buf.byteLength * 2));
      next.set(this.buf.subarray(0, this.len));
      this.buf = next;
      this.dv = new DataView(next.buffer);
      this.wholeViews = [];
    }
    // Zero what we hand out: a caller's buffer, or ours after reset(), may be dirty.
    this.buf.fill(0, this.len, end);
    this.len = end;
    return at;
  }

  /** Forgets the message so the same buffer encodes the next one (no reallocation). */
  reset(): void {
    this.len = 0;
  }

  // The setters refuse what the field cannot hold (W0007 wrong type, W0008 out of range,
  // W0004 an unsafe 64-bit number) instead of DataView's silent NaN, wrap or truncation.
  u8(at: number, v: number): void {
    if (typeof v !== 'number' || (v & 0xff) !== v) badScalar('u8', v);
    this.dv.setUint8(at, v);
  }
  u16(at: number, v: number): void {
    if (typeof v !== 'number' || (v & 0xffff) !== v) badScalar('u16', v);
    this.dv.setUint16(at, v, true);
  }
  u32(at: number, v: number): void {
    if (typeof v !== 'number' || v >>> 0 !== v) badScalar('u32', v);
    this.dv.setUint32(at, v, true);
  }
  u64(at: number, v: bigint | number): void {
    if (typeof v === 'number') this.int64Number(at, v, true);
    else if (typeof v === 'bigint' && BigInt.asUintN(64, v) === v) this.dv.setBigUint64(at, v, true);
    else badScalar('u64', v);
  }
  i8(at: number, v: number): void {
    if (typeof v !== 'number' || (v << 24) >> 24 !== v) badScalar('i8', v);
    this.dv.setInt8(at, v);
  }
  i16(at: number, v: number): void {
    if (typeof v !== 'number' || (v << 16) >> 16 !== v) badScalar('i16', v);
    this.dv.setInt16(at, v, true);
  }
  i32(at: number, v: number): void {
    if (typeof v !== 'number' || (v | 0) !== v) badScalar('i32', v);
    this.dv.setInt32(at, v, true);
  }
  i64(at: number, v: bigint | number): void {
    if (typeof v === 'number') this.int64Number(at, v, false);
    else if (typeof v === 'bigint' && BigInt.asIntN(64, v) === v) this.dv.setBigInt64(at, v, true);
    else badScalar('i64', v);
  }
  private int64Number(at: number, v: number, unsigned: boolean): void {
    checkInt64(v, unsigned);
    this.dv.setUint32(at, v >>> 0, true);
    this.dv.setUint32(at + 4, highWord(v), true);
  }
  f32(at: number, v: number): void {
    if (typeof v !== 'number') badScalar('f32', v);
    this.dv.setFloat32(at, v, true);
  }
  f64(at: number, v: number): void {
    if (typeof v !== 'number') badScalar('f64', v);
    this.dv.setFloat64(at, v, true);
  }
  bool(at: number, v: boolean): void {
    if (typeof v !== 'boolean') badScalar('bool', v);
    this.dv.setUint8(at, v ? 1 : 0);
  }

  dynamicStruct(used: number): number {
    const at = this.alloc(alignUp(used, ALIGN_STRUCT), ALIGN_STRUCT);
    this.u32(at, dynamicHeader(used));
    return at;
  }

  inlineStruct(size: number): number {
    return this.alloc(size, ALIGN_STRUCT);
  }

  private arrayHeader(count: number, a: number, b: number): number {
    const at = this.alloc(16, ALIGN_ARRAY);
    this.u32(at, count);
    this.u32(at + 4, count);
    this.u32(at + 8, a);
    this.u32(at + 12, b);
    return at;
  }

  /**
   * A `kind` typed array over the whole buffer: value `at / size` is the one at byte `at`
   * (a column's start is 64-byte aligned). Valid until the next allocation. The generated
   * `fill` writes columns through these: no typed array made per column and call, which is
   * most of the cost of a small message when the builder is reused.
   */
  whole<K extends Kind>(kind: K): KindArrays[K] {
    const slot = KIND_SLOT[kind];
    const cached = this.wholeViews[slot];
    if (cached !== undefined) return cached as KindArrays[K];
    const size = SIZE_OF[kind];
    if (!LITTLE_ENDIAN || this.buf.byteOffset % size !== 0) {
      throw new SchemaWriteError('W0003', `output at byte ${this.buf.byteOffset} is not aligned for ${kind}`);
    }
    const made = new CTORS[kind](this.buf.buffer, this.buf.byteOffset, Math.floor(this.buf.byteLength / size));
    this.wholeViews[slot] = made;
    return made as KindArrays[K];
  }

  /** A typed-array view of `count` values at `at` (valid until the next allocation). */
  view<K extends Kind>(kind: K, at: number, count: number): KindArrays[K] {
    const abs = this.buf.byteOffset + at;
    if (LITTLE_ENDIAN && abs % SIZE_OF[kind] === 0)
      return new CTORS[kind](this.buf.buffer, abs, count) as KindArrays[K];
    throw new SchemaWriteError('W0003', `column at byte ${abs} is not aligned for ${kind}`);
  }

  /** Reserves a scalar slice of `count` values; returns [header (0 if empty), data]. */
  scalarSlice(kind: Kind, count: number): [number, number] {
    if (count === 0) return [0, 0];
    const size = SIZE_OF[kind];
    const header = this.arrayHeader(count, 0, size);
    const data = this.alloc(alignUp(count * size, ALIGN_ARRAY), ALIGN_ARRAY);
    this.u32(header + 8, data);
    return [header, data];
  }

  /** Writes a scalar slice; returns its header offset (0 when empty). */
  scalars<K extends Kind>(kind: K, values: ArrayLike<number> | ArrayLike<bigint | number>): number {
    const n = arrayLike(values, `${kind} slice`).length;
    const [header, data] = this.scalarSlice(kind, n);
    if (header === 0) return header;
    const view = this.view(kind, data, n);
    // Same typed array kind: a plain copy. Anything else goes value by value, checked.
    if (values instanceof CTORS[kind]) (view as { set(v: ArrayLike<number | bigint>): void }).set(values);
    else copyChecked(kind, view, values);
    return header;
  }

  bools(values: ArrayLike<boolean>): number {
    const n = arrayLike(values, 'bool slice').length;
    const [header, data] = this.scalarSlice('u8', n);
    for (let i = 0; i < n; i++) {
      const x = values[i];
      if (typeof x !== 'boolean') badScalar('bool', x);
      this.buf[data + i] = x ? 1 : 0;
    }
    return header;
  }

  utf8(s: string): number {
    return this.scalars('u8', UTF8_ENC.encode(text(s)));
  }

  utf16(s: string): number {
    const units = new Uint16Array(text(s).length);
    for (let i = 0; i < s.length; i++) units[i] = s.charCodeAt(i);
    return this.scalars('u16', units);
  }

  /** Reserves an AoS array; returns [header, data] ([0, 0] when empty). */
  aos(count: number, stride: number): [number, number] {
    if (count === 0) return [0, 0];
    const header = this.arrayHeader(count, 0, stride);
    const data = this.alloc(alignUp(count * stride, ALIGN_ARRAY), ALIGN_ARRAY);
    this.u32(header + 8, data);
    return [header, data];
  }

  /**
   * Reserves a SoA array: header, lookup table, one column per [hash, bytes per item];
   * a variable-length column is [hash, bytes per element, element count]: its offsets
   * (count + 1 u32), then its values at the next 64-byte boundary.
   */
  soa(
    count: number,
    columns: ReadonlyArray<readonly [number, number] | readonly [number, number, number]>,
  ): { header: number; columns: number[]; values: number[] } | null {
    if (count === 0) return null;
    const n = columns.length;
    const header = this.arrayHeader(count, n, 0);
    const tableBytes = alignUp(n * 4, ALIGN_ARRAY);
    const table = this.alloc(2 * tableBytes, ALIGN_ARRAY);
    this.u32(header + 12, table);
    const offsets: number[] = [];
    const values: number[] = [];
    columns.forEach((c, i) => {
      const bytes = c.length === 3 ? (count + 1) * 4 : count * c[1];
      const at = this.alloc(alignUp(bytes, ALIGN_ARRAY), ALIGN_ARRAY);
      values.push(c.length === 3 ? this.alloc(alignUp(c[1] * c[2], ALIGN_ARRAY), ALIGN_ARRAY) : 0);
      this.u32(table + i * 4, c[0]);
      this.u32(table + tableBytes + i * 4, at / ALIGN_ARRAY);
      offsets.push(at);
    });
    return { header, columns: offsets, values };
  }

  /** Views of a variable-length column (`count` items, `size` values); detached when empty. */
  varView<K extends Kind>(kind: K, offsets: number, values: number, count: number, size: number): VarColumnWriter<K> {
    if (count === 0) return { offsets: new Uint32Array(1), values: new CTORS[kind](0) as KindArrays[K] };
    return { offsets: this.view('u32', offsets, count + 1), values: this.view(kind, values, size) };
  }

  /** Reserves a SoA union slice: header, tag column, offset column (null when empty). */
  unionSoa(count: number, tagSize: number): { header: number; tags: number; ptrs: number } | null {
    if (count === 0) return null;
    const header = this.arrayHeader(count, 0, 0);
    const tags = this.alloc(alignUp(count * tagSize, ALIGN_ARRAY), ALIGN_ARRAY);
    const ptrs = this.alloc(alignUp(count * 4, ALIGN_ARRAY), ALIGN_ARRAY);
    this.u32(header + 8, tags);
    this.u32(header + 12, ptrs);
    return { header, tags, ptrs };
  }

  /** Reserves a BoVoA/BoVoS slice: header and `variants` (tag, offset) entries. */
  variantTable(count: number, variants: number): [number, number] {
    if (count === 0) return [0, 0];
    const header = this.arrayHeader(count, variants, 0);
    const table = this.alloc(variants * 8, ALIGN_ARRAY);
    this.u32(header + 12, table);
    return [header, table];
  }

  /**
   * The message, without a copy: a view of the first `length` bytes of the builder's
   * buffer (its `.buffer` may be larger). After `reset()` the builder writes over the
   * same memory, so `.slice()` what you keep when you reuse a builder.
   */
  finish(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }
}

const UTF8_ENC = new TextEncoder();

/**
 * The builder `encodeX(value)` writes in when no builder is given: one per runtime,
 * reused, so a small message costs no fresh ArrayBuffer but its exact-size copy. A
 * nested call (a getter in the value encoding something) gets a new builder instead.
 */
let scratchBuilder: Builder | null = null;
let scratchBusy = false;
/** Past this capacity the scratch builder is dropped after use (no huge buffer kept alive). */
const SCRATCH_KEEP = 1 << 20;

export function scratch(): Builder {
  if (scratchBusy) return new Builder();
  scratchBusy = true;
  if (scratchBuilder === null) scratchBuilder = new Builder(4096);
  scratchBuilder.reset();
  return scratchBuilder;
}

/** Ends the use of a builder from `scratch()`. */
export function release(b: Builder): void {
  if (b !== scratchBuilder) return;
  scratchBusy = false;
  if (b.capacity > SCRATCH_KEEP) scratchBuilder = null;
}

/**
 * Resizes, in place, the array whose offset is stored at byte `slot` of message `bytes`
 * to `count` items, within the capacity it was written with (Karmem §4.3.1; the Rust
 * runtime's `resize_array`). Nothing moves: the count word changes. Shrinking erases the
 * rest of the last 64-byte block the array still uses (SIMD reads of whole blocks see
 * zeros); bytes further on stay as they were. Growing back zeroes the items it exposes.
 * `columns`: a SoA array's [hash, bytes per item] (the schema's); omitted for scalar
 * slices and AoS arrays. W0010 past the capacity (or growing a SoA array with a column
 * the schema does not know); R codes for a header that is not valid.
 */
export function resizeArray(
  bytes: Bytes,
  slot: number,
  count: number,
  columns?: ReadonlyArray<readonly [number, number]>,
): void {
  const msg = new Message(bytes);
  if (!(Number.isInteger(count) && count >= 0 && count <= 0xffffffff)) badScalar('u32', count);
  const header = msg.word(slot);
  const beyond = (capacity: number): never => {
    throw new SchemaWriteError('W0010', `cannot resize to ${count} items in place: the array has room for ${capacity}`);
  };
  if (header === 0) {
    if (count !== 0) beyond(0);
    return;
  }
  const h = msg.arrayHeader(header);
  const capacity = msg.word(header + 4);
  if (count > capacity) beyond(capacity);
  const parts: Array<[number, number]> = [];
  if (columns === undefined) {
    if (h.b === 0) throw new SchemaReadError('R0007', 'array element size 0');
    parts.push([h.a, h.b]);
  } else {
    const table = h.b;
    msg.range(table, h.a * 4);
    const blocks = table + alignUp(h.a * 4, ALIGN_ARRAY);
    msg.range(blocks, h.a * 4);
    for (let i = 0; i < h.a; i++) {
      const known = columns.find((c) => c[0] === msg.at32(table + i * 4));
      if (known) parts.push([msg.at32(blocks + i * 4) * ALIGN_ARRAY, known[1]]);
      else if (count > h.count) beyond(h.count);
    }
  }
  const u8 = msg.u8;
  for (const [start, size] of parts) {
    msg.range(start, capacity * size);
    const end = start + count * size;
    if (count < h.count)
      u8.fill(0, end, Math.max(end, Math.min(start + alignUp(count * size, ALIGN_ARRAY), start + capacity * size)));
    else u8.fill(0, start + h.count * size, end);
  }
  msg.dv.setUint32(header, count, true);
}
