/**
 * What a filter is, as the Rust side reads it (a JSON spec checked in
 * crates/offthread-filters: unknown kinds, options and values are ERR_FILTER_INVALID_SPEC).
 */

export type TextEncodingName = 'utf8' | 'utf-8' | 'utf16le' | 'utf-16le' | 'ucs2' | 'latin1' | 'binary';

export interface TranscodeOptions {
  /** Fail (ERR_FILTER_INVALID_UTF8 / _UTF16 / _UNMAPPABLE) instead of writing U+FFFD or `?`. */
  strict?: boolean;
}

export interface DeflateOptions {
  /** zlib level 0–9 (default 6, zlib's). */
  level?: number;
}

/** A field type of the row struct (`string` is `[]u8 #string`). */
export type ColumnType =
  | 'bool'
  | 'u8'
  | 'u16'
  | 'u32'
  | 'u64'
  | 'i8'
  | 'i16'
  | 'i32'
  | 'i64'
  | 'f32'
  | 'f64'
  | 'string';

/** What an empty cell (CSV), a missing key or `null` (NDJSON) holds instead. */
export type ColumnDefault = string | number | boolean | bigint;

/**
 * A column declared in JS (`columns: { amount: 'f64', … }`): its type, with a trailing
 * `?` when it may be null (`'f64?'`), or its options.
 */
export type ColumnDecl =
  | ColumnType
  | `${ColumnType}?`
  | {
      type: ColumnType;
      /** Empty cells / missing keys / `null` are nulls (a validity bitmap; the value reads as 0). */
      nullable?: boolean;
      /** Empty cells / missing keys / `null` read as this (never null then). */
      default?: ColumnDefault;
    };

/** What a row that does not fit does: fail the stream (default), or be left out and counted. */
export type OnError = 'fail' | 'skip';

export interface RecordColumn {
  /** The CSV header / NDJSON key the value is read from. */
  name: string;
  /** The field's type; with `schema` it may be left out (and must match when given). */
  type: ColumnType;
  /** Empty cells / missing keys / `null` read as this. */
  default?: ColumnDefault;
  /** Nulls allowed (declared columns only: a schema's fields have none). */
  nullable?: boolean;
  /**
   * The field of the row struct: its declaration index (default: the column's position
   * in `columns`); with `schema` also its name, and by default the field named `name`.
   */
  field?: number;
}

/** A column given with `schema`: its type comes from the schema, its field may be named. */
export interface SchemaColumn {
  name: string;
  type?: ColumnType;
  field?: number | string;
  default?: ColumnDefault;
}

/**
 * The generated reader the batches will be read with (`ReadingBatchReader` of
 * `struct reading_batch (dynamic) { rows: []reading #soa; }`): the filter takes the
 * row's fields from it and refuses columns that do not match them.
 */
export type BatchSchema = abstract new (view: never) => object;

/**
 * Which columns a record filter reads, three ways:
 * - `columns: { name: type, … }` (or none: inferred from the CSV header / NDJSON keys
 *   and the first `inferRows` rows): batches come out as `RecordBatch` objects;
 * - `schema` (a generated batch reader), optionally with `columns` naming its fields:
 *   batches are the schema's messages, the columns checked against it;
 * - `columns: [{ name, type, field? }, …]` alone: the schema's messages, unchecked.
 */
export type RecordOptions = DeclaredRecordOptions | SchemaRecordOptions;

/** Columns declared in JS or inferred: the filter emits `RecordBatch` objects. */
export type DeclaredRecordOptions = { columns?: Readonly<Record<string, ColumnDecl>>; schema?: undefined };

/** A schema's columns: the filter emits the batch messages' bytes, for the generated reader. */
export type SchemaRecordOptions =
  | { columns: readonly RecordColumn[]; schema?: undefined }
  | { schema: BatchSchema; columns?: readonly SchemaColumn[] | Readonly<Record<string, ColumnDecl>> };

/** Options of every record filter (docs/streams.md, "Dirty data"). */
export interface DirtyDataOptions {
  /** A row that does not fit: `'fail'` the stream (default) or `'skip'` it (counted in `stats()`). */
  onError?: OnError;
}

export interface CsvOptions extends DirtyDataOptions {
  /** The row struct's fields, in declaration order (or with `field` set). */
  columns?: readonly RecordColumn[];
  /** The first record names the columns (default true); else columns are positional. */
  header?: boolean;
  delimiter?: string;
  quote?: string;
  /** Rows after the header that inferred columns are typed from (default 100). */
  inferRows?: number;
}

export interface NdjsonOptions extends DirtyDataOptions {
  columns?: readonly RecordColumn[];
  /** Non-blank lines that inferred columns are typed from (default 100). */
  inferRows?: number;
}

/** What the builders add to a record spec: the batch layout and the per-output report. */
interface RecordSpecExtras {
  /** `'records'`: validity columns allowed, batches emitted as RecordBatch objects. */
  layout?: 'schema' | 'records';
  /** Every output ends in a report (columns, skipped rows): always set by the builders. */
  report?: boolean;
}

export type FilterSpec =
  | ({ kind: 'transcode'; from: TextEncodingName; to: TextEncodingName } & TranscodeOptions)
  | ({ kind: 'gzip' | 'deflate' | 'deflateRaw' } & DeflateOptions)
  | { kind: 'gunzip' | 'inflate' | 'inflateRaw' | 'sha256' | 'md5' }
  | ({ kind: 'csv' } & CsvOptions & RecordSpecExtras)
  | ({ kind: 'ndjson' } & NdjsonOptions & RecordSpecExtras)
  | ({ kind: 'zstdCompress' } & ZstdCompressOptions)
  | ({ kind: 'zstdDecompress' } & ZstdDecompressOptions)
  | ({ kind: 'brotliCompress' } & BrotliCompressOptions)
  | { kind: 'brotliDecompress' }
  // A user's guest function per chunk (filters/guest.ts): runs on a GuestHost's workers and
  // never reaches the Rust side.
  | { kind: 'guest'; interface: string; fn: string; finish?: string };

/**
 * Pushes of these filters are independent once cut at a character boundary (transcoding),
 * a line (NDJSON) or a record end (CSV: the Rust side follows quotes from the stream's
 * start, unless its quote is its delimiter or a newline — then one chunk at a time).
 */
export function isParallel(spec: FilterSpec): boolean {
  if (spec.kind === 'csv') {
    const delimiter = spec.delimiter ?? ',';
    const quote = spec.quote ?? '"';
    const newline = (c: string) => c === '\r' || c === '\n';
    return delimiter !== quote && !newline(delimiter) && !newline(quote);
  }
  return spec.kind === 'transcode' || spec.kind === 'ndjson';
}

/** Output chunks are record batches (object mode), not a byte stream. */
export function emitsBatches(spec: FilterSpec): boolean {
  return spec.kind === 'csv' || spec.kind === 'ndjson';
}

/**
 * The most a decompressor's push hands back (crates/offthread-filters, `PIECE`): a
 * push whose output is this long may have more, which pushes of an empty chunk get.
 */
export const DECOMPRESS_PIECE = 1 << 20;

/** The output bound of one push, for filters that keep input back to stay under it; 0: none. */
export function outputPiece(spec: FilterSpec): number {
  switch (spec.kind) {
    case 'gunzip':
    case 'inflate':
    case 'inflateRaw':
    case 'zstdDecompress':
    case 'brotliDecompress':
      return DECOMPRESS_PIECE;
    default:
      return 0;
  }
}

/** Digest filters emit one chunk at the end: the digest. */
export function isDigest(spec: FilterSpec): boolean {
  return spec.kind === 'sha256' || spec.kind === 'md5';
}

export interface ZstdCompressOptions {
  /**
   * 1 only (the default): the pure-Rust encoder has one level, about `zstd -1` with a
   * 128 KiB window; other values are refused (ERR_FILTER_INVALID_SPEC), not ignored.
   */
  level?: 1;
}

export interface ZstdDecompressOptions {
  /**
   * The largest window a frame may ask for, as a power of two (10–31; default 27:
   * 128 MiB, libzstd's and so Node's default). A frame past it fails with
   * ERR_FILTER_WINDOW_TOO_LARGE before anything is allocated: it bounds the memory a
   * stream of untrusted input can take.
   */
  windowLogMax?: number;
}

export interface BrotliCompressOptions {
  /** 0–11 (default 11, Node's BROTLI_DEFAULT_QUALITY; 4–6 is far faster for streams). */
  quality?: number;
  /** The window as a power of two, 10–24 (default 22, Node's BROTLI_DEFAULT_WINDOW). */
  window?: number;
}
