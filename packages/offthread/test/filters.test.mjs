// Stream filters (src/filters, crates/offthread-filters) as Node Transforms, WHATWG
// TransformStreams and the Nexus shape: output equal to Node's own (Buffer, zlib,
// crypto), chunks in order, backpressure kept, errors with registry codes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { errorRegistry, filters, schema, stats } from 'offthread';

const TEXT = 'ascii, é ü ß, € 日本語, 𝄞 😀; '.repeat(3000);
const BYTES = Buffer.from(TEXT);

/** `bytes` cut into chunks of `size` (the last one shorter). */
function chunked(bytes, size) {
  const out = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

function collect(into) {
  return new Writable({
    objectMode: true,
    write(chunk, _e, cb) {
      into.push(chunk);
      cb();
    },
  });
}

async function run(filter, chunks) {
  const out = [];
  await pipeline(Readable.from(chunks), filter, collect(out));
  return Buffer.concat(out);
}

test('every code a filter can fail with is in the registry and docs/errors.md', () => {
  const require = createRequire(import.meta.url);
  const binding = require('../native/offthread.linux-x64-gnu.node');
  const docs = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
  assert.ok(binding.filterErrorCodes().length >= 9);
  for (const code of [...binding.filterErrorCodes(), 'ERR_STREAM_SINK_FAILED']) {
    assert.ok(code in errorRegistry, `${code} is not registered`);
    assert.match(docs, new RegExp(`\\b${code}\\b`), code);
  }
});

test('filters run on the native pool, transcoding several chunks at once', () => {
  const t = filters.transcode('utf8', 'utf16le');
  assert.equal(t.backend, 'native');
  assert.ok(t.inFlight >= 2);
  assert.equal(filters.gzip().inFlight, 1, 'deflate is sequential');
  assert.equal(filters.sha256().inFlight, 1, 'hashes are sequential');
});

test('transcoding equals Buffer.from at every chunk size, in order', async () => {
  for (const size of [1, 2, 3, 5, 64, 1000, 65536]) {
    const chunks = chunked(BYTES, size).slice(0, size < 64 ? 4000 : undefined);
    const input = Buffer.concat(chunks);
    assert.deepEqual(
      await run(filters.transcode('utf8', 'utf16le'), chunks),
      Buffer.from(input.toString('utf8'), 'utf16le'),
      `size ${size}`,
    );
  }
  const wide = Buffer.from(TEXT, 'utf16le');
  assert.deepEqual(await run(filters.transcode('utf16le', 'utf8'), chunked(wide, 333)), BYTES);
  const latin = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  assert.deepEqual(
    await run(filters.transcode('latin1', 'utf8'), chunked(latin, 7)),
    Buffer.from(latin.toString('latin1')),
  );
  assert.deepEqual(await run(filters.validateUtf8(), chunked(BYTES, 77)), BYTES);
});

test('transcoding into a fresh Buffer per chunk: outputs stay intact while later chunks run', async () => {
  const latin = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7) % 256));
  for (const [from, to, input, expected] of [
    ['utf8', 'utf16le', BYTES, Buffer.from(TEXT, 'utf16le')],
    ['latin1', 'utf16le', latin, Buffer.from(latin.toString('latin1'), 'utf16le')],
    ['latin1', 'latin1', latin, latin],
  ]) {
    const outs = [];
    // Kept until the end: a buffer reused for a later chunk would change an earlier one.
    await pipeline(Readable.from(chunked(input, 999)), filters.transcode(from, to, { inFlight: 8 }), collect(outs));
    assert.deepEqual(Buffer.concat(outs), expected, `${from} → ${to}`);
    assert.equal(new Set(outs.map((o) => o.buffer)).size, outs.length, 'one ArrayBuffer per output chunk');
  }
  // CJK: 3 bytes in, 2 out, so a third of each output buffer is room the chunk does not
  // use; it must be zeros, not whatever the allocator had there (the view's ArrayBuffer
  // reaches it).
  const cjk = Buffer.from('日本語の文章'.repeat(20000));
  const outs = [];
  await pipeline(Readable.from(chunked(cjk, 65536)), filters.transcode('utf8', 'utf16le'), collect(outs));
  assert.deepEqual(Buffer.concat(outs), Buffer.from(cjk.toString(), 'utf16le'));
  for (const o of outs) {
    const rest = new Uint8Array(o.buffer, o.byteOffset + o.length);
    assert.ok(rest.length > 0 && rest.every((b) => b === 0), 'the unused room is cleared');
  }
});

test('a transcoding push writes into a Buffer the binding makes, which JS gets from take() after the job', async () => {
  const require = createRequire(import.meta.url);
  const binding = require('../native/offthread.linux-x64-gnu.node');
  const spec = JSON.stringify({ kind: 'transcode', from: 'utf8', to: 'utf16le', strict: true });
  const pool = new binding.NativePool(1, 0, 0, () => {});
  /** The next completion as [id, kind], waiting for it. */
  const next = async () => {
    const out = new Float64Array(3);
    while (pool.drain(out) === 0) await new Promise((r) => setTimeout(r, 1));
    return [out[0], out[1]];
  };
  try {
    const text = 'héllo wörld 東京 🙂 '.repeat(2000);
    const chunk = Buffer.from(text);
    pool.submitFilterPush(0, new binding.NativeFilter(spec), chunk);
    // The caller's bytes may go at once (the job has its own copy); the output Buffer was
    // never the caller's to transfer.
    structuredClone(chunk.buffer, { transfer: [chunk.buffer] });
    assert.deepEqual(await next(), [0, 1]);
    const out = pool.take(0);
    assert.ok(out instanceof Uint8Array);
    assert.deepEqual(Buffer.from(out.buffer, out.byteOffset, out.length), Buffer.from(text, 'utf16le'));
    assert.equal(pool.take(0), undefined, 'handed out once');
    // A failed push hands out its error, and no Buffer.
    pool.submitFilterPush(1, new binding.NativeFilter(spec), Buffer.from([0xff, 0x61]));
    assert.deepEqual(await next(), [1, 2]);
    assert.equal(pool.take(1)[0], 'ERR_FILTER_INVALID_UTF8');
  } finally {
    pool.destroy();
  }
});

test('invalid UTF-8: replaced like TextDecoder, or rejected in strict mode with its offset', async () => {
  const bad = Buffer.concat([
    Buffer.from('ok '),
    Buffer.from([0xe2, 0x82]),
    Buffer.from(' then '),
    Buffer.from([0xff]),
  ]);
  const lossy = new TextDecoder().decode(bad);
  assert.deepEqual(await run(filters.transcode('utf8', 'utf16le'), chunked(bad, 1)), Buffer.from(lossy, 'utf16le'));
  await assert.rejects(run(filters.validateUtf8(), chunked(bad, 4)), {
    code: 'ERR_FILTER_INVALID_UTF8',
    message: 'invalid UTF-8 at byte 3',
  });
  await assert.rejects(run(filters.transcode('utf8', 'utf16le', { strict: true }), [Buffer.from([0x61, 0xe2])]), {
    code: 'ERR_FILTER_INVALID_UTF8',
  });
});

test('gzip/deflate output is read by Node zlib; gunzip/inflate read zlib output', async () => {
  const chunks = chunked(BYTES, 4096);
  assert.deepEqual(zlib.gunzipSync(await run(filters.gzip(), chunks)), BYTES);
  assert.deepEqual(zlib.inflateSync(await run(filters.deflate({ level: 9 }), chunks)), BYTES);
  assert.deepEqual(zlib.inflateRawSync(await run(filters.deflateRaw({ level: 1 }), chunks)), BYTES);
  assert.deepEqual(await run(filters.gunzip(), chunked(zlib.gzipSync(BYTES), 1000)), BYTES);
  assert.deepEqual(await run(filters.inflate(), chunked(zlib.deflateSync(BYTES), 3)), BYTES);
  assert.deepEqual(await run(filters.inflateRaw(), chunked(zlib.deflateRawSync(BYTES), 100)), BYTES);
  const corrupt = zlib.gzipSync(BYTES);
  corrupt[corrupt.length - 5] ^= 1;
  await assert.rejects(run(filters.gunzip(), chunked(corrupt, 500)), { code: 'ERR_FILTER_CORRUPT_DATA' });
  await assert.rejects(run(filters.gunzip(), [zlib.gzipSync(BYTES).subarray(0, 100)]), {
    code: 'ERR_FILTER_CORRUPT_DATA',
  });
});

test('running digests equal node:crypto', async () => {
  const chunks = chunked(BYTES, 1234);
  assert.equal((await run(filters.sha256(), chunks)).toString('hex'), createHash('sha256').update(BYTES).digest('hex'));
  assert.equal((await run(filters.md5(), chunks)).toString('hex'), createHash('md5').update(BYTES).digest('hex'));
});

// temperature_batch is `{ readings: []temperature_reading #soa }` with reading
// `{ timestamp: i64; value: f32; }`: a user's schema whose generated TS reader ships here.
const COLUMNS = [
  { name: 'timestamp', type: 'i64' },
  { name: 'value', type: 'f32' },
];
const ROWS = Array.from({ length: 5000 }, (_, i) => [BigInt(i) * 1000n, ((i * 37) % 1000) / 8 - 40]);

function readBatches(batches) {
  const rows = [];
  for (const b of batches) {
    const readings = schema.TemperatureBatchReader.fromBytes(b).readings();
    const ts = readings.timestamp();
    const values = readings.value();
    for (let i = 0; i < readings.length; i++) rows.push([ts[i], values[i]]);
  }
  return rows;
}

test('CSV and NDJSON become batches the generated reader reads in place', async () => {
  const csv = Buffer.from(`value,timestamp\n${ROWS.map(([t, v]) => `${v},${t}`).join('\r\n')}`);
  const batches = [];
  await pipeline(Readable.from(chunked(csv, 4096)), filters.csv({ columns: COLUMNS }), collect(batches));
  assert.ok(batches.length > 1, 'one batch per chunk that completed rows');
  assert.deepEqual(readBatches(batches), ROWS);
  // A batch is a TemperatureBatch: the Rust kernels take it as is.
  assert.equal((await stats.temperature(batches[0])).count, readBatches([batches[0]]).length);

  const ndjson = Buffer.from(ROWS.map(([t, v]) => JSON.stringify({ timestamp: Number(t), value: v })).join('\n'));
  const nd = [];
  await pipeline(Readable.from(chunked(ndjson, 999)), filters.ndjson({ columns: COLUMNS }), collect(nd));
  assert.deepEqual(readBatches(nd), ROWS);

  await assert.rejects(
    pipeline(
      Readable.from([Buffer.from('timestamp,value\n1,2\n2,x\n')]),
      filters.csv({ columns: COLUMNS }),
      collect([]),
    ),
    { code: 'ERR_FILTER_BAD_RECORD', message: 'line 3: column "value": "x" is not a f32' },
  );
});

test('small chunks written while the filter is busy go to the pool together, output unchanged', async () => {
  const { Pool } = await import('offthread');
  const pool = new Pool({ threads: 1 });
  /** Writes every chunk at once (all but the first queue up behind it), then ends. */
  const writeAll = async (filter, chunks) => {
    const out = [];
    filter.on('data', (c) => out.push(c));
    for (const c of chunks) filter.write(c);
    filter.end();
    await once(filter, 'end');
    return Buffer.concat(out);
  };
  try {
    const pieces = chunked(BYTES, 100); // ~1,800 writes, each far below a push's 64 KiB
    const pushesAtMost = Math.ceil(BYTES.length / 65536) + 2; // the first chunk, the joined rest, the finish
    const jobs = () => pool.stats().completed;
    let before = jobs();
    const utf16 = await writeAll(filters.transcode('utf8', 'utf16le', { pool }), pieces);
    assert.deepEqual(utf16, Buffer.from(TEXT, 'utf16le'));
    assert.ok(jobs() - before <= pushesAtMost, `${jobs() - before} pushes for ${pieces.length} chunks`);
    before = jobs();
    const gz = await writeAll(filters.gzip({ pool }), pieces);
    assert.deepEqual(zlib.gunzipSync(gz), BYTES);
    assert.ok(jobs() - before <= pushesAtMost);
    const digest = await writeAll(filters.sha256({ pool }), pieces);
    assert.equal(digest.toString('hex'), createHash('sha256').update(BYTES).digest('hex'));
    // A chunk of more than a push's worth is pushed whole, never cut or joined.
    const big = Buffer.alloc(200_000, 0x61);
    before = jobs();
    const out = await writeAll(filters.transcode('latin1', 'latin1', { pool }), [big, big, big]);
    assert.deepEqual(out, Buffer.concat([big, big, big]));
    assert.equal(jobs() - before, 4, 'three pushes and the finish');
  } finally {
    await pool.close();
  }
});

test('NDJSON chunks parse in parallel: rows in order, errors name the line in the whole stream', async () => {
  // Every 7th line blank (lines count, rows do not); chunks cut mid-line.
  const lines = ROWS.flatMap(([t, v], i) => [
    JSON.stringify({ timestamp: Number(t), value: v }),
    ...(i % 7 === 3 ? [''] : []),
  ]);
  const text = Buffer.from(lines.join('\n'));
  const parallel = filters.ndjson({ columns: COLUMNS, inFlight: 4 });
  assert.equal(parallel.inFlight, 4);
  const nd = [];
  await pipeline(Readable.from(chunked(text, 333)), parallel, collect(nd));
  // A batch per push: the 333-byte chunks that queue up while pushes are pending go
  // together, at most 64 KiB a push, so the stream is still many pieces, 4 in flight.
  assert.ok(nd.length > 4 && nd.length >= text.length / 65536, `${nd.length} batches`);
  assert.deepEqual(readBatches(nd), ROWS);

  // A bad value on line 4,000 of the stream, many chunks after the first.
  const bad = [...lines];
  bad[3999] = '{"timestamp":1,"value":"x"}';
  await assert.rejects(
    pipeline(
      Readable.from(chunked(Buffer.from(bad.join('\n')), 333)),
      filters.ndjson({ columns: COLUMNS }),
      collect([]),
    ),
    { code: 'ERR_FILTER_BAD_RECORD', message: 'line 4000: column "value": "x" is not a number' },
  );
});

test('bad specs throw at once with a code', () => {
  assert.throws(() => filters.gzip({ level: 12 }), { code: 'ERR_FILTER_INVALID_SPEC' });
  assert.throws(() => filters.transcode('utf8', 'ebcdic'), { code: 'ERR_FILTER_INVALID_SPEC' });
  assert.throws(() => filters.csv({ columns: [{ name: 'a', type: 'u128' }] }), { code: 'ERR_FILTER_INVALID_SPEC' });
  assert.throws(() => filters.gzip({ lvl: 1 }), { code: 'ERR_FILTER_INVALID_SPEC' });
  assert.throws(() => filters.validateUtf8({ strict: false }), {
    code: 'ERR_FILTER_INVALID_SPEC',
    message: 'validateUtf8 takes only pool and inFlight, got strict',
  });
  assert.throws(() => filters.web.validateUtf8({ from: 'latin1' }), { code: 'ERR_FILTER_INVALID_SPEC' });
  assert.throws(() => filters.transcode('utf8', 'utf16le', { inFlight: 0 }), { code: 'ERR_INVALID_ARG' });
});

test('a slow sink bounds how far the source is read ahead (backpressure)', async () => {
  const chunk = Buffer.alloc(16 * 1024, 0x61);
  const filter = filters.transcode('latin1', 'utf16le', { inFlight: 2 });
  // What the filter may hold, in input bytes: its writable buffer, `inFlight` pushes and
  // one more that lands after the reader is full (chunks queued while it was busy go
  // together, so each is at most that buffer), and its readable buffer (output is twice
  // the input). Node's default highWaterMark sizes both buffers (16 KiB on Node 20,
  // 64 KiB from 22), so the bound comes from the stream, not from one Node's default.
  const batch = filter.writableHighWaterMark + chunk.length;
  const held = (filter.inFlight + 2) * batch + filter.readableHighWaterMark / 2;
  const bound = Math.ceil(held / chunk.length) + 2; // + the source's and the sink's one chunk
  const total = 4 * bound;
  let produced = 0;
  let consumedBytes = 0;
  let maxAhead = 0;
  const source = new Readable({
    highWaterMark: 1,
    read() {
      produced++;
      // Chunks the sink has taken, counted in bytes: batched chunks reach it as one write.
      maxAhead = Math.max(maxAhead, produced - Math.floor(consumedBytes / (2 * chunk.length)));
      this.push(produced <= total ? chunk : null);
    },
  });
  const slow = new Writable({
    highWaterMark: 1,
    write(c, _e, cb) {
      consumedBytes += c.length;
      setImmediate(cb);
    },
  });
  await pipeline(source, filter, slow);
  assert.equal(consumedBytes, total * chunk.length * 2);
  assert.ok(maxAhead <= bound, `read ${maxAhead} chunks ahead of the sink (bound ${bound} of ${total})`);
});

test('WHATWG TransformStream: same bytes, same order', async () => {
  const stream = ReadableStream.from(chunked(BYTES, 999)).pipeThrough(filters.web.transcode('utf8', 'utf16le'));
  const parts = [];
  for await (const part of stream) parts.push(part);
  assert.deepEqual(Buffer.concat(parts), Buffer.from(TEXT, 'utf16le'));
  const gz = ReadableStream.from(chunked(BYTES, 5000)).pipeThrough(filters.web.gzip());
  const packed = [];
  for await (const part of gz) packed.push(part);
  assert.deepEqual(zlib.gunzipSync(Buffer.concat(packed)), BYTES);
});

test('Nexus shape: one source, a filter, several file sinks; a failing sink rejects resume()', {
  timeout: 30_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'offthread-filters-'));
  try {
    const input = join(dir, 'in.txt');
    writeFileSync(input, BYTES);
    const src = filters.source(filters.fileSource(input, { highWaterMark: 4096 }));
    src.pushFilter(filters.transcode('utf8', 'utf16le'));
    src.pipe(...['a', 'b', 'c'].map((n) => filters.fileSink(join(dir, n))));
    await src.resume();
    for (const n of ['a', 'b', 'c']) assert.deepEqual(readFileSync(join(dir, n)), Buffer.from(TEXT, 'utf16le'), n);

    const broken = new Writable({
      write(_c, _e, cb) {
        cb(new Error('disk full'));
      },
    });
    const failing = filters.source(filters.fileSource(input));
    failing.pushFilter(filters.gzip()).pipe(filters.fileSink(join(dir, 'd')), broken);
    // The error names the file the other sink left behind (created, partly written).
    await assert.rejects(failing.resume(), (e) => {
      assert.equal(e.code, 'ERR_STREAM_SINK_FAILED');
      assert.equal(e.cause.message, 'disk full');
      assert.deepEqual(e.partialFiles, [join(dir, 'd')]);
      return true;
    });
    assert.throws(() => failing.pipe(broken), { code: 'ERR_INVALID_ARG' });
    // A source failing with a frozen error: that error comes through as it is.
    const frozen = Object.freeze(new Error('frozen'));
    const stuck = filters.source(
      new Readable({
        read() {
          this.destroy(frozen);
        },
      }),
    );
    stuck.pipe(filters.fileSink(join(dir, 'i')));
    await assert.rejects(stuck.resume(), (e) => e === frozen && e.partialFiles === undefined);

    // A source that cannot open: the sink's file was created, empty, and is named.
    const missing = filters.source(filters.fileSource(join(dir, 'no-such-file')));
    missing.pipe(filters.fileSink(join(dir, 'f')));
    await assert.rejects(missing.resume(), (e) => {
      assert.equal(e.code, 'ENOENT');
      assert.deepEqual(e.partialFiles, [join(dir, 'f')]);
      return true;
    });
    assert.equal(readFileSync(join(dir, 'f')).length, 0);
    // A sink whose own open failed left nothing and is not named; its sibling is.
    const noDir = filters.source(filters.fileSource(input));
    noDir.pipe(filters.fileSink(join(dir, 'g')), filters.fileSink(join(dir, 'no-dir', 'g')));
    await assert.rejects(noDir.resume(), (e) => {
      assert.equal(e.code, 'ERR_STREAM_SINK_FAILED');
      assert.equal(e.cause.code, 'ENOENT');
      assert.deepEqual(e.partialFiles, [join(dir, 'g')]);
      return true;
    });

    // A filter failing mid-stream: the file holds the bytes before it.
    writeFileSync(join(dir, 'bad.txt'), Buffer.concat([BYTES, Buffer.from([0xff])]));
    const invalid = filters.source(filters.fileSource(join(dir, 'bad.txt'), { highWaterMark: 4096 }));
    invalid.pushFilter(filters.transcode('utf8', 'utf16le', { strict: true })).pipe(filters.fileSink(join(dir, 'h')));
    await assert.rejects(invalid.resume(), (e) => {
      assert.equal(e.code, 'ERR_FILTER_INVALID_UTF8');
      assert.deepEqual(e.partialFiles, [join(dir, 'h')]);
      return true;
    });
    assert.throws(() => filters.fileSource(input, { start: 10 }), { code: 'ERR_INVALID_ARG', message: /start/ });
    assert.throws(() => filters.fileSource(input, { highWaterMark: 0 }), { code: 'ERR_INVALID_ARG' });

    // A sink destroyed without an error (a response whose client left) while the others
    // still take chunks: resume() rejects instead of waiting for its 'drain' forever.
    let taken = 0;
    const quitter = new Writable({
      highWaterMark: 1,
      write(_c, _e, cb) {
        if (++taken === 3) this.destroy();
        else setImmediate(cb);
      },
    });
    const deserted = filters.source(filters.fileSource(input, { highWaterMark: 1024 }));
    deserted.pushFilter(filters.transcode('utf8', 'utf16le')).pipe(filters.fileSink(join(dir, 'e')), quitter);
    await assert.rejects(
      deserted.resume(),
      (e) => e.code === 'ERR_STREAM_SINK_FAILED' && e.cause.code === 'ERR_STREAM_PREMATURE_CLOSE',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without the addon, filters run on offthread.wasm on the worker pool with the same output', () => {
  const script = `
    const { filters } = require('offthread');
    const { pipeline } = require('node:stream/promises');
    const { Readable, Writable } = require('node:stream');
    const zlib = require('node:zlib');
    const out = [];
    const g = filters.gzip();
    const t = filters.transcode('utf8', 'utf16le');
    const text = 'é😀x'.repeat(1000);
    const sink = (into) => new Writable({ write(c, _e, cb) { into.push(c); cb(); } });
    const chunks = (b) => Array.from({ length: Math.ceil(b.length / 7) }, (_, i) => b.subarray(i * 7, i * 7 + 7));
    (async () => {
      await pipeline(Readable.from(chunks(Buffer.from(text))), g, sink(out));
      const wide = [];
      await pipeline(Readable.from(chunks(Buffer.from(text))), t, sink(wide));
      let code = '';
      await pipeline(Readable.from([Buffer.from('x')]), filters.gunzip(), sink([])).catch((e) => { code = e.code; });
      console.log(JSON.stringify({
        backend: g.backend,
        gzip: zlib.gunzipSync(Buffer.concat(out)).toString() === text,
        utf16: Buffer.concat(wide).equals(Buffer.from(text, 'utf16le')),
        code,
      }));
    })();`;
  const r = spawnSync(process.execPath, ['-e', script], {
    env: { ...process.env, OFFTHREAD_BACKEND: 'wasm' },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop()), {
    backend: 'workers',
    gzip: true,
    utf16: true,
    code: 'ERR_FILTER_CORRUPT_DATA',
  });
});
