// The "MD5-like" loop of "Node vs. JS" (seed 002, experiment md5-like): blueimp's MD5
// block function stripped of conversion, padding and digest, in JS and in Rust (built with
// rustc into a shared library for koffi and a wasm32 module). They give the same state.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { buildMd5Like, loadMd5Like, md5LikeJs, md5LikeState, stateHex } from '../experiments/http-md5-like.mjs';

test('md5LikeState: 0 iterations is the MD5 initial state; 1 is MD5 of the empty message', () => {
  assert.equal(stateHex(md5LikeState(0)), '0123456789abcdeffedcba9876543210');
  // Iteration 0's block is the padded empty message: the 64 steps are MD5's.
  assert.equal(stateHex(md5LikeState(1)), createHash('md5').update('').digest('hex'));
});

test('md5LikeState: each iteration changes the state, and md5LikeJs picks its words', () => {
  const seen = new Set([1, 2, 3, 4, 5].map((n) => stateHex(md5LikeState(n))));
  assert.equal(seen.size, 5);
  const s = md5LikeState(7);
  for (const w of [0, 1, 2, 3]) assert.equal(md5LikeJs(7, w), s[w]);
  for (const v of s) assert.ok(Number.isInteger(v) && v >= 0 && v < 2 ** 32);
});

const hasRustc = spawnSync('rustc', ['--version']).status === 0;

test('JS, Rust native (koffi) and Rust wasm give the same state', { skip: !hasRustc && 'no rustc' }, async (t) => {
  const dir = `${await mkdtemp(path.join(tmpdir(), 'offthread-md5like-'))}/`;
  t.after(() => rm(dir, { recursive: true, force: true }));
  const impls = await loadMd5Like(buildMd5Like(dir));
  for (const n of [0, 1, 2, 3, 17, 1000, 20_011]) {
    const js = md5LikeState(n);
    for (const w of [0, 1, 2, 3]) {
      assert.equal(impls.native(n, w), js[w], `native word ${w} at n = ${n}`);
      assert.equal(impls.wasm(n, w), js[w], `wasm word ${w} at n = ${n}`);
    }
  }
});
