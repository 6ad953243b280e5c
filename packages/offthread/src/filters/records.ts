/**
 * Record batches without a schema step: what `filters.csv()` / `filters.ndjson()` emit
 * when their columns are declared in JS (`columns: { amount: 'f64', … }`) or inferred
 * from the header. A batch is the same schema message the `.km` route writes (one
 * 64-byte aligned column per field, text as u32 offsets + UTF-8, plus one validity
 * column per nullable column), read here by the columns' names: numbers as typed
 * arrays over the batch's bytes (no copy), text by index.
 *
 * Every output of a record filter ends in a report (crates/offthread-filters,
 * `REPORT_MAGIC`): the columns (once), the rows skipped and their lines. `RecordOutput`
 * splits it off, in stream order, and keeps the stream's counts.
 */
import { makeError } from '../errors.js';
import { type Kind, type KindArrays, type SoaView, StructView } from '../schema/runtime.js';
import { fieldHash, fieldPathHash } from './schema-columns.js';
import type { ColumnType } from './spec.js';

/** One column of a batch: its name (the CSV header / NDJSON key), type, and whether it has nulls. */
export interface RecordColumnInfo {
  readonly name: string;
  readonly type: ColumnType;
  /** Empty cells / missing keys / `null` are nulls: see `RecordBatch.validity`. */
  readonly nullable: boolean;
}

/** What a numeric or bool column reads as (bool: a Uint8Array of 0 and 1). */
export type NumericColumn = KindArrays[Kind];

/** The second element of a validity column's field path (crates/offthread-filters, `VALIDITY`). */
const VALIDITY = 0xffff_ffff;

/** The hash of a validity column's field path `[field, VALIDITY]`. */
const validityHash = (field: number) => fieldPathHash([field, VALIDITY]);

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A text column: string `i` by index (`null` for a null), or all of them with `toArray()`. */
export class StringColumn {
  /** `length + 1` offsets into `bytes` (Arrow's int32 offsets: the same bits below 2 GiB). */
  readonly offsets: Uint32Array;
  /** The UTF-8 bytes of every string, back to back. */
  readonly bytes: Uint8Array;
  readonly #validity: Uint8Array | null;

  constructor(offsets: Uint32Array, bytes: Uint8Array, validity: Uint8Array | null) {
    this.offsets = offsets;
    this.bytes = bytes;
    this.#validity = validity;
  }

  get length(): number {
    return this.offsets.length - 1;
  }

  /** String `i`; `null` for a null, `undefined` past the end. */
  get(i: number): string | null | undefined {
    if (!(Number.isInteger(i) && i >= 0 && i < this.length)) return undefined;
    if (this.#validity !== null && ((this.#validity[i >> 3]! >> (i & 7)) & 1) === 0) return null;
    return UTF8.decode(this.bytes.subarray(this.offsets[i]!, this.offsets[i + 1]!));
  }

  /** Every string, in row order. */
  toArray(): (string | null)[] {
    const out = new Array<string | null>(this.length);
    for (let i = 0; i < out.length; i++) out[i] = this.get(i) as string | null;
    return out;
  }
}

const KIND: Record<Exclude<ColumnType, 'string'>, Kind> = {
  bool: 'u8',
  u8: 'u8',
  u16: 'u16',
  u32: 'u32',
  u64: 'u64',
  i8: 'i8',
  i16: 'i16',
  i32: 'i32',
  i64: 'i64',
  f32: 'f32',
  f64: 'f64',
};

interface Resolved extends RecordColumnInfo {
  readonly field: number;
}

/**
 * One batch of rows. `column(name)` is a typed array over the batch's bytes for numbers
 * (`f64` → Float64Array, `i64` → BigInt64Array, `bool` → Uint8Array of 0/1, …) and a
 * `StringColumn` for text; a null reads as 0 (text: `null` from `get`), and
 * `validity(name)` / `isValid(name, i)` tell nulls apart.
 */
export class RecordBatch {
  /** Rows in the batch. */
  readonly length: number;
  /** The columns, in the order declared (or found in the header). */
  readonly columns: readonly RecordColumnInfo[];
  /** The batch message itself (the schema format's bytes; `.km` readers read it too). */
  readonly bytes: Uint8Array;
  readonly #soa: SoaView;
  readonly #byName: Map<string, Resolved>;
  readonly #cache = new Map<string, NumericColumn | StringColumn>();

  /** `rows`: the count of a batch of no columns, whose message cannot hold it (from its report). */
  constructor(bytes: Uint8Array, columns: readonly Resolved[], rows?: number) {
    this.bytes = bytes;
    this.#soa = StructView.rootDynamic(bytes).soa(4);
    // The Rust side sends `rows` only for a batch of no columns.
    this.length = rows ?? this.#soa.length;
    this.columns = columns.map(({ name, type, nullable }) => ({ name, type, nullable }));
    this.#byName = new Map();
    for (const c of columns) if (!this.#byName.has(c.name)) this.#byName.set(c.name, c);
  }

  /** The column names, in order. */
  get names(): string[] {
    return this.columns.map((c) => c.name);
  }

  #resolve(name: string | number): Resolved {
    const c = typeof name === 'number' ? this.#columnAt(name) : this.#byName.get(name);
    if (c === undefined)
      throw makeError(
        'ERR_INVALID_ARG',
        `the batch has no column ${JSON.stringify(name)} (columns: ${this.names.join(', ')})`,
      );
    return c;
  }

  #columnAt(i: number): Resolved | undefined {
    const c = this.columns[i];
    return c === undefined ? undefined : this.#byName.get(c.name);
  }

  /** Column `name` (or its index): a typed array over the batch for numbers and bools, a StringColumn for text. */
  column(name: string | number): NumericColumn | StringColumn {
    const c = this.#resolve(name);
    const cached = this.#cache.get(c.name);
    if (cached !== undefined) return cached;
    let col: NumericColumn | StringColumn;
    if (c.type === 'string') {
      const raw = this.#soa.varColumn(fieldHash(c.field), 'u8');
      col = new StringColumn(raw.offsets, raw.values, this.validity(c.name));
    } else {
      col = this.#soa.column(fieldHash(c.field), KIND[c.type], 1);
    }
    this.#cache.set(c.name, col);
    return col;
  }

  /** Column `name` when it holds numbers or bools (typed for TypeScript); ERR_INVALID_ARG for text. */
  numbers(name: string | number): NumericColumn {
    const col = this.column(name);
    if (col instanceof StringColumn)
      throw makeError('ERR_INVALID_ARG', `column ${JSON.stringify(name)} is text: use strings()`);
    return col;
  }

  /** Column `name` when it holds text (typed for TypeScript); ERR_INVALID_ARG for numbers. */
  strings(name: string | number): StringColumn {
    const col = this.column(name);
    if (!(col instanceof StringColumn))
      throw makeError('ERR_INVALID_ARG', `column ${JSON.stringify(name)} is not text: use numbers()`);
    return col;
  }

  /**
   * Column `name`'s validity bitmap as Arrow lays it out — ⌈length/8⌉ bytes, LSB first,
   * 1 = valid — over the batch's bytes; `null` when the column has no nulls.
   */
  validity(name: string | number): Uint8Array | null {
    const c = this.#resolve(name);
    if (!c.nullable) return null;
    const bits = this.#soa.column(validityHash(c.field), 'u8', 1);
    return bits.subarray(0, (this.length + 7) >> 3);
  }

  /** Row `i` of column `name` holds a value (not a null). */
  isValid(name: string | number, i: number): boolean {
    const bits = this.validity(name);
    return bits === null || ((bits[i >> 3]! >> (i & 7)) & 1) === 1;
  }

  /** The rows as plain objects (a copy: for a look at the data, not for speed). */
  toRows(): Record<string, unknown>[] {
    const cols = this.columns.map((c) => [c.name, this.column(c.name), this.validity(c.name)] as const);
    const rows: Record<string, unknown>[] = [];
    for (let i = 0; i < this.length; i++) {
      const row: Record<string, unknown> = {};
      for (const [name, col, bits] of cols) {
        const valid = bits === null || ((bits[i >> 3]! >> (i & 7)) & 1) === 1;
        if (!valid) row[name] = null;
        else if (col instanceof StringColumn) row[name] = col.get(i);
        else {
          const v = col[i]!;
          row[name] = this.#byName.get(name)?.type === 'bool' ? v !== 0 : v;
        }
      }
      rows.push(row);
    }
    return rows;
  }
}

/** A record stream's counts so far (`FilterTransform.stats()`). */
export interface RecordStats {
  /** Rows emitted in batches. */
  rows: number;
  batches: number;
  /** Rows left out (`onError: 'skip'`): every one is counted. */
  skipped: number;
  /** The lines of the first `MAX_SKIPPED_LINES` rows skipped (1-based, header and blank lines counted). */
  skippedLines: number[];
}

/**
 * A record filter as a WHATWG TransformStream (`filters.web.csv()` / `ndjson()`, and
 * `filters` in browsers): bytes in, `O` out — RecordBatch objects, or a schema's batch
 * messages — and the stream's counts so far, as `FilterTransform.stats()` gives them.
 */
export interface RecordStream<O = RecordBatch> extends TransformStream<Uint8Array, O> {
  stats(): RecordStats;
}

/** Skipped lines a stream keeps (the count goes on past it): bounded memory on any input. */
export const MAX_SKIPPED_LINES = 1000;

const MAGIC = [0x4f, 0x54, 0x52, 0x42]; // "OTRB"
const decoder = new TextDecoder();

interface Report {
  columns?: Resolved[];
  skipped?: number;
  lines?: number[];
  /** Rows of a batch of no columns (NDJSON whose first lines had no key to type). */
  rows?: number;
}

/**
 * A record filter's outputs, in stream order: each split into its batch and report;
 * the columns the first report announces are kept for the batches after it.
 */
export class RecordOutput {
  readonly #asBatches: boolean;
  #columns: readonly Resolved[] | undefined;
  readonly #stats: RecordStats = { rows: 0, batches: 0, skipped: 0, skippedLines: [] };

  /** `asBatches`: emit RecordBatch objects (else the batch message's bytes, for a `.km` reader). */
  constructor(asBatches: boolean) {
    this.#asBatches = asBatches;
  }

  /** The batch in `out` (undefined when it held only a report). */
  decode(out: Uint8Array): RecordBatch | Uint8Array | undefined {
    const n = out.length;
    if (n < 12 || MAGIC.some((b, i) => out[n - 4 + i] !== b))
      throw makeError('ERR_FILTER_CORRUPT_DATA', 'a record filter output has no report');
    const dv = new DataView(out.buffer, out.byteOffset, n);
    const jsonLen = dv.getUint32(n - 8, true);
    const msgLen = dv.getUint32(n - 12, true);
    if (msgLen + jsonLen + 12 !== n) throw makeError('ERR_FILTER_CORRUPT_DATA', 'a record filter report is malformed');
    let rows: number | undefined;
    if (jsonLen > 2) {
      const report = JSON.parse(decoder.decode(out.subarray(msgLen, msgLen + jsonLen))) as Report;
      rows = report.rows;
      if (report.columns) this.#columns = report.columns;
      if (report.skipped) {
        this.#stats.skipped += report.skipped;
        const room = MAX_SKIPPED_LINES - this.#stats.skippedLines.length;
        if (room > 0 && report.lines) this.#stats.skippedLines.push(...report.lines.slice(0, room));
      }
    }
    if (msgLen === 0) return undefined;
    const bytes = out.subarray(0, msgLen);
    this.#stats.batches++;
    if (!this.#asBatches) {
      this.#stats.rows += StructView.rootDynamic(bytes).soa(4).length;
      return bytes;
    }
    if (this.#columns === undefined) throw makeError('ERR_FILTER_CORRUPT_DATA', 'a batch came before its columns');
    const batch = new RecordBatch(bytes, this.#columns, rows);
    this.#stats.rows += batch.length;
    return batch;
  }

  stats(): RecordStats {
    return { ...this.#stats, skippedLines: [...this.#stats.skippedLines] };
  }
}
