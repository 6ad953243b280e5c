// NDJSON without `columns` (issue 32): the columns are inferred from the keys of the
// first `inferRows` lines, with CSV's option and rules (bool / f64 / string), every
// inferred column nullable, and keys holding objects, arrays or two kinds of values
// left out — the same columns and rows however the stream is cut, on the native pool
// and on a worker pool (docs/streams.md, "No columns, NDJSON").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { filters, Pool, RecordBatch } from 'offthread';
import { outputs } from './stream-outputs.mjs';

async function run(filter, text, size) {
  const bytes = Buffer.from(text);
  const chunks = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return outputs(filter, chunks);
}

// Mixed kinds, nulls, missing keys, nested values, a duplicate key, a BOM, CRLF, a
// blank line, a line that is no object, an escaped key.
const TEXT =
  '\uFEFF{"id":1,"name":"a","ok":true,"meta":{"x":[1,{"y":2}]},"mixed":1,"tags":[]}\r\n' +
  '\n' +
  '{"name":null,"id":2.5,"mixed":"one","n\\u0061me2":"z"}\n' +
  '[1,2]\n' +
  '{"ok":false,"id":-3e2,"name":"c\\u00e9","ok":null}\n' +
  '{"id":4}\n' +
  '{"id":5,"name":"e","late":1}\n';

const COLUMNS = [
  { name: 'id', type: 'f64', nullable: true },
  { name: 'name', type: 'string', nullable: true },
  { name: 'ok', type: 'bool', nullable: true },
  { name: 'name2', type: 'string', nullable: true },
];

const ROWS = [
  { id: 1, name: 'a', ok: true, name2: null },
  { id: 2.5, name: null, ok: null, name2: 'z' },
  { id: -300, name: 'cé', ok: null, name2: null },
  { id: 4, name: null, ok: null, name2: null },
  { id: 5, name: 'e', ok: null, name2: null },
];

test('no columns: typed from the first lines — mixed, nullable, missing and nested keys', async () => {
  for (const size of [1, 2, 5, 17, 1 << 20]) {
    const filter = filters.ndjson({ onError: 'skip', inferRows: 5 });
    const batches = await run(filter, TEXT, size);
    assert.ok(batches.every((b) => b instanceof RecordBatch));
    assert.deepEqual(batches[0].columns, COLUMNS, `chunks of ${size}`);
    assert.deepEqual(
      batches.flatMap((b) => b.toRows()),
      ROWS,
      `chunks of ${size}`,
    );
    // The line that is no object is a bad row (skipped here), by its line in the stream.
    assert.deepEqual(filter.stats(), { rows: 5, batches: batches.length, skipped: 1, skippedLines: [4] });
    // Numbers are read as typed arrays over the batch, nulls in Arrow's validity bitmap.
    const last = batches.at(-1);
    assert.ok(last.column('id') instanceof Float64Array);
    assert.equal(last.isValid('ok', last.length - 1), false);
  }
});

test('a key is typed from the sample only: a later value of another kind is a bad row', async () => {
  // inferRows 1: "a" is f64 from line 1; line 2's string does not fit.
  await assert.rejects(run(filters.ndjson({ inferRows: 1 }), '{"a":1}\n{"a":"x"}\n', 3), {
    code: 'ERR_FILTER_BAD_RECORD',
    message: 'line 2: column "a": "x" is not a number',
  });
  // Both lines in the sample (the default 100): "a" holds two kinds, so it is no column.
  const [batch] = await run(filters.ndjson(), '{"a":1,"b":true}\n{"a":"x","b":false}\n', 1 << 20);
  assert.deepEqual(batch.names, ['b']);
  assert.deepEqual(batch.toRows(), [{ b: true }, { b: false }]);
  // A key seen only as null is text; a key first seen after the sample is no column.
  const rows = (await run(filters.ndjson({ inferRows: 2 }), '{"a":null}\n{}\n{"a":"s","z":1}\n', 4)).flatMap((b) =>
    b.toRows(),
  );
  assert.deepEqual(rows, [{ a: null }, { a: null }, { a: 's' }]);
});

test('inferRows is checked as for CSV; a schema layout still needs its columns', () => {
  for (const inferRows of [0, -1, 1.5, 100_001, '3'])
    assert.throws(() => filters.ndjson({ inferRows }), { code: 'ERR_FILTER_INVALID_SPEC' }, String(inferRows));
  assert.doesNotThrow(() => filters.ndjson({ inferRows: 100_000 }).destroy());
  assert.doesNotThrow(() => filters.ndjson().destroy());
  // A column array is the schema layout: it is the columns, and none is no batch.
  assert.throws(() => filters.ndjson({ columns: [] }), { code: 'ERR_FILTER_INVALID_SPEC' });
});

test('inferred NDJSON on a worker pool (offthread.wasm): the same columns and rows', async () => {
  const pool = new Pool({ engine: 'wasm', threads: 1 });
  try {
    const filter = filters.ndjson({ onError: 'skip', inferRows: 5, pool });
    const batches = await run(filter, TEXT, 7);
    assert.deepEqual(batches[0].columns, COLUMNS);
    assert.deepEqual(
      batches.flatMap((b) => b.toRows()),
      ROWS,
    );
    assert.deepEqual(filter.stats().skippedLines, [4]);
  } finally {
    await pool.close();
  }
});

test('a long stream: the sample is held once, then pieces parse in parallel with its columns', async () => {
  const lines = [];
  for (let i = 0; i < 20_000; i++)
    lines.push(JSON.stringify({ i, even: i % 2 === 0, s: `v${i}`, maybe: i % 3 ? i : null }));
  const filter = filters.ndjson();
  const batches = await run(filter, `${lines.join('\n')}\n`, 4096);
  // How many batches depends on how `_writev` gathers the 4 KiB chunks while the pool
  // is busy (10 to 13 seen on Node 24 and 26); that the stream was cut into pieces
  // and no piece held most of it does not.
  assert.ok(batches.length >= 5, `${batches.length} batches`);
  assert.ok(Math.max(...batches.map((b) => b.length)) < 20_000 / 4);
  for (const b of batches) assert.deepEqual(b.names, ['i', 'even', 's', 'maybe']);
  let sum = 0;
  let nulls = 0;
  for (const b of batches) {
    for (const x of b.column('i')) sum += x;
    for (let r = 0; r < b.length; r++) if (!b.isValid('maybe', r)) nulls++;
  }
  assert.equal(sum, (20_000 * 19_999) / 2);
  assert.equal(nulls, Math.ceil(20_000 / 3));
  assert.equal(filter.stats().rows, 20_000);
});
