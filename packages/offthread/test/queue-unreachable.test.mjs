// offthread/queue against a Redis that is not there: a port nobody listens on (refused), a
// server that accepts and never answers (a hung Redis, a black-holing firewall), and a
// real redis-server killed under a running worker. The producer and `offthread worker`
// must give ERR_QUEUE_UNAVAILABLE within their wait (`redisTimeout`, default 10 s), and a
// worker must exit on its first SIGTERM in every state. Each test has a bound
// (node:test's `timeout`) that turns a hang into a failure; nothing asserts a duration.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createQueue, createWorker } from 'offthread/queue';
import { startRedis } from '../../../scripts/redis-server.mjs';

const bin = fileURLToPath(new URL('../bin/offthread.js', import.meta.url));

/** A loopback port nothing listens on (connections are refused). */
async function refusedPort() {
  const srv = createServer();
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** A server that accepts connections and never answers a byte (a hung Redis). */
async function silentServer(t) {
  const sockets = new Set();
  const srv = createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => srv.close(resolve));
  });
  return `redis://127.0.0.1:${srv.address().port}`;
}

/**
 * `offthread worker` as a child; `until(text)` waits for a line, `exit` for the end. Killed
 * after the test whatever happened (a test that timed out leaves no process behind).
 */
function worker(t, url, ...args) {
  const child = spawn(process.execPath, [bin, 'worker', '--redis', url, '--threads', '1', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let log = '';
  const waiters = new Set();
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    log += d;
    for (const w of waiters) w();
  });
  const exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    exit,
    log: () => log,
    /** Resolves once stderr contains `text`; rejects if the process ends first. */
    until(text) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (log.includes(text)) {
            waiters.delete(check);
            resolve();
          }
        };
        waiters.add(check);
        check();
        exit.then(() => {
          if (!log.includes(text)) reject(new Error(`worker exited before "${text}": ${log}`));
        });
      });
    },
  };
}

test('producer, Redis refused: ready() and calls reject with ERR_QUEUE_UNAVAILABLE (default wait); close() returns', {
  timeout: 60_000,
}, async () => {
  const url = `redis://127.0.0.1:${await refusedPort()}`;
  const queue = createQueue({ url });
  const [ready, call] = await Promise.allSettled([queue.ready(), queue.md5.iterate('never', 10)]);
  for (const r of [ready, call]) {
    assert.equal(r.status, 'rejected');
    assert.equal(r.reason.code, 'ERR_QUEUE_UNAVAILABLE', String(r.reason?.stack));
    assert.match(r.reason.message, /127\.0\.0\.1:\d+/, 'the message names the address');
    assert.match(r.reason.message, /ECONNREFUSED/, 'and why');
  }
  // Still away: a new call fails at once with the same code, never waits again.
  await assert.rejects(queue.pi.estimate(10), { code: 'ERR_QUEUE_UNAVAILABLE' });
  assert.equal(queue.pending, 0);
  await queue.close();
});

test('producer, a Redis that never answers: calls reject within `redisTimeout`; close() returns', {
  timeout: 30_000,
}, async (t) => {
  const url = await silentServer(t);
  assert.throws(() => createQueue({ url, redisTimeout: 0 }), { code: 'ERR_INVALID_ARG' });
  const queue = createQueue({ url, redisTimeout: 300 });
  await assert.rejects(queue.qr.toPNG('never'), { code: 'ERR_QUEUE_UNAVAILABLE' });
  await assert.rejects(queue.counts(), { code: 'ERR_QUEUE_UNAVAILABLE' });
  await queue.close();
});

test('createWorker, Redis refused: ready() rejects with ERR_QUEUE_UNAVAILABLE; close() returns', {
  timeout: 30_000,
}, async () => {
  const w = createWorker({ url: `redis://127.0.0.1:${await refusedPort()}`, threads: 1, redisTimeout: 300 });
  await assert.rejects(w.ready(), { code: 'ERR_QUEUE_UNAVAILABLE' });
  await w.close();
});

test('offthread worker, Redis refused: a typed error and exit 1 (default wait)', { timeout: 60_000 }, async (t) => {
  const w = worker(t, `redis://127.0.0.1:${await refusedPort()}`);
  const { code } = await w.exit;
  assert.equal(code, 1, w.log());
  assert.match(w.log(), /ERR_QUEUE_UNAVAILABLE: .*ECONNREFUSED/, w.log());
});

test('offthread worker: SIGTERM while it waits for a Redis that never answers → exits 0', {
  timeout: 30_000,
}, async (t) => {
  // A wait far beyond the test's bound: only the signal can end it in time.
  const w = worker(t, await silentServer(t), '--redis-timeout', '600000');
  await w.until('connecting');
  w.child.kill('SIGTERM');
  const { code } = await w.exit;
  assert.equal(code, 0, w.log());
  assert.match(w.log(), /stopped \(0 completed, 0 failed\)/);
});

test('offthread worker: Redis gone while idle, then SIGTERM → exits', { timeout: 60_000 }, async (t) => {
  const redis = await startRedis();
  const w = worker(t, redis.url);
  try {
    await w.until('ready');
    await redis.stop();
    w.child.kill('SIGTERM');
    const { code } = await w.exit;
    assert.equal(code, 0, w.log());
  } finally {
    if (w.child.exitCode === null) w.child.kill('SIGKILL');
    await redis.stop();
  }
});

test('offthread worker: Redis dying as SIGTERM arrives, nothing running → exits 0 at once', {
  timeout: 60_000,
}, async (t) => {
  // The close begins while the client still sees Redis up, and Redis goes away under it,
  // after BullMQ's close has sent its QUIT: ioredis ends that QUIT when the socket dies,
  // so this order passed before d28c8c9 too. The order CI hit (the connections gone
  // before QUIT) is the createWorker test below, which the old close failed.
  const redis = await startRedis();
  const w = worker(t, redis.url);
  try {
    await w.until('ready');
    // Frozen, Redis keeps its sockets: the worker's close starts against a Redis it sees
    // up. Then it dies, and the sockets close under the close.
    process.kill(redis.pid, 'SIGSTOP');
    w.child.kill('SIGTERM');
    await w.until('SIGTERM');
    process.kill(redis.pid, 'SIGKILL');
    const { code } = await w.exit;
    assert.equal(code, 0, w.log());
    assert.doesNotMatch(w.log(), /ERR_QUEUE_UNAVAILABLE/);
  } finally {
    if (w.child.exitCode === null) w.child.kill('SIGKILL');
    await redis.stop();
  }
});

/**
 * The child test-fixtures/queue-close-exit.mjs in `mode`: how its close() settled, and
 * that it then ended by itself (a held process is ended by the test's timeout, failing it).
 */
async function closeInChild(t, mode) {
  const redis = await startRedis();
  t.after(() => redis.stop());
  const fixture = fileURLToPath(new URL('../test-fixtures/queue-close-exit.mjs', import.meta.url));
  const child = spawn(process.execPath, [fixture, String(redis.port), mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  for (const s of [child.stdout, child.stderr]) s.setEncoding('utf8').on('data', (d) => (out += d));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  assert.equal(code, 0, out);
  return out;
}

test('createWorker: Redis going away as close() begins, nothing running → close() resolves', {
  timeout: 60_000,
}, async (t) => {
  // The race CI hit (d28c8c9): close() starts while the client still sees Redis up, and
  // the connections die before BullMQ's close has said QUIT — here cut in the same turn,
  // so the order is fixed. With nothing running there is nothing to record: close() must
  // drop the connections, not wait `redisTimeout` for BullMQ and reject with
  // ERR_QUEUE_UNAVAILABLE. In a child, which must then end by itself: BullMQ's close never
  // reached its lock manager, whose renewal timer kept the process alive.
  assert.match(await closeInChild(t, 'cut'), /^closed$/m);
});

test('createWorker: Redis hanging with its connections open, nothing running → close() resolves', {
  timeout: 60_000,
}, async (t) => {
  // A hung Redis never looks down (its connections stay ready), and BullMQ's close waits
  // for its QUIT for ever: close() with nothing running takes `redisTimeout` ms of that
  // as Redis gone (it never settled before).
  assert.match(await closeInChild(t, 'hang'), /^closed$/m);
});

test('offthread worker: Redis gone under a running job, then SIGTERM → exits 1 naming the code', {
  timeout: 60_000,
}, async (t) => {
  const redis = await startRedis();
  const queue = createQueue({ url: redis.url, redisTimeout: 1000 });
  const w = worker(t, redis.url, '--redis-timeout', '1000');
  try {
    await w.until('ready');
    const call = queue.md5.iterate('long', 1e9); // minutes of MD5: running when Redis goes
    call.catch(() => {});
    const db = createQueue({ url: redis.url });
    for (let i = 0; i < 400 && (await db.counts()).active === 0; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal((await db.counts()).active, 1, 'the job never started');
    await db.close();
    await redis.stop();
    w.child.kill('SIGTERM');
    const { code } = await w.exit;
    assert.equal(code, 1, w.log());
    assert.match(w.log(), /ERR_QUEUE_UNAVAILABLE/, w.log());
  } finally {
    if (w.child.exitCode === null) w.child.kill('SIGKILL');
    await queue.close();
    await redis.stop();
  }
});
