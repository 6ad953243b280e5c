// Record batches without a schema step (issue 32, items 1–3): columns declared in JS or
// inferred from the header, batches read by column name (numbers as typed arrays over
// the batch, text by index), and dirty data — nulls with Arrow validity bitmaps,
// defaults, skipped rows counted by line, a BOM cut anywhere, CRLF, ragged rows — the
// same in CSV and NDJSON, on the native pool and on worker pools (offthread.wasm).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { errorRegistry, filters, Pool, RecordBatch, StringColumn, schema } from 'offthread';

/** Runs `text` cut into `size`-byte chunks through `filter`: its batches, and the filter. */
async function batchesOf(filter, text, size = 5) {
  const bytes = Buffer.from(text);
  const chunks = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  const out = [];
  const sink = new Writable({
    objectMode: true,
    write(b, _e, cb) {
      out.push(b);
      cb();
    },
  });
  await pipeline(Readable.from(chunks), filter, sink);
  return out;
}

const rowsOf = (batches) => batches.flatMap((b) => b.toRows());

test('declared columns: batches read by name, numbers as typed arrays over the batch, text by index', async () => {
  const csv = 'id,amount,city,ok,extra\n1,2.5,Oslo,true,x\n2,4,Rome,false,y\n3,-1.5,Oslo,true,z\n';
  const columns = { id: 'i64', amount: 'f64', city: 'string', ok: 'bool' };
  const batches = await batchesOf(filters.csv({ columns }), csv);
  assert.ok(batches.every((b) => b instanceof RecordBatch));
  assert.deepEqual(rowsOf(batches), [
    { id: 1n, amount: 2.5, city: 'Oslo', ok: true },
    { id: 2n, amount: 4, city: 'Rome', ok: false },
    { id: 3n, amount: -1.5, city: 'Oslo', ok: true },
  ]);
  const [one] = await batchesOf(filters.csv({ columns }), csv, 1 << 20);
  assert.equal(one.length, 3);
  assert.deepEqual(one.names, ['id', 'amount', 'city', 'ok']);
  assert.deepEqual(one.columns[1], { name: 'amount', type: 'f64', nullable: false });
  const amount = one.column('amount');
  assert.ok(amount instanceof Float64Array);
  // No copy: the column is a view of the batch's own bytes, 8-byte aligned (Arrow's rule).
  assert.equal(amount.buffer, one.bytes.buffer);
  assert.equal(amount.byteOffset % 8, 0);
  assert.ok(one.column('id') instanceof BigInt64Array);
  assert.deepEqual([...one.column('ok')], [1, 0, 1]);
  const city = one.column('city');
  assert.ok(city instanceof StringColumn);
  assert.equal(city.get(1), 'Rome');
  assert.deepEqual(city.toArray(), ['Oslo', 'Rome', 'Oslo']);
  assert.ok(city.offsets instanceof Uint32Array && city.offsets.buffer === one.bytes.buffer);
  assert.equal(one.column(2), city);
  assert.equal(one.strings('city'), city);
  assert.equal(one.numbers('amount'), amount);
  assert.throws(() => one.numbers('city'), { code: 'ERR_INVALID_ARG' });
  assert.throws(() => one.strings('ok'), { code: 'ERR_INVALID_ARG' });
  assert.equal(one.validity('amount'), null);
  assert.throws(() => one.column('nope'), { code: 'ERR_INVALID_ARG', message: /columns: id, amount, city, ok/ });
  // NDJSON, the same declaration.
  const nd = '{"id":1,"amount":2.5,"city":"Oslo","ok":true}\n{"ok":false,"city":"Rome","amount":4,"id":2}\n';
  assert.deepEqual(rowsOf(await batchesOf(filters.ndjson({ columns }), nd)), [
    { id: 1n, amount: 2.5, city: 'Oslo', ok: true },
    { id: 2n, amount: 4, city: 'Rome', ok: false },
  ]);
  // Bad declarations are refused when the filter is made.
  for (const bad of [
    { a: 'float' },
    { a: { type: 'f64', nullable: true, default: 1 } },
    { a: { type: 'i8', default: 300 } },
  ])
    assert.throws(() => filters.csv({ columns: bad }), { code: 'ERR_FILTER_INVALID_SPEC' });
  assert.throws(() => filters.csv({ onError: 'ignore' }), { code: 'ERR_FILTER_INVALID_SPEC' });
});

test('no columns: inferred from the header and the first rows', async () => {
  const csv = 'id, price ,name,flag\n1,2.5,a,true\n2,,b,FALSE\n3,1e3,"c,d",\n';
  for (const size of [1, 3, 7, 1 << 20]) {
    const batches = await batchesOf(filters.csv(), csv, size);
    assert.deepEqual(batches[0].columns, [
      { name: 'id', type: 'f64', nullable: true },
      { name: 'price', type: 'f64', nullable: true },
      { name: 'name', type: 'string', nullable: false },
      { name: 'flag', type: 'bool', nullable: true },
    ]);
    assert.deepEqual(rowsOf(batches), [
      { id: 1, price: 2.5, name: 'a', flag: true },
      { id: 2, price: null, name: 'b', flag: false },
      { id: 3, price: 1000, name: 'c,d', flag: null },
    ]);
  }
});

// A BOM, CRLF, header names with spaces around them, empty cells, a bad number, a
// ragged row, a quoted field across lines.
const DIRTY =
  '\uFEFF id , amount,city ,ok\r\n1,2.5,Oslo,true\r\n2,,,\r\n3,x,Rome,true\r\n4,1\r\n5, 7 ,"Li\r\nma",TRUE\r\n';
const DIRTY_COLUMNS = {
  id: 'i64',
  amount: 'f64?',
  city: { type: 'string', default: '?' },
  ok: { type: 'bool', default: false },
};
const CLEAN_ROWS = [
  { id: 1n, amount: 2.5, city: 'Oslo', ok: true },
  { id: 2n, amount: null, city: '?', ok: false },
  { id: 5n, amount: 7, city: 'Li\r\nma', ok: true },
];

test('a dirty CSV: nulls, defaults, skipped rows counted by line, a BOM cut anywhere', async () => {
  for (const size of [1, 2, 3, 4, 9, 1 << 20]) {
    const filter = filters.csv({ columns: DIRTY_COLUMNS, onError: 'skip' });
    const batches = await batchesOf(filter, DIRTY, size);
    assert.deepEqual(rowsOf(batches), CLEAN_ROWS, `chunks of ${size}`);
    const stats = filter.stats();
    assert.deepEqual(
      { skipped: stats.skipped, skippedLines: stats.skippedLines, rows: stats.rows },
      {
        skipped: 2,
        skippedLines: [4, 5],
        rows: 3,
      },
    );
  }
  // Failing (the default): the first bad row's line, a registry code.
  await assert.rejects(batchesOf(filters.csv({ columns: DIRTY_COLUMNS }), DIRTY), {
    code: 'ERR_FILTER_BAD_RECORD',
    message: 'line 4: column "amount": "x" is not a f64',
  });
  await assert.rejects(batchesOf(filters.csv({ columns: DIRTY_COLUMNS }), 'id,amount,city,ok\n1,,a,true\n2,1\n'), {
    code: 'ERR_FILTER_BAD_RECORD',
    message: 'line 3: 2 fields, expected 4',
  });
  assert.ok('ERR_FILTER_BAD_RECORD' in errorRegistry);
});

test('NDJSON follows the same rules: null and missing keys, defaults, skipped lines, a BOM', async () => {
  const nd =
    '\uFEFF{"id":1,"amount":2.5,"city":"Oslo","ok":true}\r\n' +
    '{"id":2,"amount":null}\n' +
    '{"id":3,"amount":"x"}\n' +
    'not json\n' +
    '{"id":5,"amount":7,"city":"Li\\r\\nma","ok":true}\n';
  for (const size of [1, 3, 1 << 20]) {
    const filter = filters.ndjson({ columns: DIRTY_COLUMNS, onError: 'skip' });
    assert.deepEqual(rowsOf(await batchesOf(filter, nd, size)), CLEAN_ROWS);
    assert.deepEqual(filter.stats().skippedLines, [3, 4]);
    assert.equal(filter.stats().skipped, 2);
  }
});

test('a nullable column carries an Arrow validity bitmap over the batch (LSB first, 1 = valid)', async () => {
  const lines = ['k,v'];
  for (let i = 0; i < 11; i++) lines.push(`${i},${i % 3 === 0 ? '' : i}`);
  const [batch] = await batchesOf(filters.csv({ columns: { v: 'i32?' } }), `${lines.join('\n')}\n`, 1 << 20);
  const bits = batch.validity('v');
  assert.equal(bits.length, 2);
  assert.deepEqual([...bits], [0b1011_0110, 0b0000_0101]);
  assert.equal(bits.buffer, batch.bytes.buffer);
  assert.equal(batch.isValid('v', 0), false);
  assert.equal(batch.isValid('v', 1), true);
  assert.deepEqual([...batch.column('v')], [0, 1, 2, 0, 4, 5, 0, 7, 8, 0, 10]);
});

test('filters.web.csv (a TransformStream) emits the same RecordBatch objects', async () => {
  const stream = filters.web.csv({ columns: DIRTY_COLUMNS, onError: 'skip' });
  const writer = stream.writable.getWriter();
  const bytes = Buffer.from(DIRTY);
  const writing = (async () => {
    for (let i = 0; i < bytes.length; i += 3) await writer.write(bytes.subarray(i, i + 3));
    await writer.close();
  })();
  const batches = [];
  for await (const b of stream.readable) batches.push(b);
  await writing;
  assert.ok(batches.every((b) => b instanceof RecordBatch));
  assert.deepEqual(rowsOf(batches), CLEAN_ROWS);
});

test('on a worker pool (offthread.wasm) the same batches and counts', async () => {
  const pool = new Pool({ engine: 'wasm', threads: 1 });
  try {
    const filter = filters.csv({ columns: DIRTY_COLUMNS, onError: 'skip', pool });
    assert.deepEqual(rowsOf(await batchesOf(filter, DIRTY, 4)), CLEAN_ROWS);
    assert.deepEqual(filter.stats().skippedLines, [4, 5]);
    const nd = filters.ndjson({ columns: { a: 'f64?' }, pool });
    assert.deepEqual(rowsOf(await batchesOf(nd, '{"a":1}\n{}\n{"a":null}\n', 3)), [{ a: 1 }, { a: null }, { a: null }]);
  } finally {
    await pool.close();
  }
});

test('the .km route: a column list that disagrees with the schema is refused; dirty-data options apply', async () => {
  const Batch = schema.TemperatureBatchReader; // { readings: []{ timestamp: i64; value: f32 } #soa }
  // Declared in JS next to a schema: checked by name and type when the filter is made.
  for (const make of [filters.csv, filters.ndjson]) {
    assert.throws(() => make({ schema: Batch, columns: { timestamp: 'f64', value: 'f32' } }), {
      code: 'ERR_FILTER_INVALID_SPEC',
      message: /column "timestamp" is f64, but field "timestamp" of the row struct is i64/,
    });
    assert.throws(() => make({ schema: Batch, columns: { timestamp: 'i64', amount: 'f32' } }), {
      code: 'ERR_FILTER_INVALID_SPEC',
      message: /no field "amount"/,
    });
    // A schema's fields have no nulls: a default instead.
    assert.throws(() => make({ schema: Batch, columns: { timestamp: 'i64', value: 'f32?' } }), {
      code: 'ERR_FILTER_INVALID_SPEC',
    });
  }
  // Another order is read right (matched by name); skip and defaults work on the .km route.
  const filter = filters.csv({
    schema: Batch,
    columns: { value: { type: 'f32', default: -1 }, timestamp: 'i64' },
    onError: 'skip',
  });
  const batches = await batchesOf(filter, 'value,timestamp\n2.5,1\n,2\nbad,3\n', 4);
  const rows = batches.flatMap((b) => {
    const r = Batch.fromBytes(b).readings();
    const [t, v] = [r.timestamp(), r.value()];
    return Array.from({ length: r.length }, (_, i) => [t[i], v[i]]);
  });
  assert.deepEqual(rows, [
    [1n, 2.5],
    [2n, -1],
  ]);
  assert.deepEqual(filter.stats().skippedLines, [4]);
});

test("the README's CSV example runs as written: an average and a per-value count, no schema file", () => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('### Stream filters'), readme.indexOf('### Schemas and record batches'));
  const code = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).find((c) => c.includes('sales.csv'));
  assert.ok(code, 'the Stream filters section has the sales.csv example');
  assert.ok(code.trim().split('\n').length <= 8, `the example is ${code.trim().split('\n').length} lines`);
  assert.doesNotMatch(code, /schema/);
  const dir = mkdtempSync(join(tmpdir(), 'offthread-readme-'));
  try {
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(fileURLToPath(new URL('../', import.meta.url)), join(dir, 'node_modules', 'offthread'), 'dir');
    writeFileSync(join(dir, 'example.mjs'), code);
    const sales = 'id,amount,city\n1,10,Oslo\n2,20,Rome\n3,,Oslo\n4,30,Oslo\n';
    const out = execFileSync(process.execPath, ['example.mjs'], { cwd: dir, encoding: 'utf8', input: sales });
    // Average over the rows (the empty amount is a null, read as 0): 60 / 4.
    assert.equal(out.trim(), "15 Map(2) { 'Oslo' => 3, 'Rome' => 1 }");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
