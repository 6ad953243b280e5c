// HTTP errors of the service: every failure answers `{ error: { code, message } }` with
// the status of offthread's error registry (docs/errors.md), plus the few codes that
// only the service raises (README.md of this package).
import offthread from 'offthread';

/** Codes only the HTTP layer raises (not kernel errors, so not in offthread's registry). */
export const serviceErrors = Object.freeze({
  ERR_NOT_FOUND: { status: 404, summary: 'No route matches the method and path.' },
  ERR_REQUEST_TIMEOUT: { status: 408, summary: 'The request line and headers (or the whole request) came too slowly.' },
  ERR_URI_TOO_LONG: { status: 414, summary: 'A path parameter is longer than the router allows.' },
  ERR_HEADERS_TOO_LARGE: { status: 431, summary: 'The request line and headers exceed the size limit.' },
  ERR_INTERNAL: { status: 500, summary: 'An unexpected error; the server logged it and goes on.' },
  ERR_SHUTTING_DOWN: { status: 503, summary: 'The server is stopping; the request was not started.' },
  ERR_EXPECTATION_FAILED: { status: 417, summary: 'An Expect header other than 100-continue.' },
});

/**
 * @param {string} code
 * @returns {number} the HTTP status for an error code (500 for an unknown one)
 */
export function statusFor(code) {
  /** @type {Record<string, { status: number }>} */
  const registry = offthread.errorRegistry;
  if (Object.hasOwn(registry, code)) return registry[code].status;
  if (Object.hasOwn(serviceErrors, code)) return serviceErrors[/** @type {keyof typeof serviceErrors} */ (code)].status;
  return 500;
}

/** An error the service raises itself, with a registry (or service) code. */
export class HttpError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.name = 'HttpError';
    this.code = code;
  }
}

/**
 * Turns anything a handler threw into `{ status, code, message }`. Fastify's schema
 * errors become ERR_INVALID_ARG; errors with a known code keep it; the rest are 500.
 * @param {unknown} err
 */
export function describeError(err) {
  const e = /** @type {{ code?: unknown, message?: unknown, validation?: unknown, statusCode?: unknown }} */ (
    err ?? {}
  );
  const message = typeof e.message === 'string' ? e.message : String(err);
  if (e.validation) return { status: 400, code: 'ERR_INVALID_ARG', message: validationMessage(e, message) };
  if (e.code === 'FST_ERR_BAD_URL') return { status: 400, code: 'ERR_INVALID_ARG', message };
  if (e.code === 'FST_ERR_MAX_PARAM_LENGTH') return { status: 414, code: 'ERR_URI_TOO_LONG', message };
  if (typeof e.code === 'string') {
    const status = statusFor(e.code);
    if (status !== 500 || Object.hasOwn(offthread.errorRegistry, e.code) || e.code === 'ERR_INTERNAL') {
      return { status, code: e.code, message };
    }
  }
  // @fastify/static's 403 for a path outside public/: as if it were not there.
  if (e.statusCode === 403 || e.statusCode === 404) return { status: 404, code: 'ERR_NOT_FOUND', message: 'not found' };
  // Fastify's other 4xx errors (bad content type, body too large …) keep their status.
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return { status: e.statusCode, code: 'ERR_INVALID_ARG', message };
  }
  return { status: 500, code: 'ERR_INTERNAL', message };
}

/** ajv's "must match pattern" says nothing useful: the only patterned fields are integers. */
function validationMessage(/** @type {any} */ e, /** @type {string} */ message) {
  const first = Array.isArray(e.validation) ? e.validation[0] : undefined;
  if (first?.keyword !== 'pattern') return message;
  const field = `${e.validationContext ?? 'querystring'}${first.instancePath}`;
  return `${field} must be a plain decimal integer (digits with an optional leading -)`;
}

/**
 * Node's clientError (the request never reached fastify): status and code by the
 * parser's error. Timeouts are 408, oversize request line + headers 431, the rest 400.
 * @param {{ code?: unknown }} err
 */
export function describeClientError(err) {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, code: 'ERR_REQUEST_TIMEOUT', message: 'request headers or body not received in time' };
  }
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, code: 'ERR_HEADERS_TOO_LARGE', message: 'request line and headers exceed the size limit' };
  }
  const detail = typeof err.code === 'string' ? ` (${err.code})` : '';
  return { status: 400, code: 'ERR_INVALID_ARG', message: `malformed HTTP request${detail}` };
}
