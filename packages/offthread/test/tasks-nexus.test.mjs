// The Nexus shapes with the user's own JS on the workers: all() takes task exports and
// task calls `[work.fn, ...args]`, Emitter listeners can be task exports; results in
// order, the first failure aborting the others.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { threadId } from 'node:worker_threads';
import { all, Emitter, Pool, tasks } from 'offthread';

const fixture = new URL('./fixtures/nexus-work.mjs', import.meta.url);
const flag = () => new Int32Array(new SharedArrayBuffer(8));
const until = async (check, what) => {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(check(), what);
};
/** untilAborted(flag) is running on its worker. */
const started = (f) => until(() => Atomics.load(f, 1) === 1, 'the task started');
const sawAbort = (f) => until(() => Atomics.load(f, 0) === 1, 'the running task saw its abort');

describe('all() with task exports', () => {
  const pool = new Pool({ threads: 2 });
  const work = tasks(fixture, { pool });
  after(() => pool.close());

  test('task calls run on the workers, results in entry order, mixed with context functions', async () => {
    const results = await all([[work.add, 2, 3], work.thread, (ctx) => ctx.signal.aborted, [work.spin, 1, 'x']]);
    assert.equal(results[0], 5);
    assert.notEqual(results[1], threadId);
    assert.equal(results[2], false);
    assert.equal(results[3].tag, 'x');
    assert.notEqual(results[3].threadId, threadId);
  });

  test('the calls run at once, one per worker (a rendezvous only both together pass)', async () => {
    const counter = flag();
    const [a, b] = await all([
      [work.meet, counter, 2],
      [work.meet, counter, 2],
    ]);
    assert.notEqual(a, b);
  });

  test("a task export's error rejects all() with its name, code and message, and aborts the others", async () => {
    const aborted = flag();
    await assert.rejects(
      all([
        [work.untilAborted, aborted],
        [work.failOnceStarted, aborted, 'no listener'],
      ]),
      (err) => {
        assert.equal(err.name, 'RangeError');
        assert.equal(err.code, 'E_LISTENER');
        assert.equal(err.message, 'no listener');
        return true;
      },
    );
    // The sibling's signal aborted on its worker (its call rejected at once; its code saw the abort).
    await sawAbort(aborted);
  });

  test("all()'s signal aborts running task exports", async () => {
    const aborted = flag();
    const controller = new AbortController();
    const running = all([[work.untilAborted, aborted]], { signal: controller.signal });
    await started(aborted);
    controller.abort();
    await assert.rejects(running, { code: 'ERR_ABORTED' });
    await sawAbort(aborted);
  });

  test("all()'s pool runs the task exports when it is given one", async () => {
    const other = new Pool({ threads: 1 });
    try {
      await all([[work.add, 1, 1]], { pool: other });
      assert.equal(other.stats().tasks?.completed, 1);
    } finally {
      await other.close();
    }
  });

  test('bad entries are refused before anything runs', async () => {
    await assert.rejects(all([1]), { code: 'ERR_INVALID_ARG' });
    await assert.rejects(all([[(a) => a, 1]]), (err) => {
      assert.equal(err.code, 'ERR_INVALID_ARG');
      assert.match(err.message, /tasks\[0\].*task export/);
      return true;
    });
    await assert.rejects(all([[]]), { code: 'ERR_INVALID_ARG' });
    await assert.rejects(all('x'), { code: 'ERR_INVALID_ARG' });
  });
});

describe('Emitter with task-export listeners', () => {
  const pool = new Pool({ threads: 2 });
  const work = tasks(fixture, { pool });
  after(() => pool.close());

  test('task listeners run on the workers with the payload alone; results in listener order', async () => {
    const emitter = new Emitter();
    emitter.on('job', work.spin);
    emitter.on('job', (ms, ctx) => `loop saw ${ms} (${typeof ctx.signal})`);
    emitter.on('job', work.thread);
    const [spun, js, thread] = await emitter.emit('job', 5);
    assert.equal(spun.tag, null);
    assert.notEqual(spun.threadId, threadId);
    assert.equal(js, 'loop saw 5 (object)');
    assert.notEqual(thread, threadId);
  });

  test('task listeners run at once on both workers (a rendezvous only both together pass)', async () => {
    const emitter = new Emitter({ pool });
    emitter.on('meet', work.meet).on('meet', work.meet);
    const [a, b] = await emitter.emit('meet', flag());
    assert.notEqual(a, b);
  });

  test("the first listener's failure rejects emit and aborts the other listeners", async () => {
    const aborted = flag();
    const emitter = new Emitter();
    emitter.on('e', work.untilAborted);
    emitter.on('e', async (f) => {
      await started(f);
      throw Object.assign(new Error('loop listener failed'), { code: 'E_LOOP' });
    });
    await assert.rejects(emitter.emit('e', aborted), { code: 'E_LOOP' });
    await sawAbort(aborted);
    const emitter2 = new Emitter();
    emitter2.on('e', work.thread).on('e', work.fail);
    await assert.rejects(emitter2.emit('e', 'bad payload'), { code: 'E_LISTENER', name: 'RangeError' });
  });

  test("emit's signal reaches task listeners", async () => {
    const aborted = flag();
    const emitter = new Emitter({ pool });
    emitter.on('e', work.untilAborted);
    const controller = new AbortController();
    const emitted = emitter.emit('e', aborted, { signal: controller.signal });
    await started(aborted);
    controller.abort();
    await assert.rejects(emitted, { code: 'ERR_ABORTED' });
    await sawAbort(aborted);
  });

  test('off() removes a task listener', async () => {
    const emitter = new Emitter({ pool });
    emitter.on('e', work.add).on('e', work.thread).off('e', work.add);
    assert.equal(emitter.listenerCount('e'), 1);
    const [thread] = await emitter.emit('e', 1);
    assert.notEqual(thread, threadId);
  });
});

test('types: task calls are checked against the export; listeners and filters take task exports', () => {
  // Every @ts-expect-error in the fixture must find its error: a type too loose fails too.
  const tsc = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));
  const file = fileURLToPath(new URL('./fixtures/nexus-types.mts', import.meta.url));
  const flags = ['--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext'];
  const r = spawnSync(process.execPath, [tsc, ...flags, '--types', 'node', file], { encoding: 'utf8' });
  assert.equal(r.stdout + r.stderr, '', 'tsc found errors');
  assert.equal(r.status, 0);
});
