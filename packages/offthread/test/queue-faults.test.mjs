// offthread/queue under faults, with `offthread worker` processes on a real redis-server:
// a worker SIGKILLed mid-job (its jobs run again on another, none lost, none twice), Redis
// killed and restarted under load (everyone reconnects, accepted jobs complete), and no
// stalled job while the kernels keep every core busy (the event loop renews the locks), and
// a producer whose unread events were trimmed away (it notices and reads the outcomes).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { md5, pi } from 'offthread';
import { createQueue } from 'offthread/queue';
import { startRedis } from '../../../scripts/redis-server.mjs';
import { spawnWorker, watch } from './queue-procs.mjs';

const FAST_LOCKS = ['--lock-duration', '1000', '--stalled-interval', '500'];

test('a worker SIGKILLed mid-job: its jobs run again on another worker, none lost, none done twice', async () => {
  const redis = await startRedis();
  const queue = createQueue({ url: redis.url });
  const events = await watch(redis.url);
  try {
    const a = await spawnWorker(redis.url, '--concurrency', '4', '--threads', '1', ...FAST_LOCKS);
    const texts = Array.from({ length: 6 }, (_, i) => `job-${i}`);
    const rounds = 1_500_000;
    const calls = texts.map((t) => queue.md5.iterate(t, rounds));
    // Kill A only once it is inside jobs (4 of them active at once).
    while (events.seen.active.size < 4) await new Promise((r) => setTimeout(r, 10));
    await a.kill();
    const b = await spawnWorker(redis.url, '--concurrency', '4', '--threads', '1', ...FAST_LOCKS);
    const digests = await Promise.all(calls);
    assert.deepEqual(
      digests,
      texts.map((t) => md5.iterateSync(t, rounds)),
    );
    const stats = await b.stop();
    assert.ok(stats.completed >= 4, `B completed ${stats.completed}: the killed worker's jobs ran there`);
    assert.equal(events.seen.completed.size, texts.length, 'every job completed');
    for (const [id, n] of events.seen.completed) assert.equal(n, 1, `job ${id} completed ${n} times`);
    assert.equal(events.seen.failed.size, 0);
    assert.ok(events.seen.stalled.size >= 1, 'the killed jobs were found stalled and put back');
  } finally {
    await events.close();
    await queue.close();
    await redis.stop();
  }
});

test('Redis killed and restarted under load: producers and workers reconnect, accepted jobs complete once', async () => {
  const redis = await startRedis({ persist: true });
  const queue = createQueue({ url: redis.url, piChunkSamples: 2 ** 24 });
  const events = await watch(redis.url);
  try {
    const w = await spawnWorker(redis.url, '--concurrency', '4', '--threads', '2');
    const md5Calls = Array.from({ length: 40 }, (_, i) => queue.md5.iterate(`r${i}`, 20_000 + i));
    const piCall = queue.pi.estimate(2 ** 27, { seed: 5 }); // 8 chunk jobs
    await new Promise((r) => setTimeout(r, 100));
    await redis.restart({ downMs: 300 });
    // Calls made right after the restart wait for the reconnection, then run.
    const later = Array.from({ length: 10 }, (_, i) => queue.md5.iterate(`late${i}`, 1000));
    const [digests, p, lateDigests] = await Promise.all([Promise.all(md5Calls), piCall, Promise.all(later)]);
    digests.forEach((d, i) => {
      assert.equal(d, md5.iterateSync(`r${i}`, 20_000 + i));
    });
    lateDigests.forEach((d, i) => {
      assert.equal(d, md5.iterateSync(`late${i}`, 1000));
    });
    assert.equal(p.inside, (await pi.estimate(2 ** 27, { seed: 5 })).inside);
    const stats = await w.stop();
    // Exactly once as Redis recorded it: the 'completed' event is written by the same
    // script that completes the job (and the AOF syncs every write). The worker's own
    // count may be lower, never higher: a completion done in Redis whose reply was lost
    // with the connection is never acknowledged to the worker (56 or 57 of 58 in about
    // 1 run of 5 when it asserted that count).
    const jobs = 40 + 8 + 10;
    assert.equal(events.seen.completed.size, jobs, 'every job completed');
    for (const [id, n] of events.seen.completed) assert.equal(n, 1, `job ${id} completed ${n} times`);
    assert.equal(events.seen.failed.size, 0);
    assert.ok(stats.completed <= jobs, `the worker completed ${stats.completed} of ${jobs}`);
  } finally {
    await events.close();
    await queue.close();
    await redis.stop();
  }
});

test('no stalled job while the kernels keep every core busy (locks of 1 s, checked every 0.5 s)', async () => {
  const redis = await startRedis();
  const queue = createQueue({ url: redis.url });
  const events = await watch(redis.url);
  const cores = availableParallelism();
  try {
    const w = await spawnWorker(
      redis.url,
      '--concurrency',
      String(2 * cores),
      '--threads',
      String(cores),
      ...FAST_LOCKS,
    );
    // Each job takes well over a lock duration of CPU; together they saturate every core.
    const texts = Array.from({ length: 3 * cores }, (_, i) => `busy-${i}`);
    const rounds = 1_500_000;
    const digests = await Promise.all(texts.map((t) => queue.md5.iterate(t, rounds)));
    assert.deepEqual(
      digests,
      texts.map((t) => md5.iterateSync(t, rounds)),
    );
    assert.equal(events.seen.stalled.size, 0, 'no job was marked stalled');
    assert.equal((await w.stop()).completed, texts.length);
  } finally {
    await events.close();
    await queue.close();
    await redis.stop();
  }
});

test('events trimmed away before the producer read them: it notices and reads the outcome', async () => {
  const redis = await startRedis();
  const queue = createQueue({ url: redis.url, name: 'trim' });
  const db = new Redis(redis.url);
  const w = await spawnWorker(redis.url, '--queue', 'trim', '--threads', '1');
  try {
    assert.equal(await queue.md5.iterate('warm', 10), md5.iterateSync('warm', 10)); // its reader has read events
    // Long enough to checkpoint (progress events) between its start and its end.
    const rounds = 3_500_000;
    const call = queue.md5.iterate('trimmed', rounds, { timeout: 20_000 });
    while ((await db.llen('bull:trim:active')) === 0) await new Promise((r) => setTimeout(r, 5));
    // This loop, and the producer's event reader with it, stops while a helper waits for the
    // job to complete, then trims the stream past its events (BullMQ trims at ~10,000 under
    // a burst) and adds one event after them. The reader never sees the job's 'completed'.
    const helper = `
      const { Redis } = require(${JSON.stringify(fileURLToPath(import.meta.resolve('ioredis')))});
      const db = new Redis(process.argv[1]);
      (async () => {
        while ((await db.zcard('bull:trim:completed')) < 2) await new Promise((r) => setTimeout(r, 5));
        await db.xtrim('bull:trim:events', 'MAXLEN', 0);
        await db.xadd('bull:trim:events', '*', 'event', 'unrelated');
        db.disconnect();
      })();`;
    const r = spawnSync(process.execPath, ['-e', helper, redis.url], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    // The 30 s net per job would come after the call's 20 s timeout: only the trim check settles it.
    assert.equal(await call, md5.iterateSync('trimmed', rounds));
    await w.stop();
  } finally {
    if (w.child.exitCode === null && w.child.signalCode === null) await w.kill();
    db.disconnect();
    await queue.close();
    await redis.stop();
  }
});
