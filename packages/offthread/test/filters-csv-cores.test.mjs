// One CSV stream on every core (issue 32, item 4): chunks are cut after their last
// record end (quotes followed from the stream's start) and the pieces parse at once on
// the pool's threads; batches come out in order, with the rows, skipped lines and
// errors one chunk at a time gives — on the native pool and on a worker pool (wasm).
import assert from 'node:assert/strict';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import { filters, Pool } from 'offthread';

const native = new Pool({ threads: 4 });
const workers = new Pool({ engine: 'wasm', threads: 2 });
test.after(() => Promise.all([native.close(), workers.close()]));

/** A CSV with quoted newlines, CRLF, escaped quotes, blank lines, a BOM and bad rows. */
function dirtyCsv(rows) {
  const lines = ['\uFEFFid,amount,note'];
  for (let i = 0; i < rows; i++) {
    const note = ['"multi\nline"', '"say ""hi"""', 'plain', '"a,b\r\nc"', ''][i % 5];
    const amount = i % 97 === 13 ? 'oops' : i % 89 === 7 ? '' : String(i / 4);
    lines.push(`${i},${amount},${note}`);
    if (i % 50 === 0) lines.push('');
  }
  // Every other line ends in CRLF.
  return Buffer.from(lines.map((l, i) => l + (i % 2 ? '\r\n' : '\n')).join(''));
}

/** `bytes` through `filter` in `size`-byte chunks: the rows, batch count and stats. */
async function run(filter, bytes, size) {
  const chunks = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  const rows = [];
  let batches = 0;
  const sink = new Writable({
    objectMode: true,
    write(b, _e, cb) {
      batches++;
      rows.push(...b.toRows());
      cb();
    },
  });
  await pipeline(Readable.from(chunks), filter, sink);
  const { skipped, skippedLines } = filter.stats();
  return { rows, batches, skipped, skippedLines };
}

const columns = { id: 'i64', amount: 'f64?', note: 'string' };

test('a CSV stream has several chunks in flight on the native pool and on worker pools', () => {
  // Two pieces per thread: one parses while the next is cut and sent (NDJSON's too).
  assert.equal(filters.csv({ columns, pool: native }).inFlight, 8);
  assert.equal(filters.ndjson({ columns, pool: native }).inFlight, 8);
  assert.equal(filters.csv({ columns, pool: native, inFlight: 3 }).inFlight, 3);
  assert.ok(filters.csv({ pool: native }).inFlight >= 2, 'inferred columns too');
  assert.equal(filters.csv({ columns, pool: workers }).inFlight, 2);
  // A quote that is also the delimiter has no record ends to follow: one chunk at a time.
  assert.equal(filters.csv({ columns, pool: native, delimiter: ';', quote: ';' }).inFlight, 1);
});

test('pieces in parallel give the rows and skipped lines of one whole chunk, in order', async () => {
  const bytes = dirtyCsv(3000);
  const whole = await run(filters.csv({ columns, pool: native, onError: 'skip' }), bytes, bytes.length);
  assert.equal(whole.batches, 1);
  assert.equal(whole.rows.length + whole.skipped, 3000);
  assert.ok(whole.skipped > 0);
  assert.deepEqual(
    whole.rows.slice(0, 2).map((r) => r.id),
    [0n, 1n],
  );
  for (const size of [7, 333, 4096, 65536]) {
    for (const pool of [native, workers]) {
      const cut = await run(filters.csv({ columns, pool, onError: 'skip' }), bytes, size);
      assert.deepEqual(cut.rows, whole.rows, `size ${size}, ${pool.engine}`);
      assert.deepEqual(cut.skippedLines, whole.skippedLines, `size ${size}, ${pool.engine}`);
    }
  }
  const inferred = await run(filters.csv({ pool: native, onError: 'skip' }), bytes, 500);
  const inferredWhole = await run(filters.csv({ pool: native, onError: 'skip' }), bytes, bytes.length);
  assert.deepEqual(inferred.rows, inferredWhole.rows);
});

test('a bad row fails the stream with its line, wherever the pieces fall', async () => {
  const bytes = dirtyCsv(400);
  const errors = new Set();
  for (const size of [5, 100, 1000, bytes.length]) {
    await assert.rejects(run(filters.csv({ columns, pool: native }), bytes, size), (e) => {
      assert.equal(e.code, 'ERR_FILTER_BAD_RECORD');
      errors.add(e.message);
      return true;
    });
  }
  assert.equal(errors.size, 1, [...errors].join(' / '));
  assert.match([...errors][0], /line \d+/);
});
