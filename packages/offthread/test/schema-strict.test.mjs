// Generated TS as a user's project sees it: imported from 'offthread/schema', type-checked
// by tsc under strict nodenext and strict bundler settings with erasableSyntaxOnly and
// verbatimModuleSyntax, and run after type stripping with amaro (Node's own stripper).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { schema } from 'offthread';

const { compile } = schema;

const require = createRequire(import.meta.url);
const pkg = fileURLToPath(new URL('..', import.meta.url));
const repo = join(pkg, '..', '..');
const tsc = require.resolve('typescript/bin/tsc');
const km = {
  kitchen_sink: join(repo, 'tests/fixtures/schema/kitchen_sink.km'),
  unions: join(repo, 'tests/fixtures/schema/unions.km'),
  temperature: join(repo, 'crates/offthread-schema/schemas/temperature.km'),
};

const MAIN = `import { Builder, SchemaReadError } from 'offthread/schema';
import type { ReadOptions } from 'offthread/schema';
import * as ks from './gen/kitchen_sink.js';
import { decodeTemperatureBatch, encodeTemperatureBatch } from './gen/temperature.js';
import { type AnyPoint, decodeParticles, encodeParticles } from './gen/unions.js';

declare const console: { log(line: string): void }; // lib ES2022 only: no DOM, no @types/node
const opts: ReadOptions = {};
const bytes = encodeTemperatureBatch(
  { readings: [{ timestamp: 1n, value: 20.5 }, { timestamp: 2, value: 21 }] },
  new Builder(),
);
const back = decodeTemperatureBatch(bytes, opts);
const p2 = (x: number): AnyPoint => ({ tag: 'point2d', value: { x, y: -x } });
const u = decodeParticles(encodeParticles({ single: p2(1), aos: [p2(2), null], soa: [p2(3)], bovoa: [], bovos: [] }));
let refused = '';
try {
  decodeTemperatureBatch(new Uint8Array(3));
} catch (e) {
  if (e instanceof SchemaReadError) refused = e.code;
}
const size: number = ks.PointXyWriter.SIZE;
console.log(JSON.stringify({ n: back.readings.length, v: back.readings[1]?.value, single: u.single?.tag, refused, size }));
`;

/** A project outside the repo: generated files, MAIN, and `offthread` linked into node_modules. */
function project() {
  const dir = mkdtempSync(join(tmpdir(), 'offthread-strict-'));
  mkdirSync(join(dir, 'gen'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(pkg, join(dir, 'node_modules', 'offthread'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  for (const [name, path] of Object.entries(km)) {
    const out = compile(readFileSync(path, 'utf8'), { fileName: `${name}.km`, rust: false });
    assert.deepEqual(out.diagnostics, []);
    writeFileSync(join(dir, 'gen', `${name}.ts`), out.files[0].contents);
  }
  writeFileSync(join(dir, 'main.ts'), MAIN);
  return dir;
}

const strict = {
  strict: true,
  erasableSyntaxOnly: true,
  verbatimModuleSyntax: true,
  noUncheckedIndexedAccess: true,
  noImplicitOverride: true,
  target: 'ES2022',
  lib: ['ES2022'],
  types: [],
  noEmit: true,
  skipLibCheck: false,
};

for (const [label, modes] of [
  ['nodenext', { module: 'nodenext', moduleResolution: 'nodenext' }],
  ['bundler', { module: 'esnext', moduleResolution: 'bundler' }],
]) {
  test(`generated TS type-checks: strict + ${label} + erasableSyntaxOnly + verbatimModuleSyntax`, () => {
    const dir = project();
    const config = { compilerOptions: { ...strict, ...modes }, files: ['main.ts'] };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config));
    const r = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    // The check is real: a parameter property (non-erasable) in a generated file fails it.
    const bad = join(dir, 'gen', 'temperature.ts');
    writeFileSync(bad, `${readFileSync(bad, 'utf8')}\nexport class P {\n  constructor(readonly x: number) {}\n}\n`);
    const r2 = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
    assert.notEqual(r2.status, 0);
    assert.match(r2.stdout, /TS1294/);
  });
}

test('generated TS runs after type stripping (amaro strip-only, as Node does)', () => {
  const { transformSync } = require('amaro');
  const dir = project();
  for (const f of ['main', 'gen/kitchen_sink', 'gen/unions', 'gen/temperature']) {
    const { code } = transformSync(readFileSync(join(dir, `${f}.ts`), 'utf8'), { mode: 'strip-only' });
    writeFileSync(join(dir, `${f}.js`), code);
  }
  const r = spawnSync(process.execPath, [join(dir, 'main.js')], { encoding: 'utf8', cwd: dir });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { n: 2, v: 21, single: 'point2d', refused: 'R0001', size: 8 });
});
