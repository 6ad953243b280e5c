// The open-loop load generator of the http-* experiments: it sends exactly rate × duration
// requests, counts 2xx, non-2xx and connection errors apart, and times latency from when
// each request was due.
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { openLoopLoad } from '../experiments/http-load.mjs';

/** A local server answering 200, or 500 for /fail, after `delayMs`. */
async function listen(delayMs) {
  const server = http.createServer((req, res) => {
    setTimeout(() => {
      res.writeHead(req.url === '/fail' ? 500 : 200, { 'content-type': 'text/plain' });
      res.end('x');
    }, delayMs);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return { server, base: `http://127.0.0.1:${port}` };
}

test('openLoopLoad sends rate × duration requests and times them from when they were due', async (t) => {
  const { server, base } = await listen(5);
  t.after(() => server.close());
  const r = await openLoopLoad({ url: `${base}/ok`, rate: 200, duration: 1 });
  assert.equal(r.sent, 200);
  assert.equal(r.ok, 200);
  assert.equal(r.non2xx + r.errors, 0);
  assert.equal(r.latencyMs.count, 200);
  // ≥ 4, not 5: libuv's timers work on a whole-ms clock and may fire up to 1 ms early.
  assert.ok(r.latencyMs.min >= 4, `latency includes the server's 5 ms delay: min ${r.latencyMs.min}`);
  assert.ok(r.durationS >= 0.99, `the last request is due at 0.995 s, yet the run took ${r.durationS} s`);
});

test('openLoopLoad counts non-2xx answers and connection errors apart', async (t) => {
  const { server, base } = await listen(0);
  const fail = await openLoopLoad({ url: `${base}/fail`, rate: 100, duration: 0.3 });
  assert.deepEqual([fail.sent, fail.ok, fail.non2xx, fail.errors], [30, 0, 30, 0]);
  await new Promise((r) => server.close(r));
  const down = await openLoopLoad({ url: `${base}/ok`, rate: 100, duration: 0.2, timeoutMs: 2000 });
  assert.deepEqual([down.sent, down.ok, down.errors], [20, 0, 20]);
  t.diagnostic(`errors against a closed port: ${down.errors}`);
});

test('openLoopLoad only targets this machine', async () => {
  await assert.rejects(openLoopLoad({ url: 'http://example.com/', rate: 1, duration: 1 }), /127\.0\.0\.1/);
});

test('arrivalSchedule: constant phases at i/rate, a linear ramp in between, each phase its mean rate × duration', async () => {
  const { arrivalSchedule } = await import('../experiments/http-load.mjs');
  const { dueMs, phaseOf, counts } = arrivalSchedule([
    { name: 'warm-up', duration: 2, arrivalRate: 10 },
    { name: 'ramp', duration: 4, arrivalRate: 10, rampTo: 30 },
    { name: 'sustained', duration: 1, arrivalRate: 50 },
  ]);
  assert.deepEqual(counts, [20, 80, 50]);
  assert.equal(dueMs.length, 150);
  assert.deepEqual([...dueMs.slice(0, 3)], [0, 100, 200]);
  assert.deepEqual([phaseOf[19], phaseOf[20], phaseOf[99], phaseOf[100]], [0, 1, 1, 2]);
  assert.equal(dueMs[20], 2000, 'the ramp starts where the warm-up ends');
  assert.equal(dueMs[100], 6000, 'the sustained phase starts after 2 + 4 s');
  for (let i = 1; i < dueMs.length; i++) assert.ok(dueMs[i] > dueMs[i - 1], `ascending at ${i}`);
  // Half-way through the ramp (t = 2 s) the rate is 20/s: 10·2 + (20/8)·2² = 30 arrivals.
  assert.ok(Math.abs(dueMs[20 + 30] - 4000) < 1e-6, `arrival 30 of the ramp at 2 s, got ${dueMs[50] - 2000} ms`);
  const gapStart = dueMs[21] - dueMs[20];
  const gapEnd = dueMs[99] - dueMs[98];
  assert.ok(gapStart > 2 * gapEnd, `gaps shrink as the rate ramps up: ${gapStart} then ${gapEnd} ms`);
  assert.throws(() => arrivalSchedule([{ name: 'x', duration: 0, arrivalRate: 1 }]), RangeError);
});

test('phasedLoad sends the whole schedule and reports each phase', async (t) => {
  const { phasedLoad } = await import('../experiments/http-load.mjs');
  const { server, base } = await listen(2);
  t.after(() => server.close());
  const r = await phasedLoad({
    url: `${base}/ok`,
    phases: [
      { name: 'a', duration: 0.2, arrivalRate: 50 },
      { name: 'b', duration: 0.4, arrivalRate: 50, rampTo: 150 },
    ],
  });
  assert.equal(r.generator, 'open loop, phased');
  assert.deepEqual([r.sent, r.ok, r.non2xx, r.errors], [50, 50, 0, 0]);
  assert.deepEqual(
    r.phases.map((p) => [p.name, p.sent, p.ok, p.latencyMs.count]),
    [
      ['a', 10, 10, 10],
      ['b', 40, 40, 40],
    ],
  );
  assert.ok(r.latencyMs.min >= 1, `latency includes the server's 2 ms delay: min ${r.latencyMs.min}`);
});

test('closedLoopTimeline: each user sends its requests one after another', async (t) => {
  const { closedLoopTimeline } = await import('../experiments/http-load.mjs');
  const { server, base } = await listen(3);
  t.after(() => server.close());
  const rows = await closedLoopTimeline({ url: `${base}/ok`, users: 2, perUser: 3 });
  assert.equal(rows.length, 6);
  assert.deepEqual(
    rows.map((r) => r.seq),
    [0, 1, 2, 3, 4, 5],
  );
  for (const u of [1, 2]) {
    const mine = rows.filter((r) => r.user === u);
    assert.equal(mine.length, 3);
    for (const [i, r] of mine.entries()) {
      assert.equal(r.status, 200);
      assert.ok(r.endMs > r.startMs, 'a request ends after it starts');
      if (i > 0) assert.ok(r.startMs >= mine[i - 1].endMs, `user ${u} waits for its previous response`);
    }
  }
});
