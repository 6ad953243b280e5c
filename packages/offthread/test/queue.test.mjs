// offthread/queue on a real redis-server (its own, on a random port): results equal the
// local calls, bad calls never reach Redis, poison jobs fail once with a code, payloads
// are stored as bytes, abort/timeout, and the generated payload schema has not drifted.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import jsQR from 'jsqr';
import { md5, pi, qr, schema } from 'offthread';
import { createQueue, createWorker } from 'offthread/queue';
import { PNG } from 'pngjs';
import { startRedis } from '../../../scripts/redis-server.mjs';

let redis;
let worker;
let queue;
let client;

before(async () => {
  redis = await startRedis();
  worker = createWorker({ url: redis.url, concurrency: 4, threads: 2, md5Segment: 100_000 });
  queue = createQueue({ url: redis.url, piChunkSamples: 2 ** 22 });
  client = new Redis(redis.url);
  await Promise.all([worker.ready(), queue.ready()]);
});

after(async () => {
  await queue?.close();
  await worker?.close();
  client?.disconnect();
  await redis?.stop();
});

test('π over the queue: chunked by jump-ahead, `inside` equals the local call', async () => {
  const progress = [];
  for (const [samples, seed] of [
    [10 ** 7 + 3, 1],
    [12_345, -99],
    [3n * 2n ** 22n, 2 ** 40],
  ]) {
    const r = await queue.pi.estimate(samples, { seed, onProgress: (f) => progress.push(f) });
    const local = await pi.estimate(samples, { seed });
    assert.equal(r.inside, local.inside, `${samples} samples, seed ${seed}`);
    assert.equal(r.estimate, local.estimate);
    assert.equal(r.samples, Number(samples));
    assert.equal(r.variant, 'queue');
  }
  assert.equal(progress.at(-1), 1);
  const zero = await queue.pi.estimate(0);
  assert.equal(zero.inside, 0);
  assert.ok(Number.isNaN(zero.estimate));
  const split = await queue.pi.estimate(1e6, { seed: 3, chunks: 7 });
  assert.equal(split.jobs, 7);
  assert.equal(split.inside, pi.estimateSync(1e6, { seed: 3 }).inside);
});

test('MD5 over the queue equals the local digests (loops checkpoint past a segment)', async () => {
  const progress = [];
  assert.equal(
    await queue.md5.iterate('abc', 350_000, { onProgress: (f) => progress.push(f) }),
    md5.iterateSync('abc', 350_000),
  );
  assert.deepEqual(
    progress.map((f) => f.toFixed(3)),
    ['0.286', '0.571', '0.857'],
  );
  const start = md5.iterateSync('x', 10);
  assert.equal(await queue.md5.iterate('x', 1000, { start }), md5.iterateSync('x', 1010));
  assert.equal(await queue.md5.iterate('', 0), '');
  assert.equal(await queue.md5.hex('héllo'), md5.hex('héllo'));
  const big = new Uint8Array(300_000).map((_, i) => (i * 31) & 255);
  assert.equal(await queue.md5.hex(big), md5.hex(big));
});

test('QR over the queue: the same PNG bytes as the local call, and it decodes', async () => {
  const png = await queue.qr.toPNG('queued hello', { size: 200, ecc: 'Q', margin: 2 });
  assert.ok(Buffer.isBuffer(png));
  assert.deepEqual(png, await qr.toPNG('queued hello', { size: 200, ecc: 'Q', margin: 2 }));
  const image = PNG.sync.read(png);
  assert.equal(jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data, 'queued hello');
  const large = await queue.qr.toPNG('x'.repeat(2000), { size: 4096 });
  assert.ok(large.length > 1024, 'large enough to travel as a blob');
  assert.deepEqual(large, await qr.toPNG('x'.repeat(2000), { size: 4096 }));
});

test('many calls in one tick: each gets its own result; one aborted in the tick never reaches Redis', async () => {
  const events = 'bull:offthread:events';
  const mark = (await client.xrevrange(events, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
  const ac = new AbortController();
  const n = 400;
  const big = (i) => new Uint8Array(3000).map((_, j) => (i * 131 + j * 7) & 255); // blob-sized payloads
  const pis = Array.from({ length: n }, (_, i) => queue.pi.estimate(1000 + i, { seed: i + 1 }));
  const hexes = Array.from({ length: 20 }, (_, i) => queue.md5.hex(i % 2 ? `m${i}` : big(i)));
  const loops = Array.from({ length: 20 }, (_, i) => queue.md5.iterate(`t${i}`, 50 + i));
  const aborted = queue.md5.iterate('never runs', 1e9, { signal: ac.signal });
  ac.abort(); // same tick: before the batch goes to Redis
  const pngs = [queue.qr.toPNG('tick', { size: 64 }), queue.qr.toPNG('tock', { size: 64, ecc: 'H' })];
  await assert.rejects(aborted, { code: 'ERR_ABORTED' });
  const results = await Promise.all(pis);
  results.forEach((r, i) => {
    assert.equal(r.inside, pi.estimateSync(1000 + i, { seed: i + 1 }).inside, `call ${i}`);
    assert.equal(r.samples, 1000 + i);
  });
  assert.deepEqual(
    await Promise.all(hexes),
    Array.from({ length: 20 }, (_, i) => md5.hex(i % 2 ? `m${i}` : big(i))),
  );
  assert.deepEqual(
    await Promise.all(loops),
    Array.from({ length: 20 }, (_, i) => md5.iterateSync(`t${i}`, 50 + i)),
  );
  const [tick, tock] = await Promise.all(pngs);
  assert.deepEqual(tick, await qr.toPNG('tick', { size: 64 }));
  assert.deepEqual(tock, await qr.toPNG('tock', { size: 64, ecc: 'H' }));
  // Every job of the tick was added once, the aborted one never.
  const added = (await client.xrange(events, `(${mark}`, '+')).filter(([, f]) => f[1] === 'waiting');
  assert.equal(new Set(added.map(([, f]) => f[3])).size, n + 20 + 20 + 2);
  assert.equal(queue.pending, 0);
});

test('bad calls reject with the local codes and never reach Redis', async () => {
  const before = await queue.counts();
  const cases = [
    [() => queue.pi.estimate(-1), 'ERR_INVALID_SAMPLES'],
    [() => queue.pi.estimate(10, { seed: 0.5 }), 'ERR_INVALID_SEED'],
    [() => queue.pi.estimate(10, { sede: 1 }), 'ERR_INVALID_ARG'],
    [() => queue.pi.estimate(10, { chunks: 0 }), 'ERR_INVALID_ARG'],
    [() => queue.md5.iterate('a', 1.5), 'ERR_INVALID_ROUNDS'],
    [() => queue.md5.iterate('a', 1, { start: 'xyz' }), 'ERR_INVALID_ARG'],
    [() => queue.md5.hex(42), 'ERR_INVALID_ARG'],
    [() => queue.qr.toPNG('a', { ecc: 'Z' }), 'ERR_INVALID_QR_OPTIONS'],
    [() => queue.qr.toPNG('a', { timeout: -1 }), 'ERR_INVALID_ARG'],
    [() => queue.qr.toPNG('a', { onProgress: 1 }), 'ERR_INVALID_ARG'],
  ];
  for (const [call, code] of cases) await assert.rejects(call, (e) => e.code === code, code);
  const afterCounts = await queue.counts();
  assert.equal(afterCounts.completed + afterCounts.failed, before.completed + before.failed);
  assert.throws(() => createQueue({}), { code: 'ERR_INVALID_ARG' });
  assert.throws(() => createQueue({ url: 'http://x' }), { code: 'ERR_INVALID_ARG' });
  assert.throws(() => createWorker({ url: redis.url, concurrency: 0 }), { code: 'ERR_INVALID_ARG' });
});

test('poison jobs fail once with a code: no retry loop', async () => {
  // A kernel error (text beyond the QR capacity) passes the producer's checks.
  await assert.rejects(queue.qr.toPNG('x'.repeat(5000)), { code: 'ERR_TEXT_TOO_LONG' });
  // A job somebody else added with garbage in it.
  const raw = new Queue('offthread', { connection: { host: '127.0.0.1', port: redis.port } });
  const events = new QueueEvents('offthread', { connection: { host: '127.0.0.1', port: redis.port } });
  await events.waitUntilReady();
  for (const [name, data] of [
    ['pi', { v: 1, b: 'bm90IGEgbWVzc2FnZQ==' }],
    ['pi', { v: 1, k: 'bull:offthread:offthread-blob:missing' }],
    ['nope', { v: 1, b: '' }],
  ]) {
    const job = await raw.add(name, data, { attempts: 5 });
    await assert.rejects(job.waitUntilFinished(events), /ERR_QUEUE_PAYLOAD/);
    const failed = await raw.getJob(job.id);
    assert.equal(failed.attemptsMade, 1, `${name}: tried once, not ${failed.attemptsMade} times`);
  }
  await events.close();
  await raw.close();
});

test('timeout and abort reject the call; workers stop at the deadline', async () => {
  await assert.rejects(queue.md5.iterate('slow', 1e9, { timeout: 100 }), { code: 'ERR_TIMEOUT' });
  const ac = new AbortController();
  const call = queue.md5.iterate('slow', 1e9, { signal: ac.signal });
  setTimeout(() => ac.abort(new Error('enough')), 50);
  await assert.rejects(call, (e) => e.code === 'ERR_ABORTED' && e.name === 'AbortError');
  await assert.rejects(queue.pi.estimate(10, { signal: AbortSignal.abort() }), { code: 'ERR_ABORTED' });
  // Both jobs stop on the worker (deadline / cancel message), not after 10^9 rounds.
  for (let i = 0; i < 400 && worker.stats().active > 0; i++) await new Promise((r) => setTimeout(r, 25));
  assert.equal(worker.stats().active, 0);
});

/** Bytes Redis holds for a key's value: a string's length, or a hash's fields and values. */
async function logicalBytes(key) {
  if ((await client.type(key)) === 'string') return client.strlen(key);
  const flat = await client.hgetallBuffer(key);
  return Object.entries(flat).reduce((sum, [k, v]) => sum + Buffer.byteLength(k) + v.length, 0);
}

test('a Buffer of n bytes costs at most 1.05 n in Redis (JSON of numbers: several times n)', async () => {
  const n = 1_100_000; // the 1.1 MB PDF of BullMQ's issue
  const data = new Uint8Array(n).map((_, i) => (i * 7919) & 255);
  // No worker on this queue yet: the job and its payload wait in Redis to be measured.
  const idle = createQueue({ url: redis.url, name: 'bytes' });
  const digest = idle.md5.hex(data);
  let keys = [];
  for (let i = 0; i < 200 && keys.length === 0; i++) {
    keys = await client.keys('bull:bytes:offthread-blob:*');
    if (keys.length === 0) await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(keys.length, 1);
  let jobKeys = [];
  for (let i = 0; i < 200 && jobKeys.length === 0; i++) {
    jobKeys = (await client.keys('bull:bytes:*')).filter((k) => /^bull:bytes:[0-9a-f-]{36}$/.test(k));
    if (jobKeys.length === 0) await new Promise((r) => setTimeout(r, 10));
  }
  // What Redis stores (the allocator rounds each value up to a size class on top:
  // MEMORY USAGE, reported by `npm run bench -- queue`).
  const stored = (await logicalBytes(keys[0])) + (await logicalBytes(jobKeys[0]));
  assert.ok(stored <= 1.05 * n, `${stored} bytes stored for ${n}`);
  // The same bytes as BullMQ job data: JSON.stringify turns them into an object of numbers.
  const raw = new Queue('raw', { connection: { host: '127.0.0.1', port: redis.port } });
  const job = await raw.add('x', { data: Buffer.from(data) });
  const json = await logicalBytes(`bull:raw:${job.id}`);
  assert.ok(json > 3 * n, `JSON stores ${json} bytes for ${n}`);
  await raw.close();
  const w = createWorker({ url: redis.url, name: 'bytes', concurrency: 1, threads: 1 });
  assert.equal(await digest, md5.hex(data));
  assert.deepEqual(await client.keys('bull:bytes:offthread-blob:*'), [], 'the payload blob is deleted');
  await w.close();
  await idle.close();
});

test('close() rejects waiting calls with ERR_QUEUE_CLOSED and refuses new ones', async () => {
  const q = createQueue({ url: redis.url, name: 'nobody-listens' });
  await q.ready();
  const waiting = assert.rejects(q.md5.hex('x'), { code: 'ERR_QUEUE_CLOSED' });
  await new Promise((r) => setTimeout(r, 50));
  await q.close();
  await waiting;
  await assert.rejects(q.md5.hex('x'), { code: 'ERR_QUEUE_CLOSED' });
});

test('the generated payload schema matches queue.km (drift check)', () => {
  const km = new URL('../../../crates/offthread-schema/schemas/queue.km', import.meta.url);
  const out = schema.compile(readFileSync(km, 'utf8'), {
    fileName: 'queue.km',
    stem: 'queue',
    ts: true,
    rust: false,
    runtimeImport: '../runtime.js',
  });
  assert.deepEqual(out.diagnostics, []);
  const committed = readFileSync(new URL('../src/schema/generated/queue.ts', import.meta.url), 'utf8');
  assert.ok(committed.startsWith('// Auto-generated by offthread-schema'), 'DO NOT EDIT header');
  assert.equal(committed, out.files[0].contents, 'stale: rerun offthread schema build (see docs/queue.md)');
});
