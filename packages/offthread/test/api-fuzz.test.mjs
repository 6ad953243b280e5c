// Fuzzing every public function's arguments (issue 11, "a JS fuzzer … over every public
// function's arguments"), with fast-check. Where api-battery.test.mjs tries a fixed list
// of wrong values one position at a time, this draws whole argument lists: any JS value
// (Symbols, bigints, null-prototype objects, boxed values, typed arrays of every kind,
// detached and shared buffers, Proxies and getters that throw, revoked Proxies) mixed
// with valid values, and option objects with known keys holding either. Every call must
// either succeed with a result of the documented shape or fail with an Error whose `code`
// is in the registry — never another throw, a crash or a hang (a call that has not
// settled after HANG_MS fails the property).
//
// Sizes are bounded (numbers drawn as integers stay ≤ 5,000 in magnitude, and a drawn
// bigint or number that would be a valid but huge π sample count or MD5 round count is
// cut to 5,000) so a valid call is quick: the point is the validation and error paths,
// not the kernels' speed — a synchronous call of 2^53 samples is valid and takes hours.
// `npm test` runs a small fixed-seed budget; `npm run fuzz` sets OFFTHREAD_FUZZ_RUNS,
// OFFTHREAD_FUZZ_SEED and OFFTHREAD_FUZZ_STATS (a JSON file: executions and slowest call
// per property).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { all, Emitter, errorRegistry, md5, monitorLoopDelay, Pool, pi, qr, schema, stats } from 'offthread';
import { piVariants } from 'offthread/internal';
import { fuzzStats } from './fuzz-stats.mjs';

const RUNS = Number(process.env.OFFTHREAD_FUZZ_RUNS ?? 60);
const SEED = Number(process.env.OFFTHREAD_FUZZ_SEED ?? 0xa91);
/** Generous: a loaded CI machine must not make a slow-but-settling call look like a hang. */
const HANG_MS = 20_000;

const pool = new Pool({ threads: 2 });
const destroyed = new Pool({ threads: 1 });
await destroyed.destroy();
after(() => pool.close());

// ---- values -----------------------------------------------------------------------

const detachedView = () => {
  const buf = new ArrayBuffer(64);
  const view = new Uint8Array(buf);
  structuredClone(buf, { transfer: [buf] });
  return view;
};
const throwingGetters = () =>
  new Proxy(
    {},
    {
      get: () => {
        throw new Error('proxy get boom');
      },
      ownKeys: () => {
        throw new Error('proxy ownKeys boom');
      },
      getOwnPropertyDescriptor: () => {
        throw new Error('proxy descriptor boom');
      },
      has: () => {
        throw new Error('proxy has boom');
      },
    },
  );
const revoked = () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};
const getterObject = (key) => ({
  get [key]() {
    throw new Error(`getter ${key} boom`);
  },
});
/**
 * A stand-in for a value fast-check must not touch (it probes generated values, which a
 * throwing Proxy or getter would break): the property swaps in the real one before the call.
 */
class Hostile {
  constructor(/** @type {string} */ kind) {
    this.kind = kind;
  }
  make() {
    if (this.kind === 'proxy') return throwingGetters();
    if (this.kind === 'revoked') return revoked();
    if (this.kind === 'detached') return detachedView();
    return getterObject(this.kind.slice('getter:'.length));
  }
}
/** A valid-but-huge count (number or bigint, 5,000 < n ≤ max) cut to 5,000; anything else as drawn. */
const tame = (/** @type {unknown} */ n, /** @type {number} */ max) =>
  (typeof n === 'number' || typeof n === 'bigint') && n > 5000 && n <= max ? 5000 : n;
const tameAt = (/** @type {number} */ at, /** @type {number} */ max) => (/** @type {unknown[]} */ args) =>
  args.map((a, i) => (i === at ? tame(a, max) : a));
const tamePi = tameAt(0, 2 ** 53);
const tameRounds = tameAt(1, md5.MAX_ROUNDS);

/** The arguments with every Hostile (at the top or one level into an options object) made real. */
const materialize = (/** @type {unknown[]} */ args) =>
  args.map((a) => {
    if (a instanceof Hostile) return a.make();
    if (a === null || typeof a !== 'object' || Object.getPrototypeOf(a) !== Object.prototype) return a;
    return Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v instanceof Hostile ? v.make() : v]));
  });
const shortString = fc.string({ maxLength: 40, unit: 'binary' });
const int = fc.integer({ min: -5000, max: 5000 });
/** Numbers that are small when whole, and every awkward double otherwise. */
const number = fc.oneof(
  int,
  fc.double().filter((x) => !Number.isInteger(x) || Math.abs(x) <= 5000),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 2 ** 53 + 2, 2 ** 60, 2 ** 64),
);
const bytes = fc.oneof(
  fc.uint8Array({ maxLength: 256 }),
  fc.constant(new Hostile('detached')),
  fc.uint8Array({ maxLength: 64 }).map((a) => {
    const shared = new Uint8Array(new SharedArrayBuffer(a.length));
    shared.set(a);
    return shared;
  }),
  fc.uint8Array({ minLength: 8, maxLength: 64 }).map((a) => new Uint8Array(a.buffer, 3, a.length - 5)),
);
/** Anything a caller could pass by mistake. */
const junk = fc.oneof(
  fc.anything({
    maxDepth: 2,
    withBigInt: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withNullPrototype: true,
    withObjectString: true,
    withSet: true,
    withSparseArray: true,
    withTypedArray: true,
    withUnicodeString: true,
  }),
  number,
  fc.bigInt(),
  fc.string().map((s) => Symbol(s)),
  fc.constant(undefined),
  fc.constant(null),
  fc.constantFrom(
    () => 1,
    async () => 1,
    class {},
  ),
  fc
    .constantFrom(
      'proxy',
      'revoked',
      ...['seed', 'size', 'signal', 'pool', 'timeout', 'threads'].map((k) => `getter:${k}`),
    )
    .map((kind) => new Hostile(kind)),
  bytes,
  fc.constantFrom(new ArrayBuffer(8), new DataView(new ArrayBuffer(8)), new Float64Array(4), Buffer.from('abc')),
);
const signal = fc.oneof(
  fc.constant(undefined),
  fc.constant(null).map(() => AbortSignal.abort(new Error('already'))),
  fc.constant(null).map(() => new AbortController().signal),
  fc.integer({ min: 0, max: 5 }).map((ms) => AbortSignal.timeout(ms)),
  junk,
);
const callOption = {
  pool: fc.oneof(fc.constant(pool), fc.constant(destroyed), fc.constant(undefined), junk),
  signal,
  timeout: fc.oneof(number, fc.constant(undefined), junk),
};
/** Option objects: known keys with valid-or-wrong values, sometimes a misspelt key; or junk. */
const options = (/** @type {Record<string, fc.Arbitrary<unknown>>} */ keys) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.record(keys, { requiredKeys: [] }) },
    { weight: 1, arbitrary: fc.record({ ...keys, sead: junk }, { requiredKeys: ['sead'] }) },
    { weight: 1, arbitrary: junk },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
const either = (/** @type {fc.Arbitrary<unknown>} */ valid) => fc.oneof({ weight: 2, arbitrary: valid }, junk);
const piOptions = {
  seed: either(fc.oneof(int, fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }))),
};
/** offthread/internal's research π: the variant is an argument there. */
const piVariant = either(fc.constantFrom(...piVariants.variants, 'bogus'));
const qrOptions = {
  size: either(fc.integer({ min: -2, max: 600 })),
  margin: either(fc.integer({ min: -2, max: 70 })),
  ecc: either(fc.constantFrom('L', 'M', 'Q', 'H', 'X', 'm')),
};
const qrText = either(fc.oneof(shortString, fc.string({ minLength: 2000, maxLength: 4000 })));
const md5Text = either(shortString);
const rounds = either(fc.integer({ min: -3, max: 3000 }));
const start = either(
  fc.oneof(
    fc.constant(''),
    fc.constant('0'.repeat(32)),
    fc.string({ unit: fc.constantFrom(...'0123456789abcdefA'), maxLength: 40 }),
  ),
);

// ---- result shapes ------------------------------------------------------------------

const isHex32 = (v) => typeof v === 'string' && /^([0-9a-f]{32})?$/.test(v); // '' after 0 rounds from ''
const isPi = (v) =>
  v !== null &&
  typeof v === 'object' &&
  Number.isSafeInteger(v.inside) &&
  Number.isSafeInteger(v.samples) &&
  v.inside <= v.samples &&
  typeof v.variant === 'string';
const isPng = (v) => v instanceof Uint8Array && v[0] === 0x89 && v[1] === 0x50;
const isSummary = (v) => v !== null && typeof v === 'object' && typeof v.count === 'number';
const any = () => true;

/**
 * [name, argument arbitraries, call, result check, tame?]. The call gets the drawn
 * arguments as they are (through `tame` where a valid value can mean hours of work).
 */
const FUNCTIONS = [
  ['pi.estimate', [either(int), options({ ...piOptions, ...callOption })], pi.estimate, isPi, tamePi],
  ['pi.estimateSync', [either(int), options(piOptions)], pi.estimateSync, isPi, tamePi],
  [
    'piVariants.estimate',
    [either(int), piVariant, options({ ...piOptions, ...callOption, chunks: either(int) })],
    piVariants.estimate,
    isPi,
    tamePi,
  ],
  ['piVariants.estimateSync', [either(int), piVariant, options(piOptions)], piVariants.estimateSync, isPi, tamePi],
  ['md5.hex', [either(fc.oneof(shortString, bytes))], md5.hex, isHex32],
  ['md5.hexAsync', [md5Text, options(callOption)], md5.hexAsync, isHex32],
  ['md5.iterate', [md5Text, rounds, options({ start, ...callOption })], md5.iterate, isHex32, tameRounds],
  ['md5.iterateSync', [md5Text, rounds, options({ start })], md5.iterateSync, isHex32, tameRounds],
  ['md5.iterateReference', [md5Text, rounds, either(fc.constant(''))], md5.iterateReference, isHex32, tameRounds],
  ['qr.toDataURL', [qrText, options({ ...qrOptions, ...callOption })], qr.toDataURL, (v) => v.startsWith('data:')],
  ['qr.toDataURLSync', [qrText, options(qrOptions)], qr.toDataURLSync, (v) => v.startsWith('data:')],
  ['qr.toPNG', [qrText, options({ ...qrOptions, ...callOption })], qr.toPNG, isPng],
  ['qr.toPNGSync', [qrText, options(qrOptions)], qr.toPNGSync, isPng],
  ['qr.toSVG', [qrText, options({ ...qrOptions, ...callOption })], qr.toSVG, (v) => v.startsWith('<svg')],
  ['qr.toSVGSync', [qrText, options(qrOptions)], qr.toSVGSync, (v) => v.startsWith('<svg')],
  ['stats.temperature', [either(bytes), options(callOption)], stats.temperature, isSummary],
  ['stats.temperatureSync', [either(bytes)], stats.temperatureSync, isSummary],
  ['stats.temperatureOffsetSync', [either(bytes), either(number)], stats.temperatureOffsetSync, Number.isInteger],
  [
    'new Pool',
    [options({ threads: either(fc.integer({ min: -1, max: 3 })), maxQueue: either(int), nice: either(int) })],
    async (o) => {
      const p = new Pool(o);
      await p.close();
      return p;
    },
    (p) => p instanceof Pool,
  ],
  ['pool.echo', [either(number), options({ signal, timeout: callOption.timeout })], (v, o) => pool.echo(v, o), any],
  [
    'all',
    [
      either(
        fc.array(
          fc.constantFrom(
            () => 1,
            ({ pool: p, signal: s }) => p.echo(2, { signal: s }),
          ),
          { maxLength: 4 },
        ),
      ),
      options({ pool: callOption.pool, signal }),
    ],
    all,
    Array.isArray,
  ],
  [
    'Emitter.emit',
    [options({ pool: callOption.pool }), either(fc.string({ maxLength: 4 })), junk, options({ signal })],
    (o, event, payload, emitOptions) =>
      new Emitter(o)
        .on(event, (_payload, { pool: p, signal: s }) => p.echo(1, { signal: s }))
        .emit(event, payload, emitOptions),
    Array.isArray,
  ],
  [
    'monitorLoopDelay',
    [options({ resolutionMs: either(fc.integer({ min: -1, max: 50 })) })],
    (o) => monitorLoopDelay(o).stop(),
    (s) => typeof s.p99Ms === 'number',
  ],
  ['schema.decodeTemperatureBatch', [either(bytes), junk], schema.decodeTemperatureBatch, any],
  ['schema.encodeTemperatureBatch', [junk], schema.encodeTemperatureBatch, (v) => v instanceof Uint8Array],
];

// ---- the properties -------------------------------------------------------------------

/** The schema runtime's own codes (docs/schema-format.md §3): R0001–R0011 read, W0001–W0011 write. */
const SCHEMA_CODE = /^(R00(0[1-9]|1[01])|W00(0[1-9]|1[01]))$/;

/** Settles `fn(...args)`: { ok, value } or { ok: false, error }, or 'hang' after HANG_MS. */
async function settle(fn, args) {
  let timer;
  const hang = new Promise((resolve) => {
    timer = setTimeout(() => resolve('hang'), HANG_MS);
  });
  try {
    const run = (async () => fn(...args))().then(
      (value) => ({ ok: true, value }),
      (error) => ({ ok: false, error }),
    );
    return await Promise.race([run, hang]);
  } finally {
    clearTimeout(timer);
  }
}

const describeArgs = (args) =>
  args.map((a) => {
    try {
      return typeof a === 'symbol' || typeof a === 'bigint' ? String(a) : fc.stringify(a);
    } catch {
      return '<unprintable>';
    }
  });

/** Per property: executions, failures and the slowest call's arguments. */
const fuzzed = fuzzStats({ seed: SEED, runs: RUNS, blank: { slowestArgs: [] } });

for (const [name, arbitraries, fn, check, tameArgs = (a) => a] of FUNCTIONS) {
  test(`fuzz ${name}: a result of the right shape or a registry code, never a hang`, async () => {
    const prop = `api: ${name}`;
    await fc
      .assert(
        fc.asyncProperty(fc.tuple(...arbitraries), async (args) => {
          const t0 = performance.now();
          const outcome = await settle(fn, tameArgs(materialize(args)));
          const ms = performance.now() - t0;
          fuzzed.record(prop, ms, ms > fuzzed.slowestMs(prop) ? { slowestArgs: describeArgs(args) } : {});
          assert.notEqual(outcome, 'hang', `${name} did not settle in ${HANG_MS} ms`);
          if (outcome.ok) {
            assert.ok(check(outcome.value), `${name} succeeded with a result of the wrong shape`);
            return;
          }
          const { error } = outcome;
          assert.ok(error instanceof Error, `${name} threw a non-Error: ${String(error)}`);
          assert.ok(
            error.code in errorRegistry || SCHEMA_CODE.test(error.code),
            `${name} threw an untyped error: ${error.name}: ${error.message} (code ${String(error.code)})`,
          );
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      )
      .catch((err) => {
        fuzzed.failed(prop);
        throw err;
      });
  });
}
