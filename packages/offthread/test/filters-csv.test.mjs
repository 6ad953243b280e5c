// CSV record filter against csv-parse (the outside oracle): a quote left open is a
// typed error, never every later record swallowed into one field; a UTF-8 BOM is
// stripped wherever the chunks split it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { errorRegistry, filters, Pool, schema } from 'offthread';

// temperature_batch: `{ readings: []temperature_reading #soa }`, reading `{ timestamp: i64; value: f32; }`.
const COLUMNS = [
  { name: 'timestamp', type: 'i64' },
  { name: 'value', type: 'f32' },
];

async function batchesOf(chunks, options = { columns: COLUMNS }) {
  const out = [];
  const sink = new Writable({
    objectMode: true,
    write(chunk, _e, cb) {
      out.push(chunk);
      cb();
    },
  });
  await pipeline(Readable.from(chunks), filters.csv(options), sink);
  return out;
}

function rowsOf(batches) {
  const rows = [];
  for (const b of batches) {
    const r = schema.TemperatureBatchReader.fromBytes(b).readings();
    const [ts, values] = [r.timestamp(), r.value()];
    for (let i = 0; i < r.length; i++) rows.push([String(ts[i]), String(values[i])]);
  }
  return rows;
}

/** csv-parse's verdict on `text`: its records after the header, or its error code. */
function oracle(text) {
  try {
    return { rows: parse(text, { bom: true }).slice(1) };
  } catch (e) {
    return { code: e.code };
  }
}

/** `bytes` cut at `a` and `b` (empty pieces dropped: a stream never sees them). */
const cut = (bytes, a, b = a) =>
  [bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)].filter((c) => c.length);

test('a quote left open fails with ERR_FILTER_QUOTE_NOT_CLOSED, as csv-parse does, at every split', async () => {
  assert.ok('ERR_FILTER_QUOTE_NOT_CLOSED' in errorRegistry);
  const docs = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
  assert.match(docs, /`ERR_FILTER_QUOTE_NOT_CLOSED`/);
  // The case: 4 records in, and before the fix 1 out (the rest in one field).
  const text = 'timestamp,value\n1,"2\n3,4\n5,6\n7,8\n';
  assert.equal(oracle(text).code, 'CSV_QUOTE_NOT_CLOSED');
  const bytes = Buffer.from(text);
  for (let at = 0; at <= bytes.length; at++) {
    await assert.rejects(batchesOf(cut(bytes, at)), (e) => {
      assert.equal(e.code, 'ERR_FILTER_QUOTE_NOT_CLOSED', `cut at ${at}: ${e.message}`);
      assert.match(e.message, /^line 2: /);
      return true;
    });
  }
  // The same on a worker pool (offthread.wasm: browsers, Node without the addon).
  const workers = new Pool({ engine: 'wasm', threads: 1 });
  try {
    await assert.rejects(batchesOf([bytes], { columns: COLUMNS, pool: workers }), {
      code: 'ERR_FILTER_QUOTE_NOT_CLOSED',
    });
  } finally {
    await workers.close();
  }
});

test('open and closed quotes: our verdict equals csv-parse on every case, chunked anywhere', async () => {
  const cases = [
    'timestamp,value\n1,2\n"3",4\n',
    'timestamp,value\n1,"2"\n3,4',
    'timestamp,value\n"1\n',
    'timestamp,value\n"1',
    'timestamp,value\n1,2\n"',
    'timestamp,value\n1,"2\r\n3,4\r\n',
    'timestamp,value\n"1""",2\n',
    'timestamp,value\n"1"",2\n',
    'timestamp,value\n1,2\n3,"4\n"\n',
    '"timestamp",value\n"1,2\n',
  ];
  for (const text of cases) {
    const want = oracle(text);
    const bytes = Buffer.from(text);
    for (let at = 0; at <= bytes.length; at++) {
      const got = await batchesOf(cut(bytes, at)).then(
        (b) => ({ rows: rowsOf(b) }),
        (e) => ({ code: e.code }),
      );
      if (want.code === 'CSV_QUOTE_NOT_CLOSED') {
        assert.equal(got.code, 'ERR_FILTER_QUOTE_NOT_CLOSED', `${JSON.stringify(text)} cut at ${at}`);
      } else if (want.code !== undefined) {
        // csv-parse refuses more than we read: our reader must not accept it silently either.
        assert.ok(got.code, `${JSON.stringify(text)}: csv-parse says ${want.code}, we accepted it`);
      } else if (got.code === undefined) {
        assert.deepEqual(
          got.rows,
          want.rows.map(([t, v]) => [String(BigInt(t)), String(Math.fround(Number(v)))]),
          `${JSON.stringify(text)} cut at ${at}`,
        );
      }
    }
  }
});

test('a batch of more columns than its readers take is refused when the filter opens', () => {
  // The generated readers refuse a SoA table of more than 256 columns (R0005): 300
  // columns used to parse into batches nobody could read.
  const columns = (n) => Array.from({ length: n }, (_, i) => ({ name: `c${i}`, type: 'f64' }));
  assert.throws(() => filters.csv({ columns: columns(300) }), { code: 'ERR_FILTER_INVALID_SPEC', message: /R0005/ });
  assert.throws(() => filters.ndjson({ columns: columns(257) }), { code: 'ERR_FILTER_INVALID_SPEC' });
  assert.equal(filters.csv({ columns: columns(256) }).spec.columns.length, 256);
});
