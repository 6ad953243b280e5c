// Job fields injected into Redis (by another writer, a bug, a corruption) on a real
// redis-server: a worker checks every field it reads, and each bad one fails the job
// once, unretried, with a registry code. Jobs are made by a real producer on a queue no
// worker serves yet, edited in Redis, then a worker is started on that queue.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { errorRegistry, md5 } from 'offthread';
import { createQueue, createWorker } from 'offthread/queue';
import { startRedis } from '../../../scripts/redis-server.mjs';

let redis;
let db;

before(async () => {
  redis = await startRedis();
  db = new Redis(redis.url);
});

after(async () => {
  db?.disconnect();
  await redis?.stop();
});

let queues = 0;

/**
 * One call through a producer whose job is edited in Redis before any worker sees it.
 * `edit(id, key)` changes the job hash (`key`); resolves with the call's outcome, the
 * job as BullMQ finished it, and the warnings the process printed meanwhile.
 */
async function edited(call, edit) {
  const name = `forged-${++queues}`;
  const queue = createQueue({ url: redis.url, name });
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  const raw = new Queue(name, { connection: { host: '127.0.0.1', port: redis.port } });
  const events = new QueueEvents(name, { connection: { host: '127.0.0.1', port: redis.port } });
  await events.waitUntilReady();
  let worker;
  try {
    const outcome = call(queue).then(
      (value) => ({ value }),
      (error) => ({ error }),
    );
    let ids = [];
    for (let i = 0; i < 400 && ids.length === 0; i++) {
      ids = await db.lrange(`bull:${name}:wait`, 0, -1);
      if (ids.length === 0) await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(ids.length, 1, 'the job is waiting');
    const id = ids[0];
    await edit(id, `bull:${name}:${id}`, name);
    const finished = new Promise((resolve) => {
      events.on('completed', ({ jobId }) => jobId === id && resolve('completed'));
      events.on('failed', ({ jobId }) => jobId === id && resolve('failed'));
    });
    worker = createWorker({ url: redis.url, name, threads: 1, concurrency: 1, md5Segment: 1000 });
    await finished;
    // The hash as stored (BullMQ's getJob would parse the data again).
    const h = await db.hgetall(`bull:${name}:${id}`);
    const job = { attemptsMade: Number(h.attemptsMade ?? h.atm ?? 0), failedReason: h.failedReason };
    return { ...(await outcome), job };
  } finally {
    process.off('warning', onWarning);
    await worker?.close();
    await events.close();
    await raw.close();
    await queue.close();
    if (warnings.length > 0) assert.fail(`warnings: ${warnings.map((w) => `${w.name}: ${w.message}`).join('; ')}`);
  }
}

/** Replaces fields of a job's data (JSON) in Redis. */
const patchData = (patch) => async (_id, key) => {
  const data = JSON.parse(await db.hget(key, 'data'));
  await db.hset(key, 'data', JSON.stringify({ ...data, ...patch }));
};

/** The call failed with `code`, and the job once, unretried, with the same code. */
function failedOnce(r, code, why) {
  assert.ok(r.error, `${why}: the call succeeded with ${JSON.stringify(r.value)}`);
  assert.equal(r.error.code, code, `${why}: ${r.error.stack}`);
  assert.ok(r.job, `${why}: the job is gone`);
  assert.equal(r.job.attemptsMade, 1, `${why}: tried ${r.job.attemptsMade} times`);
  assert.match(r.job.failedReason, new RegExp(`^${code}: `), why);
  const reasonCode = /^([A-Z0-9_]+): /.exec(r.job.failedReason)?.[1];
  assert.ok(reasonCode in errorRegistry, `${why}: ${reasonCode} is a registry code`);
}

test('data that is not JSON: the job fails once with ERR_QUEUE_PAYLOAD (it stayed active for ever)', {
  timeout: 60_000,
}, async () => {
  const r = await edited(
    (q) => q.md5.iterate('x', 10),
    async (_id, key) => db.hset(key, 'data', '{"v":1,"b":'),
  );
  failedOnce(r, 'ERR_QUEUE_PAYLOAD', 'data not JSON');
  assert.match(r.job.failedReason, /not JSON/);
});

test('a forged checkpoint at the end is refused, not returned as the digest', { timeout: 60_000 }, async () => {
  const forged = 'f'.repeat(32);
  const r = await edited((q) => q.md5.iterate('x', 3000), patchData({ ck: [3000, forged] }));
  failedOnce(r, 'ERR_QUEUE_PAYLOAD', 'checkpoint at the end');
});

test('a checkpoint of the wrong shape fails with a registry code (was W0007, unregistered)', {
  timeout: 60_000,
}, async () => {
  for (const ck of [[1000, 42], [1000, 'not hex'], ['1000', 'a'.repeat(32)], [0.5, 'a'.repeat(32)], {}]) {
    const r = await edited((q) => q.md5.iterate('x', 3000), patchData({ ck }));
    failedOnce(r, 'ERR_QUEUE_PAYLOAD', `checkpoint ${JSON.stringify(ck)}`);
  }
});

test('a real checkpoint still resumes: the digest equals the local loop', { timeout: 60_000 }, async () => {
  const ck = [1000, md5.iterateSync('x', 1000)];
  const r = await edited((q) => q.md5.iterate('x', 3000), patchData({ ck }));
  assert.equal(r.error, undefined, r.error?.stack);
  assert.equal(r.value, md5.iterateSync('x', 3000));
});

test('a deadline past 2^31 ms runs the job (it timed out at once with a TimeoutOverflowWarning)', {
  timeout: 60_000,
}, async () => {
  const r = await edited((q) => q.md5.iterate('x', 3000), patchData({ dl: Date.now() + 2 ** 31 + 60_000 }));
  assert.equal(r.error, undefined, r.error?.stack);
  assert.equal(r.value, md5.iterateSync('x', 3000));
});

test('deadlines no producer writes fail once with ERR_QUEUE_PAYLOAD', { timeout: 60_000 }, async () => {
  for (const dl of [Date.now() + 2 ** 40, 'tomorrow', null]) {
    const r = await edited((q) => q.md5.iterate('x', 10), patchData({ dl }));
    failedOnce(r, 'ERR_QUEUE_PAYLOAD', `deadline ${JSON.stringify(dl)}`);
  }
});

test('a blob key of the wrong Redis type fails once with ERR_QUEUE_PAYLOAD (was a bare WRONGTYPE, retried)', {
  timeout: 60_000,
}, async () => {
  const r = await edited(
    (q) => q.md5.hex(new Uint8Array(5000).fill(7)),
    async (_id, key) => {
      const { k } = JSON.parse(await db.hget(key, 'data'));
      await db.del(k);
      await db.hset(k, 'field', 'value');
    },
  );
  failedOnce(r, 'ERR_QUEUE_PAYLOAD', 'WRONGTYPE blob');
});

test('a payload key that is not the job’s own blob is never read', { timeout: 60_000 }, async () => {
  const r = await edited(
    (q) => q.md5.hex(new Uint8Array(5000).fill(7)),
    async (_id, key) => {
      // Another key holding a valid message: the worker must still not read it.
      const { k } = JSON.parse(await db.hget(key, 'data'));
      await db.set('secret', await db.getBuffer(k));
      await patchData({ k: 'secret' })(_id, key);
    },
  );
  failedOnce(r, 'ERR_QUEUE_PAYLOAD', 'foreign key');
});

test('other injected fields: unknown keys, both payloads, bad base64, another version', {
  timeout: 90_000,
}, async () => {
  for (const patch of [
    { extra: 1 },
    { k: 'bull:x:offthread-blob:y' },
    { b: '!!!!' },
    { v: 2 },
    { ck: [1, 'a'.repeat(32)] },
  ]) {
    const r = await edited((q) => q.pi.estimate(1000), patchData(patch));
    failedOnce(r, 'ERR_QUEUE_PAYLOAD', JSON.stringify(patch));
  }
});

test('a forged result naming another key: the producer neither reads nor deletes it', { timeout: 60_000 }, async () => {
  await db.set('precious', 'keep me');
  const name = 'forged-result';
  const queue = createQueue({ url: redis.url, name });
  const raw = new Queue(name, { connection: { host: '127.0.0.1', port: redis.port } });
  try {
    const call = queue.md5.hex('x');
    let ids = [];
    for (let i = 0; i < 400 && ids.length === 0; i++) {
      ids = await db.lrange(`bull:${name}:wait`, 0, -1);
      if (ids.length === 0) await new Promise((r) => setTimeout(r, 10));
    }
    // Somebody else completes the job with a result that names another key.
    const { Worker } = await import('bullmq');
    const fake = new Worker(name, async () => ({ k: 'precious' }), {
      connection: { host: '127.0.0.1', port: redis.port },
    });
    await assert.rejects(call, { code: 'ERR_QUEUE_PAYLOAD' });
    await fake.close();
    assert.equal(await db.get('precious'), 'keep me');
  } finally {
    await raw.close();
    await queue.close();
  }
});
