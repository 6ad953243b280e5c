// offthread/arrow: record batches (CSV, NDJSON) as apache-arrow RecordBatches, Tables
// and IPC bytes. Every column type the filters produce round-trips (nulls included), and
// numbers, validity bitmaps and text are the batch's own memory (no copy).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import * as arrow from 'apache-arrow';
import { filters, StringColumn } from 'offthread';
import { arrowSchema, stringsToArrow, toArrow, toArrowIPC, toArrowTable } from 'offthread/arrow';

async function batchesOf(filter, text, size) {
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

// Every type, and nullable ones (empty cells are nulls).
const COLUMNS = {
  b: 'bool',
  i8: 'i8',
  i16: 'i16',
  i32: 'i32',
  i64: 'i64',
  u8: 'u8',
  u16: 'u16',
  u32: 'u32',
  u64: 'u64',
  f32: 'f32',
  f64: 'f64',
  s: 'string',
  nb: 'bool?',
  ni: 'i32?',
  nl: 'i64?',
  nf: 'f64?',
  ns: 'string?',
};
const HEADER = Object.keys(COLUMNS).join(',');
const row = (i) =>
  [
    i % 3 === 0 ? 'true' : 'false',
    i % 2 ? -128 : 127,
    -(i % 100) * 300,
    i * 70000 - 2 ** 31 + (i === 0 ? 0 : 1),
    i === 1 ? '-9223372036854775808' : i === 2 ? '9223372036854775807' : String(i * 1e12),
    i % 256,
    65535 - i,
    i === 3 ? 4294967295 : i,
    i === 4 ? '18446744073709551615' : String(i),
    i + 0.5,
    -i / 10,
    i % 4 === 0 ? '"Zürich, CH"' : i % 4 === 1 ? '' : `name ${i} ✓`,
    i % 5 === 0 ? '' : i % 2 ? 'TRUE' : 'false',
    i % 3 === 0 ? '' : -i,
    i % 4 === 2 ? '' : String(-i * 2 ** 40),
    i % 2 ? '' : i * 1.25,
    i % 3 === 1 ? '' : `ω${i}`,
  ].join(',');
const N = 200;
const ROWS = Array.from({ length: N }, (_, i) => row(i));
const CSV = `${HEADER}\n${ROWS.join('\n')}\n`;

/**
 * Batches of several streams of the same columns (`text(lines)` makes each one's input):
 * a stream's chunks may be coalesced into one batch (Node 22's larger buffers do), so
 * several batches come from several streams.
 */
async function batchesInParts(makeFilter, lines, text, parts = 4) {
  const out = [];
  const per = Math.ceil(lines.length / parts);
  for (let i = 0; i < lines.length; i += per)
    out.push(...(await batchesOf(makeFilter(), text(lines.slice(i, i + per)), 997)));
  return out;
}
const csvOf = (lines) => `${HEADER}\n${lines.join('\n')}\n`;

/** Every value of `table` (an apache-arrow Table or RecordBatch) as rows of plain values. */
function arrowRows(t) {
  const names = t.schema.fields.map((f) => f.name);
  const cols = names.map((n) => t.getChild(n));
  return Array.from({ length: t.numRows }, (_, i) => Object.fromEntries(names.map((n, k) => [n, cols[k].get(i)])));
}

test('every column type round-trips CSV → batches → Arrow, nulls included; schema follows the columns', async () => {
  const batches = await batchesInParts(() => filters.csv({ columns: COLUMNS }), ROWS, csvOf);
  assert.ok(batches.length >= 4, `several batches (${batches.length})`);
  const expected = batches.flatMap((b) => b.toRows());
  assert.equal(expected.length, N);
  assert.equal(expected[1].i64, -(2n ** 63n));
  assert.equal(expected[4].u64, 2n ** 64n - 1n);
  assert.equal(expected[0].nb, null);
  for (const b of batches) assert.deepEqual(arrowRows(toArrow(b)), b.toRows());
  const table = toArrowTable(batches);
  assert.ok(table instanceof arrow.Table);
  assert.equal(table.batches.length, batches.length);
  assert.deepEqual(arrowRows(table), expected);
  const types = Object.fromEntries(table.schema.fields.map((f) => [f.name, [String(f.type), f.nullable]]));
  assert.deepEqual(types, {
    b: ['Bool', false],
    i8: ['Int8', false],
    i16: ['Int16', false],
    i32: ['Int32', false],
    i64: ['Int64', false],
    u8: ['Uint8', false],
    u16: ['Uint16', false],
    u32: ['Uint32', false],
    u64: ['Uint64', false],
    f32: ['Float32', false],
    f64: ['Float64', false],
    s: ['Utf8', false],
    nb: ['Bool', true],
    ni: ['Int32', true],
    nl: ['Int64', true],
    nf: ['Float64', true],
    ns: ['Utf8', true],
  });
  assert.deepEqual(arrowSchema(batches[0].columns).fields.map(String), table.schema.fields.map(String));
  // Null counts are Arrow's own (from the bitmaps).
  assert.equal(table.getChild('nf').nullCount, expected.filter((r) => r.nf === null).length);
  assert.equal(table.getChild('ns').nullCount, expected.filter((r) => r.ns === null).length);
  assert.equal(table.getChild('s').nullCount, 0);
});

test('numbers, validity bitmaps and text are the batch’s memory: zero copy', async () => {
  const [batch] = await batchesOf(filters.csv({ columns: COLUMNS }), CSV, 1 << 20);
  assert.equal(batch.length, N);
  const rb = toArrow(batch);
  const same = (view, of, what) => {
    assert.equal(view.buffer, batch.bytes.buffer, `${what}: the batch's ArrayBuffer`);
    assert.equal(view.byteOffset, of.byteOffset, `${what}: at the batch's byteOffset`);
    assert.equal(view.length, of.length, `${what}: the batch's length`);
  };
  for (const { name, type, nullable } of batch.columns) {
    const [data] = rb.getChild(name).data;
    assert.equal(rb.getChild(name).data.length, 1);
    if (type === 'string') {
      const col = batch.strings(name);
      same(data.valueOffsets, col.offsets, `${name} offsets`);
      assert.ok(data.valueOffsets instanceof Int32Array);
      same(data.values, col.bytes, `${name} bytes`);
    } else if (type !== 'bool') {
      same(data.values, batch.numbers(name), name);
      assert.equal(data.values.constructor, batch.numbers(name).constructor);
    }
    if (nullable) same(data.nullBitmap, batch.validity(name), `${name} validity`);
  }
  // And so a write to the batch's column shows in Arrow (and back).
  batch.numbers('f64')[7] = 4242.5;
  assert.equal(rb.getChild('f64').get(7), 4242.5);
  batch.numbers('i64')[3] = 99n;
  assert.equal(rb.getChild('i64').get(3), 99n);
  // bool is the one copy: Arrow packs bits, the batch holds a byte per value.
  const bools = rb.getChild('b').data[0].values;
  assert.notEqual(bools.buffer, batch.bytes.buffer);
  assert.equal(bools.length, Math.ceil(N / 8));
});

test('IPC stream bytes read back with tableFromIPC; a stream converts as it comes (Table, IPC)', async () => {
  const batches = await batchesInParts(() => filters.csv({ columns: COLUMNS }), ROWS, csvOf, 3);
  const expected = batches.flatMap((b) => b.toRows());
  const bytes = toArrowIPC(batches);
  assert.ok(bytes instanceof Uint8Array);
  const back = arrow.tableFromIPC(bytes);
  assert.equal(back.batches.length, batches.length);
  assert.deepEqual(arrowRows(back), expected);
  assert.deepEqual(back.schema.fields.map(String), toArrowTable(batches).schema.fields.map(String));
  // Straight from a filter stream (async iterable): Promises.
  const chunks = (size) => {
    const all = Buffer.from(CSV);
    return Readable.from(
      Array.from({ length: Math.ceil(all.length / size) }, (_, i) => all.subarray(i * size, (i + 1) * size)),
    );
  };
  const table = await toArrowTable(chunks(2000).pipe(filters.csv({ columns: COLUMNS })));
  assert.deepEqual(arrowRows(table), expected);
  const ipc = await toArrowIPC(chunks(3000).pipe(filters.csv({ columns: COLUMNS })));
  assert.deepEqual(arrowRows(arrow.tableFromIPC(ipc)), expected);
  // Inferred columns (no declaration) too: bool / f64 nullable, text.
  const inferred = await toArrowTable(
    Readable.from([Buffer.from('a,b,c\n1.5,x,true\n,y,\n3,z,false\n')]).pipe(filters.csv()),
  );
  assert.deepEqual(arrowRows(inferred), [
    { a: 1.5, b: 'x', c: true },
    { a: null, b: 'y', c: null },
    { a: 3, b: 'z', c: false },
  ]);
  // No batches: an empty Table (no columns to take a schema from).
  assert.equal(toArrowTable([]).numRows, 0);
});

test('a batch from NDJSON converts the same way', async () => {
  const columns = { id: 'u32', v: 'f32?', big: 'u64', name: 'string?', ok: 'bool?' };
  const lines = Array.from({ length: 50 }, (_, i) =>
    JSON.stringify({
      id: i,
      ...(i % 3 ? { v: i / 4 } : {}),
      big: i === 7 ? '18446744073709551615' : i,
      name: i % 4 ? `n${i}` : null,
      ok: i % 5 ? i % 2 === 0 : null,
      skip: { nested: [i] },
    }).replace('"18446744073709551615"', '18446744073709551615'),
  );
  const batches = await batchesInParts(
    () => filters.ndjson({ columns }),
    lines,
    (part) => `${part.join('\n')}\n`,
    2,
  );
  assert.ok(batches.length >= 2);
  const table = toArrowTable(batches);
  const expected = batches.flatMap((b) => b.toRows());
  assert.equal(expected[7].big, 2n ** 64n - 1n);
  assert.equal(expected[0].v, null);
  assert.deepEqual(arrowRows(table), expected);
  assert.deepEqual(arrowRows(arrow.tableFromIPC(toArrowIPC(batches))), expected);
  const [data] = toArrow(batches[0]).getChild('v').data;
  assert.equal(data.values.buffer, batches[0].bytes.buffer);
  assert.equal(data.nullBitmap.buffer, batches[0].bytes.buffer);
});

test('text past int32 offsets is refused (ERR_INVALID_ARG); below, offsets are reinterpreted', () => {
  const big = new StringColumn(Uint32Array.of(0, 2 ** 31), new Uint8Array(0), null);
  assert.throws(() => stringsToArrow(big), { code: 'ERR_INVALID_ARG', message: /int32/ });
  const ok = new StringColumn(Uint32Array.of(0, 2, 5), new TextEncoder().encode('hiabc'), Uint8Array.of(0b10));
  const data = stringsToArrow(ok, Uint8Array.of(0b10));
  assert.deepEqual([...arrow.makeVector(data)], [null, 'abc']);
  assert.equal(data.valueOffsets.buffer, ok.offsets.buffer);
});

test('require and import each get the caller’s own apache-arrow build', async () => {
  const require = createRequire(import.meta.url);
  const cjs = require('offthread/arrow');
  const cjsArrow = require('apache-arrow');
  const batches = await batchesOf(filters.csv({ columns: { x: 'f64?' } }), 'x\n1\n\n2\n', 100);
  const rb = cjs.toArrow(batches[0]);
  assert.ok(rb instanceof cjsArrow.RecordBatch);
  assert.deepEqual(new cjsArrow.Table([rb]).getChild('x').toJSON(), [1, 2]);
  assert.equal(Object.getPrototypeOf(rb), cjsArrow.RecordBatch.prototype);
  // And `import` gets apache-arrow's ESM build, the importer's own copy (not a second one).
  assert.equal(Object.getPrototypeOf(toArrow(batches[0])), arrow.RecordBatch.prototype);
  assert.notEqual(arrow.RecordBatch, cjsArrow.RecordBatch);
  assert.equal(new arrow.Table([toArrow(batches[0])]).numRows, 2);
});
