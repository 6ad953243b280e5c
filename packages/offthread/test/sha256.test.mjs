// SHA-256 (a kernel of the Rust registry) against node:crypto and FIPS 180-2, sync and
// on every engine's pool; bad input is typed.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { Pool, sha256 } from 'offthread';

const fips = [
  ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  [
    'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq',
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
  ],
];
const texts = ['', 'abc', 'héllo wörld ✓ 日本', '😀'.repeat(100), 'x'.repeat(100_000)];
const node = (data) => createHash('sha256').update(data).digest('hex');

describe('sha256', () => {
  test('FIPS 180-2 vectors, strings and bytes, on the calling thread', () => {
    for (const [input, digest] of fips) {
      assert.equal(sha256.hex(input), digest, input);
      assert.equal(sha256.hex(Buffer.from(input)), digest, input);
    }
    for (const t of texts) assert.equal(sha256.hex(t), node(t));
  });

  for (const engine of ['native', 'wasm']) {
    test(`hexAsync equals node:crypto on the ${engine} engine (strings, bytes, shared bytes)`, async () => {
      const pool = new Pool({ engine, threads: 2 });
      try {
        for (const t of texts) {
          assert.equal(await sha256.hexAsync(t, { pool }), node(t));
          const bytes = new TextEncoder().encode(t);
          assert.equal(await sha256.hexAsync(bytes, { pool }), node(bytes));
          const shared = new Uint8Array(new SharedArrayBuffer(bytes.length));
          shared.set(bytes);
          assert.equal(await sha256.hexAsync(shared, { pool }), node(bytes));
        }
      } finally {
        await pool.close();
      }
    });
  }

  test('the JS tier says it needs the addon or wasm', async () => {
    const pool = new Pool({ engine: 'js', threads: 1 });
    try {
      await assert.rejects(sha256.hexAsync('abc', { pool }), { code: 'ERR_BACKEND_UNAVAILABLE' });
    } finally {
      await pool.close();
    }
  });

  test('bad input and options are typed errors', async () => {
    for (const bad of [undefined, 1, {}, [1, 2], new Uint16Array(2)]) {
      assert.throws(() => sha256.hex(bad), { code: 'ERR_INVALID_ARG' });
      await assert.rejects(sha256.hexAsync(bad), { code: 'ERR_INVALID_ARG' });
    }
    await assert.rejects(sha256.hexAsync('a', { nope: 1 }), { code: 'ERR_INVALID_ARG' });
    await assert.rejects(sha256.hexAsync('a', { timeout: -1 }), { code: 'ERR_INVALID_ARG' });
    await assert.rejects(sha256.hexAsync('a', { signal: AbortSignal.abort() }), { code: 'ERR_ABORTED' });
  });
});
