// The "MD5-like" stripped loop of http-md5: the JS kernel and the Rust one (built with
// rustc into a shared library for koffi and a wasm32 module) compute the same value.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { buildMd5Like, loadMd5Like, md5LikeJs } from '../experiments/http-md5-like.mjs';

test('md5LikeJs: the initial state XORs to 0, and each step changes it', () => {
  assert.equal(md5LikeJs(0), 0, '0x67452301 ^ 0xefcdab89 ^ 0x98badcfe ^ 0x10325476 = 0');
  const seen = new Set([0, 1, 2, 3, 4, 5].map(md5LikeJs));
  assert.equal(seen.size, 6);
  for (const v of seen) assert.ok(Number.isInteger(v) && v >= 0 && v < 2 ** 32);
});

const hasRustc = spawnSync('rustc', ['--version']).status === 0;

test('JS, Rust native (koffi) and Rust wasm agree', { skip: !hasRustc && 'no rustc' }, async (t) => {
  const dir = `${await mkdtemp(path.join(tmpdir(), 'offthread-md5like-'))}/`;
  t.after(() => rm(dir, { recursive: true, force: true }));
  const impls = await loadMd5Like(buildMd5Like(dir));
  for (const n of [0, 1, 2, 3, 4, 17, 1000, 123_457]) {
    const js = md5LikeJs(n);
    assert.equal(impls.native(n), js, `native at n = ${n}`);
    assert.equal(impls.wasm(n), js, `wasm at n = ${n}`);
  }
});
