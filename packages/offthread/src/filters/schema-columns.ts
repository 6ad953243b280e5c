/**
 * A record filter's columns checked against the schema its batches are read with.
 * A batch names its columns by field position only (the format's field-path hash), so
 * `columns` in another order than the row struct's fields swaps them, and another type
 * reads the bytes as garbage — silently. Given the generated batch reader
 * (`schema: ReadingBatchReader`), the filter learns the row's fields — name, position,
 * type — from the reader itself and refuses any column that does not match.
 *
 * The reader is asked, not parsed: its row accessors are called on a stand-in SoA
 * view that records which column (hash, kind, values per item) each one reads, and
 * its `toPlain` on one stand-in row gives the fields' names in declaration order and
 * tells `bool` from `u8` (same bytes, read as `x !== 0`).
 */
import { makeError } from '../errors.js';
import type { ColumnType, RecordColumn } from './spec.js';

/** A generated batch reader class (`XBatchReader`): `new (view)` with one `#soa` slice accessor. */
export type BatchReaderClass = abstract new (view: never) => object;

/** One field of the row struct as the generated reader reads it. */
interface SchemaField {
  /** The field's name in the generated code (camelCase). */
  name: string;
  /** Declaration index (its column's field path is `[field]`). */
  field: number;
  type: ColumnType;
}

const invalid = (what: string) => makeError('ERR_FILTER_INVALID_SPEC', `schema: ${what}`);

/** FNV-1a 32 (crates/offthread-schema-rt/src/hash.rs). */
function fnv1a32(h: number, bytes: readonly number[]): number {
  let x = h;
  for (const b of bytes) x = Math.imul(x ^ b, 0x01000193) >>> 0;
  return x;
}
const le32 = (x: number) => [x & 255, (x >>> 8) & 255, (x >>> 16) & 255, x >>> 24];
const SEED = fnv1a32(
  0x811c9dc5,
  [...'offthread'].map((c) => c.charCodeAt(0)),
);

/** The column hash of field path `[index]`. */
export function fieldHash(index: number): number {
  return fieldPathHash([index]);
}

/** The column hash of a field path (docs/schema-format.md §2.7). */
export function fieldPathHash(path: readonly number[]): number {
  return path.reduce((h, i) => fnv1a32(0x811c9dc5, [...le32(h), ...le32(i)]), SEED);
}

const FIXED: ReadonlySet<string> = new Set(['u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'u64', 'i64', 'f32', 'f64']);
const ARRAYS: Record<string, (n: number) => ArrayLike<unknown>> = {
  u8: (n) => new Uint8Array(n).fill(2),
  i8: (n) => new Int8Array(n).fill(2),
  u16: (n) => new Uint16Array(n).fill(2),
  i16: (n) => new Int16Array(n).fill(2),
  u32: (n) => new Uint32Array(n).fill(2),
  i32: (n) => new Int32Array(n).fill(2),
  u64: (n) => new BigUint64Array(n).fill(2n),
  i64: (n) => new BigInt64Array(n).fill(2n),
  f32: (n) => new Float32Array(n).fill(2),
  f64: (n) => new Float64Array(n).fill(2),
};

/** What the row accessors read: one entry per column, in call order. */
type Read = { hash: number; type: ColumnType } | { hash: number; unsupported: string };

/** A stand-in SoA view of one row that records every column read. */
function recordingSoa(reads: Read[]) {
  const budget = { spend() {} };
  return {
    length: 1,
    msg: { budget: () => budget },
    column(hash: number, kind: string, perItem: number) {
      if (perItem !== 1 || !FIXED.has(kind)) reads.push({ hash, unsupported: `${perItem} × ${kind}` });
      else reads.push({ hash, type: kind as ColumnType });
      const make = ARRAYS[kind] ?? ((n: number) => new Uint8Array(n));
      return make(perItem);
    },
    stringColumn(hash: number, encoding: string) {
      if (encoding === 'utf8') reads.push({ hash, type: 'string' });
      else reads.push({ hash, unsupported: `a ${encoding} string` });
      const values = new Uint8Array(0);
      return { length: 1, raw: { values }, get: () => '' };
    },
    varColumn(hash: number, kind: string) {
      reads.push({ hash, unsupported: `a []${kind} slice` });
      return { length: 1, values: new Uint8Array(0), get: () => new Uint8Array(0) };
    },
  };
}

function isClass(x: unknown): x is new (view: unknown) => Record<string, unknown> {
  return typeof x === 'function' && typeof x.prototype === 'object' && x.prototype !== null;
}

/** The fields of the row struct whose `#soa` slice the batch reader `reader` reads at +4. */
export function schemaFields(reader: unknown): SchemaField[] {
  if (!isClass(reader)) throw invalid('must be a generated batch reader class (e.g. ReadingBatchReader)');
  // The batch struct: what the filter writes is `(dynamic) { rows: []row #soa; }`, the
  // slice's pointer at +4. Find the accessor that opens a SoA slice there.
  const reads: Read[] = [];
  const soa = recordingSoa(reads);
  const opened: number[] = [];
  const view = new Proxy(
    {},
    {
      get: (_t, key) =>
        key === 'soa'
          ? (off: number) => {
              opened.push(off);
              return soa;
            }
          : () => {
              throw invalid('the batch struct has fields other than its #soa slice of rows');
            },
    },
  );
  const batch = new reader(view);
  let rows: Record<string, unknown> | undefined;
  for (const key of Object.getOwnPropertyNames(reader.prototype)) {
    if (key === 'constructor' || key === 'toPlain') continue;
    const method = (batch as Record<string, unknown>)[key];
    if (typeof method !== 'function') continue;
    const got = method.call(batch) as Record<string, unknown> | undefined;
    if (got && typeof got === 'object' && got.soa === soa) {
      if (rows !== undefined) throw invalid('the batch struct has more than one #soa slice');
      rows = got;
    }
  }
  if (rows === undefined || opened.length !== 1) throw invalid('the batch struct has no #soa slice of rows');
  if (opened[0] !== 4)
    throw invalid(`the #soa slice of rows is at +${opened[0]}, the record filters write it at +4 (its only field)`);
  const toPlain = rows.toPlain;
  if (typeof toPlain !== 'function') throw invalid('the row reader has no toPlain()');
  // One stand-in row: the plain object's keys are the fields in declaration order.
  const plain = (toPlain.call(rows) as Record<string, unknown>[])[0] ?? {};
  const names = Object.keys(plain);
  if (names.length !== reads.length)
    throw invalid('the row struct has nested struct fields; record filters fill flat rows only');
  return names.map((name, i) => {
    const read = reads[i] as Read;
    if ('unsupported' in read)
      throw invalid(`field "${name}" is ${read.unsupported}; record filters fill scalars and UTF-8 strings`);
    if (read.hash !== fieldHash(i))
      throw invalid(`field "${name}" is not at position ${i} of the row struct (a nested or reordered row)`);
    // `bool` is stored as u8 and read as `x !== 0`: the stand-in 2 comes back `true`.
    const type: ColumnType = read.type === 'u8' && plain[name] === true ? 'bool' : read.type;
    return { name, field: i, type };
  });
}

/**
 * `columns` checked against `reader`'s row struct, each with its field position: a
 * column names its field by `field` (the field's name, or its position) or else by its
 * own `name`; a `type`, when given, must be the field's. Every field needs a column
 * (one left out would read as zeros). Without `columns`, each field is read from the
 * header / key of its own name.
 */
export function columnsFromSchema(reader: unknown, columns: readonly RecordColumn[] | undefined): RecordColumn[] {
  const fields = schemaFields(reader);
  if (columns === undefined) return fields.map(({ name, type, field }) => ({ name, type, field }));
  if (!Array.isArray(columns)) throw makeError('ERR_FILTER_INVALID_SPEC', '"columns" must be an array');
  const used = new Map<number, string>();
  const out = columns.map((c: RecordColumn & { field?: number | string }) => {
    if (typeof c !== 'object' || c === null || typeof c.name !== 'string')
      throw makeError('ERR_FILTER_INVALID_SPEC', 'a column must be an object with a string "name"');
    const by = c.field ?? c.name;
    const f = typeof by === 'number' ? fields[by] : fields.find((x) => x.name === by);
    if (f === undefined)
      throw invalid(
        `column "${c.name}": the row struct has no field ${typeof by === 'number' ? by : `"${by}"`} (fields: ${fields.map((x) => `${x.name}: ${x.type}`).join(', ')})`,
      );
    if (c.type !== undefined && c.type !== f.type)
      throw invalid(`column "${c.name}" is ${c.type}, but field "${f.name}" of the row struct is ${f.type}`);
    const twice = used.get(f.field);
    if (twice !== undefined) throw invalid(`columns "${twice}" and "${c.name}" both fill field "${f.name}"`);
    used.set(f.field, c.name);
    const column: RecordColumn = { name: c.name, type: f.type, field: f.field };
    if (c.default !== undefined) column.default = c.default;
    return column;
  });
  const missing = fields.filter((f) => !used.has(f.field));
  if (missing.length > 0)
    throw invalid(
      `no column fills ${missing.map((f) => `"${f.name}"`).join(', ')} (a field left out would read as zeros)`,
    );
  return out;
}
