// scripts/node-lines.mjs, which `npm test` runs after test:js: the same test files on
// every Node line (less the browser suites), engines.node read as npm reads it, and the
// process warnings of a run listed once each.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { BROWSER_SUITES, LINES, satisfies, testJs, warningsIn } from '../../../scripts/node-lines.mjs';

const root = new URL('../../../', import.meta.url);
const manifest = (path) => JSON.parse(readFileSync(new URL(path, root), 'utf8'));

test("the lines run test:js's files as listed, every *.test.mjs of its folders but the browser suites", () => {
  const { flags, files } = testJs(manifest('package.json').scripts['test:js']);
  assert.deepEqual(flags, ['--test', '--test-reporter=spec']);
  assert.ok(files.includes('packages/offthread/test/pool.test.mjs'));
  assert.ok(files.includes('services/http/test/routes.test.mjs'));
  assert.ok(files.includes('bench/test/run.test.mjs'));
  for (const f of files) assert.match(f, /\.test\.mjs$/);
  for (const b of BROWSER_SUITES) assert.ok(!files.includes(b), b);
  assert.throws(() => testJs('node --test bench/test/'), /BROWSER_SUITES/);
});

test('engines.node: each alternative is a major, ^x.y.z or >=x.y.z', () => {
  assert.ok(satisfies('^20.20.2 || ^22.23.5', 'v22.23.5'));
  assert.ok(satisfies('^20.20.2 || ^22.23.5', 'v22.30.0'));
  assert.ok(!satisfies('^20.20.2 || ^22.23.5', 'v22.2.0'));
  assert.ok(!satisfies('^20.20.2 || ^22.23.5', 'v20.20.1'));
  assert.ok(!satisfies('^20.20.2 || ^22.23.5', 'v24.0.0'));
  assert.ok(satisfies('>=20', 'v26.1.0'));
  assert.ok(satisfies('20 || 22', 'v22.0.0'));
  assert.throws(() => satisfies('~22.1', 'v22.1.0'), /not understood/);
});

test('engines.node covers the machine and every line npm test runs, in the workspace and the package', () => {
  const engines = manifest('package.json').engines.node;
  assert.equal(manifest('packages/offthread/package.json').engines.node, engines);
  assert.ok(satisfies(engines, process.version), `${engines} leaves out ${process.version}`);
  const majors = engines.split('||').map((alt) => Number(/\d+/.exec(alt)[0]));
  for (const line of LINES) assert.ok(majors.includes(line), `${engines} leaves out Node ${line}`);
});

test('process warnings are listed once each, without the process id', () => {
  const out = [
    '(node:123) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.',
    '# (node:456) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.',
    '  (node:9) ExperimentalWarning: WASI is an experimental feature',
    '✔ a test about warnings (1ms)',
  ].join('\n');
  assert.deepEqual(warningsIn(out), [
    '[DEP0040] DeprecationWarning: The `punycode` module is deprecated.',
    'ExperimentalWarning: WASI is an experimental feature',
  ]);
});
