// Variable-length SoA columns (tests/fixtures/schema/records.km): the TS writer must
// produce the Rust golden bytes, the TS readers must read them, and forged offsets
// must give SchemaReadError codes (never a RangeError or a read past the column).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as rec from '../dist/schema/generated/fixtures/records.js';
import * as v1 from '../dist/schema/generated/fixtures/records_v1.js';
import * as rt from '../dist/schema/runtime.js';

const golden = (name) => {
  const url = new URL(`../../../tests/fixtures/schema/golden/${name}.hex`, import.meta.url);
  return Uint8Array.from(Buffer.from(readFileSync(fileURLToPath(url), 'utf8').replace(/\s+/g, ''), 'hex'));
};

/** The value of `sample()` in crates/offthread-schema/tests/records.rs. */
const row = (i, label) => ({
  id: i,
  score: i * 0.5 - 1,
  label,
  samples: Uint16Array.from({ length: i }, (_, k) => k * 1000 + 1),
  levels: Array.from({ length: i % 3 }, (_, k) => k),
  flags: Array.from({ length: i }, (_, k) => k % 2 === 0),
  wide: i === 1 ? 'π 𝄞' : '',
});
const sample = () => ({
  name: 'batch',
  rows: [row(0, ''), row(1, 'Grüße ✓'), row(2, 'plain'), row(3, '')],
  tail: 0xfeed,
});

/** Plain-object form of what the reader returns (typed arrays → arrays). */
const plain = (v) => ({
  ...v,
  rows: v.rows.map((r) => ({ ...r, samples: Array.from(r.samples), levels: Array.from(r.levels) })),
});

test('records: the TS writer produces the Rust golden bytes', () => {
  assert.deepEqual(rec.encodeRowBatch(sample()), golden('records'));
  // Plain arrays instead of typed arrays: the same bytes.
  const arrays = { ...sample(), rows: sample().rows.map((r) => ({ ...r, samples: Array.from(r.samples) })) };
  assert.deepEqual(rec.encodeRowBatch(arrays), golden('records'));
});

test('records: the low-level writer (alloc with sizes, fill the views) produces them too', () => {
  const items = sample().rows;
  const w = rec.RowBatchWriter.create();
  w.setName('batch');
  const sizes = [rt.utf8Length('Grüße ✓plain'), 6, 3, 6, 4];
  const soa = w.rows(items.length, sizes);
  soa.id().set([0, 1, 2, 3]);
  soa.score().set(items.map((r) => r.score));
  const label = soa.label();
  const bytes = new TextEncoder().encode('Grüße ✓plain');
  label.values.set(bytes);
  label.offsets.set([0, 0, 11, 16, 16]);
  soa.fill(items); // rewrites the same values; every column is checked against `sizes`
  w.setTail(0xfeed);
  assert.deepEqual(w.finish(), golden('records'));
  const bad = rec.RowBatchWriter.create();
  assert.throws(() => bad.rows(items.length, [1, 6, 3, 6, 4]).fill(items), { code: 'W0006' });
});

test('records: readers see strings, slices, raw offsets and values', () => {
  const r = rec.RowBatchReader.fromBytes(golden('records'));
  const rows = r.rows();
  assert.equal(rows.length, 4);
  const label = rows.label();
  assert.deepEqual(
    Array.from({ length: label.length }, (_, i) => label.get(i)),
    ['', 'Grüße ✓', 'plain', ''],
  );
  assert.equal(label.get(4), undefined);
  assert.deepEqual(Array.from(label.raw.offsets), [0, 0, 11, 16, 16]);
  assert.ok(label.raw.values instanceof Uint8Array);
  assert.deepEqual(Array.from(rows.samples().get(3)), [1, 1001, 2001]);
  assert.equal(rows.wide().get(1), 'π 𝄞');
  assert.deepEqual(plain(rec.decodeRowBatch(golden('records'))), plain(sample()));
});

test('records: round trips (empty batch, empty strings, multi-byte UTF-8, long values)', () => {
  const long = `${'ü'.repeat(5000)}𝄞`;
  const cases = [
    sample(),
    { name: '', rows: [], tail: 0 },
    { name: '', rows: [row(0, ''), row(0, '')], tail: 1 },
    { ...sample(), rows: Array.from({ length: 200 }, (_, i) => row(i % 40, i % 7 === 0 ? long : 'x')) },
  ];
  for (const v of cases) {
    const got = rec.decodeRowBatch(rec.encodeRowBatch(v));
    assert.deepEqual(plain(got), plain(v));
  }
  const empty = rec.RowBatchReader.fromBytes(rec.encodeRowBatch(cases[1])).rows();
  assert.equal(empty.length, 0);
  assert.deepEqual(Array.from(empty.samples().offsets), [0]);
  // A lone surrogate is not text: refused (W0009), never silently replaced by U+FFFD.
  assert.throws(
    () => rec.encodeRowBatch({ ...sample(), rows: [row(0, 'a\ud800b')] }),
    (e) => e instanceof rt.SchemaWriteError && e.code === 'W0009',
  );
});

/** Absolute offset of the `label` offsets column (path [2]) in an encoding of `sample()`. */
function labelOffsets(bytes) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const word = (at) => dv.getUint32(at, true);
  const header = word(8);
  const [columns, table] = [word(header + 8), word(header + 12)];
  const hashes = Array.from({ length: columns }, (_, i) => word(table + 4 * i));
  const i = hashes.indexOf(0x1c94b242);
  return word(table + rt.alignUp(4 * columns, 64) + 4 * i) * 64;
}

const code = (bytes) => {
  try {
    rec.decodeRowBatch(bytes);
  } catch (e) {
    if (e instanceof rt.SchemaReadError) return e.code;
    throw e;
  }
  return 'ok';
};

test('records: forged offsets give typed errors', () => {
  const valid = golden('records');
  const offs = labelOffsets(valid);
  const forge = (f) => {
    const b = valid.slice();
    f(new DataView(b.buffer), b);
    return b;
  };
  assert.equal(code(forge((dv) => dv.setUint32(offs + 12, 1, true))), 'R0011', 'decreasing');
  assert.equal(code(forge((dv) => dv.setUint32(offs, 1, true))), 'R0011', 'first offset not 0');
  assert.equal(code(forge((dv) => dv.setUint32(offs + 16, 1 << 20, true))), 'R0001', 'past the end');
  assert.equal(code(forge((dv) => dv.setUint32(offs + 16, 0xffffffff, true))), 'R0001', 'huge last offset');
  const values = rt.alignUp(offs + 20, 64);
  assert.equal(code(forge((_, b) => (b[values + 2] = 0xff))), 'R0008', 'invalid UTF-8');
  const header = new DataView(valid.buffer).getUint32(8, true);
  const count = (n) =>
    forge((dv) => {
      dv.setUint32(header, n, true);
      dv.setUint32(header + 4, n, true);
    });
  assert.equal(code(count(0xffffffff)), 'R0009', 'huge count');
  assert.equal(code(count(Math.floor(valid.length / 5))), 'R0001', 'count the columns cannot hold');
  assert.equal(code(valid.slice(0, offs + 8)), 'R0001', 'offsets cut short');
});

test('records: mutated buffers only ever throw SchemaReadError', () => {
  const valid = golden('records');
  let seed = 7;
  const below = (n) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed % n;
  };
  let rejected = 0;
  const n = Number(process.env.SCHEMA_MUTATIONS ?? 10000);
  for (let it = 0; it < n; it++) {
    const buf = valid.slice();
    if (it % 2 === 0) buf[below(buf.length)] ^= 1 << below(8);
    else new DataView(buf.buffer).setUint32(below(buf.length - 3) & ~3, [0, 1, 63, 64, 0xffffffff][below(5)], true);
    const c = code(buf);
    if (c !== 'ok') rejected++;
  }
  assert.ok(rejected > n / 20, `rejected ${rejected}`);
});

test('records: evolution both ways (records_v1.km has no variable-length columns)', () => {
  const old = v1.decodeRowBatch(golden('records'));
  assert.deepEqual(old, {
    name: 'batch',
    rows: [0, 1, 2, 3].map((i) => ({ id: i, score: i * 0.5 - 1 })),
    tail: 0xfeed,
  });
  const bytes = v1.encodeRowBatch({ name: 'old', rows: [0, 1, 2].map((i) => ({ id: i, score: 2 })), tail: 1 });
  const got = rec.decodeRowBatch(bytes);
  assert.deepEqual(
    plain(got).rows,
    [0, 1, 2].map((i) => ({ id: i, score: 2, label: '', samples: [], levels: [], flags: [], wide: '' })),
  );
  assert.deepEqual(Array.from(rec.RowBatchReader.fromBytes(bytes).rows().samples().offsets), [0, 0, 0, 0]);
});
