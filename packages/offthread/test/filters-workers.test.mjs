// Stream filters on a worker pool (engine 'wasm': what browsers and Node without the
// addon run): each stream's filter lives in one worker and every step goes there in
// order. Output equal to the native pool's and to Node's own; streams spread over the
// workers; a chunk is copied, never taken from its caller; a replaced worker fails its
// streams with ERR_FILTER_CLOSED instead of starting them over.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { after, test } from 'node:test';
import zlib from 'node:zlib';
import { filters, Pool } from 'offthread';
import { outputs } from './stream-outputs.mjs';

const TEXT = 'ascii, é ü ß, € 日本語, 𝄞 😀; '.repeat(3000);
const BYTES = Buffer.from(TEXT);
const workers = new Pool({ engine: 'wasm', threads: 2 });
after(() => workers.close());

function chunked(bytes, size) {
  const out = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

const run = outputs;
const bytesOf = async (filter, chunks) => Buffer.concat(await run(filter, chunks));

/** Runs `body` with a pool of one wasm worker (every stream on it), closed afterwards. */
async function withOneWorker(body) {
  const one = new Pool({ engine: 'wasm', threads: 1 });
  try {
    await body(one);
  } finally {
    await one.close();
  }
}

test('every filter gives the native pool’s bytes, on the workers', async () => {
  const completed = workers.stats().completed;
  const cases = [
    ['transcode utf8 → utf16le', () => filters.transcode('utf8', 'utf16le', { pool: workers }), BYTES],
    [
      'transcode utf16le → utf8',
      () => filters.transcode('utf16le', 'utf8', { pool: workers }),
      Buffer.from(TEXT, 'utf16le'),
    ],
    ['validateUtf8', () => filters.validateUtf8({ pool: workers }), BYTES],
    ['gzip', () => filters.gzip({ pool: workers, level: 6 }), BYTES],
    ['gunzip', () => filters.gunzip({ pool: workers }), zlib.gzipSync(BYTES)],
    ['sha256', () => filters.sha256({ pool: workers }), BYTES],
    ['md5', () => filters.md5({ pool: workers }), BYTES],
  ];
  for (const [name, make, input] of cases) {
    const t = make();
    assert.equal(t.backend, 'workers', name);
    // Odd sizes split UTF-8 and UTF-16 sequences between chunks.
    const ours = await bytesOf(t, chunked(input, 4093));
    const native = await bytesOf(new filters.FilterTransform(t.spec), chunked(input, 4093));
    assert.ok(ours.equals(native), `${name}: the workers' bytes differ from the native pool's`);
  }
  assert.equal(zlib.gunzipSync(await bytesOf(filters.gzip({ pool: workers }), chunked(BYTES, 1000))).toString(), TEXT);
  assert.equal(
    (await bytesOf(filters.sha256({ pool: workers }), chunked(BYTES, 777))).toString('hex'),
    createHash('sha256').update(BYTES).digest('hex'),
  );
  // open + every push + finish ran as tasks on the pool, none on this thread.
  assert.ok(workers.stats().completed - completed >= 7 * 3 + Math.ceil(BYTES.length / 4093));
});

// Batches hold the rows of the pushes they came from, so where one ends depends on how
// the stream joined its chunks (`_writev`: up to its highWaterMark, 16 KiB on Node 20,
// 64 KiB from 22) and on the native pool gathering chunks while it is busy. The rows,
// their order and their values are the same on every backend.
test('record batches on the workers hold the native pool’s rows, in order', async () => {
  const columns = { id: 'u32', name: 'string' };
  const rows = Array.from({ length: 5000 }, (_, i) => `${i},"name ""${i}"", with comma"`).join('\r\n');
  const csv = Buffer.from(`id,name\r\n${rows}\r\n`);
  // Small chunks (joined by the stream) and a file's 64 KiB reads (gathered when busy).
  for (const size of [999, 64 * 1024]) {
    const ours = await run(filters.csv({ columns, pool: workers }), chunked(csv, size));
    const native = await run(filters.csv({ columns }), chunked(csv, size));
    assert.ok(ours.length > 0);
    const flat = (batches) => JSON.stringify(batches.flatMap((b) => b.toRows()));
    const expected = JSON.stringify(
      Array.from({ length: 5000 }, (_, i) => ({ id: i, name: `name "${i}", with comma` })),
    );
    // Strings compared with ===: a failure names the sizes, not a 300 KB diff.
    assert.ok(flat(ours) === expected, `${size}-byte chunks: the workers' rows differ`);
    assert.ok(flat(native) === expected, `${size}-byte chunks: the native pool's rows differ`);
  }
});

test('streams at once each keep their own state, spread over the workers, in order', async () => {
  const inputs = [0, 1, 2, 3, 4].map((i) => Buffer.from(`${i}: ${TEXT}`));
  const outs = await Promise.all(inputs.map((b) => bytesOf(filters.gzip({ pool: workers }), chunked(b, 2000))));
  for (const [i, out] of outs.entries())
    assert.ok(zlib.gunzipSync(out).equals(inputs[i] ?? Buffer.alloc(0)), `stream ${i}`);
});

test('a chunk is copied: its buffer stays with the caller, and a view sends only its bytes', async () => {
  const big = Buffer.from(`xx${TEXT}yy`);
  const view = big.subarray(2, big.length - 2);
  const t = filters.transcode('utf8', 'utf16le', { pool: workers });
  const out = await bytesOf(t, [view]);
  assert.ok(out.equals(Buffer.from(TEXT, 'utf16le')));
  assert.ok(big.buffer.byteLength > 0, 'the caller’s buffer was not transferred (detached)');
  assert.equal(big.toString(), `xx${TEXT}yy`);
});

test('a bad spec throws at once, bad input fails the stream with its code', async () => {
  assert.throws(() => filters.gzip({ pool: workers, level: 42 }), { code: 'ERR_FILTER_INVALID_SPEC' });
  await assert.rejects(bytesOf(filters.gunzip({ pool: workers }), [Buffer.from('not gzip')]), {
    code: 'ERR_FILTER_CORRUPT_DATA',
  });
  await assert.rejects(bytesOf(filters.validateUtf8({ pool: workers }), [Buffer.from([0x61, 0xff])]), {
    code: 'ERR_FILTER_INVALID_UTF8',
  });
});

test('a worker replaced mid-stream fails its stream with ERR_FILTER_CLOSED, never restarts it', () =>
  withOneWorker(async (one) => {
    const g = filters.gzip({ pool: one });
    const out = [];
    g.on('data', (c) => out.push(c));
    const failed = new Promise((resolve) => g.on('error', resolve));
    await new Promise((resolve, reject) => g.write(BYTES.subarray(0, 5000), (e) => (e ? reject(e) : resolve())));
    await one.echo(0); // queued behind the open and the push: both have run
    // The next task sent to the worker crashes it; a new worker takes its place.
    one._engine.crashNextTask();
    await assert.rejects(one.echo(1), { code: 'ERR_KERNEL_PANIC' });
    g.end(BYTES.subarray(5000, 10_000));
    const err = await failed;
    assert.equal(err.code, 'ERR_FILTER_CLOSED');
    assert.equal(await one.echo(7), 7, 'the pool goes on');
  }));

// A regression here would leave b waiting forever: the timeout makes it a failure.
test(
  'a crash loses only the stream it hit: steps queued behind it run on the new worker',
  {
    timeout: 30_000,
  },
  () =>
    withOneWorker(async (one) => {
      const a = filters.gzip({ pool: one });
      a.on('data', () => {});
      const aFailed = new Promise((resolve) => a.on('error', resolve));
      await new Promise((resolve, reject) => a.write(BYTES.subarray(0, 5000), (e) => (e ? reject(e) : resolve())));
      await one.echo(0); // a's open and first push have run
      one._engine.crashNextTask(); // a's next step crashes its worker
      a.end(BYTES.subarray(5000, 10_000));
      // b's steps are queued before the crash is seen: they never ran, so they must run
      // on the new worker, and b must come out whole.
      const b = bytesOf(filters.gzip({ pool: one }), chunked(BYTES, 3000));
      assert.equal((await aFailed).code, 'ERR_KERNEL_PANIC');
      assert.equal(zlib.gunzipSync(await b).toString(), TEXT);
      assert.equal(one.stats().crashed, 1);
    }),
);

test('a destroyed stream frees its filter in the worker', () =>
  withOneWorker(async (one) => {
    const t = filters.gzip({ pool: one });
    await new Promise((resolve) => t.write(BYTES, resolve));
    await one.echo(0); // queued behind the open and the push: both have run
    const before = one.stats().completed;
    t.destroy();
    await one.close(); // settles once the close step has run
    assert.equal(one.stats().completed, before + 1, 'one close step ran on the worker');
    assert.equal(one.stats().failed, 0);
  }));

test('a web stream cancelled or aborted frees its filter in the worker at once', () =>
  withOneWorker(async (one) => {
    const cancelled = filters.web.gzip({ pool: one });
    const aborted = filters.web.gzip({ pool: one });
    for (const s of [cancelled, aborted]) {
      const w = s.writable.getWriter();
      await w.write(new Uint8Array(5000));
      w.releaseLock();
    }
    await one.echo(0); // both opens and pushes have run
    const before = one.stats().completed;
    await cancelled.readable.cancel('reader left');
    await aborted.writable.abort(new Error('writer failed'));
    await one.echo(0); // queued behind the close steps
    assert.equal(one.stats().completed - before, 3, 'two close steps and the echo');
    assert.equal(one.stats().failed, 0);
  }));

test('a stream dropped without an end or a close frees its filter in the worker once collected', () => {
  // A child with --expose-gc: the stream is written to, then dropped; each round collects
  // and yields until the close step has run (bounded: 100 rounds).
  const script = `
    const { filters, Pool } = require('offthread');
    const one = new Pool({ engine: 'wasm', threads: 1 });
    (async () => {
      await (async () => {
        const t = filters.web.gzip({ pool: one });
        const w = t.writable.getWriter();
        await w.write(new Uint8Array(5000));
        await one.echo(0); // the open and the push have run
      })();
      const before = one.stats().completed;
      let rounds = 0;
      while (one.stats().completed === before && rounds++ < 100) {
        globalThis.gc();
        await new Promise((r) => setTimeout(r, 10));
      }
      console.log(JSON.stringify({ closes: one.stats().completed - before, failed: one.stats().failed }));
      await one.close();
    })();`;
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop()), { closes: 1, failed: 0 });
});

test('a stream dropped without an end or a close frees its in-place filter once collected', () => {
  // A pool on the pure-JS tier runs filters on this thread's offthread.wasm; without the
  // registration the dropped stream's filter stays in that instance for the thread's life.
  const script = `
    const { filters, Pool } = require('offthread');
    const { WasmFilter } = require(require.resolve('offthread').replace(/index\\.js$/, 'kernels/wasm-filter.js'));
    let frees = 0;
    const free = WasmFilter.prototype.free;
    WasmFilter.prototype.free = function () {
      frees++;
      return free.call(this);
    };
    const js = new Pool({ engine: 'js', threads: 1 });
    (async () => {
      let backend;
      await (async () => {
        const t = filters.gzip({ pool: js });
        backend = t.backend;
        await new Promise((r) => t.write(new Uint8Array(5000), r));
      })();
      let rounds = 0;
      while (frees === 0 && rounds++ < 100) {
        globalThis.gc();
        await new Promise((r) => setTimeout(r, 10));
      }
      console.log(JSON.stringify({ backend, frees }));
      await js.close();
    })();`;
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop()), { backend: 'wasm', frees: 1 });
});
