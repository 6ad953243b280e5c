// The hash calls take the same inputs sync and async (issue 30 item 5): one table of
// inputs, md5 and sha256, `hex` against `hexAsync` on every engine that has the kernel —
// the same digest, or the same error code. Inputs past 1 MiB go to the pool in pieces
// (kernels/digest.ts): their digests equal node:crypto's, a 64 MiB Buffer is not copied
// whole (RSS), and a buffer detached mid-call rejects instead of crashing.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { md5, Pool, sha256 } from 'offthread';

const MiB = 1 << 20;
/** Bytes 0…255 repeating from `seed`: different pieces hash differently. */
const pattern = (n, seed = 0) => {
  const b = Buffer.allocUnsafeSlow(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed + (i >>> 20)) & 255;
  return b;
};
const shared = (bytes) => {
  const s = new Uint8Array(new SharedArrayBuffer(bytes.length));
  s.set(bytes);
  return s;
};
const detached = () => {
  const v = new Uint8Array(new ArrayBuffer(16));
  structuredClone(v.buffer, { transfer: [v.buffer] });
  return v;
};
const big = pattern(2 * MiB + 123, 7);
// A surrogate pair across the first piece boundary, and a lone surrogate further on.
const bigText = `${'a'.repeat(MiB - 1)}😀${'é✓'.repeat(300_000)}\ud800${'z'.repeat(5)}`;

/** [label, value, accepted]: every kind a caller may hand over, accepted or not. */
const INPUTS = [
  ['empty string', '', true],
  ['ASCII string', 'abc', true],
  ['non-ASCII string', 'héllo wörld ✓ 日本 😀', true],
  ['lone surrogate', 'a\ud800b', true],
  ['string of 2 MiB in pieces', bigText, true],
  ['Buffer', Buffer.from('abc'), true],
  ['pooled Buffer (offset into a shared slab)', Buffer.from('pooled bytes'), true],
  ['Uint8Array', new Uint8Array([1, 2, 3, 250]), true],
  ['empty Uint8Array', new Uint8Array(0), true],
  ['Uint8Array view with an offset', new Uint8Array(pattern(64).buffer, 3, 50), true],
  ['Uint8Array over a SharedArrayBuffer', shared(pattern(100)), true],
  ['Buffer of 2 MiB (pieces)', big, true],
  ['view of 2 MiB with an offset (pieces)', big.subarray(5, big.length - 3), true],
  ['SharedArrayBuffer view of 2 MiB (in place)', shared(big), true],
  ['detached Uint8Array', detached(), true],
  ['Int8Array', new Int8Array([1, -2]), false],
  ['Uint8ClampedArray', new Uint8ClampedArray([1, 2]), false],
  ['Uint16Array', new Uint16Array([1, 2]), false],
  ['Int32Array', new Int32Array([1]), false],
  ['Float32Array', new Float32Array([1.5]), false],
  ['Float64Array', new Float64Array([1.5]), false],
  ['BigInt64Array', new BigInt64Array([1n]), false],
  ['DataView', new DataView(new ArrayBuffer(4)), false],
  ['ArrayBuffer', new ArrayBuffer(4), false],
  ['SharedArrayBuffer', new SharedArrayBuffer(4), false],
  ['number', 5, false],
  ['undefined', undefined, false],
  ['null', null, false],
  ['array of bytes', [1, 2, 3], false],
  ['plain object', { length: 1, 0: 1 }, false],
  ['String object', new String('abc'), false],
];

const outcome = (fn) => {
  try {
    return { value: fn() };
  } catch (err) {
    return { code: err.code };
  }
};
const outcomeAsync = (promise) =>
  promise.then(
    (value) => ({ value }),
    (err) => ({ code: err.code }),
  );
const oracle = (kind, value) => createHash(kind).update(value).digest('hex');

const HASHES = [
  ['md5', md5, ['native', 'wasm', 'js']],
  ['sha256', sha256, ['native', 'wasm']], // the JS tier has no SHA-256
];

for (const [kind, hash, engines] of HASHES) {
  describe(`${kind}: hex and hexAsync take the same inputs`, () => {
    test(`${kind}.hex: accepted inputs equal node:crypto, refused ones are ERR_INVALID_ARG`, () => {
      for (const [label, value, accepted] of INPUTS) {
        const got = outcome(() => hash.hex(value));
        if (accepted) assert.deepEqual(got, { value: oracle(kind, value) }, label);
        else assert.deepEqual(got, { code: 'ERR_INVALID_ARG' }, label);
      }
    });

    for (const engine of engines) {
      test(`${kind}.hexAsync on the ${engine} engine: the same outcome as ${kind}.hex, input by input`, async () => {
        const pool = new Pool({ engine, threads: 2 });
        try {
          for (const [label, value] of INPUTS) {
            const sync = outcome(() => hash.hex(value));
            const got = await outcomeAsync(hash.hexAsync(value, { pool }));
            assert.deepEqual(got, sync, `${label} (${engine})`);
          }
        } finally {
          await pool.close();
        }
      });
    }

    test(`${kind}.hexAsync on the default pool takes bytes (it took only strings)`, async () => {
      assert.equal(await hash.hexAsync(Buffer.from('abc')), oracle(kind, 'abc'));
      assert.equal(await hash.hexAsync(big), oracle(kind, big));
    });
  });
}

describe('large inputs go to the pool in pieces', () => {
  const pool = new Pool({ engine: 'native', threads: 2 });
  after(() => pool.close());

  test('a 64 MiB Buffer is hashed without a whole copy: RSS grows by far less than 64 MiB', async () => {
    const data = pattern(64 * MiB, 1);
    const expected = oracle('sha256', data);
    await sha256.hexAsync(pattern(3 * MiB), { pool }); // warm: allocator arenas, the pool's threads
    const before = process.memoryUsage.rss();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 1);
    try {
      assert.equal(await sha256.hexAsync(data, { pool }), expected);
      assert.equal(await md5.hexAsync(data, { pool }), oracle('md5', data));
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage.rss());
    // A whole copy (the old submit) raised RSS by 64 MiB while the job ran.
    assert.ok(peak - before < 24 * MiB, `RSS grew by ${((peak - before) / MiB).toFixed(1)} MiB`);
    assert.equal(data.byteLength, 64 * MiB, 'the caller keeps its buffer (nothing detached it)');
    assert.equal(data.buffer.byteLength, 64 * MiB);
  });

  for (const engine of ['native', 'wasm']) {
    test(`a buffer detached during the call rejects with ERR_INVALID_ARG (${engine})`, async () => {
      const p = engine === 'native' ? pool : new Pool({ engine, threads: 1 });
      try {
        const data = pattern(8 * MiB);
        const running = sha256.hexAsync(data, { pool: p });
        structuredClone(data.buffer, { transfer: [data.buffer] });
        await assert.rejects(running, { code: 'ERR_INVALID_ARG' });
      } finally {
        if (p !== pool) await p.close();
      }
    });
  }

  test('abort and timeout stop a call in pieces with their codes', async () => {
    const data = pattern(32 * MiB);
    const controller = new AbortController();
    const aborted = md5.hexAsync(data, { pool, signal: controller.signal });
    setImmediate(() => controller.abort());
    await assert.rejects(aborted, { code: 'ERR_ABORTED' });
    await assert.rejects(md5.hexAsync(data, { pool, timeout: 1 }), { code: 'ERR_TIMEOUT' });
    await assert.rejects(md5.hexAsync(data, { pool, signal: AbortSignal.abort() }), { code: 'ERR_ABORTED' });
    assert.equal(await md5.hexAsync(data, { pool }), oracle('md5', data), 'the pool still works');
  });

  test('a closed pool rejects a call in pieces with ERR_POOL_CLOSED', async () => {
    const closed = new Pool({ engine: 'native', threads: 1 });
    await closed.close();
    await assert.rejects(sha256.hexAsync(big, { pool: closed }), { code: 'ERR_POOL_CLOSED' });
  });
});
