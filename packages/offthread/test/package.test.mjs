// The package's public face: ESM and CJS agree, every error code is documented, the
// committed napi typings match the binding, and the backend report is truthful.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as esm from 'offthread';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../../../', import.meta.url));

test('ESM and CJS entry points export the same objects', () => {
  const cjs = require('offthread');
  const names = Object.keys(cjs).filter((k) => k !== '__esModule');
  assert.deepEqual(
    Object.keys(esm)
      .filter((k) => k !== 'default')
      .sort(),
    names.sort(),
  );
  const esmByName = { ...esm };
  for (const name of names) assert.equal(esmByName[name], cjs[name], name);
  assert.equal(esm.defaultPool(), cjs.defaultPool(), 'one default pool, whatever the module system');
});

test('the product addon has no test hooks; offthread/internal loads the test build, which has them', () => {
  const product = require('../native/offthread.linux-x64-gnu.node');
  assert.equal(product.layoutRunSync, undefined);
  for (const hook of ['submitSpin', 'submitPanic']) assert.equal(product.NativePool.prototype[hook], undefined, hook);
  const typings = readFileSync(new URL('../native/binding.d.ts', import.meta.url), 'utf8');
  assert.doesNotMatch(typings, /submitSpin|submitPanic|layoutRunSync/);
  const out = execFileSync(
    process.execPath,
    [
      '-e',
      `require('offthread/internal'); const o = require('offthread');
       const b = require(o.backendInfo().native.path);
       console.log(JSON.stringify([o.backendInfo().native.path, typeof b.layoutRunSync, typeof b.NativePool.prototype.submitSpin]));`,
    ],
    { encoding: 'utf8' },
  );
  assert.deepEqual(JSON.parse(out), [
    fileURLToPath(new URL('../native/test/offthread.linux-x64-gnu.node', import.meta.url)),
    'function',
    'function',
  ]);
});

test('package exports put types first in every branch', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  for (const branch of Object.values(pkg.exports['.'])) assert.equal(Object.keys(branch)[0], 'types');
});

test('every error code is in docs/errors.md, and every native code is registered', () => {
  const docs = readFileSync(`${root}docs/errors.md`, 'utf8');
  for (const code of Object.keys(esm.errorRegistry)) assert.match(docs, new RegExp(`\\b${code}\\b`), code);
  const binding = require('../native/offthread.linux-x64-gnu.node');
  for (const code of binding.errorCodes()) assert.ok(code in esm.errorRegistry, `${code} is not registered`);
});

test('errors carry their code and the kind of the registry', () => {
  assert.throws(
    () => esm.pi.estimateSync(-1),
    (e) => e instanceof RangeError && e.code === 'ERR_INVALID_SAMPLES',
  );
  assert.throws(
    () => esm.pi.estimateSync('x'),
    (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG',
  );
});

test('backendInfo reports the native addon as active', () => {
  const info = esm.backendInfo();
  assert.equal(info.active, 'native');
  assert.equal(info.native.loaded, true);
  assert.equal(info.wasm.loaded, true);
});

test('the committed napi typings match the built binding (no drift)', (t) => {
  if (!existsSync(`${root}.git`)) return t.skip('not a git checkout');
  const diff = execFileSync('git', ['diff', '--', 'packages/offthread/native/binding.d.ts'], {
    cwd: root,
    encoding: 'utf8',
  });
  assert.equal(diff, '', 'binding.d.ts changed when rebuilt: commit the regenerated file');
});
