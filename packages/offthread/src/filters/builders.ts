/**
 * The filter catalogue, once for both stream shapes: each builder turns its arguments
 * into a spec and hands it to `make` (a Node Transform in node.ts, a WHATWG
 * TransformStream in web.ts).
 */
import { makeError } from '../errors.js';
import type { FilterRunOptions } from './core.js';
import { columnsFromSchema } from './schema-columns.js';
import type {
  BrotliCompressOptions,
  ColumnDecl,
  ColumnDefault,
  ColumnType,
  CsvOptions,
  DeclaredRecordOptions,
  DeflateOptions,
  FilterSpec,
  NdjsonOptions,
  RecordColumn,
  RecordOptions,
  SchemaRecordOptions,
  TextEncodingName,
  TranscodeOptions,
  ZstdCompressOptions,
  ZstdDecompressOptions,
} from './spec.js';

/** csv()'s options: the CSV ones, and either `columns` alone or the batch's `schema`. */
export type CsvFilterOptions<R extends RecordOptions = RecordOptions> = Omit<CsvOptions, 'columns'> & R;
/** ndjson()'s options: `columns` alone (or none: inferred), or the batch's `schema`. */
export type NdjsonFilterOptions<R extends RecordOptions = RecordOptions> = Omit<NdjsonOptions, 'columns'> & R;

const TYPES: ReadonlySet<string> = new Set([
  'bool',
  'u8',
  'u16',
  'u32',
  'u64',
  'i8',
  'i16',
  'i32',
  'i64',
  'f32',
  'f64',
  'string',
]);

/** `columns: { name: decl }` as the column list the Rust side reads. */
function declared(columns: Readonly<Record<string, ColumnDecl>>): RecordColumn[] {
  return Object.entries(columns).map(([name, decl], field) => {
    const d: { type: string; nullable?: boolean; default?: ColumnDefault } =
      typeof decl === 'string' ? { type: decl.replace(/\?$/, ''), nullable: decl.endsWith('?') } : decl;
    if (typeof d !== 'object' || d === null || !TYPES.has(d.type))
      throw makeError(
        'ERR_FILTER_INVALID_SPEC',
        `column "${name}": ${JSON.stringify(decl)} is not a type (${[...TYPES].join(', ')}, with ? when nullable) or { type, nullable, default }`,
      );
    const c: RecordColumn = { name, type: d.type as ColumnType, field };
    if (d.nullable) c.nullable = true;
    if (d.default !== undefined) c.default = typeof d.default === 'bigint' ? String(d.default) : d.default;
    return c;
  });
}

const isDeclared = (columns: unknown): columns is Readonly<Record<string, ColumnDecl>> =>
  typeof columns === 'object' && columns !== null && !Array.isArray(columns);

/**
 * The spec of a record filter: `columns: { … }` or none → the records layout (batches as
 * RecordBatch objects, nulls allowed, columns inferred when none are given); with
 * `schema` the columns checked against its row struct (each with its field index);
 * a column array alone as it is. Every output carries a report (core.ts splits it off).
 */
function recordColumns<T extends { schema?: unknown; columns?: unknown }>(
  options: T,
): Omit<T, 'schema' | 'columns'> & { columns?: readonly RecordColumn[]; layout?: 'records'; report: true } {
  const { schema, columns, ...rest } = options;
  if (schema !== undefined) {
    const list = isDeclared(columns)
      ? declared(columns).map(({ name, type, nullable, default: d }) => {
          if (nullable)
            throw makeError(
              'ERR_FILTER_INVALID_SPEC',
              `column "${name}": a schema's fields have no nulls; give it a default instead`,
            );
          return d === undefined ? { name, type } : { name, type, default: d };
        })
      : (columns as readonly RecordColumn[] | undefined);
    return { ...rest, columns: columnsFromSchema(schema, list), report: true };
  }
  if (Array.isArray(columns)) return { ...rest, columns: columns as readonly RecordColumn[], report: true };
  if (columns === undefined) return { ...rest, layout: 'records', report: true };
  if (isDeclared(columns)) return { ...rest, columns: declared(columns), layout: 'records', report: true };
  throw makeError('ERR_FILTER_INVALID_SPEC', '"columns" must be an object of { name: type } or an array');
}

export type StreamOptions = FilterRunOptions;

/**
 * The filters of one stream shape `S`; record filters are `B` when they emit
 * RecordBatch objects (columns declared or inferred) and `M` when they emit a schema's
 * batch messages (the Node Transform is all three; the web form's types differ).
 */
export interface FilterBuilders<S, B = S, M = S> {
  /** `from` → `to` (utf8, utf16le, latin1); chunks may be cut anywhere, even inside a character. */
  transcode(from: TextEncodingName, to: TextEncodingName, options?: TranscodeOptions & StreamOptions): S;
  /** Passes UTF-8 through; fails with ERR_FILTER_INVALID_UTF8 at the first invalid byte. */
  validateUtf8(options?: StreamOptions): S;
  gzip(options?: DeflateOptions & StreamOptions): S;
  gunzip(options?: StreamOptions): S;
  /** zlib format (RFC 1950), as Node's createDeflate. */
  deflate(options?: DeflateOptions & StreamOptions): S;
  inflate(options?: StreamOptions): S;
  deflateRaw(options?: DeflateOptions & StreamOptions): S;
  inflateRaw(options?: StreamOptions): S;
  /** Emits the 32-byte SHA-256 of the stream at its end. */
  sha256(options?: StreamOptions): S;
  /** Emits the 16-byte MD5 of the stream at its end. */
  md5(options?: StreamOptions): S;
  /**
   * CSV → record batches, one per chunk that completed rows. `columns: { amount: 'f64',
   * city: 'string' }` (or none: inferred from the header and the first rows) gives
   * RecordBatch objects; `schema` (a generated batch reader) gives its messages, the
   * columns checked against its row struct, by name and type, when the filter is made.
   */
  csv(options?: CsvFilterOptions<DeclaredRecordOptions> & StreamOptions): B;
  csv(options: CsvFilterOptions<SchemaRecordOptions> & StreamOptions): M;
  /** Options whose kind is only known at run time: either stream. */
  csv(options?: CsvFilterOptions & StreamOptions): B | M;
  /**
   * NDJSON → record batches; `columns` and `schema` as for csv(). Without `columns`,
   * inferred from the keys of the first `inferRows` lines (docs/streams.md).
   */
  ndjson(options?: NdjsonFilterOptions<DeclaredRecordOptions> & StreamOptions): B;
  ndjson(options: NdjsonFilterOptions<SchemaRecordOptions> & StreamOptions): M;
  ndjson(options?: NdjsonFilterOptions & StreamOptions): B | M;
  /** Zstandard, as Node's zlib.createZstdCompress reads it (frames of 1 MiB input each). */
  zstdCompress(options?: ZstdCompressOptions & StreamOptions): S;
  /** Zstandard (concatenated and skippable frames too), as zlib.createZstdDecompress. */
  zstdDecompress(options?: ZstdDecompressOptions & StreamOptions): S;
  /** Brotli, as zlib.createBrotliCompress (quality and window as its params). */
  brotliCompress(options?: BrotliCompressOptions & StreamOptions): S;
  brotliDecompress(options?: StreamOptions): S;
}

function split<T extends object>(options: (T & StreamOptions) | undefined): [T, StreamOptions] {
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw makeError('ERR_INVALID_ARG', 'filter options must be an object');
  const { pool, inFlight, ...rest } = (options ?? {}) as T & StreamOptions;
  return [rest as unknown as T, { pool, inFlight }];
}

/** zstd and brotli, named as Node's zlib names them; options checked on the Rust side. */
function compressors<S>(
  make: (spec: FilterSpec, run: StreamOptions) => S,
): Pick<FilterBuilders<S>, 'zstdCompress' | 'zstdDecompress' | 'brotliCompress' | 'brotliDecompress'> {
  const of =
    <O extends object>(kind: 'zstdCompress' | 'zstdDecompress' | 'brotliCompress' | 'brotliDecompress') =>
    (options?: O & StreamOptions): S => {
      const [rest, run] = split<O>(options);
      return make({ kind, ...rest } as FilterSpec, run);
    };
  return {
    zstdCompress: of<ZstdCompressOptions>('zstdCompress'),
    zstdDecompress: of<ZstdDecompressOptions>('zstdDecompress'),
    brotliCompress: of<BrotliCompressOptions>('brotliCompress'),
    brotliDecompress: of<object>('brotliDecompress'),
  };
}

/**
 * The builders over `make`; `records` makes the record filters (default: `make`), whose
 * stream type may differ (the web form's has `stats()`).
 */
export function builders<S, B = S, M = S>(
  make: (spec: FilterSpec, run: StreamOptions) => S,
  records: (spec: FilterSpec, run: StreamOptions) => B | M = make as never,
): FilterBuilders<S, B, M> {
  const simple =
    (kind: 'gunzip' | 'inflate' | 'inflateRaw' | 'sha256' | 'md5') =>
    (options?: StreamOptions): S => {
      const [rest, run] = split<object>(options);
      return make({ kind, ...rest } as FilterSpec, run);
    };
  const deflater =
    (kind: 'gzip' | 'deflate' | 'deflateRaw') =>
    (options?: DeflateOptions & StreamOptions): S => {
      const [rest, run] = split(options);
      return make({ kind, ...rest }, run);
    };
  return {
    transcode: (from, to, options) => {
      const [rest, run] = split(options);
      return make({ kind: 'transcode', from, to, ...rest }, run);
    },
    validateUtf8: (options) => {
      const [rest, run] = split(options);
      // Its spec is fixed: any other option would be ignored, so it is refused.
      const extra = Object.keys(rest);
      if (extra.length > 0)
        throw makeError(
          'ERR_FILTER_INVALID_SPEC',
          `validateUtf8 takes only pool and inFlight, got ${extra.join(', ')}`,
        );
      return make({ kind: 'transcode', from: 'utf8', to: 'utf8', strict: true }, run);
    },
    gzip: deflater('gzip'),
    gunzip: simple('gunzip'),
    deflate: deflater('deflate'),
    inflate: simple('inflate'),
    deflateRaw: deflater('deflateRaw'),
    inflateRaw: simple('inflateRaw'),
    sha256: simple('sha256'),
    md5: simple('md5'),
    // One function for both overloads: the options decide which stream comes out.
    csv: ((options?: CsvFilterOptions & StreamOptions) => {
      const [rest, run] = split<CsvFilterOptions>(options);
      return records({ kind: 'csv', ...recordColumns(rest) }, run);
    }) as FilterBuilders<S, B, M>['csv'],
    ndjson: ((options?: NdjsonFilterOptions & StreamOptions) => {
      const [rest, run] = split<NdjsonFilterOptions>(options);
      return records({ kind: 'ndjson', ...recordColumns(rest) }, run);
    }) as FilterBuilders<S, B, M>['ndjson'],
    ...compressors(make),
  };
}
