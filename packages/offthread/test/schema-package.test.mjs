// The schema workflow as a user meets it: the packed tarball installed into a fresh app
// outside the repo, no cargo on PATH; `npx offthread schema check|build`, then a program
// writes with the generated writer, reads back, and imports the runtime as offthread/schema.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pathWithoutCargo } from '../../../scripts/fresh-app.mjs';

const require = createRequire(import.meta.url);
const pkg = fileURLToPath(new URL('..', import.meta.url));

const SCHEMA = `struct sample (inline) {
    id: u32;
    value: f64;
}

struct batch (dynamic) {
    name: []u8 #string;
    samples: []sample;
}
`;

const MAIN = `import { SchemaReadError } from 'offthread/schema';
import { BatchReader, decodeBatch, encodeBatch } from './gen/t.js';

const bytes = encodeBatch({ name: 'probe-7', samples: [{ id: 1, value: 0.5 }, { id: 2, value: 1.5 }] });
const r = BatchReader.fromBytes(bytes);
const plain = decodeBatch(bytes);
let code = '';
try {
  decodeBatch(bytes.subarray(0, 5));
} catch (e) {
  code = e instanceof SchemaReadError ? e.code : 'untyped';
}
console.log(JSON.stringify({ name: plain.name, ids: [...r.samples().id()], values: plain.samples.map((s) => s.value), code }));
`;

test('packed tarball: the ./schema export lists types first in each branch', () => {
  const { exports } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  for (const branch of Object.values(exports['./schema'])) assert.equal(Object.keys(branch)[0], 'types');
});

test('packed tarball in a fresh app without cargo: schema check, build, write and read back', () => {
  const work = mkdtempSync(join(tmpdir(), 'offthread-pack-'));
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: pkg, encoding: 'utf8' }),
  );
  assert.ok(
    packed.files.some((f) => f.path === 'wasm/offthread-schema.wasm'),
    'the compiler is not in the tarball',
  );
  assert.ok(
    packed.files.some((f) => f.path === 'dist/schema/runtime.mjs'),
    'the ESM runtime entry is missing',
  );

  const app = join(work, 'app');
  execFileSync('mkdir', ['-p', app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', join(work, packed.filename)], {
    cwd: app,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  writeFileSync(join(app, 't.km'), SCHEMA);
  const env = { ...process.env, PATH: pathWithoutCargo() };
  const npx = (...args) =>
    spawnSync('npx', ['--no-install', 'offthread', ...args], { cwd: app, env, encoding: 'utf8' });
  assert.equal(spawnSync('cargo', ['--version'], { env }).error?.code, 'ENOENT', 'cargo is still reachable');

  const check = npx('schema', 'check', 't.km');
  assert.equal(check.status, 0, check.stderr);
  assert.equal(check.stdout, 't.km: ok\n');
  const build = npx('schema', 'build', 't.km', '--ts', 'gen');
  assert.equal(build.status, 0, build.stderr);
  const generated = readFileSync(join(app, 'gen', 't.ts'), 'utf8');
  assert.match(generated, /from 'offthread\/schema';/);

  writeFileSync(join(app, 'bad.km'), 'struct x (inline) {\n    a: nope;\n}\n');
  const bad = npx('schema', 'check', 'bad.km');
  assert.equal(bad.status, 1);
  // m: npm itself may print warnings first (user config).
  assert.match(bad.stderr, /^error\[E0004\]: unknown type `nope`\n --> bad\.km:2:8\n/m, bad.stderr);

  // Node 20 has no type stripping: strip with amaro (Node's own stripper), then run.
  const { transformSync } = require('amaro');
  writeFileSync(join(app, 'gen', 't.js'), transformSync(generated, { mode: 'strip-only' }).code);
  writeFileSync(join(app, 'main.js'), MAIN);
  const run = spawnSync(process.execPath, ['main.js'], { cwd: app, env, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), { name: 'probe-7', ids: [1, 2], values: [0.5, 1.5], code: 'R0001' });
});
