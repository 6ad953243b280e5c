/**
 * `offthread/arrow`: record batches (`filters.csv()` / `filters.ndjson()`) as Apache Arrow.
 * A subpath of its own so the main entry never loads apache-arrow (an optional peer
 * dependency: only users of this subpath install it).
 *
 * A batch's columns already are Arrow's buffers (docs/streams.md, "Layout"), so numbers,
 * validity bitmaps, text offsets and text bytes are wrapped where they lie: the Arrow
 * vectors' buffers are views of the batch's bytes, nothing copied. Two exceptions:
 * `bool` (a byte per value here, a bit in Arrow: packed, a copy) and text whose last
 * offset is 2^31 or more (Arrow's Utf8 offsets are int32: refused, see `stringsToArrow`).
 */
import {
  RecordBatch as ArrowRecordBatch,
  Bool,
  type Data,
  DataType,
  Field,
  Float32,
  Float64,
  Int8,
  Int16,
  Int32,
  Int64,
  makeData,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Table,
  Uint8,
  Uint16,
  Uint32,
  Uint64,
  Utf8,
} from 'apache-arrow';
import { makeError } from '../errors.js';
import type { RecordBatch, RecordColumnInfo, StringColumn } from './records.js';
import type { ColumnType } from './spec.js';

const NUMERIC: Record<Exclude<ColumnType, 'string' | 'bool'>, () => DataType> = {
  i8: () => new Int8(),
  i16: () => new Int16(),
  i32: () => new Int32(),
  i64: () => new Int64(),
  u8: () => new Uint8(),
  u16: () => new Uint16(),
  u32: () => new Uint32(),
  u64: () => new Uint64(),
  f32: () => new Float32(),
  f64: () => new Float64(),
};

/** The Arrow type a column converts to: `string` → Utf8, `bool` → Bool, numbers → the same width. */
function arrowType(type: ColumnType): DataType {
  if (type === 'string') return new Utf8();
  if (type === 'bool') return new Bool();
  return NUMERIC[type]();
}

interface Shape {
  readonly schema: Schema;
  readonly struct: Struct;
}

/** Shapes made, by their columns: a stream's batches share one (no new types per batch). */
const shapes = new Map<string, Shape>();
/** Bounds the cache for a process that sees ever new column lists. */
const MAX_SHAPES = 64;

function shapeOf(columns: readonly RecordColumnInfo[]): Shape {
  const key = JSON.stringify(columns.map((c) => [c.name, c.type, c.nullable]));
  let shape = shapes.get(key);
  if (shape === undefined) {
    const schema = new Schema(columns.map((c) => new Field(c.name, arrowType(c.type), c.nullable)));
    shape = { schema, struct: new Struct(schema.fields) };
    if (shapes.size >= MAX_SHAPES) shapes.clear();
    shapes.set(key, shape);
  }
  return shape;
}

/** The Arrow schema of batches with these columns (every batch of one stream has the same). */
export function arrowSchema(columns: readonly RecordColumnInfo[]): Schema {
  return shapeOf(columns).schema;
}

/** The low bit of each of a u32's four bytes (little-endian), as four bits. */
const nibble = (w: number) => (w & 1) | ((w >>> 7) & 2) | ((w >>> 14) & 4) | ((w >>> 21) & 8);

/**
 * One byte per value (0 or 1, as the filters write bools) → Arrow's bits, LSB first: the
 * one column that needs a copy. Eight values per output byte from two u32 reads (the
 * column is 64-byte aligned): a byte at a time was most of toArrow's time.
 */
function packBits(bytes: Uint8Array): Uint8Array {
  const n = bytes.length;
  const bits = new Uint8Array((n + 7) >> 3);
  const whole = n >> 3;
  if (bytes.byteOffset % 4 === 0) {
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset, whole * 2);
    for (let j = 0; j < whole; j++) bits[j] = nibble(words[2 * j]!) | (nibble(words[2 * j + 1]!) << 4);
  }
  for (let i = bytes.byteOffset % 4 === 0 ? whole * 8 : 0; i < n; i++)
    if (bytes[i] !== 0) bits[i >> 3]! |= 1 << (i & 7);
  return bits;
}

/** Int32 offsets over the same bytes as the u32 ones: the same bits while every offset < 2^31. */
function int32Offsets(offsets: Uint32Array): Int32Array {
  // Offsets never decrease, so the last one bounds them all.
  const last = offsets.length === 0 ? 0 : offsets[offsets.length - 1]!;
  if (last >= 2 ** 31)
    throw makeError(
      'ERR_INVALID_ARG',
      `a text column holds ${last} bytes: Arrow's Utf8 offsets are int32 (below 2 GiB); use smaller chunks (smaller batches)`,
    );
  return new Int32Array(offsets.buffer, offsets.byteOffset, offsets.length);
}

/**
 * A text column as Arrow Utf8 data, zero copy: its u32 offsets read as int32 and its
 * UTF-8 bytes, both over the batch. `ERR_INVALID_ARG` when the text reaches 2 GiB
 * (an offset past int32), which a batch can only hold from a chunk that large.
 */
export function stringsToArrow(
  column: StringColumn,
  validity: Uint8Array | null = null,
  type = new Utf8(),
): Data<Utf8> {
  return makeData({
    type,
    length: column.length,
    valueOffsets: int32Offsets(column.offsets),
    data: column.bytes,
    ...(validity === null ? { nullCount: 0 } : { nullBitmap: validity }),
  });
}

function columnData(batch: RecordBatch, i: number, field: Field): Data {
  const validity = batch.validity(i);
  const type = field.type as DataType;
  if (DataType.isUtf8(type)) return stringsToArrow(batch.strings(i), validity, type);
  const values = batch.numbers(i);
  const nulls = validity === null ? { nullCount: 0 } : { nullBitmap: validity };
  if (DataType.isBool(type))
    return makeData({ type, length: batch.length, data: packBits(values as Uint8Array), ...nulls });
  // makeData keeps a typed array of the type's own ArrayType as it is (no copy).
  return makeData({ type, length: batch.length, data: values, ...nulls } as never);
}

/**
 * The batch as an apache-arrow `RecordBatch`. Numeric columns (ints, floats, i64/u64 as
 * Int64/Uint64), validity bitmaps and text (Utf8: offsets and bytes) are views of the
 * batch's bytes, so the Arrow batch keeps them alive and reads what the batch holds;
 * `bool` columns are packed into bits (a copy). Nullable columns are nullable fields.
 */
export function toArrow(batch: RecordBatch): ArrowRecordBatch {
  const { schema, struct } = shapeOf(batch.columns);
  const children = schema.fields.map((f, i) => columnData(batch, i, f));
  return new ArrowRecordBatch(schema, makeData({ type: struct, length: batch.length, nullCount: 0, children }));
}

type Batches = Iterable<RecordBatch> | AsyncIterable<RecordBatch>;

const isAsync = (x: Batches): x is AsyncIterable<RecordBatch> =>
  typeof (x as AsyncIterable<RecordBatch>)[Symbol.asyncIterator] === 'function';

async function collect(source: AsyncIterable<RecordBatch>): Promise<ArrowRecordBatch[]> {
  const out: ArrowRecordBatch[] = [];
  for await (const b of source) out.push(toArrow(b));
  return out;
}

/** An empty source has no columns to take a schema from: an empty Table (no columns). */
function table(batches: ArrowRecordBatch[]): Table {
  return batches.length === 0 ? new Table() : new Table(batches[0]!.schema, batches);
}

/**
 * A Table of a stream's batches (a record filter, an array of batches): each batch
 * converted by `toArrow`, so the Table's numeric columns are views of the batches.
 * A stream (async iterable) gives a Promise.
 */
export function toArrowTable(batches: Iterable<RecordBatch>): Table;
export function toArrowTable(batches: AsyncIterable<RecordBatch>): Promise<Table>;
export function toArrowTable(batches: Batches): Table | Promise<Table> {
  if (isAsync(batches)) return collect(batches).then(table);
  return table(Array.from(batches, toArrow));
}

function ipc(batches: ArrowRecordBatch[]): Uint8Array {
  const writer = new RecordBatchStreamWriter();
  for (const b of batches) writer.write(b);
  writer.finish();
  return writer.toUint8Array(true);
}

/**
 * The batches as Arrow IPC stream bytes (apache-arrow's `RecordBatchStreamWriter`; read
 * them with `tableFromIPC`, pyarrow, DuckDB, Polars, …). A stream gives a Promise. To
 * write as batches arrive, pipe `toArrow` of each into `RecordBatchStreamWriter.throughNode()`.
 */
export function toArrowIPC(batches: Iterable<RecordBatch>): Uint8Array;
export function toArrowIPC(batches: AsyncIterable<RecordBatch>): Promise<Uint8Array>;
export function toArrowIPC(batches: Batches): Uint8Array | Promise<Uint8Array> {
  if (isAsync(batches)) return collect(batches).then(ipc);
  return ipc(Array.from(batches, toArrow));
}
