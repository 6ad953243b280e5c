// zstd and brotli filters against Node's own zlib, both ways: what ours write Node
// reads, what Node writes ours read (concatenated and skippable zstd frames too), in
// any chunking down to 1 byte, on the native pool and on wasm workers. Truncated and
// corrupt input fail with a code; a zstd window past windowLogMax is refused; a small
// chunk that holds a lot comes out in ≤ 1 MiB pieces.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { filters, Pool } from 'offthread';
import { outputs } from './stream-outputs.mjs';

const MiB = 1 << 20;
// zlib.zstd* arrived in Node 22.15 / 23.8; on older Nodes (CI runs 20) the Node-zstd
// interop cases are skipped and our pair is checked against itself only.
const NODE_ZSTD = typeof zlib.zstdDecompressSync === 'function';
const NO_NODE_ZSTD = NODE_ZSTD ? false : `Node ${process.version} has no zlib zstd (22.15+/23.8+)`;
// Node 22's zlib stops after the first zstd frame when it ends before the output buffer
// is full, dropping the rest (nodejs/node#64741; Node 24 and 26 read them all): there
// it is no oracle for concatenated frames.
const twoFrames = () => {
  const one = zlib.zstdCompressSync(Buffer.from('frame '));
  return zlib.zstdDecompressSync(Buffer.concat([one, one])).length === 12;
};
const NODE_ZSTD_FRAMES = NODE_ZSTD && twoFrames();

/**
 * Buffers equal, or a short message: assert.deepEqual's diff of two large buffers that
 * differ took Node 22 past 3 GB before it printed anything.
 */
function sameBytes(actual, expected, message = 'bytes differ') {
  if (Buffer.compare(actual, expected) === 0) return;
  let at = 0;
  while (at < actual.length && at < expected.length && actual[at] === expected[at]) at++;
  assert.fail(`${message}: ${actual.length} bytes, ${expected.length} expected; first difference at byte ${at}`);
}

/** ~2.5 MiB of varied text: three 1 MiB zstd frames and a partial one. */
function corpus(n) {
  const words = ['offthread', 'zstd', 'brotli', 'stream', 'chunk', 'window', 'frame', 'pool', 'loop', 'byte'];
  const parts = [];
  let x = 12345;
  let len = 0;
  while (len < n) {
    x = (x * 1103515245 + 12345) >>> 0;
    const w = `${words[x % words.length]}${x % 7 === 0 ? `-${x % 1000}` : ''}${x % 13 === 0 ? '\n' : ' '}`;
    parts.push(w);
    len += w.length;
  }
  return Buffer.from(parts.join('')).subarray(0, n);
}
const TEXT = corpus(2.5 * MiB);
const SMALL = TEXT.subarray(0, 40_000);

function chunked(buf, size) {
  const out = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
}

const through = async (filter, chunks) => Buffer.concat(await outputs(filter, chunks));

const BROTLI_Q5 = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } };

for (const [name, engine] of [
  ['native pool', undefined],
  ['wasm workers', 'wasm'],
]) {
  const withPool = (fn) => async () => {
    const pool = engine && new Pool({ engine, threads: 1 });
    try {
      await fn(pool);
    } finally {
      await pool?.close();
    }
  };

  test(
    `zstd: our pair round-trips in any chunking (${name})`,
    withPool(async (pool) => {
      for (const size of [64 * 1024, 1000]) {
        const packed = await through(filters.zstdCompress({ pool }), chunked(TEXT, size));
        assert.ok(packed.length < TEXT.length / 2, `compressed to ${packed.length}`);
        sameBytes(await through(filters.zstdDecompress({ pool }), chunked(packed, size)), TEXT);
      }
      // 1-byte chunks both ways (a smaller text: one push per byte).
      const packed = await through(filters.zstdCompress({ pool }), chunked(SMALL, 1));
      sameBytes(await through(filters.zstdDecompress({ pool }), chunked(packed, 1)), SMALL);
    }),
  );

  test(
    `zstd: ours → Node's zlib, Node's → ours (${name})`,
    { skip: NO_NODE_ZSTD },
    withPool(async (pool) => {
      const packed = await through(filters.zstdCompress({ pool }), chunked(TEXT, 65536));
      sameBytes(zlib.zstdDecompressSync(packed), TEXT, 'Node reads our multi-frame output');
      const empty = await through(filters.zstdCompress({ pool }), []);
      assert.equal(zlib.zstdDecompressSync(empty).length, 0, 'an empty stream is one empty frame');

      for (const level of [1, 3, 19]) {
        const node = zlib.zstdCompressSync(TEXT, { params: { [zlib.constants.ZSTD_c_compressionLevel]: level } });
        sameBytes(await through(filters.zstdDecompress({ pool }), chunked(node, 4096)), TEXT, `level ${level}`);
      }
      // Concatenated frames with a skippable frame between them, fed a byte at a time.
      const skippable = Buffer.alloc(8 + 5);
      skippable.writeUInt32LE(0x184d2a5e, 0);
      skippable.writeUInt32LE(5, 4);
      const multi = Buffer.concat([zlib.zstdCompressSync(SMALL), skippable, zlib.zstdCompressSync(SMALL.subarray(7))]);
      const want = Buffer.concat([SMALL, SMALL.subarray(7)]);
      if (NODE_ZSTD_FRAMES) sameBytes(zlib.zstdDecompressSync(multi), want, 'Node reads it too');
      sameBytes(await through(filters.zstdDecompress({ pool }), chunked(multi, 1)), want);
      // Node's streaming compressor (a frame flushed in several writes).
      const streamed = await new Promise((resolve, reject) => {
        const parts = [];
        const z = zlib.createZstdCompress();
        z.on('data', (d) => parts.push(d));
        z.on('end', () => resolve(Buffer.concat(parts)));
        z.on('error', reject);
        for (const c of chunked(TEXT, 100_000)) z.write(c);
        z.end();
      });
      sameBytes(await through(filters.zstdDecompress({ pool }), chunked(streamed, 70_000)), TEXT);
    }),
  );

  test(
    `brotli: ours ↔ Node's zlib, any chunking (${name})`,
    withPool(async (pool) => {
      const ours = await through(filters.brotliCompress({ pool, quality: 5 }), chunked(TEXT, 65536));
      assert.ok(ours.length < TEXT.length / 2);
      sameBytes(zlib.brotliDecompressSync(ours), TEXT, 'Node reads ours');
      sameBytes(await through(filters.brotliDecompress({ pool }), chunked(ours, 5000)), TEXT);
      // The default quality (11, Node's) and a small window, on a smaller input.
      const q11 = await through(filters.brotliCompress({ pool, window: 16 }), chunked(SMALL, 1));
      sameBytes(zlib.brotliDecompressSync(q11), SMALL);
      const empty = await through(filters.brotliCompress({ pool }), []);
      assert.equal(zlib.brotliDecompressSync(empty).length, 0);

      const node = zlib.brotliCompressSync(TEXT, BROTLI_Q5);
      sameBytes(await through(filters.brotliDecompress({ pool }), chunked(node, 65536)), TEXT);
      const nodeSmall = zlib.brotliCompressSync(SMALL);
      sameBytes(await through(filters.brotliDecompress({ pool }), chunked(nodeSmall, 1)), SMALL);
    }),
  );

  test(
    `truncated and corrupt input fail with ERR_FILTER_CORRUPT_DATA (${name})`,
    withPool(async (pool) => {
      const zst = await through(filters.zstdCompress({ pool }), [SMALL]);
      const br = zlib.brotliCompressSync(SMALL, BROTLI_Q5);
      for (const [label, make, packed] of [
        ['zstd', () => filters.zstdDecompress({ pool }), zst],
        ['brotli', () => filters.brotliDecompress({ pool }), br],
      ]) {
        for (const cut of [packed.length - 1, packed.length >> 1, 3]) {
          await assert.rejects(
            through(make(), chunked(packed.subarray(0, cut), 1000)),
            { code: 'ERR_FILTER_CORRUPT_DATA', message: /truncated|unexpected end/ },
            `${label} cut at ${cut}`,
          );
        }
        const flipped = Buffer.from(packed);
        flipped[flipped.length >> 1] ^= 0x55;
        flipped[(flipped.length >> 1) + 1] ^= 0xaa;
        await assert.rejects(through(make(), [flipped]), { code: 'ERR_FILTER_CORRUPT_DATA' }, `${label} flipped`);
        await assert.rejects(through(make(), [Buffer.from('not compressed at all')]), {
          code: 'ERR_FILTER_CORRUPT_DATA',
        });
        await assert.rejects(through(make(), []), { code: 'ERR_FILTER_CORRUPT_DATA' }, `${label} empty input`);
      }
    }),
  );

  test(
    `zstd: a window past windowLogMax is refused before allocating (${name})`,
    withPool(async (pool) => {
      // A frame header asking for a 1 GiB window (exponent 20), and one raw block.
      const huge = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 20 << 3, 0x19, 0x00, 0x00, 0x61, 0x62, 0x63]);
      await assert.rejects(through(filters.zstdDecompress({ pool }), [huge]), { code: 'ERR_FILTER_WINDOW_TOO_LARGE' });
      // Raised for trusted input: the same frame decodes.
      assert.equal(String(await through(filters.zstdDecompress({ pool, windowLogMax: 30 }), [huge])), 'abc');
      if (NODE_ZSTD) {
        const wide = zlib.zstdCompressSync(TEXT, { params: { [zlib.constants.ZSTD_c_windowLog]: 23 } });
        await assert.rejects(through(filters.zstdDecompress({ pool, windowLogMax: 20 }), [wide]), {
          code: 'ERR_FILTER_WINDOW_TOO_LARGE',
        });
        sameBytes(await through(filters.zstdDecompress({ pool, windowLogMax: 23 }), [wide]), TEXT);
      }
    }),
  );

  test(
    `a small chunk that holds a lot comes out in ≤ 1 MiB pieces (${name})`,
    withPool(async (pool) => {
      const zeros = Buffer.alloc(48 * MiB);
      for (const [label, make, packed] of [
        ['zstd', () => filters.zstdDecompress({ pool }), await through(filters.zstdCompress({ pool }), [zeros])],
        ['brotli', () => filters.brotliDecompress({ pool }), zlib.brotliCompressSync(zeros, BROTLI_Q5)],
      ]) {
        assert.ok(packed.length < zeros.length / 100, `${label}: ${packed.length}`);
        const out = await outputs(make(), [packed]);
        assert.ok(Math.max(...out.map((c) => c.length)) <= MiB, `${label}: largest piece`);
        assert.equal(
          out.reduce((n, c) => n + c.length, 0),
          zeros.length,
        );
        assert.ok(
          out.every((c) => c.every((b) => b === 0)),
          `${label}: all zeros`,
        );
      }
    }),
  );
}

test('options are checked: bad values and unknown keys are ERR_FILTER_INVALID_SPEC', () => {
  for (const make of [
    () => filters.zstdCompress({ level: 3 }),
    () => filters.zstdCompress({ level: 0 }),
    () => filters.zstdDecompress({ windowLogMax: 9 }),
    () => filters.zstdDecompress({ windowLogMax: 32 }),
    () => filters.zstdDecompress({ windowLogMax: 20.5 }),
    () => filters.brotliCompress({ quality: 12 }),
    () => filters.brotliCompress({ window: 25 }),
    () => filters.brotliCompress({ window: 9 }),
    () => filters.brotliCompress({ quality: '5' }),
    () => filters.brotliCompress({ params: {} }),
    () => filters.brotliDecompress({ windowLogMax: 20 }),
    () => filters.web.zstdCompress({ lvl: 1 }),
  ]) {
    assert.throws(make, { code: 'ERR_FILTER_INVALID_SPEC' }, String(make));
  }
  filters.zstdCompress({ level: 1 }).destroy();
  filters.brotliCompress({ quality: 0, window: 24 }).destroy();
});

test('WHATWG TransformStreams: web.zstd* and web.brotli* give the same bytes', async () => {
  const read = async (stream) => {
    const parts = [];
    for await (const p of stream) parts.push(p);
    return Buffer.concat(parts);
  };
  const zst = await read(ReadableStream.from(chunked(TEXT, 50_000)).pipeThrough(filters.web.zstdCompress()));
  sameBytes(await read(ReadableStream.from(chunked(zst, 777)).pipeThrough(filters.web.zstdDecompress())), TEXT);
  if (NODE_ZSTD) sameBytes(zlib.zstdDecompressSync(zst), TEXT);
  const br = await read(
    ReadableStream.from(chunked(SMALL, 3000)).pipeThrough(filters.web.brotliCompress({ quality: 4 })),
  );
  sameBytes(zlib.brotliDecompressSync(br), SMALL);
  sameBytes(await read(ReadableStream.from([br]).pipeThrough(filters.web.brotliDecompress())), SMALL);
});
