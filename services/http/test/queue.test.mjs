// QUEUE_URL: the service's heavy routes enqueue BullMQ jobs (offthread/queue) that an
// offthread worker runs; answers equal the local ones, /metrics shows the queue's depth
// and the queued calls' latency. A real redis-server on a random port.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import offthread from 'offthread';
import { createWorker } from 'offthread/queue';
import { startRedis } from '../../../scripts/redis-server.mjs';
import { createQueueKernels } from '../src/queue.mjs';
import { decodeQrDataURL, get, md5LoopReference, startServer } from '../test-support/helpers.mjs';
import { spawnService } from '../test-support/process.mjs';

let redis;
let worker;

before(async () => {
  redis = await startRedis();
  worker = createWorker({ url: redis.url, concurrency: 4, threads: 2 });
  await worker.ready();
});

/** The worker's completed count once it reaches `n` (its event fires after the producer's). */
async function completedReaches(n) {
  for (let i = 0; i < 200 && worker.stats().completed < n; i++) await new Promise((r) => setTimeout(r, 10));
  return worker.stats().completed;
}

after(async () => {
  await worker?.close();
  await redis?.stop();
});

test('routes answer through the queue with the local results; /metrics shows the queue', async (t) => {
  const queued = createQueueKernels(redis.url);
  t.after(() => queued.close());
  const { app } = await startServer(t, { kernels: queued.kernels, registerMetrics: queued.registerMetrics });
  const before = worker.stats().completed;

  const piRes = await get(app, '/pi?samples=1000000&seed=9');
  assert.equal(piRes.status, 200, JSON.stringify(piRes.body));
  assert.equal(piRes.body.inside, offthread.pi.estimateSync(1e6, { seed: 9 }).inside);
  assert.equal(piRes.body.variant, 'queue');

  const md5Res = await get(app, '/md5?text=abc&rounds=5000');
  assert.equal(md5Res.body.digest, md5LoopReference('abc', 5000));

  const qrRes = await get(app, '/qr?text=through%20redis');
  const { result } = qrRes.body;
  assert.equal(result, offthread.qr.toDataURLSync('through redis', { size: 128, ecc: 'M', margin: 4 }));
  assert.equal(Buffer.from(decodeQrDataURL(result).bytes).toString(), 'through redis');

  assert.equal((await completedReaches(before + 3)) - before, 3, 'each route ran as one job on the worker');

  const tooLong = await get(app, `/qr?text=${'x'.repeat(3000)}`);
  assert.equal(tooLong.status, 400);
  assert.equal(tooLong.body.error.code, 'ERR_TEXT_TOO_LONG');

  const metrics = (await get(app, '/metrics')).body;
  assert.match(metrics, /^offthread_queue_jobs\{state="waiting"\} 0$/m);
  assert.match(metrics, /^offthread_queue_jobs\{state="completed"\} [1-9]/m);
  assert.match(metrics, /^offthread_queue_job_duration_seconds_count\{kernel="pi",outcome="ok"\} 1$/m);
  assert.match(metrics, /^offthread_queue_job_duration_seconds_count\{kernel="qr",outcome="ok"\} 1$/m);
  assert.match(metrics, /^offthread_queue_calls_pending 0$/m);
});

test('main.mjs with QUEUE_URL enqueues, and shuts down cleanly on SIGTERM', async () => {
  const before = worker.stats().completed;
  const service = spawnService([], { QUEUE_URL: redis.url });
  const url = await service.url;
  const res = await fetch(`${url}/md5?text=main&rounds=100`);
  assert.equal(res.status, 200);
  assert.equal((await res.json()).digest, md5LoopReference('main', 100));
  assert.equal((await completedReaches(before + 1)) - before, 1);
  const metrics = await (await fetch(`${url}/metrics`)).text();
  assert.match(metrics, /^offthread_queue_job_duration_seconds_count\{kernel="md5.iterate",outcome="ok"\} 1$/m);
  service.child.kill('SIGTERM');
  const { code } = await service.exit;
  assert.equal(code, 0, service.output());
});
