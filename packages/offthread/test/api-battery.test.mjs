// Every public function, every argument position, every kind of wrong value (wrong
// types, Symbols, bigints, NaN, huge numbers, objects whose getters throw, misspelt
// options, destroyed pools): each call must fail with an Error carrying a registry
// `code` — never an untyped throw, a crash or a hang.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { all, Emitter, errorRegistry, md5, monitorLoopDelay, Pool, pi, qr, stats } from 'offthread';
import { piVariants } from 'offthread/internal';

const throwing = {
  get seed() {
    throw new Error('getter boom');
  },
};
const revoked = Proxy.revocable({}, {});
revoked.revoke();
const detached = new Uint8Array(new ArrayBuffer(16));
structuredClone(detached.buffer, { transfer: [detached.buffer] });
const BAD_VALUES = [
  // instanceof, Array.isArray and String() throw on these: found by api-fuzz.test.mjs.
  ['revoked Proxy', revoked.proxy],
  ['detached view', detached],
  ['Symbol', Symbol('s')],
  ['bigint', 10n ** 30n],
  ['NaN', Number.NaN],
  ['-Infinity', Number.NEGATIVE_INFINITY],
  ['2^60', 2 ** 60],
  ['-1', -1],
  ['1.5', 1.5],
  ['string', 'x'],
  ['null', null],
  ['array', [1]],
  ['function', () => 1],
  ['object', { valueOf: () => 3 }],
];
const BAD_OPTIONS = [
  ...BAD_VALUES.filter(([, v]) => v === null || typeof v !== 'object' || v === revoked.proxy || Array.isArray(v)),
  ['throwing getter', throwing],
  ['misspelt option', { sead: 1 }],
  ['Symbol option value', { seed: Symbol('x'), size: Symbol('x'), start: Symbol('x'), timeout: Symbol('x') }],
  ['bigint option value', { seed: 10n ** 30n, size: 1n, margin: 1n, ecc: 1n, variant: 1n, chunks: 1n }],
  ['bad signal', { signal: {} }],
  ['bad pool', { pool: {} }],
  ['bad timeout', { timeout: -5 }],
];

const destroyed = new Pool({ threads: 1 });
await destroyed.destroy();

const buf = new Uint8Array(64);
/** [name, fn, good arguments]: each argument position gets every bad value in turn. */
const FUNCTIONS = [
  ['pi.estimate', pi.estimate, [1000, {}]],
  ['pi.estimateSync', pi.estimateSync, [1000, {}]],
  ['piVariants.estimate', piVariants.estimate, [1000, 'jsBitwise', {}]],
  ['piVariants.estimateSync', piVariants.estimateSync, [1000, 'js', {}]],
  ['md5.hex', md5.hex, ['abc']],
  ['md5.hexAsync', md5.hexAsync, ['abc', {}]],
  ['md5.iterate', md5.iterate, ['abc', 10, {}]],
  ['md5.iterateSync', md5.iterateSync, ['abc', 10, {}]],
  ['md5.iterateReference', md5.iterateReference, ['abc', 10, '']],
  ['qr.toDataURL', qr.toDataURL, ['x', {}]],
  ['qr.toDataURLSync', qr.toDataURLSync, ['x', {}]],
  ['qr.toPNG', qr.toPNG, ['x', {}]],
  ['qr.toPNGSync', qr.toPNGSync, ['x', {}]],
  ['qr.toSVG', qr.toSVG, ['x', {}]],
  ['qr.toSVGSync', qr.toSVGSync, ['x', {}]],
  ['stats.temperature', stats.temperature, [buf, {}]],
  ['stats.temperatureSync', stats.temperatureSync, [buf]],
  ['stats.temperatureOffsetSync', stats.temperatureOffsetSync, [buf, 1]],
  ['new Pool', (o) => new Pool(o), [{}]],
  ['all', all, [[() => 1], {}]],
  ['new Emitter', (o) => new Emitter(o), [{}]],
  ['monitorLoopDelay', monitorLoopDelay, [{}]],
];

/** Runs `fn`; returns the error it threw or rejected with, or null if it succeeded. */
async function failure(fn, args) {
  try {
    const value = await fn(...args);
    if (value && typeof value.stop === 'function') value.stop(); // a loop-delay monitor
    if (value instanceof Pool) await value.close();
    return null;
  } catch (err) {
    return err ?? new Error('rejected with nothing');
  }
}

test('every wrong argument is an Error with a registry code (battery of ≥ 432 calls)', async (t) => {
  let calls = 0;
  const untyped = [];
  for (const [name, fn, good] of FUNCTIONS) {
    for (let at = 0; at < good.length; at++) {
      const isOptions = typeof good[at] === 'object' && !(good[at] instanceof Uint8Array) && !Array.isArray(good[at]);
      for (const [label, bad] of isOptions ? BAD_OPTIONS : BAD_VALUES) {
        const args = [...good];
        args[at] = bad;
        calls++;
        const err = await failure(fn, args);
        if (err === null) continue; // some values are valid somewhere (e.g. 1.5 as a QR delta)
        if (!(err instanceof Error) || !(err.code in errorRegistry)) {
          untyped.push(`${name} arg ${at} = ${label}: ${err?.name}: ${err?.message}`);
        }
      }
    }
  }
  // Destroyed pools, as the pool option of every async call.
  for (const [name, fn, good] of FUNCTIONS) {
    const at = good.findIndex((a) => a && typeof a === 'object' && !(a instanceof Uint8Array) && !Array.isArray(a));
    if (at < 0 || !['pi.estimate', 'md5.hexAsync', 'md5.iterate', 'qr.toDataURL', 'stats.temperature'].includes(name))
      continue;
    const args = [...good];
    args[0] = name === 'pi.estimate' ? 1e6 : args[0];
    args[at] = { pool: destroyed };
    calls++;
    const err = await failure(fn, args);
    assert.equal(err?.code, 'ERR_POOL_CLOSED', `${name} on a destroyed pool`);
  }
  t.diagnostic(`${calls} calls, ${untyped.length} untyped`);
  assert.ok(calls >= 432, `only ${calls} calls`);
  assert.deepEqual(untyped, []);
});

test('a throwing getter surfaces as ERR_INVALID_ARG with the cause kept', () => {
  assert.throws(
    () => pi.estimateSync(10, throwing),
    (e) => e.code === 'ERR_INVALID_ARG' && e.cause?.message === 'getter boom',
  );
});

test('option values found by the fuzzer: a detached view as a π variant, a huge loop-delay resolution', () => {
  assert.throws(() => piVariants.estimateSync(10, detached), { code: 'ERR_INVALID_VARIANT' });
  assert.throws(() => monitorLoopDelay({ resolutionMs: 2 ** 64 }), { code: 'ERR_INVALID_ARG' });
  assert.throws(() => md5.iterateReference('a', -1), { code: 'ERR_INVALID_ROUNDS' });
});

test('a misspelt option is refused, never ignored', async () => {
  assert.throws(() => pi.estimateSync(10, { sead: 1 }), { code: 'ERR_INVALID_ARG', message: /unknown option "sead"/ });
  await assert.rejects(qr.toDataURL('x', { sise: 10 }), { code: 'ERR_INVALID_ARG' });
  assert.throws(() => new Pool({ thread: 2 }), { code: 'ERR_INVALID_ARG' });
});
