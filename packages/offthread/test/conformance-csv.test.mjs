// Public CSV conformance cases (issue 32, item 6): every file of csv-spectrum 2.0.0 (CSV
// files with the JSON each should parse to) through `filters.csv()` with string columns
// (so no type inference muddies the result), cut into chunks of many sizes, on the
// native pool and on a worker pool (offthread.wasm); and csv-parse, the bench's
// reference parser, on the same files as a cross-check. Where the expected JSON and our
// documented rules differ, the case is named below with the difference; none is skipped.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { filters, Pool } from 'offthread';
import { drain, outputs } from './stream-outputs.mjs';

const require = createRequire(import.meta.url);
const spectrum = require('csv-spectrum');

/** csv-spectrum's cases: `{ name, csv: Buffer, json: Buffer }`, in its own order. */
const cases = await new Promise((resolve, reject) => spectrum((err, items) => (err ? reject(err) : resolve(items))));

/**
 * Where the expected JSON is not what the CSV holds — each named, with what we give
 * and why; the test checks our rows against the corrected rows, never skips a case.
 */
const DIFFERENCES = {
  // csv-spectrum's own file is wrong: its JSON is one object, not an array of rows,
  // and says "1234567890" where the CSV has 2095257564 (upstream since 2014). The
  // U+FFFD and the stray `"` inside an unquoted field are the CSV's bytes: RFC 4180
  // has no such field, csv-core keeps the quote as text, as the JSON expects.
  location_coordinates: (expected) => [{ ...expected, 'Contact Phone Number': '2095257564' }],
};

/** The rows a case's CSV should parse to: its JSON, corrected where DIFFERENCES says. */
function expectedRows(c) {
  const json = JSON.parse(c.json.toString('utf8'));
  const fix = DIFFERENCES[c.name];
  if (fix) return fix(json);
  assert.ok(Array.isArray(json), `${c.name}: expected rows`);
  return json;
}

/** `bytes` in chunks of `size` through `filter`: the rows of its batches, as plain objects. */
async function rowsThrough(filter, bytes, size) {
  const chunks = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return (await outputs(filter, chunks)).flatMap((b) => b.toRows());
}

/** Every column a string: the header names are the expected rows' keys. */
const stringColumns = (rows) => Object.fromEntries(Object.keys(rows[0]).map((k) => [k, 'string']));

test('csv-spectrum 2.0.0: the cases are the twelve this test names (pinned: a new case is a deliberate upgrade)', () => {
  assert.deepEqual(cases.map((c) => c.name).sort(), [
    'comma_in_quotes',
    'empty',
    'empty_crlf',
    'escaped_quotes',
    'json',
    'location_coordinates',
    'newlines',
    'newlines_crlf',
    'quotes_and_newlines',
    'simple',
    'simple_crlf',
    'utf8',
  ]);
  // The one case whose JSON is corrected is still wrong upstream (else drop the entry).
  const loc = cases.find((c) => c.name === 'location_coordinates');
  assert.equal(Array.isArray(JSON.parse(loc.json)), false);
  assert.match(loc.csv.toString(), /^[^\n]*\n2095257564,/);
});

test('csv-spectrum: every case through filters.csv() (string columns) equals its JSON, in chunks of any size', async () => {
  for (const c of cases) {
    const want = expectedRows(c);
    // 1 byte (every quote, CRLF and UTF-8 sequence cut), small, odd, and whole.
    for (const size of [1, 2, 3, 5, 16, c.csv.length]) {
      const got = await rowsThrough(filters.csv({ columns: stringColumns(want) }), c.csv, size);
      assert.deepEqual(got, want, `${c.name}, chunks of ${size}`);
    }
  }
});

test('csv-spectrum: the same rows through filters.web.csv(), with stats()', async () => {
  for (const c of cases) {
    const want = expectedRows(c);
    const stream = filters.web.csv({ columns: stringColumns(want) });
    const chunks = [];
    for (let i = 0; i < c.csv.length; i += 4) chunks.push(c.csv.subarray(i, i + 4));
    const rows = (await drain(stream, chunks)).flatMap((b) => b.toRows());
    assert.deepEqual(rows, want, c.name);
    assert.equal(stream.stats().rows, want.length, c.name);
    assert.equal(stream.stats().skipped, 0, c.name);
  }
});

test('csv-spectrum: the same rows on a worker pool (offthread.wasm)', async () => {
  const pool = new Pool({ engine: 'wasm', threads: 1 });
  try {
    for (const c of cases) {
      const want = expectedRows(c);
      for (const size of [3, c.csv.length]) {
        const got = await rowsThrough(filters.csv({ columns: stringColumns(want), pool }), c.csv, size);
        assert.deepEqual(got, want, `${c.name}, chunks of ${size}`);
      }
    }
  } finally {
    await pool.close();
  }
});

/**
 * Where csv-parse's defaults differ from ours, named: the option that makes it read
 * the file as we do, and what its defaults do instead.
 */
const CSV_PARSE_DIFFERENCES = {
  // A `"` inside an unquoted field (`37.8"N`): not RFC 4180 CSV. csv-parse refuses it
  // by default; we (csv-core) keep it as text, as csv-spectrum's JSON expects and as
  // csv-parse does with relax_quotes.
  location_coordinates: { options: { relax_quotes: true }, defaults: { code: 'INVALID_OPENING_QUOTE' } },
};

test('csv-parse (the bench reference) agrees with filters.csv() on every csv-spectrum file', async () => {
  for (const c of cases) {
    const want = expectedRows(c);
    const differs = CSV_PARSE_DIFFERENCES[c.name];
    // csv-parse's defaults, plus `columns: true` (rows as objects, keyed by the header).
    if (differs) assert.throws(() => parse(c.csv, { columns: true }), differs.defaults, c.name);
    const theirs = parse(c.csv, { columns: true, ...differs?.options });
    const ours = await rowsThrough(filters.csv({ columns: stringColumns(want) }), c.csv, c.csv.length);
    assert.deepEqual(theirs, ours, c.name);
    assert.deepEqual(theirs, want, c.name);
  }
});
