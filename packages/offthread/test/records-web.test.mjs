// The web form of the record filters (issue 32): `filters.web.csv()` / `ndjson()` are
// TransformStreams whose readable side is RecordBatch objects — in strict TypeScript
// too, not `Uint8Array` — and which carry the Node Transform's `stats()`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { filters, Pool, RecordBatch } from 'offthread';
import { drain } from './stream-outputs.mjs';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const root = join(pkgDir, '..', '..');

test('filters.web.csv() and ndjson() have stats(): rows, batches, skipped rows and their lines', async () => {
  const csv = filters.web.csv({ columns: { id: 'i32', v: 'f64?' }, onError: 'skip' });
  assert.equal(typeof csv.stats, 'function');
  assert.deepEqual(csv.stats(), { rows: 0, batches: 0, skipped: 0, skippedLines: [] });
  const batches = await drain(csv, ['id,v\n1,2\nx,3\n', '4,\n', '5,1,1\n6,7\n']);
  assert.ok(batches.every((b) => b instanceof RecordBatch));
  assert.deepEqual(
    batches.flatMap((b) => b.toRows()),
    [
      { id: 1, v: 2 },
      { id: 4, v: null },
      { id: 6, v: 7 },
    ],
  );
  assert.deepEqual(csv.stats(), { rows: 3, batches: batches.length, skipped: 2, skippedLines: [3, 5] });
  // The copy handed out is the caller's: changing it changes nothing in the stream.
  csv.stats().skippedLines.push(99);
  assert.deepEqual(csv.stats().skippedLines, [3, 5]);

  // Columns inferred from the first two lines (the second is no object: a bad row).
  const nd = filters.web.ndjson({ onError: 'skip', inferRows: 2 });
  const rows = (await drain(nd, ['{"a":1,"b":"x"}\n[1]\n', '{"b":null}\n'])).flatMap((b) => b.toRows());
  assert.deepEqual(rows, [
    { a: 1, b: 'x' },
    { a: null, b: null },
  ]);
  assert.deepEqual(nd.stats(), { rows: 2, batches: 2, skipped: 1, skippedLines: [2] });
});

test('with a schema the web form emits the batch messages, and counts them the same', async () => {
  const pool = new Pool({ engine: 'wasm', threads: 1 });
  try {
    const csv = filters.web.csv({ columns: [{ name: 'a', type: 'u8' }], pool });
    const out = await drain(csv, ['a\n1\n2\n']);
    assert.ok(out.every((b) => b instanceof Uint8Array));
    assert.equal(csv.stats().rows, 2);
  } finally {
    await pool.close();
  }
});

test('strict TypeScript sees RecordBatch out of web.csv()/ndjson(), bytes out of the others', () => {
  // Inside the package, so `offthread` resolves to this build's own types.
  const dir = mkdtempSync(join(pkgDir, '.types-web-'));
  try {
    writeFileSync(
      join(dir, 'app.mts'),
      `import { filters, type RecordBatch, type RecordStats, type RecordStream } from 'offthread';
const csv = filters.web.csv({ columns: { a: 'f64', b: 'string?' }, onError: 'skip' });
const batches: ReadableStream<RecordBatch> = csv.readable;
const stats: RecordStats = csv.stats();
const inferred: RecordStream<RecordBatch> = filters.web.csv();
const nd: ReadableStream<RecordBatch> = filters.web.ndjson().readable;
const ndStats: number = filters.web.ndjson({ columns: { a: 'i64' } }).stats().skipped;
const messages: ReadableStream<Uint8Array> = filters.web.csv({ columns: [{ name: 'a', type: 'f64' }] }).readable;
const gz: ReadableStream<Uint8Array> = filters.web.gzip().readable;
// @ts-expect-error: a record filter's readable holds batches, not bytes
const wrong: ReadableStream<Uint8Array> = csv.readable;
// @ts-expect-error: a gzip stream has no stats()
filters.web.gzip().stats();
// Options of either kind, known only at run time: either stream.
declare const either: Parameters<typeof filters.web.csv>[0];
const some: RecordStream<RecordBatch> | RecordStream<Uint8Array> = filters.web.csv(either);
const node = filters.ndjson({ inferRows: 10 });
const nodeStats = node.stats();
export { batches, stats, inferred, nd, ndStats, messages, gz, wrong, some, nodeStats };
`,
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          skipLibCheck: true,
          types: ['node'],
        },
        files: ['app.mts'],
      }),
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
    assert.equal(`${r.stdout}${r.stderr}`.trim(), '');
    assert.equal(r.status, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
