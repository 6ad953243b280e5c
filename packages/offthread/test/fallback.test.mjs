// Loading order: native → WASM → pure JS. Forced with OFFTHREAD_BACKEND in a child
// process, the same calls give the same answers and one warning names the fallback.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const cwd = fileURLToPath(new URL('..', import.meta.url));
const script = `
  const { pi, backendInfo } = require('offthread');
  Promise.all([pi.estimate(1e5), pi.estimate(1e6, { seed: 3 })]).then(([a, b]) =>
    console.log(JSON.stringify({ active: backendInfo().active, a: a.inside, av: a.variant, b: b.inside, s: pi.estimateSync(1e5).inside })));`;

for (const [backend, variant] of [
  ['wasm', 'wasm'],
  ['js', 'jsBitwise'],
]) {
  test(`OFFTHREAD_BACKEND=${backend}: same results, one warning`, () => {
    const r = spawnSync(process.execPath, ['-e', script], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, OFFTHREAD_BACKEND: backend },
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out, { active: backend, a: 78463, av: variant, b: 785572, s: 78463 });
    assert.equal(r.stderr.split('\n').filter((l) => l.includes('native addon unavailable')).length, 1, r.stderr);
  });
}
