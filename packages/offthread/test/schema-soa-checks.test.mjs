// Every check of the TS reader's root + SoA path (StructView.rootDynamic, soa, the SoA
// table checks, the column lookup and view), one forged field at a time, from a real
// TemperatureBatch: each must refuse with its own R code and message, before any view.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as temperature from '../dist/schema/generated/temperature.js';
import { SchemaReadError } from '../dist/schema/runtime.js';

const N = 10;
const readings = Array.from({ length: N }, (_, i) => ({ timestamp: 1_700_000_000_000 + i * 1000, value: i / 4 }));

/** A fresh encoded batch, its u32 words, and where the SoA table's parts are. */
function batch() {
  const bytes = temperature.encodeTemperatureBatch({ readings }).slice();
  const dv = new DataView(bytes.buffer);
  const ptr = dv.getUint32(4, true);
  const hashes = dv.getUint32(ptr + 12, true);
  const columns = dv.getUint32(ptr + 8, true);
  const blocks = hashes + Math.ceil((columns * 4) / 64) * 64;
  return { bytes, dv, ptr, hashes, columns, blocks };
}

/** Reads the `value` column of `bytes` and analyses it, as the bench does. */
function values(bytes, opts) {
  return temperature.TemperatureBatchReader.fromBytes(bytes, opts).readings().value();
}

function refused(fn, code, message) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof SchemaReadError, `${err}`);
    assert.equal(err.code, code);
    if (message) assert.match(err.message, message);
    return true;
  });
}

test('the untouched batch reads: the value column is a view of the message, no copy', () => {
  const { bytes } = batch();
  const v = values(bytes);
  assert.ok(v instanceof Float32Array);
  assert.equal(v.buffer, bytes.buffer);
  assert.deepEqual(
    Array.from(v),
    readings.map((r) => r.value),
  );
  assert.equal(values(bytes.subarray(0, bytes.length)).length, N);
});

test('root: a message shorter than its header word (R0001), a bad header (R0002), a struct past the end (R0001)', () => {
  refused(() => values(new Uint8Array(3)), 'R0001', /4 bytes at offset 0 reach past the end of a 3-byte buffer/);
  const { bytes, dv } = batch();
  dv.setUint32(0, 0, true); // size 0
  refused(() => values(bytes), 'R0002', /invalid dynamic struct header 0x0 at offset 0/);
  dv.setUint32(0, 1 | (5 << 29), true); // 8 bytes with 5 wasted: 3 used < 4
  refused(() => values(bytes), 'R0002');
  dv.setUint32(0, 1_000, true); // 8,000 bytes in a 448-byte message
  refused(() => values(bytes), 'R0001', /8000 bytes at offset 0/);
});

test('a root whose used bytes end before `readings` reads an empty array, not the bytes after it', () => {
  const { bytes, dv } = batch();
  dv.setUint32(0, 1 | (4 << 29), true); // 8 bytes, 4 wasted: `readings` at +4 is not there
  assert.equal(values(bytes).length, 0);
});

test('SoA array header: misaligned (R0003), past the end (R0001), count over capacity (R0004) or the buffer (R0009)', () => {
  let b = batch();
  b.dv.setUint32(4, b.ptr + 8, true);
  refused(() => values(b.bytes), 'R0003', new RegExp(`offset ${b.ptr + 8} is not 64-byte aligned`));
  b = batch();
  b.dv.setUint32(4, b.bytes.length, true); // 64-aligned, but no 16 bytes there
  refused(() => values(b.bytes), 'R0001', new RegExp(`16 bytes at offset ${b.bytes.length}`));
  b = batch();
  b.dv.setUint32(b.ptr, 11, true); // count 11, capacity 10
  refused(() => values(b.bytes), 'R0004', /array count 11 exceeds its capacity/);
  b = batch();
  b.dv.setUint32(b.ptr, 1_000, true);
  b.dv.setUint32(b.ptr + 4, 1_000, true);
  refused(() => values(b.bytes), 'R0009', /array count 1000 is larger than the/);
});

test('SoA table: too many columns (R0005), a misaligned (R0003) or cut lookup table (R0001), no columns (R0009)', () => {
  let b = batch();
  refused(() => values(b.bytes, { maxSoaColumns: 1 }), 'R0005', /SoA table has 2 columns, the limit is 1/);
  assert.equal(values(b.bytes, { maxSoaColumns: 2 }).length, N);
  b.dv.setUint32(b.ptr + 12, b.hashes + 4, true);
  refused(() => values(b.bytes), 'R0003');
  b = batch();
  b.dv.setUint32(b.ptr + 12, b.bytes.length - 64 + 64, true); // aligned, at the very end
  refused(() => values(b.bytes), 'R0001');
  b = batch();
  b.dv.setUint32(b.ptr + 12, b.bytes.length - 64, true); // hashes fit, the block offsets do not
  refused(() => values(b.bytes), 'R0001');
  b = batch();
  b.dv.setUint32(b.ptr + 8, 0, true);
  refused(() => values(b.bytes), 'R0009', /SoA count 10 with no columns/);
});

test('SoA columns: any column whose count bytes leave the message is refused (R0001), known or not', () => {
  for (let i = 0; i < 2; i++) {
    const b = batch();
    b.dv.setUint32(b.blocks + i * 4, b.bytes.length / 64, true); // starts at the end
    refused(() => values(b.bytes), 'R0001', new RegExp(`${N} bytes at offset ${b.bytes.length}`));
  }
  // The value column (f32) in a message cut 20 bytes into its last block: the table's
  // check (count bytes) passes, the view's (count × 4 bytes) refuses.
  const b = batch();
  const valueAt = [0, 1].find((i) => b.dv.getUint32(b.hashes + i * 4, true) === 0xcc687331);
  const last = b.bytes.length - 64;
  b.dv.setUint32(b.blocks + valueAt * 4, last / 64, true);
  const cut = b.bytes.subarray(0, last + 20);
  const soa = temperature.TemperatureBatchReader.fromBytes(cut).readings();
  assert.equal(soa.length, N);
  refused(
    () => soa.value(),
    'R0001',
    new RegExp(`${N * 4} bytes at offset ${last} reach past the end of a ${last + 20}-byte`),
  );
});

test('SoA depth: the table counts as one level (R0006 at maxDepth 0), a missing column reads as zeros', () => {
  const b = batch();
  refused(() => values(b.bytes, { maxDepth: 0 }), 'R0006', /nesting deeper than 0/);
  const valueAt = [0, 1].find((i) => b.dv.getUint32(b.hashes + i * 4, true) === 0xcc687331);
  b.dv.setUint32(b.hashes + valueAt * 4, 0x12345678, true);
  const v = values(b.bytes);
  assert.deepEqual(Array.from(v), new Array(N).fill(0));
  assert.notEqual(v.buffer, b.bytes.buffer);
});

test('read options are checked before any byte (ERR_INVALID_ARG) and undefined limits keep the defaults', () => {
  const { bytes } = batch();
  assert.throws(() => values(bytes, { maxDepth: -1 }), { code: 'ERR_INVALID_ARG' });
  assert.throws(() => values(bytes, 'deep'), { code: 'ERR_INVALID_ARG' });
  const reader = temperature.TemperatureBatchReader.fromBytes(bytes, { maxDepth: undefined });
  assert.equal(reader.view.msg.maxDepth, 64);
  assert.equal(reader.view.msg.maxSoaColumns, 256);
  assert.equal(reader.view.msg.maxTraversal, bytes.length * 8 + 1024);
  assert.equal(temperature.TemperatureBatchReader.fromBytes(bytes, { maxTraversal: 7 }).view.msg.maxTraversal, 7);
});
