// π: the paper's tests (reproducibility, uniformity, accuracy) and ours (every variant
// bit-identical at awkward sizes and seeds, jump-ahead, bad input, no truncation). The
// public `pi` is the product call; the paper's variants are `piVariants` in offthread/internal.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as offthread from 'offthread';
import * as internal from 'offthread/internal';
import * as ref from '../dist/kernels/js/pi.js';

const { pi } = offthread;
const { piVariants } = internal;

const syncVariants = ['js', 'jsBitwise', 'ffi', 'native', 'nativeBitwise', 'parallel', 'wasm', 'auto'];
const asyncVariants = ['nativeAsync', 'nativeChunked', 'parallelAsync', 'auto'];

describe('public π: the product API, no research names', () => {
  test('pi has estimate and estimateSync only; the variants are in offthread/internal', () => {
    assert.deepEqual(Object.keys(pi).sort(), ['estimate', 'estimateSync']);
    for (const name of ['piChunks', 'piVariants', 'AUTO_NATIVE_MIN', 'AUTO_INLINE_MAX', 'variants', 'syncVariants']) {
      assert.equal(name in offthread, false, name);
    }
    assert.deepEqual(Object.keys(piVariants).sort(), [
      'AUTO_INLINE_MAX',
      'AUTO_NATIVE_MIN',
      'asyncVariants',
      'estimate',
      'estimateSync',
      'piChunks',
      'syncVariants',
      'variants',
    ]);
    assert.ok(piVariants.syncVariants.includes('ffi'), 'the koffi row is internal');
    assert.equal(piVariants.variants.length, 13);
  });

  test('a variant given to the public pi is ERR_INVALID_ARG, not ignored', async () => {
    await assert.rejects(pi.estimate(1e6, { variant: 'js' }), { name: 'TypeError', code: 'ERR_INVALID_ARG' });
    assert.throws(() => pi.estimateSync(10, { variant: 'js' }), { name: 'TypeError', code: 'ERR_INVALID_ARG' });
    for (const key of ['chunks', 'kernel']) {
      await assert.rejects(pi.estimate(10, { [key]: 1 }), { code: 'ERR_INVALID_ARG' }, key);
    }
    // Call options are async only, as before.
    assert.throws(() => pi.estimateSync(10, { timeout: 5 }), { code: 'ERR_INVALID_ARG' });
  });

  test('public and auto agree: the same result, variant named as information', async () => {
    for (const n of [0, 23, 1000, 100_003, 3_000_001]) {
      assert.deepEqual(pi.estimateSync(n, { seed: 9 }), piVariants.estimateSync(n, 'auto', { seed: 9 }), `n=${n}`);
      assert.deepEqual(await pi.estimate(n, { seed: 9 }), await piVariants.estimate(n, 'auto', { seed: 9 }), `n=${n}`);
    }
  });
});

describe('Park–Miller generator', () => {
  test('first outputs for seed 1', () => {
    assert.deepEqual(ref.parkMillerOutputs(1, 5), [16807, 282475249, 1622650073, 984943658, 1144108930]);
  });

  test('the 10,000th output from seed 1 is 1,043,618,065 (Park & Miller 1988)', () => {
    assert.equal(ref.parkMillerOutputs(1, 10_000).at(-1), 1_043_618_065);
  });

  test('seed normalisation', () => {
    assert.equal(ref.normalizeSeed(0), 2147483646);
    assert.equal(ref.normalizeSeed(-5), 2147483641);
    assert.equal(ref.normalizeSeed(2147483648), 1);
  });

  test('jump-ahead equals stepping', () => {
    for (const k of [0, 1, 2, 17, 1000, 4097]) {
      const stepped = k === 0 ? ref.normalizeSeed(42) : ref.parkMillerOutputs(42, 2 * k).at(-1);
      assert.equal(ref.stateAt(42, k), stepped, `k = ${k}`);
    }
  });

  test('uniformity: 10 bins over 10^6 draws, each ≥ 99,010', () => {
    const bins = new Array(10).fill(0);
    for (const s of ref.parkMillerOutputs(1, 1_000_000)) bins[Math.floor(((s - 1) / 2147483646) * 10)]++;
    for (const [i, b] of bins.entries()) assert.ok(b >= 99_010, `bin ${i}: ${b}`);
  });
});

describe('π estimate', () => {
  test('seed 1, 10^5 samples → inside 78463 in every sync variant', () => {
    for (const variant of syncVariants) {
      const r = piVariants.estimateSync(1e5, variant, { seed: 1 });
      assert.equal(r.inside, 78463, variant);
      assert.equal(r.estimate, 3.13852, variant);
      assert.equal(r.samples, 1e5);
      assert.equal(r.seed, 1);
    }
  });

  test('seed 1, 10^5 samples → inside 78463 in every async variant', async () => {
    for (const variant of asyncVariants) {
      const r = await piVariants.estimate(1e5, variant, { seed: 1 });
      assert.equal(r.inside, 78463, variant);
    }
  });

  test('auto: the JS loop below 24 samples, then parallel (its direct napi entry), sync and inline async', async () => {
    for (const [n, want] of [
      [0, 'jsBitwise'],
      [23, 'jsBitwise'],
      [24, 'parallel'],
      [1000, 'parallel'],
      [1 << 15, 'parallel'],
    ]) {
      const r = pi.estimateSync(n, { seed: 3 });
      assert.equal(r.variant, want, `n=${n}`);
      assert.equal(r.inside, piVariants.estimateSync(n, 'js', { seed: 3 }).inside, `n=${n}`);
      if (n <= 1 << 14) assert.equal((await pi.estimate(n, { seed: 3 })).variant, want, `async n=${n}`);
    }
  });

  test('accuracy: |π̂ − π| < 0.01 at 10^6', () => {
    assert.ok(Math.abs(pi.estimateSync(1e6).estimate - Math.PI) < 0.01);
  });

  test('every variant returns the same inside at awkward sizes and seeds', async () => {
    const seeds = [1, 7, -3, 0, 2147483646, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
    const sizes = [0, 1, 7, 8, 9, 63, 4097, 100_003, 1_000_001];
    for (const seed of seeds) {
      for (const n of sizes) {
        const expected = piVariants.estimateSync(n, 'js', { seed }).inside;
        for (const variant of syncVariants) {
          assert.equal(
            piVariants.estimateSync(n, variant, { seed }).inside,
            expected,
            `${variant} n=${n} seed=${seed}`,
          );
        }
        for (const variant of asyncVariants) {
          const r = await piVariants.estimate(n, variant, { seed, chunks: 3 });
          assert.equal(r.inside, expected, `${variant} n=${n} seed=${seed}`);
        }
      }
    }
  });

  test("kernel: 'plain' runs the non-bitwise Rust kernel in the native async variants, same inside", async () => {
    for (const seed of [1, -3, 2147483646]) {
      for (const n of [0, 7, 100_003, 3_000_001]) {
        const expected = piVariants.estimateSync(n, 'js', { seed }).inside;
        for (const variant of ['nativeAsync', 'nativeChunked', 'parallelAsync']) {
          for (const kernel of ['plain', 'bitwise']) {
            const r = await piVariants.estimate(n, variant, { seed, kernel, chunks: 3 });
            assert.equal(r.inside, expected, `${variant} ${kernel} n=${n} seed=${seed}`);
            assert.equal(r.variant, variant);
          }
        }
      }
    }
    await assert.rejects(piVariants.estimate(10, 'nativeAsync', { kernel: 'fast' }), { code: 'ERR_INVALID_ARG' });
    await assert.rejects(piVariants.estimate(10, 'wasmWorkers', { kernel: 'plain' }), { code: 'ERR_INVALID_ARG' });
    await assert.rejects(piVariants.estimate(10, 'auto', { kernel: 'plain' }), { code: 'ERR_INVALID_ARG' });
  });

  test('nativeChunked gives the same count for any chunk count', async () => {
    const expected = piVariants.estimateSync(2_000_003, 'nativeBitwise', { seed: 11 }).inside;
    for (const chunks of [1, 2, 3, 4, 7, 64]) {
      assert.equal((await piVariants.estimate(2_000_003, 'nativeChunked', { seed: 11, chunks })).inside, expected);
    }
  });

  test('parallel variants agree with the sequential kernel at 3·10^7', async () => {
    const n = 30_000_001;
    const expected = piVariants.estimateSync(n, 'nativeBitwise', { seed: 5 }).inside;
    assert.equal(piVariants.estimateSync(n, 'parallel', { seed: 5 }).inside, expected);
    assert.equal((await piVariants.estimate(n, 'parallelAsync', { seed: 5 })).inside, expected);
    assert.equal(piVariants.estimateSync(n, 'wasm', { seed: 5 }).inside, expected);
  });

  test('10^10 samples are not truncated to 32 bits (the paper got 1,410,065,408)', async () => {
    const r = await pi.estimate(10n ** 10n, { seed: 1 });
    assert.equal(r.samples, 1e10);
    assert.ok(Math.abs(r.inside / 1e10 - Math.PI / 4) < 1e-4, String(r.inside));
  });

  test('0 samples → inside 0, estimate NaN', () => {
    const r = pi.estimateSync(0);
    assert.equal(r.inside, 0);
    assert.ok(Number.isNaN(r.estimate));
  });

  test('bigint samples and seeds within range are accepted', () => {
    assert.equal(pi.estimateSync(100_000n, { seed: 1n }).inside, 78463);
  });

  test('2^53 is the largest sample count', () => {
    assert.throws(() => pi.estimateSync(2 ** 53 + 2), { name: 'RangeError', code: 'ERR_INVALID_SAMPLES' });
    assert.throws(() => pi.estimateSync(2n ** 53n + 1n), { name: 'RangeError', code: 'ERR_INVALID_SAMPLES' });
  });
});

describe('π bad input', () => {
  const badSamples = [
    [-1, 'RangeError', 'ERR_INVALID_SAMPLES'],
    [1.5, 'RangeError', 'ERR_INVALID_SAMPLES'],
    [Number.NaN, 'RangeError', 'ERR_INVALID_SAMPLES'],
    [Number.POSITIVE_INFINITY, 'RangeError', 'ERR_INVALID_SAMPLES'],
    [-1n, 'RangeError', 'ERR_INVALID_SAMPLES'],
    ['100', 'TypeError', 'ERR_INVALID_ARG'],
    [undefined, 'TypeError', 'ERR_INVALID_ARG'],
    [null, 'TypeError', 'ERR_INVALID_ARG'],
    [{}, 'TypeError', 'ERR_INVALID_ARG'],
  ];
  for (const [value, name, code] of badSamples) {
    test(`samples ${typeof value === 'bigint' ? `${value}n` : String(value)} → ${code}`, async () => {
      assert.throws(() => pi.estimateSync(value), { name, code });
      await assert.rejects(pi.estimate(value), { name, code });
    });
  }

  const badSeeds = [
    [1.5, 'ERR_INVALID_SEED'],
    [Number.NaN, 'ERR_INVALID_SEED'],
    [2 ** 53, 'ERR_INVALID_SEED'],
    [2n ** 53n, 'ERR_INVALID_SEED'],
    ['1', 'ERR_INVALID_ARG'],
  ];
  for (const [seed, code] of badSeeds) {
    test(`seed ${String(seed)} → ${code}`, () => {
      assert.throws(() => pi.estimateSync(10, { seed }), { code });
    });
  }

  test('unknown variant, async-only variant in sync form, bad options', () => {
    assert.throws(() => piVariants.estimateSync(10, 'gpu'), { code: 'ERR_INVALID_VARIANT' });
    assert.throws(() => piVariants.estimateSync(10, 'parallelAsync'), { code: 'ERR_INVALID_VARIANT' });
    assert.throws(() => pi.estimateSync(10, 'fast'), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => piVariants.estimateSync(10, 'js', 'fast'), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => piVariants.estimateSync(10, 'js', { variant: 'js' }), { code: 'ERR_INVALID_ARG' });
  });

  test('the native layer re-checks its arguments', async () => {
    const { createRequire } = await import('node:module');
    const binding = createRequire(import.meta.url)('../native/offthread.linux-x64-gnu.node');
    const none = new Uint8Array(0);
    for (const kernel of ['pi.range', 'pi.rangeReference']) {
      const k = binding.kernelNames().indexOf(kernel);
      assert.ok(k >= 0, kernel);
      assert.throws(() => binding.kernelCallSync(k, none, 0, -1, 1), { code: 'ERR_INVALID_SAMPLES' });
      assert.throws(() => binding.kernelCallSync(k, none, 0.5, 10, 1), { code: 'ERR_INVALID_SAMPLES' });
      assert.throws(() => binding.kernelCallSync(k, none, 0, 10, 0.5), { code: 'ERR_INVALID_SEED' });
      assert.equal(binding.kernelCallSync(k, none, 0, 100_000, 1), 78463);
    }
  });
});

test('OFFTHREAD_PI_SIMD caps the vector width and changes no count', { skip: process.arch !== 'x64' }, async () => {
  const { execFileSync } = await import('node:child_process');
  const cases = [
    [1_000_000, 1],
    [3_333_333, 42],
    [65_537, 2 ** 31 - 2],
  ];
  const script = `const { piVariants } = require('offthread/internal'); const cases = ${JSON.stringify(cases)};
    console.log(JSON.stringify(cases.map(([n, seed]) => piVariants.estimateSync(n, 'nativeBitwise', { seed }).inside)));`;
  const want = cases.map(([n, seed]) => piVariants.estimateSync(n, 'nativeBitwise', { seed }).inside);
  for (const level of ['sse2', 'avx2']) {
    const out = execFileSync(process.execPath, ['-e', script], { env: { ...process.env, OFFTHREAD_PI_SIMD: level } });
    assert.deepEqual(JSON.parse(String(out)), want, level);
  }
});
