// Decompression in bounded pieces (Node's zlib and gzip(1) as oracles): one small
// chunk of gzip that holds a lot comes out in pieces of at most 1 MiB at the reader's
// pace, never as one huge Buffer; the stream stops when destroyed; zero padding after
// a member is read as zlib and gzip(1) read it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { filters, Pool } from 'offthread';

const MiB = 1 << 20;
const ZEROS = 256 * MiB;
// 256 MiB of zeros as ~256 KB of gzip, written to the filter as ONE chunk.
const GZ = zlib.gzipSync(Buffer.alloc(ZEROS), { level: 9 });
const ZERO_MIB = Buffer.alloc(MiB);

/** Drains `filter` fed `chunks`; checks every output chunk while it comes. */
async function drain(filter, chunks, { slow = false, each = () => {} } = {}) {
  const seen = { bytes: 0, chunks: 0, largest: 0, nonZero: 0, rssPeak: 0, aheadPeak: 0 };
  const sink = new Writable({
    highWaterMark: 1,
    write(chunk, _e, cb) {
      seen.bytes += chunk.length;
      seen.chunks++;
      seen.largest = Math.max(seen.largest, chunk.length);
      if (!chunk.equals(ZERO_MIB.subarray(0, chunk.length))) seen.nonZero++;
      seen.rssPeak = Math.max(seen.rssPeak, process.memoryUsage.rss());
      // What the filter produced and the sink has not taken yet.
      seen.aheadPeak = Math.max(seen.aheadPeak, filter.readableLength);
      each(seen, filter);
      if (slow) setImmediate(cb);
      else cb();
    },
  });
  await pipeline(Readable.from(chunks), filter, sink);
  return seen;
}

for (const [name, pool] of [
  ['native pool', undefined],
  ['wasm workers', 'wasm'],
]) {
  test(`gunzip of 256 MiB of zeros from one chunk: ≤ 1 MiB pieces at the reader's pace (${name})`, async () => {
    const p = pool && new Pool({ engine: pool, threads: 1 });
    try {
      const rssBefore = process.memoryUsage.rss();
      const seen = await drain(filters.gunzip({ pool: p }), [GZ], { slow: true });
      assert.equal(seen.bytes, ZEROS, 'every byte out');
      assert.equal(seen.nonZero, 0, 'all zeros');
      assert.ok(seen.largest <= MiB, `largest chunk ${seen.largest} bytes`);
      assert.ok(seen.chunks >= ZEROS / MiB, `${seen.chunks} chunks`);
      // A reader slower than the filter bounds what waits for it: a piece or two, not the rest.
      assert.ok(seen.aheadPeak <= 4 * MiB, `${seen.aheadPeak} bytes produced ahead of the reader`);
      // Before: one 256 MiB Buffer (and its copies). Now 1 MiB pieces, freed as the
      // collector gets to them: ~130 MiB of them may wait for it on a loaded machine.
      assert.ok(seen.rssPeak - rssBefore < 200 * MiB, `RSS grew ${(seen.rssPeak - rssBefore) / MiB} MiB`);
    } finally {
      await p?.close();
    }
  });
}

test('gunzip and inflate in pieces give zlib’s bytes, at several chunk sizes', async () => {
  // Random-ish text that expands a lot: ~3 MiB out of a small input.
  const text = Buffer.from(`${'offthread pieces '.repeat(200_000)}end`);
  const want = createHash('sha256').update(text).digest('hex');
  for (const [f, packed] of [
    [() => filters.gunzip(), zlib.gzipSync(text)],
    [() => filters.inflate(), zlib.deflateSync(text)],
    [() => filters.inflateRaw(), zlib.deflateRawSync(text)],
    // Two members, the second starting inside a piece.
    [
      () => filters.gunzip(),
      Buffer.concat([zlib.gzipSync(text.subarray(0, 1234567)), zlib.gzipSync(text.subarray(1234567))]),
    ],
  ]) {
    for (const size of [packed.length, 1000, 7]) {
      const out = [];
      const chunks = [];
      for (let i = 0; i < packed.length; i += size) chunks.push(packed.subarray(i, i + size));
      await pipeline(
        Readable.from(chunks),
        f(),
        new Writable({
          write(c, _e, cb) {
            assert.ok(c.length <= MiB);
            out.push(c);
            cb();
          },
        }),
      );
      assert.equal(createHash('sha256').update(Buffer.concat(out)).digest('hex'), want, `chunks of ${size}`);
    }
  }
});

test('a gunzip destroyed mid-chunk stops: no more pieces are made', async () => {
  const pool = new Pool({ threads: 1 });
  try {
    const g = filters.gunzip({ pool });
    const stop = new Error('enough');
    await assert.rejects(
      drain(g, [GZ], {
        each: (seen) => {
          if (seen.chunks === 3) g.destroy(stop);
        },
      }),
      (e) => e === stop,
    );
    await new Promise((r) => setTimeout(r, 100));
    const after = pool.stats().completed;
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(pool.stats().completed, after, 'no pushes after the destroy');
    assert.ok(after <= 6, `${after} pushes ran for 3 pieces taken`);
  } finally {
    await pool.close();
  }
});

test('WHATWG gunzip: the same pieces and bytes', async () => {
  const reader = Readable.toWeb(Readable.from([GZ]))
    .pipeThrough(filters.web.gunzip())
    .getReader();
  let bytes = 0;
  let largest = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    largest = Math.max(largest, value.length);
  }
  assert.equal(bytes, ZEROS);
  assert.ok(largest <= MiB, `largest ${largest}`);
});

test('zero padding after a gzip member is read as zlib and gzip(1) read it', async () => {
  const member = zlib.gzipSync(Buffer.from('hello'));
  const padded = Buffer.concat([member, Buffer.alloc(1000)]);
  // The oracles: both give the member and ignore the zeros.
  assert.equal(zlib.gunzipSync(padded).toString(), 'hello');
  const gz = spawnSync('gzip', ['-dc'], { input: padded });
  if (gz.error === undefined) assert.deepEqual([gz.status, gz.stdout.toString()], [0, 'hello']);
  for (const size of [padded.length, 7, 1]) {
    const chunks = [];
    for (let i = 0; i < padded.length; i += size) chunks.push(padded.subarray(i, i + size));
    const out = [];
    await pipeline(
      Readable.from(chunks),
      filters.gunzip(),
      new Writable({
        write(c, _e, cb) {
          out.push(c);
          cb();
        },
      }),
    );
    assert.equal(Buffer.concat(out).toString(), 'hello', `chunks of ${size}`);
  }
  // A member after the padding: gzip(1) calls it trailing garbage (exit 2, warning) and
  // zlib drops it silently; we refuse it rather than lose it without a word.
  const after = Buffer.concat([padded, member]);
  await assert.rejects(
    pipeline(Readable.from([after]), filters.gunzip(), new Writable({ write: (_c, _e, cb) => cb() })),
    { code: 'ERR_FILTER_CORRUPT_DATA' },
  );
});
