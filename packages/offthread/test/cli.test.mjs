// The `offthread` bin: doctor/info report the backend; `schema check|build` runs the
// schema compiler on a file and fails with its diagnostic on a bad one.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/offthread.js', import.meta.url));
const fixtures = fileURLToPath(new URL('../../../tests/fixtures/schema/', import.meta.url));
const run = (...args) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 300_000 });

test('offthread info reports the native backend as JSON', () => {
  const r = run('info');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).active, 'native');
});

test('the libc the addon is chosen for is the one Node’s own report names', () => {
  const { libc } = createRequire(import.meta.url)('../dist/node/host.js');
  const report = process.platform === 'linux' ? process.report.getReport() : null;
  const expected = report ? (report.header.glibcVersionRuntime ? 'gnu' : 'musl') : null;
  assert.equal(libc(), expected);
});

test('offthread schema check accepts a valid schema and rejects a broken one with a diagnostic', () => {
  const ok = run('schema', 'check', join(fixtures, 'kitchen_sink.km'));
  assert.equal(ok.status, 0, ok.stderr);
  const errors = join(fixtures, 'errors');
  const bad = readdirSync(errors)[0];
  const r = run('schema', 'check', join(errors, bad, 'input.km'));
  assert.notEqual(r.status, 0);
  assert.match(r.stdout + r.stderr, /E\d{4}/);
});

test('offthread schema build writes Rust and TS with the DO-NOT-EDIT header', () => {
  const out = mkdtempSync(join(tmpdir(), 'offthread-schema-'));
  const r = run(
    'schema',
    'build',
    join(fixtures, 'kitchen_sink.km'),
    '--ts',
    join(out, 'ts'),
    '--rust',
    join(out, 'rust'),
  );
  assert.equal(r.status, 0, r.stderr);
  for (const dir of ['ts', 'rust']) {
    const files = readdirSync(join(out, dir));
    assert.ok(files.length > 0, `${dir}: nothing written`);
    assert.match(readFileSync(join(out, dir, files[0]), 'utf8'), /DO NOT EDIT/);
  }
});

test('an unknown command prints usage and exits 2', () => {
  const r = run('frobnicate');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /usage: offthread/);
});
