// Errors of the browser entry: the same codes, kinds and classes as the Node package
// (packages/offthread/src/errors.ts is the registry; browser.test.mjs checks that
// every code used here exists there).

export class OffthreadError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.code = code;
    this.name = 'OffthreadError';
  }
}

export class OffthreadTypeError extends TypeError {
  constructor(code, message) {
    super(message);
    this.code = code;
    this.name = 'TypeError';
  }
}

export class OffthreadRangeError extends RangeError {
  constructor(code, message) {
    super(message);
    this.code = code;
    this.name = 'RangeError';
  }
}

export class AbortError extends OffthreadError {
  constructor(message = 'The operation was aborted', options) {
    super('ERR_ABORTED', message, options);
    this.name = 'AbortError';
  }
}

/** The kind of error each code is thrown as (the Node registry's `kind`). */
export const errorKinds = {
  ERR_INVALID_ARG: 'TypeError',
  ERR_INVALID_SAMPLES: 'RangeError',
  ERR_INVALID_SEED: 'RangeError',
  ERR_INVALID_VARIANT: 'RangeError',
  ERR_INVALID_TEXT: 'RangeError',
  ERR_TEXT_TOO_LONG: 'RangeError',
  ERR_INVALID_ROUNDS: 'RangeError',
  ERR_INVALID_QR_OPTIONS: 'RangeError',
  ERR_INVALID_POOL_OPTIONS: 'RangeError',
  ERR_BACKEND_UNAVAILABLE: 'Error',
  ERR_ABORTED: 'AbortError',
  ERR_TIMEOUT: 'Error',
  ERR_QUEUE_FULL: 'Error',
  ERR_POOL_CLOSED: 'Error',
  ERR_KERNEL_PANIC: 'Error',
};

/** The error of the registry's kind for `code`. */
export function makeError(code, message, cause) {
  switch (errorKinds[code]) {
    case 'TypeError':
      return new OffthreadTypeError(code, message);
    case 'RangeError':
      return new OffthreadRangeError(code, message);
    case 'AbortError':
      return new AbortError(message, { cause });
    default:
      return new OffthreadError(code ?? 'ERR_KERNEL_PANIC', message, cause === undefined ? undefined : { cause });
  }
}

/**
 * The wasm build's negative returns, in order: −(1 + i) is `WASM_ERRORS[i]`
 * (crates/offthread-wasm/src/abi.rs; the list only grows at the end).
 */
export const WASM_ERRORS = [
  'ERR_INVALID_SAMPLES',
  'ERR_INVALID_SEED',
  'ERR_INVALID_ARG',
  'ERR_ABORTED',
  'ERR_TIMEOUT',
  'ERR_INVALID_TEXT',
  'ERR_TEXT_TOO_LONG',
  'ERR_INVALID_ROUNDS',
  'ERR_INVALID_QR_OPTIONS',
];

/** A plain `{ code, message }` (what crosses postMessage) back into a typed error. */
export function fromWire(e) {
  if (e && typeof e.code === 'string' && e.code in errorKinds) return makeError(e.code, e.message);
  return new OffthreadError('ERR_KERNEL_PANIC', String(e?.message ?? e));
}
