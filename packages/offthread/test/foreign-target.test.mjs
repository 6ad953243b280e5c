// A prebuilt target besides the host's, loaded for real (issue 30, item 7): the packed
// package with offthread-linux-arm64-gnu, installed into a fresh app as on an arm64
// machine, run by Node's arm64 binary under qemu-user; it must load the native addon (no
// fallback) and compute md5/sha256/π/QR as node:crypto and the host do. The checks live
// in scripts/foreign-target.mjs (also `npm run test:foreign`, which installs the tools);
// here it runs when the tools are on the machine and otherwise skips, naming what is missing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { missing, run } from '../../../scripts/foreign-target.mjs';

const lacking = missing();

test('missing() names each absent tool with where it comes from', () => {
  for (const item of lacking) assert.match(item, /apt: |npm: |cache|host/, item);
});

test('linux-arm64-gnu: the packed package loads its native addon under qemu and computes right', {
  skip: lacking.length > 0 && `missing: ${lacking.join('; ')} (npm run test:foreign installs them)`,
  // A first run cross-builds the addon (minutes on 2 shared cores); later ones reuse it.
  timeout: 40 * 60_000,
}, () => {
  const report = run();
  const r = report.result;
  assert.equal(r.arch, 'arm64');
  assert.equal(r.active, 'native', 'the native engine, not a fallback');
  assert.equal(r.engine, 'native');
  assert.match(r.nativePath, /node_modules\/offthread-linux-arm64-gnu\/offthread\.linux-arm64-gnu\.node$/);
  assert.deepEqual(report.installedAddons, ['offthread-linux-arm64-gnu'], 'npm installed the arm64 package only');
  // run() has compared every digest, π count and the QR PNG; the fixed count is repeated
  // here so that a report without the check would fail too.
  assert.equal(r.piSync.inside, 78463);
});
