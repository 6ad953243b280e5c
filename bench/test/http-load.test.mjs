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
