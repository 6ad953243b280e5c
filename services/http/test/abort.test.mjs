// A client that goes away cancels its job: the pool counts it as cancelled (not
// completed) and the thread is free again.
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import offthread from 'offthread';
import { requireKernels, startServer } from '../test-support/helpers.mjs';

test('client disconnect → the pool job is cancelled', async (t) => {
  requireKernels();
  const pool = new offthread.Pool({ threads: 1 });
  t.after(() => pool.close());
  const { app } = await startServer(t, { pool });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  // 10^7 rounds: about a second or more of native MD5 on the one pool thread.
  const req = http.get(`${base}/md5?text=abort&rounds=10000000`, { agent: false });
  req.on('error', () => {});
  const deadline = Date.now() + 5000;
  while (pool.stats().running + pool.stats().queued === 0) {
    assert.ok(Date.now() < deadline, 'the job never started');
    await new Promise((r) => setTimeout(r, 5));
  }
  req.destroy();
  while (pool.stats().cancelled === 0) {
    assert.ok(Date.now() < deadline, `not cancelled: ${JSON.stringify(pool.stats())}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.equal(pool.stats().completed, 0, 'the job ran to the end instead of stopping at its next check');
  // The thread is free: a small request goes through at once.
  const r = await app.inject({ method: 'GET', url: '/md5?text=a&rounds=3' });
  assert.equal(r.statusCode, 200);
  // The aborted request was accounted for (499) and is no longer in flight.
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  assert.match(metrics, /^http_requests_in_flight 1$/m); // this scrape only
  assert.match(metrics, /^http_requests_total\{method="GET",route="\/md5",status_code="499"\} 1$/m);
});

test('a client leaving /md5/piscina early: 499, and no error line in the log', { timeout: 60_000 }, async (t) => {
  /** @type {any[]} */
  const lines = [];
  const stream = { write: (/** @type {string} */ line) => lines.push(JSON.parse(line)) };
  const { app } = await startServer(t, { logger: { level: 'warn', stream }, piscinaThreads: 1 });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  // 10^7 rounds of JS MD5 in the piscina worker: seconds, far longer than this test waits.
  const req = http.get(`${base}/md5/piscina?text=leave&rounds=10000000`, { agent: false });
  req.on('error', () => {});
  const metrics = async () => (await app.inject({ method: 'GET', url: '/metrics' })).body;
  for (let i = 0; !/^http_requests_in_flight 2$/m.test(await metrics()); i++) {
    assert.ok(i < 1000, 'the request never arrived');
    await new Promise((r) => setTimeout(r, 10));
  }
  req.destroy();
  const aborted = /^http_requests_total\{method="GET",route="\/md5\/:impl",status_code="499"\} 1$/m;
  for (let i = 0; !aborted.test(await metrics()); i++) {
    assert.ok(i < 1000, `not counted as 499: ${await metrics()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  // piscina settles the aborted task before it runs the next one on its one thread: once
  // this answer is in, the aborted handler's error has been through the error handler.
  const next = await app.inject({ method: 'GET', url: '/md5/piscina?text=a&rounds=3' });
  assert.equal(next.statusCode, 200);
  assert.deepEqual(
    lines.filter((l) => l.level >= 50),
    [],
    'a client leaving is not a server error',
  );
});
