// A task module with no imports, so the same file runs in Node and in browsers
// (browser-tasks.test.mjs, bundlers.test.mjs): its results there must equal Node's.
export const add = (a, b) => a + b;
export const echo = (value) => value;
export const typeOf = (value) => Object.prototype.toString.call(value);
/** CPU-bound: how many primes are below `n` (trial division). */
export function primes(n) {
  let count = 0;
  for (let i = 2; i < n; i++) {
    let prime = true;
    for (let d = 2; d * d <= i; d++) {
      if (i % d === 0) {
        prime = false;
        break;
      }
    }
    if (prime) count++;
  }
  return count;
}
/** FNV-1a of `text`, `rounds` times over: a deterministic 32-bit number. */
export function fnv(text, rounds) {
  let h = 0x811c9dc5;
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
  }
  return h;
}
export async function later(value) {
  await new Promise((resolve) => setTimeout(resolve, 1));
  return { value, at: 'later' };
}
export const sum = (bytes) => bytes.reduce((a, b) => a + b, 0);
export function fill(bytes, value) {
  bytes.fill(value);
  return bytes;
}
export function fail() {
  const err = new RangeError('out of range', { cause: new TypeError('inner cause') });
  err.code = 'E_TASK';
  err.details = { limit: 3, list: [1, 2] };
  throw err;
}
export async function failAsync() {
  await null;
  throw new SyntaxError('async failure');
}
export function throwString() {
  throw 'a string';
}
export function customError() {
  class ValidationError extends Error {
    constructor(message) {
      super(message);
      this.name = 'ValidationError';
      this.field = 'email';
    }
  }
  throw new ValidationError('bad email');
}
export const returnFunction = () => () => 1;
export async function* rows(n) {
  for (let i = 0; i < n; i++) yield { i, square: i * i };
  return 'all rows';
}
export function* syncRows(n) {
  for (let i = 0; i < n; i++) yield i;
}
export async function* failingRows() {
  yield 1;
  throw new TypeError('row 2 is bad');
}
/** Ignores every abort. */
export function hog(ms) {
  const end = Date.now() + ms;
  while (Date.now() < end);
  return 'hogged';
}
