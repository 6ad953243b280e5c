// Stream filters on a pool whose queue fills up (maxQueue): a stream waits for room
// (backpressure) instead of failing mid-stream with ERR_QUEUE_FULL, and its bytes stay
// in order — a refused push is taken back and pushed again, later ones wait behind it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { filters, Pool, schema } from 'offthread';
import { outputs } from './stream-outputs.mjs';

const TEXT = Buffer.from('ascii, é ü ß, € 日本語, 𝄞 😀; '.repeat(20_000));

function chunked(bytes, size) {
  const out = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

async function run(filter, chunks) {
  return Buffer.concat(await outputs(filter, chunks));
}

/** [timestamp, value] of every row of temperature batches. */
function rows(batches) {
  const out = [];
  for (const b of batches) {
    const r = schema.TemperatureBatchReader.fromBytes(b).readings();
    const [ts, v] = [r.timestamp(), r.value()];
    for (let i = 0; i < r.length; i++) out.push(`${ts[i]}:${v[i]}`);
  }
  return out;
}

// Native: a refused push is pushed again. Worker pools ('wasm'): a stream's steps wait
// in the engine, in order, until the queue has room.
for (const engine of ['native', 'wasm'])
  test(`streams on a full queue wait for room: same bytes, no ERR_QUEUE_FULL (${engine})`, async () => {
    const pool = new Pool({ engine, threads: 1, maxQueue: 2 });
    try {
      // The case and more: several default streams at once (transcoding keeps two
      // chunks in flight each), chunk sizes cutting characters.
      const [a, b, gz, back] = await Promise.all([
        run(filters.transcode('utf8', 'utf16le', { pool }), chunked(TEXT, 1000)),
        run(filters.transcode('utf8', 'utf16le', { pool }), chunked(TEXT, 777)),
        run(filters.gzip({ pool }), chunked(TEXT, 4096)),
        run(
          filters.transcode('utf16le', 'utf8', { pool, inFlight: 4 }),
          chunked(Buffer.from(TEXT.toString(), 'utf16le'), 999),
        ),
      ]);
      const wide = Buffer.from(TEXT.toString(), 'utf16le');
      assert.ok(a.equals(wide), 'stream 1');
      assert.ok(b.equals(wide), 'stream 2');
      assert.ok(zlib.gunzipSync(gz).equals(TEXT), 'gzip');
      assert.ok(back.equals(TEXT), 'utf16le → utf8');
      assert.equal(pool.stats().failed, 0);
    } finally {
      await pool.close();
    }
  });

test('NDJSON and gunzip on a full queue: rows and bytes in order', async () => {
  const pool = new Pool({ threads: 1, maxQueue: 1 });
  try {
    const lines = Buffer.from(
      Array.from({ length: 3000 }, (_, i) => JSON.stringify({ timestamp: i, value: i / 4 })).join('\n'),
    );
    const columns = [
      { name: 'timestamp', type: 'i64' },
      { name: 'value', type: 'f32' },
    ];
    const packed = zlib.gzipSync(TEXT);
    const [one, two, plain] = await Promise.all([
      outputs(filters.ndjson({ columns, pool, inFlight: 4 }), chunked(lines, 500)),
      outputs(filters.ndjson({ columns, pool, inFlight: 4 }), chunked(lines, 333)),
      run(filters.gunzip({ pool }), chunked(packed, 100)),
    ]);
    const want = Array.from({ length: 3000 }, (_, i) => `${i}:${i / 4}`);
    assert.deepEqual(rows(one), want);
    assert.deepEqual(rows(two), want);
    assert.ok(plain.equals(TEXT), 'gunzip');
  } finally {
    await pool.close();
  }
});
