import assert from 'node:assert/strict';
import os from 'node:os';
import { test } from 'node:test';
import { machineInfo, machineLine } from '../lib/machine.mjs';

test('machineInfo describes this machine and toolchain', () => {
  const m = machineInfo();
  assert.equal(m.cores, os.availableParallelism());
  assert.equal(m.node, process.version);
  assert.equal(m.v8, process.versions.v8);
  assert.ok(m.cpuModel.length > 0);
  assert.ok(m.memoryGiB > 0);
  assert.ok(!Number.isNaN(Date.parse(m.date)));
  assert.equal(m.loadAverage.length, 3);
  assert.ok(m.rustc === null || m.rustc.startsWith('rustc '));
  assert.ok(m.gitCommit === null || /^[0-9a-f]{4,}$/.test(m.gitCommit));
  const line = machineLine(m);
  assert.ok(line.includes(`${m.cores} cores`) && line.includes(m.node));
});
