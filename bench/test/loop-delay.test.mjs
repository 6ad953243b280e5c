import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startLoopDelay } from '../lib/loop-delay.mjs';

test('an idle loop reads about the resolution; figures are in ms', async () => {
  const d = startLoopDelay({ resolutionMs: 1 });
  await sleep(100);
  const r = d.stop();
  assert.equal(r.resolutionMs, 1);
  assert.ok(r.count > 10, `count ${r.count}`);
  assert.ok(r.p50Ms >= 0.5 && r.p50Ms < 20, `p50 ${r.p50Ms} ms`);
  assert.ok(r.minMs <= r.p50Ms && r.p50Ms <= r.p95Ms && r.p95Ms <= r.p99Ms && r.p99Ms <= r.maxMs);
});

test('blocking the loop for 80 ms shows in max and p99', async () => {
  const d = startLoopDelay({ resolutionMs: 5 });
  await sleep(20);
  const end = performance.now() + 80;
  while (performance.now() < end);
  await sleep(20);
  const r = d.stop();
  assert.equal(r.resolutionMs, 5);
  assert.ok(r.maxMs >= 75, `max ${r.maxMs} ms`);
  assert.ok(r.p99Ms >= 75, `p99 ${r.p99Ms} ms`);
});

test('no recorded delay gives NaN, not a reassuring 0; stop twice and bad resolution throw', () => {
  const d = startLoopDelay();
  const r = d.stop();
  assert.equal(r.count, 0);
  assert.ok(Number.isNaN(r.p99Ms) && Number.isNaN(r.maxMs));
  assert.throws(() => d.stop(), /twice/);
  assert.throws(() => startLoopDelay({ resolutionMs: 0.5 }), RangeError);
});
