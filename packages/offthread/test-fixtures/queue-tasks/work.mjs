// Task module of queue-tasks.test.mjs: run locally through tasks() and as queue jobs on
// `offthread worker --tasks` processes, the results compared.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { currentTask } from 'offthread';

export const version = '1.0.0';

export const add = (a, b) => a + b;
export const echo = (value) => value;
export const typeOf = (value) => Object.prototype.toString.call(value);
export const length = (bytes) => bytes.byteLength;

/** A horizontal box blur of one channel: bytes in, new bytes out. */
export function blur(pixels, width, radius) {
  const out = new Uint8Array(pixels.length);
  for (let i = 0; i < pixels.length; i++) {
    const x = i % width;
    let sum = 0;
    let n = 0;
    for (let d = -radius; d <= radius; d++) {
      if (x + d >= 0 && x + d < width) {
        sum += pixels[i + d];
        n++;
      }
    }
    out[i] = Math.round(sum / n);
  }
  return out;
}

/** ≈ n iterations of pure JS (a hash loop the JIT cannot remove). */
export function spin(n, tag) {
  let h = 0;
  for (let i = 0; i < n; i++) h = (Math.imul(h, 31) + i) | 0;
  return { tag, h };
}

export function fail() {
  const err = new RangeError('out of range', { cause: new TypeError('inner cause') });
  err.code = 'E_TASK';
  err.details = { limit: 3, list: [1, 2], bytes: new Uint8Array([7, 8]) };
  throw err;
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
export function throwString() {
  throw 'a string';
}
export const returnFunction = () => () => 1;

const waitFor = async (file) => {
  while (!existsSync(file)) await new Promise((r) => setTimeout(r, 5));
};

/** Reports `steps` progress values, then waits for `dir/go` (the caller writes it once it saw them). */
export async function progress(steps, dir) {
  const ctx = currentTask();
  for (let i = 1; i <= steps; i++) ctx.progress({ step: i, of: steps });
  await waitFor(join(dir, 'go'));
  return steps;
}

/** Writes `dir/started`, then waits for its signal; writes `dir/aborted` when it aborts. */
export function waitForAbort(dir) {
  const { signal } = currentTask();
  writeFileSync(join(dir, 'started'), '');
  return new Promise((_, reject) => {
    signal.addEventListener('abort', () => {
      writeFileSync(join(dir, 'aborted'), signal.aborted ? 'aborted' : 'not aborted');
      reject(signal.reason);
    });
  });
}

export async function* rows(n) {
  for (let i = 0; i < n; i++) yield i;
}
