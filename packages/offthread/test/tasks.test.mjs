// Task modules on the pool's workers (`tasks()`): the behaviours piscina's own suite
// checks (results, errors, abort, timeouts, transfer lists, close/destroy, maxQueue,
// resource limits, worker death) on this API, with structuredClone as the oracle for
// what crosses.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, describe, test } from 'node:test';
import fc from 'fast-check';
import { currentTask, Pool, tasks } from 'offthread';

const fixture = (name) => new URL(`../test-fixtures/tasks/${name}`, import.meta.url);
const counter = () => new Int32Array(new SharedArrayBuffer(4));
const counterOf = (n) => new Int32Array(new SharedArrayBuffer(4 * n));

/** Rejects with `code` (and runs `check` on the error). */
async function rejectsWith(promise, code, check = () => {}) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.code, code, `${err.code}: ${err.message}`);
    check(err);
    return true;
  });
}

describe('tasks(): results', () => {
  const pool = new Pool({ threads: 2 });
  const work = tasks(fixture('work.mjs'), { pool });
  after(() => pool.close());

  test('sync and async exports resolve to their results, on worker threads', async () => {
    assert.equal(await work.add(2, 3), 5);
    assert.equal(await work.sleep(5, 'late'), 'late');
    assert.notEqual(await work.threadId(), 0);
  });

  test('what crosses equals structuredClone of it (slot codec and clone path alike)', async () => {
    const values = [
      undefined,
      null,
      true,
      -0,
      0.1,
      2 ** 31,
      -(2 ** 31),
      Number.NaN,
      'héllo ✓',
      'x'.repeat(5000),
      [1, [2, [3]], { a: 'b' }],
      { nested: { list: [1.5, 'two', null] } },
      new Uint8Array([1, 2, 3]),
      new Float64Array([1.5, -2]),
      new BigInt64Array([1n, -2n]),
      new Map([[1, { a: 1 }]]),
      new Set(['a']),
      new Date(0),
      /re/g,
      10n ** 30n,
      Object.assign(Object.create(null), { bare: true }),
    ];
    for (const [i, value] of values.entries())
      assert.deepEqual(await work.echo(value), structuredClone(value), `#${i}`);
    const anything = fc.anything({
      withBigInt: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withTypedArray: true,
      withNullPrototype: true,
      withSparseArray: false,
      withBoxedValues: false,
    });
    await fc.assert(
      fc.asyncProperty(anything, async (value) => {
        assert.deepEqual(await work.echo(value), structuredClone(value));
      }),
      { numRuns: 300, seed: 29 },
    );
  });

  test('many calls in flight each get their own result', async () => {
    const n = 20_000;
    const got = await Promise.all(Array.from({ length: n }, (_, i) => work.add(i, 0.5)));
    assert.deepEqual(
      got,
      Array.from({ length: n }, (_, i) => i + 0.5),
    );
  });

  test('CommonJS and (where Node strips types) TypeScript modules', async () => {
    const cjs = tasks(fixture('work.cjs'), { pool });
    assert.equal(await cjs.twice(21), 42);
    assert.equal(await cjs.kind(), 'function');
    const ts = tasks(fixture('work.ts'), { pool });
    const [major, minor] = process.versions.node.split('.').map(Number);
    if (major > 23 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18)) {
      assert.equal(await ts.greet('ts'), 'hello ts');
    } else {
      await rejectsWith(ts.greet('ts'), 'ERR_TASK_MODULE');
    }
  });

  test('an absolute path works like a file URL; progress reaches onProgress', async () => {
    const byPath = tasks(fixture('work.mjs').pathname, { pool });
    assert.equal(await byPath.add(1, 1), 2);
    const seen = [];
    assert.equal(await work.progress.with({ onProgress: (v) => seen.push(v) })(3), 3);
    assert.deepEqual(seen, [
      { step: 1, of: 3 },
      { step: 2, of: 3 },
      { step: 3, of: 3 },
    ]);
  });

  test("workers run below the event loop's priority (the pool's nice, default 10)", async (t) => {
    if (process.platform !== 'linux') return t.skip('threads are niced one by one on Linux only');
    assert.equal(await work.niceness(), 10);
    const plain = new Pool({ threads: 1, nice: 0 });
    assert.equal(await tasks(fixture('work.mjs'), { pool: plain }).niceness(), 0);
    await plain.close();
  });

  test('pool.stats() counts the tasks', async () => {
    const s = pool.stats().tasks;
    assert.equal(s.threads, 2);
    assert.ok(s.completed >= 20_000, JSON.stringify(s));
    assert.equal(s.queued, 0);
  });
});

describe('tasks(): streamed results', () => {
  const pool = new Pool({ threads: 1 });
  const work = tasks(fixture('work.mjs'), { pool });
  after(() => pool.close());

  test('an async generator export streams its items in order: for await on the call', async () => {
    const got = [];
    for await (const row of work.rows(1000)) got.push(row);
    assert.deepEqual(
      got,
      Array.from({ length: 1000 }, (_, i) => ({ i, square: i * i })),
    );
    const sync = [];
    for await (const i of work.syncRows(5)) sync.push(i);
    assert.deepEqual(sync, [0, 1, 2, 3, 4]);
    // An export that returns an iterator resolves to a stream.
    const later = [];
    for await (const row of await work.rowsLater(3)) later.push(row.i);
    assert.deepEqual(later, [0, 1, 2]);
  });

  test('back-pressure: an unread stream stops its generator within the window', async () => {
    const log = counterOf(2);
    const stream = await work.rows(1_000_000, log);
    const first = await stream.next();
    assert.deepEqual(first.value, { i: 0, square: 0 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(Atomics.load(log, 0) <= 40, `produced ${Atomics.load(log, 0)} rows ahead of one read`);
    await stream.return();
    await waitUntil(() => Atomics.load(log, 1) === 1); // its finally ran on the worker
    assert.equal(await work.add(1, 1), 2); // the worker is free again
  });

  test('break stops the generator; an error mid-stream rejects the loop', async () => {
    const log = counterOf(2);
    for await (const row of work.rows(1_000_000, log)) if (row.i === 10) break;
    await waitUntil(() => Atomics.load(log, 1) === 1);
    assert.ok(Atomics.load(log, 0) < 100);
    const seen = [];
    await assert.rejects(
      (async () => {
        for await (const v of work.failingRows()) seen.push(v);
      })(),
      { name: 'TypeError', message: 'row 2 is bad' },
    );
    assert.deepEqual(seen, [1]);
    // Iterating an export that does not stream: the language's TypeError once the module's
    // shape is known (TypeScript refuses it), ERR_TASK_EXPORT before.
    await assert.rejects(
      (async () => {
        for await (const v of work.add(1, 2)) seen.push(v);
      })(),
      (err) => err instanceof TypeError || err.code === 'ERR_TASK_EXPORT',
    );
  });

  test('an abort during the stream fails the loop and stops the generator', async () => {
    const log = counterOf(2);
    const controller = new AbortController();
    let n = 0;
    await rejectsWith(
      (async () => {
        for await (const _ of work.rows.with({ signal: controller.signal })(1_000_000, log)) {
          if (++n === 5) controller.abort();
        }
      })(),
      'ERR_ABORTED',
    );
    await waitUntil(() => Atomics.load(log, 1) === 1);
    assert.equal(await work.add(2, 2), 4);
  });
});

describe('tasks(): arguments without copies', () => {
  const pool = new Pool({ threads: 1 });
  const work = tasks(fixture('work.mjs'), { pool });
  after(() => pool.close());

  test('a transferred ArrayBuffer is moved: detached here, whole there', async () => {
    const bytes = new Uint8Array(1 << 20).fill(7);
    const pending = work.sum.with({ transfer: [bytes.buffer] })(bytes);
    assert.equal(bytes.byteLength, 0); // moved, not copied
    assert.equal(await pending, 7 << 20);
  });

  test('a SharedArrayBuffer is shared: the worker writes into the same memory', async () => {
    const shared = new Uint8Array(new SharedArrayBuffer(1 << 20));
    await work.fill(shared, 9);
    assert.equal(shared[0], 9);
    assert.equal(shared[(1 << 20) - 1], 9);
  });

  test('a large argument goes by structured clone and arrives whole', async () => {
    const bytes = new Uint8Array(1 << 20).fill(1);
    assert.equal(await work.sum(bytes), 1 << 20);
    assert.equal(bytes.byteLength, 1 << 20); // cloned: still here
  });
});

describe('tasks(): errors', () => {
  const pool = new Pool({ threads: 2 });
  const work = tasks(fixture('work.mjs'), { pool });
  after(() => pool.close());

  test("a task's error keeps its name, message, stack, code, cause and own properties", async () => {
    await assert.rejects(work.fail(), (err) => {
      assert.ok(err instanceof RangeError);
      assert.equal(err.name, 'RangeError');
      assert.equal(err.message, 'out of range');
      assert.equal(err.code, 'E_TASK');
      assert.deepEqual(err.details, { limit: 3, list: [1, 2] });
      assert.ok(err.cause instanceof TypeError);
      assert.equal(err.cause.message, 'inner cause');
      assert.match(err.stack, /work\.mjs/); // where it was thrown, on the worker
      return true;
    });
    await assert.rejects(work.failAsync(), { name: 'SyntaxError', message: 'async failure' });
    await assert.rejects(work.customError(), (err) => err.name === 'ValidationError' && err.field === 'email');
    await assert.rejects(work.throwString(), (err) => err === 'a string');
  });

  test('what cannot cross is ERR_TASK_DATA naming its path; nothing runs', async () => {
    await rejectsWith(work.echo({ user: { save() {} } }), 'ERR_TASK_DATA', (err) => {
      assert.match(err.message, /args\[0\]\.user\.save: a function/);
    });
    await rejectsWith(work.echo([1, Symbol('s')]), 'ERR_TASK_DATA', (err) =>
      assert.match(err.message, /args\[0\]\[1\]/),
    );
    class Account {
      #balance = 10;
      get balance() {
        return this.#balance;
      }
    }
    await rejectsWith(work.echo(new Account()), 'ERR_TASK_DATA', (err) => assert.match(err.message, /Account/));
    await rejectsWith(work.returnFunction(), 'ERR_TASK_DATA', (err) => assert.match(err.message, /result/));
    await rejectsWith(work.returnInstance(), 'ERR_TASK_DATA', (err) => assert.match(err.message, /Point/));
    assert.equal(await work.add(1, 2), 3); // the pool goes on
  });

  test('a missing export, a missing module and a module that throws at load', async () => {
    await rejectsWith(work.nope(), 'ERR_TASK_EXPORT', (err) => assert.match(err.message, /"nope".*add/));
    await rejectsWith(tasks(fixture('missing.mjs'), { pool }).f(), 'ERR_TASK_MODULE');
    const broken = tasks(fixture('throws-at-load.mjs'), { pool });
    await rejectsWith(broken.f(), 'ERR_TASK_MODULE', (err) => assert.match(err.message, /fails to load/));
    await rejectsWith(broken.g(), 'ERR_TASK_MODULE');
  });

  test('bad arguments to tasks() and to .with() are ERR_INVALID_ARG', async () => {
    assert.throws(() => tasks('./relative.mjs'), { code: 'ERR_INVALID_ARG', message: /new URL/ });
    assert.throws(() => tasks(42), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => tasks(fixture('work.mjs'), { threads: 2 }), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => work.add.with({ priority: 'urgent' }), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => work.add.with({ timeout: -1 }), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => work.add.with({ retries: 1 }), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => currentTask(), { code: 'ERR_NOT_IN_TASK' });
    assert.equal(await work.then, undefined); // the module object is not a thenable
  });
});

describe('tasks(): abort, timeout and grace', () => {
  test('an aborted signal rejects before anything runs', async () => {
    const pool = new Pool({ threads: 1 });
    const work = tasks(fixture('work.mjs'), { pool });
    const runs = counter();
    await rejectsWith(work.count.with({ signal: AbortSignal.abort() })(runs), 'ERR_ABORTED');
    assert.equal(Atomics.load(runs, 0), 0);
    await pool.close();
  });

  test('a task that stopped in time keeps its worker, even when the loop is held up past the grace', async () => {
    // The task answers its abort at once (by message); the main thread then blocks for
    // three graces. Timers run before the loop reads messages: the grace's check must
    // read the answer first, not kill the worker (and whatever it runs next).
    const pool = new Pool({ threads: 1, cancelGrace: 50 });
    const work = tasks(fixture('work.mjs'), { pool });
    await work.add(1, 1);
    const controller = new AbortController();
    const waiting = work.waitForAbort.with({ signal: controller.signal })();
    // Running on its worker, not queued (a queued call's abort only drops it).
    while (pool.stats().tasks.running === 0) await new Promise((r) => setTimeout(r, 1));
    controller.abort();
    const until = performance.now() + 150;
    while (performance.now() < until); // the loop held up
    await rejectsWith(waiting, 'ERR_ABORTED');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await work.add(2, 3), 5);
    assert.equal(pool.stats().tasks.replaced, 0);
    await pool.close();
  });

  test('a queued task that is aborted never runs; the others run once each', async () => {
    const pool = new Pool({ threads: 1 });
    const work = tasks(fixture('work.mjs'), { pool });
    const runs = counter();
    const first = work.count(runs, 30); // occupies the only worker
    const controller = new AbortController();
    const dropped = work.count.with({ signal: controller.signal })(runs);
    const third = work.count(runs);
    controller.abort();
    await rejectsWith(dropped, 'ERR_ABORTED');
    assert.equal(await first, 1);
    assert.equal(await third, 2);
    assert.equal(Atomics.load(runs, 0), 2);
    assert.equal(pool.stats().tasks.cancelled, 1);
    await pool.close();
  });

  test('a cooperative running task sees its signal abort and stops; its worker stays', async () => {
    const pool = new Pool({ threads: 2 });
    const work = tasks(fixture('work.mjs'), { pool });
    const stopped = counter();
    await warm(work);
    await rejectsWith(work.cooperative.with({ timeout: 20 })(20_000, stopped), 'ERR_TIMEOUT');
    await rejectsWith(work.waitForAbort.with({ signal: AbortSignal.timeout(20) })(), 'ERR_ABORTED');
    // The loop saw the abort (it stored 1) well before its 20 s were up.
    await waitUntil(() => Atomics.load(stopped, 0) === 1);
    assert.equal(await work.add(1, 1), 2);
    assert.equal(pool.stats().tasks.replaced, 0);
    await pool.close();
  });

  test('a task that ignores its abort has its worker replaced after cancelGrace; a task beside it completes', async () => {
    const pool = new Pool({ threads: 2, cancelGrace: 50 });
    const work = tasks(fixture('work.mjs'), { pool });
    await warm(work);
    const stop = new AbortController();
    const hogged = work.hog.with({ signal: stop.signal })(60_000);
    // Aborted only once a worker has it: a task aborted while still queued is dropped
    // unrun, so no worker needs replacing (on a loaded machine a 10 ms timeout could
    // fire before either worker woke up).
    await waitUntil(() => pool.stats().tasks.running === 1);
    const beside = work.sleep(100, 'beside');
    stop.abort();
    await rejectsWith(hogged, 'ERR_ABORTED');
    assert.equal(await beside, 'beside');
    await waitUntil(() => pool.stats().tasks.replaced === 1);
    assert.equal(await work.add(2, 2), 4); // on the replacement
    await pool.close(); // resolves: the hog's worker is gone
  });
});

test('the process stays alive while close() waits for an aborted task to let go of its worker', () => {
  // Only an unref'd timer (AbortSignal.timeout) and the pool are left: the workers must
  // keep the loop alive until the aborted task answers, or close() never resolves.
  const script = `
    import { Pool, tasks } from 'offthread';
    const pool = new Pool({ threads: 1 });
    const work = tasks(new URL(${JSON.stringify(fixture('work.mjs').href)}));
    const w = tasks(new URL(${JSON.stringify(fixture('work.mjs').href)}), { pool });
    await w.add(1, 1);
    for (let i = 0; i < 20; i++) {
      await w.waitForAbort.with({ signal: AbortSignal.timeout(5) })().catch(() => {});
    }
    await pool.close();
    console.log('closed', typeof work);`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: new URL('.', import.meta.url),
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.stdout.trim(), 'closed object', r.stderr);
  assert.equal(r.status, 0);
});

describe('tasks(): workers that die', () => {
  test('process.exit fails only its task with ERR_WORKER_DIED; the worker is replaced', async () => {
    const pool = new Pool({ threads: 2 });
    const work = tasks(fixture('work.mjs'), { pool });
    const runs = counter();
    const others = Array.from({ length: 20 }, () => work.count(runs, 1));
    await rejectsWith(work.exit(3), 'ERR_WORKER_DIED', (err) => assert.match(err.message, /code 3/));
    await Promise.all(others);
    assert.equal(Atomics.load(runs, 0), 20); // each once: none lost, none rerun
    assert.equal(await work.add(1, 2), 3);
    assert.equal(pool.stats().tasks.replaced, 1);
    await pool.close();
  });

  test('tasks a dying worker had taken but not started run once on another', async () => {
    const pool = new Pool({ threads: 1 });
    const work = tasks(fixture('work.mjs'), { pool });
    const runs = counter();
    const dies = work.exit(1, new Map()); // by message too: first on its queue
    // Map arguments go by message to the only worker's own queue, behind the exit.
    const queued = Array.from({ length: 5 }, () => work.count(runs, 0, new Map()));
    await rejectsWith(dies, 'ERR_WORKER_DIED');
    assert.deepEqual((await Promise.all(queued)).sort(), [1, 2, 3, 4, 5]);
    assert.equal(Atomics.load(runs, 0), 5);
    await pool.close();
  });

  test('an uncaught error in a timer replaces the worker; later tasks run', async () => {
    const pool = new Pool({ threads: 1 });
    const work = tasks(fixture('work.mjs'), { pool });
    assert.equal(await work.throwInTimer(), 'scheduled');
    await waitUntil(() => pool.stats().tasks.replaced === 1);
    assert.equal(await work.add(3, 4), 7);
    await pool.close();
  });

  test('out of memory under resourceLimits is ERR_WORKER_DIED', async () => {
    const pool = new Pool({ threads: 1, resourceLimits: { maxOldGenerationSizeMb: 32 } });
    const work = tasks(fixture('work.mjs'), { pool });
    await rejectsWith(work.allocate(), 'ERR_WORKER_DIED', (err) => assert.match(err.message, /memory/i));
    assert.equal(await work.add(1, 1), 2);
    await pool.close();
  });
});

describe('tasks(): queue, priority, close and destroy', () => {
  test('maxQueue: past it calls reject with ERR_QUEUE_FULL and nothing is queued', async () => {
    const pool = new Pool({ threads: 1, maxQueue: 4 });
    const work = tasks(fixture('work.mjs'), { pool });
    const running = work.sleep(20, 0);
    await waitUntil(() => pool.stats().tasks.running === 1);
    const queued = Array.from({ length: 4 }, (_, i) => work.sleep(0, i + 1));
    await rejectsWith(work.add(1, 1), 'ERR_QUEUE_FULL');
    assert.deepEqual(await Promise.all([running, ...queued]), [0, 1, 2, 3, 4]);
    await pool.close();
  });

  test("priority: 'high' runs first, 'low' is not starved", async () => {
    const pool = new Pool({ threads: 1 });
    const work = tasks(fixture('work.mjs'), { pool });
    const order = [];
    const blocker = work.sleep(30, 'blocker');
    await waitUntil(() => pool.stats().tasks.running === 1);
    const calls = [];
    for (let i = 0; i < 8; i++)
      calls.push(
        work.echo
          .with({ priority: 'low' })(`low${i}`)
          .then((v) => order.push(v)),
      );
    for (let i = 0; i < 40; i++)
      calls.push(
        work.echo
          .with({ priority: 'high' })(`high${i}`)
          .then((v) => order.push(v)),
      );
    await Promise.all([blocker, ...calls]);
    assert.ok(order[0].startsWith('high'), order.join());
    // A low task runs within the first 20 however many high ones are waiting.
    assert.ok(
      order.slice(0, 20).some((v) => v.startsWith('low')),
      order.join(),
    );
    await pool.close();
  });

  test('close() lets accepted tasks finish and refuses new ones', async () => {
    const pool = new Pool({ threads: 1 });
    const work = tasks(fixture('work.mjs'), { pool });
    const accepted = [work.sleep(20, 'a'), work.sleep(0, 'b')];
    const closing = pool.close();
    await rejectsWith(work.add(1, 1), 'ERR_POOL_CLOSED');
    assert.deepEqual(await Promise.all(accepted), ['a', 'b']);
    await closing;
  });

  test('destroy() rejects what is pending with ERR_POOL_CLOSED', async () => {
    const pool = new Pool({ threads: 1 });
    const work = tasks(fixture('work.mjs'), { pool });
    const pending = [work.sleep(1000, 1), work.sleep(0, 2)];
    await pool.destroy();
    for (const p of pending) await rejectsWith(p, 'ERR_POOL_CLOSED');
  });

  test('the default pool serves a module given no pool', async () => {
    const work = tasks(fixture('work.mjs'));
    assert.equal(await work.add(20, 22), 42);
  });
});

/** Loads the module on both workers (an async task holds its worker, so the second goes to the other). */
async function warm(work) {
  await Promise.all([work.sleep(20), work.sleep(20)]);
}

/** Polls `check` every 5 ms for up to 10 s (a bound that turns a hang into a failure). */
async function waitUntil(check) {
  for (let i = 0; i < 2000; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.fail(`condition not met within 10 s: ${check}`);
}
