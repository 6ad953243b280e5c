// `offthread doctor` / `help`: truthful about disabled tiers, typed about bad settings.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/offthread.js', import.meta.url));
const run = (args, env = {}) =>
  spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });

test('help, --help and -h print the usage and exit 0; an unknown command exits 2', () => {
  for (const arg of ['help', '--help', '-h']) {
    const r = run([arg]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^usage: offthread <command>/);
  }
  const bad = run(['nope']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unknown command: nope/);
});

test('doctor says "disabled", not "missing", for tiers OFFTHREAD_BACKEND turned off', () => {
  const r = run(['doctor'], { OFFTHREAD_BACKEND: 'js' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^active backend: js/);
  assert.match(r.stdout, /native\s+disabled/);
  assert.match(r.stdout, /wasm\s+disabled/);
  assert.doesNotMatch(r.stdout, /missing|npm run setup/);
  const info = JSON.parse(run(['info'], { OFFTHREAD_BACKEND: 'wasm' }).stdout);
  assert.equal(info.active, 'wasm');
  assert.equal(info.forced, 'wasm');
  assert.equal(info.wasm.loaded, true);
});

test('doctor refuses an unknown OFFTHREAD_BACKEND with its code', () => {
  const r = run(['doctor'], { OFFTHREAD_BACKEND: 'bogus' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /ERR_INVALID_ARG: OFFTHREAD_BACKEND must be native, wasm or js, got "bogus"/);
});
