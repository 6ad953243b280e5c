// HTTP errors of the service: every failure answers `{ error: { code, message } }` with
// the status of offthread's error registry (docs/errors.md), plus the few codes that
// only the service raises (README.md of this package).
import offthread from 'offthread';

/** Codes only the HTTP layer raises (not kernel errors, so not in offthread's registry). */
export const serviceErrors = Object.freeze({
  ERR_NOT_FOUND: { status: 404, summary: 'No route matches the method and path.' },
  ERR_INTERNAL: { status: 500, summary: 'An unexpected error; the server logged it and goes on.' },
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
  if (e.validation) return { status: 400, code: 'ERR_INVALID_ARG', message };
  if (typeof e.code === 'string') {
    const status = statusFor(e.code);
    if (status !== 500 || Object.hasOwn(offthread.errorRegistry, e.code) || e.code === 'ERR_INTERNAL') {
      return { status, code: e.code, message };
    }
  }
  // Fastify's own 4xx errors (bad content type, malformed URL …) keep their status.
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return { status: e.statusCode, code: 'ERR_INVALID_ARG', message };
  }
  return { status: 500, code: 'ERR_INTERNAL', message };
}
