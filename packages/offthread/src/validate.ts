import { describe, makeError } from './errors.js';

/**
 * `value instanceof C` that cannot throw: on a revoked Proxy `instanceof` (and
 * Array.isArray) throw a TypeError, which must surface as a typed argument error.
 */
export function isInstance<T>(value: unknown, C: abstract new (...args: never[]) => T): value is T {
  try {
    return value instanceof C;
  } catch {
    return false;
  }
}

/** Array.isArray that cannot throw (false for a revoked Proxy). */
export function isArray(value: unknown): value is unknown[] {
  try {
    return Array.isArray(value);
  } catch {
    return false;
  }
}

/** 2^53: the largest sample count (counts stay exact as JS numbers). */
export const MAX_SAMPLES = 2 ** 53;

/** A count from 0 to `max` given as a number or bigint; anything else throws with `code`. */
export function toCount(value: unknown, name: string, max: number, code: 'ERR_INVALID_SAMPLES'): number {
  if (typeof value === 'bigint') {
    if (value < 0n || value > BigInt(max)) {
      throw makeError(code, `${name} must be an integer from 0 to ${max}, got ${describe(value)}`);
    }
    return Number(value);
  }
  if (typeof value !== 'number') {
    throw makeError('ERR_INVALID_ARG', `${name} must be a number or bigint, got ${describe(value)}`);
  }
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw makeError(code, `${name} must be an integer from 0 to ${max}, got ${describe(value)}`);
  }
  return value;
}

/** A seed: any safe integer (number or bigint in range); undefined means `fallback`. */
export function toSeed(value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'bigint') {
    if (value < BigInt(Number.MIN_SAFE_INTEGER) || value > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw makeError('ERR_INVALID_SEED', `seed must be a safe integer, got ${describe(value)}`);
    }
    return Number(value);
  }
  if (typeof value !== 'number') {
    throw makeError('ERR_INVALID_ARG', `seed must be a number or bigint, got ${describe(value)}`);
  }
  if (!Number.isSafeInteger(value)) {
    throw makeError('ERR_INVALID_SEED', `seed must be a safe integer, got ${describe(value)}`);
  }
  return value;
}

/**
 * An options object read once, safely: undefined or an object whose own enumerable keys
 * are all in `keys` (a misspelt option is an error, never silently ignored). Each known
 * key is read exactly once; a getter that throws becomes ERR_INVALID_ARG with the cause.
 */
export function toOptions<T extends object>(
  value: unknown,
  keys: readonly (keyof T & string)[],
  name = 'options',
): Partial<T> {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object') {
    throw makeError('ERR_INVALID_ARG', `${name} must be an object, got ${describe(value)}`);
  }
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  let own: string[];
  try {
    own = Object.keys(source);
  } catch (err) {
    throw makeError('ERR_INVALID_ARG', `${name} cannot be read`, err);
  }
  for (const key of own) {
    if (!(keys as readonly string[]).includes(key)) {
      throw makeError('ERR_INVALID_ARG', `unknown option ${JSON.stringify(key)} in ${name}; known: ${keys.join(', ')}`);
    }
  }
  for (const key of keys) {
    let v: unknown;
    try {
      v = source[key];
    } catch (err) {
      throw makeError('ERR_INVALID_ARG', `${name}.${key} cannot be read`, err);
    }
    if (v !== undefined) out[key] = v;
  }
  return out as Partial<T>;
}

/** The keys of `{ pool, signal, timeout }`. */
export const CALL_KEYS = ['pool', 'signal', 'timeout'] as const;
