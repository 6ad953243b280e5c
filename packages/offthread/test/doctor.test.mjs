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

test('doctor names the Node 24 Buffer flag where this V8 has the regression, and only there', () => {
  const r = run(['doctor']);
  assert.equal(r.status, 0, r.stderr);
  const [major, minor] = process.versions.v8.split('.').map(Number);
  const flagExists = spawnSync(process.execPath, ['--scavenger-max-new-space-capacity-mb=8', '-e', '0']).status === 0;
  const regressed = (major > 13 || (major === 13 && minor >= 6)) && flagExists;
  // Node 20 and 22 (V8 11.3, 12.4) scavenge young buffers; Node 26 (V8 14.6) has no such flag.
  assert.equal(/--scavenger-max-new-space-capacity-mb=8/.test(r.stdout), regressed, r.stdout);
  if (process.versions.node.startsWith('24.')) assert.ok(regressed, 'Node 24 is the line the hint is for');
  // Started with the flag already, the app needs no hint.
  const given = spawnSync(process.execPath, ['--scavenger-max-new-space-capacity-mb=8', bin, 'doctor'], {
    encoding: 'utf8',
  });
  if (flagExists) assert.doesNotMatch(given.stdout, /streams of Buffers/);
});
