// Failures map to the registry's status and never take the server down: a full pool
// queue is 503 + Retry-After, a kernel panic 500, an unexpected throw 500, a missing
// kernel 503.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import offthread from 'offthread';
import { testPanic } from 'offthread/internal';
import { describeError, serviceErrors, statusFor } from '../src/errors.mjs';
import { get, startServer } from '../test-support/helpers.mjs';

test('statusFor follows errorRegistry; service codes have their own', () => {
  for (const [code, { status }] of Object.entries(offthread.errorRegistry)) assert.equal(statusFor(code), status, code);
  assert.equal(statusFor('ERR_NOT_FOUND'), 404);
  assert.equal(statusFor('ERR_SOMETHING_ELSE'), 500);
  assert.deepEqual(describeError(new Error('boom')), { status: 500, code: 'ERR_INTERNAL', message: 'boom' });
});

test("docs/errors.md lists exactly the service's own codes, with their status", () => {
  const docs = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
  const section = docs.slice(docs.indexOf('## Codes only the HTTP service answers with'));
  /** @type {Record<string, number>} */
  const documented = {};
  for (const m of section.matchAll(/^\| `(ERR_[A-Z_]+)` +\| (\d{3}) +\|/gm)) documented[m[1]] = Number(m[2]);
  const actual = Object.fromEntries(Object.entries(serviceErrors).map(([code, { status }]) => [code, status]));
  assert.deepEqual(documented, actual);
  for (const code of Object.keys(serviceErrors)) {
    assert.ok(!Object.hasOwn(offthread.errorRegistry, code), `${code} is also a library code`);
  }
});

test('pool queue full → 503 ERR_QUEUE_FULL with Retry-After: 1; the others succeed', async (t) => {
  const pool = new offthread.Pool({ threads: 1, maxQueue: 1 });
  t.after(() => pool.close());
  const { app } = await startServer(t, { pool });
  const all = await Promise.all(Array.from({ length: 8 }, () => get(app, '/pi?samples=20000000')));
  const full = all.filter((r) => r.status === 503);
  const ok = all.filter((r) => r.status === 200);
  assert.ok(full.length >= 1, `statuses: ${all.map((r) => r.status)}`);
  assert.ok(ok.length >= 1, `statuses: ${all.map((r) => r.status)}`);
  assert.equal(ok.length + full.length, all.length);
  for (const r of full) {
    assert.equal(r.body.error.code, 'ERR_QUEUE_FULL');
    assert.equal(r.headers['retry-after'], '1');
  }
  assert.equal((await get(app, '/pi?samples=10')).status, 200);
});

test('503s log one warn line per burst, no stack; 500s still log the error', async (t) => {
  const pool = new offthread.Pool({ threads: 1, maxQueue: 1 });
  t.after(() => pool.close());
  /** @type {any[]} */
  const lines = [];
  const stream = { write: (/** @type {string} */ line) => lines.push(JSON.parse(line)) };
  const { app } = await startServer(t, { pool, logger: { level: 'warn', stream } });
  const all = await Promise.all(Array.from({ length: 8 }, () => get(app, '/pi?samples=20000000')));
  const full = all.filter((r) => r.status === 503).length;
  assert.ok(full >= 2, `statuses: ${all.map((r) => r.status)}`);
  assert.equal(lines.filter((l) => l.level >= 50).length, 0, JSON.stringify(lines));
  const warns = lines.filter((l) => l.level === 40);
  assert.equal(warns.length, 1, `${full} rejections → ${warns.length} warn lines`);
  assert.equal(warns[0].code, 'ERR_QUEUE_FULL');
  assert.equal(warns[0].err, undefined, 'no error object (stack) in the line');
});

test('kernel panic → 500 ERR_KERNEL_PANIC; the server and the pool go on', async (t) => {
  const pool = new offthread.Pool({ threads: 1 });
  t.after(() => pool.close());
  const kernels = {
    ...{ qr: offthread.qr, md5: offthread.md5 },
    pi: { estimate: () => testPanic(pool), estimateSync: offthread.pi.estimateSync },
  };
  const { app } = await startServer(t, { kernels, pool });
  const r = await get(app, '/pi?samples=10');
  assert.equal(r.status, 500);
  assert.equal(r.body.error.code, 'ERR_KERNEL_PANIC');
  assert.equal((await get(app, '/md5?text=a&rounds=3')).status, 200);
});

test("an unexpected throw → 500 ERR_INTERNAL; namespaces not replaced stay offthread's", async (t) => {
  const kernels = {
    pi: {
      estimate: async () => {
        throw new Error('unexpected');
      },
      estimateSync: () => null,
    },
  };
  const { app } = await startServer(t, { kernels });
  const r = await get(app, '/pi?samples=10');
  assert.equal(r.status, 500);
  assert.deepEqual(r.body, { error: { code: 'ERR_INTERNAL', message: 'unexpected' } });
  // Kernels are offthread's typed namespaces, not names looked up at run time: replacing
  // `pi` leaves the real `qr` in place.
  const qr = await get(app, '/qr?text=a');
  assert.equal(qr.status, 200);
  assert.equal(qr.body.result, offthread.qr.toDataURLSync('a'));
});

test('a closed pool → 503 ERR_POOL_CLOSED with Retry-After', async (t) => {
  const pool = new offthread.Pool({ threads: 1 });
  await pool.close();
  const { app } = await startServer(t, { pool });
  const r = await get(app, '/md5?text=a&rounds=3');
  assert.equal(r.status, 503);
  assert.equal(r.body.error.code, 'ERR_POOL_CLOSED');
  assert.equal(r.headers['retry-after'], '1');
});
