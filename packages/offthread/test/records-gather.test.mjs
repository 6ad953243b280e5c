// A record stream whose pool is behind gathers the chunks written meanwhile into one
// push (issue 32: each push costs a job, a parser, a batch and a stream chunk, a third
// of a 64 KiB-chunk CSV stream's CPU). Driven through OrderedPushes with a stand-in
// core whose pushes finish when the test says, so nothing depends on timing.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { filters } from 'offthread';

const require = createRequire(import.meta.url);
const { OrderedPushes } = require('../dist/filters/core.js');

/** A core recording each push; `finish(i)` settles push i with its own bytes. */
function standIn(gather) {
  const pushes = [];
  const settle = [];
  const core = {
    parallel: true,
    backend: 'native',
    inFlight: 4,
    gather,
    push(chunk) {
      pushes.push(Buffer.from(chunk).toString());
      return new Promise((resolve) => settle.push(() => resolve(Buffer.from(chunk))));
    },
    finish: async () => new Uint8Array(0),
    close() {},
  };
  return { core, pushes, finish: (i) => settle[i]() };
}

test('chunks written while every pool thread has a push are gathered into the next one', async () => {
  const { core, pushes, finish } = standIn({ min: 0, bytes: 1 << 20, chunks: 3, eager: 1 });
  const out = [];
  const ordered = new OrderedPushes(core, (b) => out.push(Buffer.from(b).toString()));
  await ordered.write(Buffer.from('a\n')); // the thread is idle: pushed alone
  // The thread is busy: held (copied), and the writer is not kept waiting.
  const b = Buffer.from('b\n');
  await ordered.write(b);
  b.write('X');
  await ordered.write(Buffer.from('c\n'));
  assert.deepEqual(pushes, ['a\n']);
  await ordered.write(Buffer.from('d\n')); // the third chunk held: one push of the three
  assert.deepEqual(pushes, ['a\n', 'b\nc\nd\n']);
  await ordered.write(Buffer.from('e\n'));
  finish(0);
  finish(1);
  // Outputs go out in order; the end sends what is held.
  const ended = ordered.end();
  await new Promise((r) => setImmediate(r));
  finish(2);
  await ended;
  assert.deepEqual(pushes, ['a\n', 'b\nc\nd\n', 'e\n']);
  assert.deepEqual(out, ['a\n', 'b\nc\nd\n', 'e\n']);
});

test('a chunk below gather.min goes alone, after any bytes held', async () => {
  const { core, pushes, finish } = standIn({ min: 4, bytes: 1 << 20, chunks: 8, eager: 1 });
  const ordered = new OrderedPushes(core, () => {});
  await ordered.write(Buffer.from('big1\n'));
  await ordered.write(Buffer.from('a\n')); // small: alone (nothing held)
  await ordered.write(Buffer.from('big2\n')); // held behind the pushes pending
  await ordered.write(Buffer.from('b\n')); // small, but after held bytes: held too
  assert.deepEqual(pushes, ['big1\n', 'a\n']);
  for (let i = 0; i < 2; i++) finish(i);
  const ended = ordered.end();
  await new Promise((r) => setImmediate(r));
  finish(2);
  await ended;
  assert.deepEqual(pushes, ['big1\n', 'a\n', 'big2\nb\n']);
});

test('without gather (every filter but the native record ones) a chunk is a push', async () => {
  const { core, pushes, finish } = standIn(undefined);
  const ordered = new OrderedPushes(core, () => {});
  for (const c of ['a\n', 'b\n', 'c\n']) await ordered.write(Buffer.from(c));
  assert.deepEqual(pushes, ['a\n', 'b\n', 'c\n']);
  for (let i = 0; i < 3; i++) finish(i);
  await ordered.end();
});

test('CSV and NDJSON on the native pool gather; transcoding does not', () => {
  for (const f of [filters.csv(), filters.ndjson()]) assert.equal(f.inFlight >= 2, true);
  const { openFilter } = require('../dist/filters/core.js');
  const csv = openFilter({ kind: 'csv', layout: 'records', report: true });
  if (csv.backend !== 'native') return; // worker pools take one push at a time per worker
  assert.equal(csv.gather.bytes, 256 * 1024);
  // Small chunks go as they are, as on worker pools: the same batches on both.
  assert.equal(csv.gather.min, 16 * 1024);
  assert.equal(csv.gather.eager >= 1, true);
  assert.equal(openFilter({ kind: 'transcode', from: 'utf8', to: 'utf16le' }).gather, undefined);
});
