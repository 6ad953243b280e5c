// Two things browsers need of the tasks feature, checked in Node where every failure is
// easy to provoke: `exposeTasks` (a module that names its functions by side effect, as
// Vite's worker bundles must), and the job pool's message transport (MessageJobPool and
// the worker's serveByMessage: what a page without cross-origin isolation runs on) —
// results, errors, priorities, maxQueue, abort and grace, a dying worker, destroy.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, describe, test } from 'node:test';
import { exposeTasks, Pool, tasks } from 'offthread';

const require = createRequire(import.meta.url);
// The pool's internals (not exported by the package): the Node build's own file.
const { MessageJobPool } = require('../dist/pool/message-jobs.js');

const fixture = (name) => new URL(`../test-fixtures/tasks/${name}`, import.meta.url);
const codeOf = (p) =>
  p.then(
    () => 'resolved',
    (e) => e.code,
  );

describe('exposeTasks', () => {
  const pool = new Pool({ threads: 1 });
  after(() => pool.close());

  test('takes an object only (ERR_INVALID_ARG)', () => {
    for (const bad of [undefined, null, 42, 'fn']) {
      assert.throws(() => exposeTasks(bad), { code: 'ERR_INVALID_ARG' });
    }
  });

  test('a module with no exports runs the functions it exposed', async () => {
    const a = tasks(fixture('exposed-a.mjs'), { pool });
    assert.equal(await a.twice(21), 42);
  });

  test('two modules imported at once keep their own functions; exports stay too', async () => {
    const other = new Pool({ threads: 1 });
    try {
      const a = tasks(fixture('exposed-a.mjs'), { pool: other });
      const b = tasks(fixture('exposed-b.mjs'), { pool: other });
      assert.deepEqual(await Promise.all([a.which(), b.which(), b.exported()]), ['a', 'b', 'exported']);
    } finally {
      await other.close();
    }
  });
});

/** A message job pool whose function ids are the portable module's exports, in `names` order. */
function messagePool(names, options = {}) {
  const pool = new MessageJobPool({ threads: 2, maxQueue: 100, script: 'tasks', grace: 100, nice: 0, ...options });
  pool.setup({ kind: 'module', mod: 0, url: fixture('portable.mjs').href });
  names.forEach((name, fn) => {
    pool.setup({ kind: 'export', fn, mod: 0, name });
  });
  return pool;
}

describe('the message transport (MessageJobPool)', () => {
  test('results, thrown errors whole, streams, and ERR_TASK_DATA', async () => {
    const pool = messagePool(['add', 'fail', 'rows', 'returnFunction', 'echo']);
    try {
      assert.equal(await pool.run(0, [2, 3], {}), 5);
      await assert.rejects(pool.run(1, [], {}), (err) => {
        assert.ok(err instanceof RangeError);
        assert.equal(err.code, 'E_TASK');
        assert.equal(err.cause.message, 'inner cause');
        return true;
      });
      const items = [];
      for await (const row of await pool.run(2, [3], {})) items.push(row.i);
      assert.deepEqual(items, [0, 1, 2]);
      assert.equal(await codeOf(pool.run(3, [], {})), 'ERR_TASK_DATA');
      assert.equal(await codeOf(pool.run(4, [() => 1], {})), 'ERR_TASK_DATA');
      const stats = pool.stats();
      assert.deepEqual([stats.completed, stats.failed, stats.queued, stats.running], [2, 2, 0, 0]);
    } finally {
      await pool.close();
    }
  });

  test('high priority runs before low on a busy pool; maxQueue refuses the excess', async () => {
    const pool = messagePool(['hog', 'add'], { threads: 1, maxQueue: 3 });
    try {
      const order = [];
      const busy = pool.run(0, [100], {});
      const low = pool.run(1, ['low', ''], { priority: 'low' }).then((v) => order.push(v));
      const high = pool.run(1, ['high', ''], { priority: 'high' }).then((v) => order.push(v));
      const normal = pool.run(1, ['normal', ''], {}).then((v) => order.push(v));
      assert.equal(await codeOf(pool.run(1, [1, 1], {})), 'ERR_QUEUE_FULL');
      await Promise.all([busy, low, high, normal]);
      assert.deepEqual(order, ['high', 'normal', 'low']);
    } finally {
      await pool.close();
    }
  });

  test('an aborted CPU loop rejects at once; its worker is replaced after the grace; the pool goes on', async () => {
    const pool = new MessageJobPool({ threads: 2, maxQueue: 10, script: 'tasks', grace: 100, nice: 0 });
    pool.setup({ kind: 'module', mod: 0, url: fixture('flagged.mjs').href });
    pool.setup({ kind: 'export', fn: 0, mod: 0, name: 'hog' });
    pool.setup({ kind: 'export', fn: 1, mod: 0, name: 'add' });
    try {
      const flag = new Int32Array(new SharedArrayBuffer(4));
      const controller = new AbortController();
      const hogging = codeOf(pool.run(0, [flag, 5_000], { signal: controller.signal }));
      while (Atomics.load(flag, 0) === 0) await new Promise((r) => setTimeout(r, 5));
      const t0 = performance.now();
      controller.abort();
      assert.equal(await hogging, 'ERR_ABORTED');
      assert.ok(performance.now() - t0 < 1_000, 'rejected at once, not when the loop ends');
      // The other worker takes calls meanwhile; a queued call aborted never runs.
      const queued = new AbortController();
      const dropped = pool.run(1, [1, 2], { signal: queued.signal });
      queued.abort();
      assert.equal(await codeOf(dropped), 'ERR_ABORTED');
      assert.equal(await pool.run(1, [1, 2], {}), 3);
      for (let i = 0; i < 500 && pool.stats().replaced === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(pool.stats().replaced, 1);
      assert.deepEqual(await Promise.all([pool.run(1, [2, 2], {}), pool.run(1, [3, 3], {})]), [4, 6]);
    } finally {
      await pool.close();
    }
  });

  test('a call aborted before its worker started it is dropped there, and the worker is kept', async () => {
    const pool = new MessageJobPool({ threads: 1, maxQueue: 10, script: 'tasks', grace: 100, nice: 0 });
    pool.setup({ kind: 'module', mod: 0, url: fixture('slow-start.mjs').href });
    pool.setup({ kind: 'export', fn: 0, mod: 0, name: 'hog' });
    pool.setup({ kind: 'export', fn: 1, mod: 0, name: 'add' });
    try {
      // Its module still importing on the worker when the abort comes: dropped there, unrun.
      assert.equal(await codeOf(pool.run(0, [5_000], { timeout: 1 })), 'ERR_TIMEOUT');
      assert.equal(await pool.run(1, [1, 2], {}), 3);
      assert.equal(pool.stats().replaced, 0);
    } finally {
      await pool.close();
    }
  });

  test('busy until an aborted task has let go of its worker, then idle', async () => {
    const pool = new MessageJobPool({ threads: 1, maxQueue: 10, script: 'tasks', grace: 5_000, nice: 0 });
    pool.setup({ kind: 'module', mod: 0, url: fixture('flagged.mjs').href });
    pool.setup({ kind: 'export', fn: 0, mod: 0, name: 'hog' });
    const busy = [];
    pool.onBusy = (on) => busy.push(on);
    try {
      const flag = new Int32Array(new SharedArrayBuffer(4));
      const controller = new AbortController();
      const call = codeOf(pool.run(0, [flag, 200], { signal: controller.signal }));
      while (Atomics.load(flag, 0) === 0) await new Promise((r) => setTimeout(r, 5));
      controller.abort();
      assert.equal(await call, 'ERR_ABORTED');
      assert.deepEqual(busy, [true], 'still busy: the task runs on');
      for (let i = 0; i < 500 && busy.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(busy, [true, false]);
      assert.equal(pool.stats().replaced, 0);
    } finally {
      await pool.close();
    }
  });

  test('destroy rejects what is queued and running with ERR_POOL_CLOSED', async () => {
    const pool = messagePool(['hog']);
    const calls = [pool.run(0, [2_000], {}), pool.run(0, [2_000], {}), pool.run(0, [10], {})];
    await new Promise((r) => setTimeout(r, 50));
    pool.destroy();
    assert.deepEqual(await Promise.all(calls.map(codeOf)), ['ERR_POOL_CLOSED', 'ERR_POOL_CLOSED', 'ERR_POOL_CLOSED']);
    assert.equal(await codeOf(pool.run(0, [1], {})), 'ERR_POOL_CLOSED');
  });
});

describe('the message transport: a worker that dies', () => {
  test('fails only its task with ERR_WORKER_DIED; the next call runs on its replacement', async () => {
    const pool = new MessageJobPool({ threads: 1, maxQueue: 10, script: 'tasks', grace: 100, nice: 0 });
    pool.setup({ kind: 'module', mod: 0, url: fixture('work.mjs').href });
    pool.setup({ kind: 'export', fn: 0, mod: 0, name: 'add' });
    pool.setup({ kind: 'export', fn: 1, mod: 0, name: 'exit' });
    try {
      assert.equal(await pool.run(0, [1, 1], {}), 2);
      const [died, next] = await Promise.all([codeOf(pool.run(1, [3], {})), pool.run(0, [2, 2], {})]);
      assert.equal(died, 'ERR_WORKER_DIED');
      assert.equal(next, 4);
      assert.equal(pool.stats().replaced, 1);
    } finally {
      await pool.close();
    }
  });
});
