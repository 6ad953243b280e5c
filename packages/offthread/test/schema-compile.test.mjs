// The schema compiler from JS (wasm/offthread-schema.wasm): `schema.compile` and the
// `offthread schema` bin produce the same files and diagnostics as the Rust CLI, for
// every schema in the repo; `offthread/schema` is one module for import and require.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { schema } from 'offthread';

const { compile } = schema;

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const bin = fileURLToPath(new URL('../bin/offthread.js', import.meta.url));
const fixtures = join(repo, 'tests/fixtures/schema');
const errors = join(fixtures, 'errors');
const schemas = [
  ...['temperature', 'scooter'].map((n) => join(repo, 'crates/offthread-schema/schemas', `${n}.km`)),
  ...readdirSync(fixtures)
    .filter((f) => f.endsWith('.km'))
    .map((f) => join(fixtures, f)),
];

/** The Rust CLI, built incrementally (cargo is a contributor tool; the package never needs it). */
function rustCli() {
  const r = spawnSync(
    'cargo',
    ['build', '--quiet', '--release', '-p', 'offthread-schema', '--bin', 'offthread-schema'],
    {
      cwd: repo,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  assert.equal(r.status, 0, 'cargo build of the Rust CLI failed');
  return join(repo, 'target/release', process.platform === 'win32' ? 'offthread-schema.exe' : 'offthread-schema');
}

const runJs = (...args) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: tmpdir() });

test('schema files from the wasm compiler are byte-identical to the Rust CLI, for every schema in the repo', () => {
  const cli = rustCli();
  assert.ok(schemas.length >= 6, `only ${schemas.length} schemas found`);
  for (const km of schemas) {
    const out = mkdtempSync(join(tmpdir(), 'offthread-schema-same-'));
    const args = ['build', km, '--ts', join(out, 'ts-rs'), '--rust', join(out, 'rs-rs')];
    const r = spawnSync(cli, args, { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const j = runJs('schema', 'build', km, '--ts', join(out, 'ts-js'), '--rust', join(out, 'rs-js'));
    assert.equal(j.status, 0, j.stderr);
    // Only the output dirs' names differ (not a "-js" the random temp-dir suffix may hold).
    const asRust = j.stdout
      .replaceAll(join(out, 'ts-js'), join(out, 'ts-rs'))
      .replaceAll(join(out, 'rs-js'), join(out, 'rs-rs'));
    assert.equal(asRust, r.stdout, 'the "wrote …" lines differ');
    for (const [a, b] of [
      ['ts-rs', 'ts-js'],
      ['rs-rs', 'rs-js'],
    ]) {
      const names = readdirSync(join(out, a));
      assert.deepEqual(readdirSync(join(out, b)), names);
      for (const n of names) {
        const want = readFileSync(join(out, a, n));
        assert.ok(want.length > 1000, `${km}: ${n} is suspiciously small`);
        assert.ok(want.equals(readFileSync(join(out, b, n))), `${km}: ${b}/${n} differs from the Rust CLI's`);
      }
    }
  }
});

test('schema check: the same diagnostics text and exit code 1 as the Rust CLI, for every error fixture', () => {
  const cli = rustCli();
  const cases = readdirSync(errors);
  assert.ok(cases.length >= 10);
  for (const c of cases) {
    const km = join(errors, c, 'input.km');
    const r = spawnSync(cli, ['check', km], { encoding: 'utf8' });
    const j = runJs('schema', 'check', km);
    assert.equal(r.status, 1, `${c}: the Rust CLI accepted it`);
    assert.equal(j.status, 1, `${c}: exit ${j.status}\n${j.stderr}`);
    assert.match(j.stderr, /^error\[E\d{4}\]/);
    assert.equal(j.stderr, r.stderr, `${c}: diagnostics differ`);
  }
});

test('the offthread schema bin: ok on a valid schema, exit 2 on usage errors, 1 on a missing file', () => {
  const ok = runJs('schema', 'check', schemas[0]);
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stdout, `${schemas[0]}: ok\n`);
  for (const args of [
    ['schema'],
    ['schema', 'frob', 'x.km'],
    ['schema', 'check'],
    ['schema', 'build', schemas[0]],
    ['schema', 'build', schemas[0], '--ts'],
    ['schema', 'build', schemas[0], '--bogus', 'x'],
    ['schema', 'check', schemas[0], 'extra.km'],
  ]) {
    const r = runJs(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: exit ${r.status}`);
    assert.match(r.stderr, /usage: offthread schema/);
  }
  const missing = runJs('schema', 'check', join(tmpdir(), 'no-such-schema.km'));
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /^error: cannot read /);
});

test('--runtime-import sets the TS import; the default is offthread/schema', () => {
  const src = readFileSync(schemas[0], 'utf8');
  const def = compile(src, { rust: false });
  assert.equal(def.files.length, 1);
  assert.match(def.files[0].contents, /^import \* as rt from 'offthread\/schema';$/m);
  const rel = compile(src, { rust: false, runtimeImport: '../runtime.js' });
  assert.match(rel.files[0].contents, /^import \* as rt from '\.\.\/runtime\.js';$/m);
  const rs = compile(src, { ts: false });
  assert.match(rs.files[0].contents, /^use ::offthread_schema_rt as rt;$/m);
  const out = mkdtempSync(join(tmpdir(), 'offthread-schema-ri-'));
  const r = runJs('schema', 'build', schemas[0], '--ts', out, '--runtime-import', './rt.js');
  assert.equal(r.status, 0, r.stderr);
  assert.match(readFileSync(join(out, 'temperature.ts'), 'utf8'), /from '\.\/rt\.js';/);
});

test('schema.compile({ c: true }) emits the C header and its runtime, as the committed game files', () => {
  const km = readFileSync(join(repo, 'examples/game/game.km'), 'utf8');
  const r = compile(km, { fileName: 'game.km', ts: false, rust: false, c: true });
  assert.deepEqual(r.diagnostics, []);
  const generated = join(repo, 'examples/game/generated');
  assert.deepEqual(
    r.files.map((f) => [f.lang, f.path]),
    [
      ['c', 'game.h'],
      ['c', 'offthread_rt.h'],
    ],
  );
  for (const f of r.files) assert.equal(f.contents, readFileSync(join(generated, f.path), 'utf8'), f.path);
  assert.deepEqual(compile(km, { fileName: 'game.km', ts: false, rust: false }).files, [], 'off unless asked for');
  assert.throws(() => compile(km, { c: 'yes' }), { code: 'ERR_INVALID_ARG' });
});

test('schema.compile returns diagnostics (not throws) for a bad schema, and refuses bad arguments with a code', async () => {
  const { schema } = await import('../dist/index.js');
  const bad = schema.compile('struct a (inline) {\n    p: vec3;\n}\n', { fileName: 'a.km' });
  assert.deepEqual(bad.files, []);
  assert.equal(bad.diagnostics.length, 1);
  assert.deepEqual(
    { code: bad.diagnostics[0].code, line: bad.diagnostics[0].line, column: bad.diagnostics[0].column },
    { code: 'E0004', line: 2, column: 8 },
  );
  assert.match(bad.rendered, /--> a\.km:2:8/);
  for (const [src, opts] of [
    [42, {}],
    [Symbol('s'), {}],
    ['', null],
    ['', { fileName: 'a\nb' }],
    ['', { ts: 'yes' }],
  ]) {
    assert.throws(() => schema.compile(src, opts), { code: 'ERR_INVALID_ARG' });
  }
});

test('offthread/schema: the ESM entry re-exports the CommonJS runtime (same classes, same names)', async () => {
  const require = createRequire(import.meta.url);
  const cjs = require('offthread/schema');
  const esm = await import('offthread/schema');
  assert.deepEqual(Object.keys(esm).sort(), Object.keys(cjs).sort());
  assert.ok(Object.keys(cjs).length > 10);
  assert.equal(esm.Builder, cjs.Builder);
  assert.equal(esm.SchemaReadError, cjs.SchemaReadError);
  assert.ok(existsSync(join(repo, 'packages/offthread/wasm/offthread-schema.wasm')));
});
