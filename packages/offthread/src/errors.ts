/**
 * The one registry of offthread's error codes (docs/errors.md documents each; a test
 * fails if one is missing there). `status` is the HTTP status the service answers with.
 */
export const errorRegistry = {
  ERR_INVALID_ARG: { status: 400, kind: 'TypeError', summary: 'An argument has the wrong type or is missing.' },
  ERR_INVALID_SAMPLES: { status: 400, kind: 'RangeError', summary: 'π samples is not an integer from 0 to 2^53.' },
  ERR_INVALID_SEED: { status: 400, kind: 'RangeError', summary: 'A seed is not a safe integer.' },
  ERR_INVALID_VARIANT: {
    status: 400,
    kind: 'RangeError',
    summary: 'Unknown variant name, or a variant used in the wrong form (sync vs async).',
  },
  ERR_INVALID_TEXT: {
    status: 400,
    kind: 'RangeError',
    summary: 'Text that cannot be encoded (e.g. not valid UTF-8 from a C/WASM caller).',
  },
  ERR_TEXT_TOO_LONG: {
    status: 400,
    kind: 'RangeError',
    summary: "Text beyond the QR symbol's capacity at the chosen ECC level.",
  },
  ERR_INVALID_ROUNDS: { status: 400, kind: 'RangeError', summary: 'MD5 rounds is not an integer from 0 to 10^9.' },
  ERR_INVALID_QR_OPTIONS: { status: 400, kind: 'RangeError', summary: 'QR size, margin or ecc out of range.' },
  ERR_INVALID_BUFFER: {
    status: 400,
    kind: 'RangeError',
    summary: 'A buffer is not a valid encoding of the expected schema.',
  },
  ERR_INVALID_POOL_OPTIONS: {
    status: 500,
    kind: 'RangeError',
    summary: 'Pool options out of range (threads < 1, maxQueue < 1, …).',
  },
  ERR_BACKEND_UNAVAILABLE: {
    status: 503,
    kind: 'Error',
    summary: 'The requested backend (native addon, WASM, koffi) could not be loaded.',
  },
  ERR_ABORTED: { status: 499, kind: 'AbortError', summary: 'The call was aborted through its AbortSignal.' },
  ERR_TIMEOUT: { status: 504, kind: 'Error', summary: 'The call did not finish within its `timeout`.' },
  ERR_QUEUE_FULL: {
    status: 503,
    kind: 'Error',
    summary: 'The pool already holds `maxQueue` queued jobs; nothing was queued.',
  },
  ERR_POOL_CLOSED: { status: 503, kind: 'Error', summary: 'The pool was closed or destroyed; nothing was queued.' },
  ERR_POOL_SPAWN: { status: 500, kind: 'Error', summary: "The operating system refused to start the pool's threads." },
  ERR_KERNEL_PANIC: {
    status: 500,
    kind: 'Error',
    summary: 'A Rust kernel panicked; the call failed, the pool goes on.',
  },
  // Stream filters (src/filters, crates/offthread-filters); docs/streams.md.
  ERR_FILTER_INVALID_UTF8: {
    status: 400,
    kind: 'Error',
    summary: 'Invalid UTF-8 in a strict filter (also a sequence cut off by the end).',
  },
  ERR_FILTER_INVALID_UTF16: {
    status: 400,
    kind: 'Error',
    summary: 'A lone surrogate or a trailing odd byte in strict UTF-16LE input.',
  },
  ERR_FILTER_UNMAPPABLE: { status: 400, kind: 'Error', summary: 'A character latin1 cannot hold (strict mode).' },
  ERR_FILTER_CORRUPT_DATA: {
    status: 400,
    kind: 'Error',
    summary: 'Compressed input that does not decode (header, data, checksum, truncated).',
  },
  ERR_FILTER_BAD_RECORD: {
    status: 400,
    kind: 'Error',
    summary: 'A CSV/NDJSON record that does not fit the schema.',
  },
  ERR_FILTER_INVALID_SPEC: {
    status: 400,
    kind: 'RangeError',
    summary: 'Unknown filter, encoding, option, level or column type.',
  },
  ERR_FILTER_BUSY: {
    status: 500,
    kind: 'Error',
    summary: 'A sequential filter was given a chunk while the previous one was running.',
  },
  ERR_FILTER_CLOSED: { status: 500, kind: 'Error', summary: 'The filter has finished or failed.' },
  ERR_FILTER_TOO_LARGE: { status: 400, kind: 'RangeError', summary: 'A record batch over the 4 GiB message limit.' },
  ERR_FILTER_QUOTE_NOT_CLOSED: {
    status: 400,
    kind: 'Error',
    summary: 'CSV input that ends inside a quoted field (csv-parse: CSV_QUOTE_NOT_CLOSED).',
  },
  ERR_FILTER_WINDOW_TOO_LARGE: {
    status: 400,
    kind: 'RangeError',
    summary: "A zstd frame needs a window past the decoder's windowLogMax.",
  },
  ERR_STREAM_SINK_FAILED: {
    status: 500,
    kind: 'Error',
    summary: 'A sink of a fanned-out source failed; the source and every sink were destroyed.',
  },
  ERR_GUEST_MODULE: {
    status: 400,
    kind: 'Error',
    summary: 'A guest module was refused at load (not wasm, missing ABI exports, wrong ABI version, bad descriptor).',
  },
  ERR_GUEST_TRAP: {
    status: 500,
    kind: 'Error',
    summary: 'A guest trapped (unreachable, a panic, out-of-bounds access); the call failed, the host goes on.',
  },
  ERR_GUEST_MEMORY_LIMIT: {
    status: 500,
    kind: 'Error',
    summary: "A guest's memory would pass its limit (memory.grow refused), or a message does not fit its memory.",
  },
  ERR_GUEST_ABI: {
    status: 500,
    kind: 'Error',
    summary: 'A guest broke the guest ABI during a call (an out-of-bounds result, a bad pointer).',
  },
  ERR_GUEST_FAILED: { status: 500, kind: 'Error', summary: 'A guest reported an error for the call (its message).' },
  ERR_GUEST_NO_FUNCTION: {
    status: 501,
    kind: 'Error',
    summary: 'The chosen guest, or every one present, lacks the function: built before it was added to the interface.',
  },
  ERR_QUEUE_JOB_FAILED: {
    status: 502,
    kind: 'Error',
    summary: 'A queued job failed on its workers after every attempt (lost worker, crash, an error without a code).',
  },
  ERR_QUEUE_PAYLOAD: {
    status: 400,
    kind: 'RangeError',
    summary:
      "A queued job's payload is missing or not a valid encoding of its kernel's schema; it fails once, unretried.",
  },
  ERR_QUEUE_CLOSED: {
    status: 503,
    kind: 'Error',
    summary: 'The queue client or worker was closed; nothing was queued.',
  },
  ERR_QUEUE_UNAVAILABLE: {
    status: 503,
    kind: 'Error',
    summary:
      'Redis did not answer within the wait (`redisTimeout`), or refused a command for reasons of its own; retry later.',
  },
  ERR_SCHEMA_COMPILER: {
    status: 500,
    kind: 'Error',
    summary: 'The schema compiler itself failed (a trap), not the schema; the next compile starts afresh.',
  },
  // Task modules (src/tasks, src/pool).
  ERR_TASK_MODULE: {
    status: 500,
    kind: 'Error',
    summary: "A task module could not be imported on the pool's workers (not found, a syntax error, a throw at load).",
  },
  ERR_TASK_EXPORT: { status: 500, kind: 'Error', summary: 'A task module has no exported function of that name.' },
  ERR_TASK_DATA: {
    status: 400,
    kind: 'TypeError',
    summary:
      "A task's argument or result cannot cross between threads (a function, a Symbol, a class instance); the message names its path.",
  },
  ERR_WORKER_DIED: {
    status: 500,
    kind: 'Error',
    summary:
      'The worker running the task died (process.exit, out of memory, an uncaught error) or was replaced after ignoring its abort.',
  },
  ERR_NOT_IN_TASK: {
    status: 500,
    kind: 'Error',
    summary: 'currentTask() was called outside a task running on a worker.',
  },
  // The schema format's own codes (SchemaReadError / SchemaWriteError), the same strings as
  // Rust's rt::ReadError / WriteError: docs/schema-format.md §3 has the detail.
  R0001: {
    status: 400,
    kind: 'SchemaReadError',
    summary: 'A schema message: a header, table, column or struct reaches past the buffer.',
  },
  R0002: {
    status: 400,
    kind: 'SchemaReadError',
    summary: 'A schema message: a dynamic struct header with size < 8 or used < 4.',
  },
  R0003: {
    status: 400,
    kind: 'SchemaReadError',
    summary: 'A schema message: a struct not 8-aligned, or an array header, table or data not 64-aligned.',
  },
  R0004: {
    status: 400,
    kind: 'SchemaReadError',
    summary: 'A schema message: an array count greater than its capacity.',
  },
  R0005: {
    status: 400,
    kind: 'SchemaReadError',
    summary: 'A schema message: a SoA table longer than the reader allows (max_soa_columns).',
  },
  R0006: {
    status: 400,
    kind: 'SchemaReadError',
    summary: 'A schema message: an offset chain deeper than the reader allows (max_depth).',
  },
  R0007: {
    status: 400,
    kind: 'SchemaReadError',
    summary: 'A schema message: an item size or stride that disagrees with the schema.',
  },
  R0008: {
    status: 400,
    kind: 'SchemaReadError',
    summary: 'A schema message: #string data that is not valid UTF-8 / UTF-16.',
  },
  R0009: {
    status: 400,
    kind: 'SchemaReadError',
    summary: 'A schema message: a count larger than the buffer has bytes.',
  },
  R0010: {
    status: 400,
    kind: 'SchemaReadError',
    summary: 'A schema message: an owned decode visited more items than its traversal budget.',
  },
  R0011: {
    status: 400,
    kind: 'SchemaReadError',
    summary: 'A schema message: variable-length SoA offsets that do not start at 0, or decrease.',
  },
  W0001: {
    status: 400,
    kind: 'SchemaWriteError',
    summary: 'A schema writer: the message would pass 4 GiB (32-bit offsets).',
  },
  W0002: {
    status: 400,
    kind: 'SchemaWriteError',
    summary: "A schema writer: the caller's target buffer is too small.",
  },
  W0003: {
    status: 400,
    kind: 'SchemaWriteError',
    summary: "A schema writer: the caller's target buffer does not start 8-byte aligned.",
  },
  W0004: {
    status: 400,
    kind: 'SchemaWriteError',
    summary: 'A schema writer: a number for a 64-bit integer field is not a safe integer (or negative for u64).',
  },
  W0005: {
    status: 400,
    kind: 'SchemaWriteError',
    summary: "A schema writer: a union value whose tag is none of the union's variants.",
  },
  W0006: {
    status: 400,
    kind: 'SchemaWriteError',
    summary: 'A schema writer: an array or column filled with more or fewer items than reserved.',
  },
  W0007: {
    status: 400,
    kind: 'SchemaWriteError',
    summary: 'A schema writer: a value of the wrong JS type for its field.',
  },
  W0008: {
    status: 400,
    kind: 'SchemaWriteError',
    summary: "A schema writer: a number or bigint outside its field's type (never wrapped or rounded).",
  },
  W0009: {
    status: 400,
    kind: 'SchemaWriteError',
    summary: 'A schema writer: a string with a lone surrogate (not Unicode text).',
  },
  W0010: {
    status: 400,
    kind: 'SchemaWriteError',
    summary: "A schema writer: an in-place resize past the array's capacity.",
  },
  W0011: {
    status: 400,
    kind: 'SchemaWriteError',
    summary: "A schema writer: reading the value to encode threw (the caller's getter or Proxy): the cause.",
  },
} as const;

export type ErrorCode = keyof typeof errorRegistry;

/**
 * Marks every offthread error class on its prototype. Local to this copy of the package:
 * only errors offthread itself made carry it (a user's error with an `ERR_*` code does not).
 */
const BRAND = Symbol('offthread.error');
const ordinaryHasInstance = Function.prototype[Symbol.hasInstance];

/**
 * The base of every error offthread throws or rejects with: `err instanceof OffthreadError`
 * holds for all of them, and `err.code` is one of the registry's codes. The TypeError and
 * RangeError kinds are OffthreadTypeError / OffthreadRangeError, which extend the built-ins
 * (so `instanceof TypeError` holds too) and pass `instanceof OffthreadError` through the
 * brand above: a class cannot extend both Error subclasses, so the check is by brand.
 */
export class OffthreadError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'OffthreadError';
  }

  /** `x instanceof OffthreadError`: any offthread error; a subclass (AbortError) checks its prototype as usual. */
  static override [Symbol.hasInstance]<T>(this: abstract new (...args: never[]) => T, value: unknown): value is T {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class right of instanceof (a subclass too)
    if ((this as unknown) !== OffthreadError) return ordinaryHasInstance.call(this, value);
    return typeof value === 'object' && value !== null && BRAND in value;
  }
}

export class OffthreadTypeError extends TypeError {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'TypeError';
  }
}

export class OffthreadRangeError extends RangeError {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'RangeError';
  }
}

for (const C of [OffthreadError, OffthreadTypeError, OffthreadRangeError]) {
  Object.defineProperty(C.prototype, BRAND, { value: true });
}

/** Rejection of an aborted call: `name` 'AbortError' like the platform's, `cause` the signal's reason. */
export class AbortError extends OffthreadError {
  constructor(message = 'The operation was aborted', options?: { cause?: unknown }) {
    super('ERR_ABORTED', message, options);
    this.name = 'AbortError';
  }
}

/** The schema format's read codes (R0001…), the same strings as Rust's `rt::ReadError::code()`. */
export type ReadErrorCode = Extract<ErrorCode, `R${string}`>;
/** The schema format's write codes (W0001…); the TS-only ones are documented in docs/schema-format.md §3. */
export type WriteErrorCode = Extract<ErrorCode, `W${string}`>;

/** A schema message failed its bounds checks: what the readers (generated and `offthread/schema`) throw. */
export class SchemaReadError extends OffthreadError {
  declare readonly code: ReadErrorCode;
  constructor(code: ReadErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, `${code}: ${message}`, options);
    this.name = 'SchemaReadError';
  }
}

/** A value a schema writer cannot encode exactly (never wrapped, rounded or replaced). */
export class SchemaWriteError extends OffthreadError {
  declare readonly code: WriteErrorCode;
  constructor(code: WriteErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, `${code}: ${message}`, options);
    this.name = 'SchemaWriteError';
  }
}

/** Builds the error of the registry's kind for `code`. */
export function makeError(code: ErrorCode, message: string, cause?: unknown): Error & { code: ErrorCode } {
  const options = cause === undefined ? undefined : { cause };
  // A schema error that crossed a thread already carries its `CODE: ` prefix.
  const bare = message.startsWith(`${code}: `) ? message.slice(code.length + 2) : message;
  switch (errorRegistry[code].kind) {
    case 'SchemaReadError':
      return new SchemaReadError(code as ReadErrorCode, bare, options);
    case 'SchemaWriteError':
      return new SchemaWriteError(code as WriteErrorCode, bare, options);
    case 'TypeError':
      return new OffthreadTypeError(code, message, options);
    case 'RangeError':
      return new OffthreadRangeError(code, message, options);
    case 'AbortError':
      return new AbortError(message, options);
    default:
      return new OffthreadError(code, message, options);
  }
}

/**
 * A value as error messages show it: never throws (Symbols, bigints, objects with
 * throwing getters or toString) and never runs user code.
 */
export function describe(value: unknown): string {
  switch (typeof value) {
    case 'bigint':
      return `${value}n`;
    case 'string':
      return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
    case 'symbol':
      return 'a Symbol';
    case 'function':
      return 'a function';
    case 'object':
      if (value === null) return 'null';
      // Array.isArray throws on a revoked Proxy: a message must never throw.
      try {
        return Array.isArray(value) ? 'an array' : 'an object';
      } catch {
        return 'a revoked Proxy';
      }
    default:
      return String(value);
  }
}

/** Re-types an error thrown by the native addon (a plain Error with a registry `code`). */
export function fromNative(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code in errorRegistry && !(err instanceof OffthreadError)) {
    return makeError(code as ErrorCode, (err as Error).message, err);
  }
  return err;
}
