// The pool's run budget (pool/budget.ts): every feature of a pool together runs at most
// `threads` threads at once. Native kernels are counted by the Rust pool itself
// (`stats().running`: jobs on its threads now), task jobs by a counter they bump in
// shared memory while they run (test-fixtures/tasks/budget.mjs). The main thread reads
// both in one synchronous step, during which no slot can change hands (slots move only
// on this thread), so every sample is an exact upper bound: no timing in the assertions.
// (The Rust count stops counting a job when its closure returns, before its result is
// handed over: counted until the hand-over returned, a thread preempted right after
// handing over read as running beside the task its slot had already gone to — 3 on a
// pool of 2, once in a CI run on Node 24.)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { afterEach, describe, test } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { guests, md5, Pool, pi, tasks } from 'offthread';

const require = createRequire(import.meta.url);
// The pool's internals (not exported by the package): the Node build's own files.
const { Budget } = require('../dist/pool/budget.js');
const { JobPool } = require('../dist/pool/jobs.js');
const { MessageJobPool } = require('../dist/pool/message-jobs.js');

const fixture = new URL('../test-fixtures/tasks/budget.mjs', import.meta.url);
const shared = (n) => new Int32Array(new SharedArrayBuffer(4 * n));
/** A native job of a few ms (md5 d_N): one Rust thread. */
const ROUNDS = 40_000;
const md5Of = (i) => md5.iterateSync(`x${i}`, ROUNDS);

/** Samples `native running + tasks running` every loop turn until `done` settles. */
async function sampleWhile(pool, live, done) {
  let over = false;
  done.then(
    () => {
      over = true;
    },
    () => {
      over = true;
    },
  );
  let worst = 0;
  let samples = 0;
  while (!over) {
    const sum = pool.stats().running + Atomics.load(live, 0);
    if (sum > worst) worst = sum;
    samples++;
    await tick();
  }
  return { worst, samples };
}

/** Waits (not a timing assertion) until `live[0]` is `n`: that many jobs run. */
async function untilRunning(live, n) {
  while (Atomics.load(live, 0) !== n) await new Promise((r) => setTimeout(r, 1));
}

/** Pools a test made: closed after it (Node 20 has no `await using`). */
const made = [];
const track = (pool) => {
  made.push(pool);
  return pool;
};
afterEach(async () => {
  await Promise.all(made.splice(0).map((p) => p.close()));
});

async function rejectsWith(promise, code) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.code, code, `${err.code}: ${err.message}`);
    return true;
  });
}

describe('one run budget per pool', {
  skip: process.env.OFFTHREAD_BACKEND && process.env.OFFTHREAD_BACKEND !== 'native',
}, () => {
  test('threads: 2 with native kernels and task jobs together never runs more than 2 at once', async () => {
    const pool = track(new Pool({ threads: 2 }));
    assert.equal(pool.engine, 'native');
    const work = tasks(fixture, { pool });
    const live = shared(2);
    await work.busy(live, 0); // the workers are up: what follows measures running, not starting
    const calls = [];
    for (let i = 0; i < 40; i++) {
      calls.push(md5.iterate(`x${i}`, ROUNDS, { pool }).then((d) => ({ native: i, d })));
      calls.push(work.busy(live, 3, i).then((t) => ({ task: t })));
    }
    const all = Promise.all(calls);
    const { worst, samples } = await sampleWhile(pool, live, all);
    const results = await all;
    assert.ok(samples > 0);
    assert.ok(worst <= 2, `${worst} threads ran work at once on a pool of 2`);
    assert.ok(Atomics.load(live, 1) <= 2, `${Atomics.load(live, 1)} task jobs ran at once`);
    // Nothing lost, nothing run for another: every call has its own answer.
    for (let i = 0; i < 40; i++) {
      assert.deepEqual(results[2 * i], { native: i, d: md5Of(i) });
      assert.deepEqual(results[2 * i + 1], { task: i });
    }
    assert.deepEqual(pool.stats().budget, { size: 2, used: 0, waiting: 0 });
  });

  test('the worker engine (wasm) and task jobs together never run more than 2 at once', async () => {
    const pool = track(new Pool({ engine: 'wasm', threads: 2 }));
    const work = tasks(fixture, { pool });
    const live = shared(2);
    await work.busy(live, 0);
    await md5.iterate('warm', 1, { pool }); // the engine's workers are up too
    const calls = [];
    for (let i = 0; i < 20; i++) {
      calls.push(md5.iterate(`x${i}`, ROUNDS, { pool }));
      calls.push(work.busy(live, 3, i));
    }
    const all = Promise.all(calls);
    // The worker engine's `running`: jobs handed to a worker and not yet answered.
    const { worst } = await sampleWhile(pool, live, all);
    const results = await all;
    assert.ok(worst <= 2, `${worst} threads ran work at once on a pool of 2`);
    for (let i = 0; i < 20; i++) {
      assert.equal(results[2 * i], md5Of(i));
      assert.equal(results[2 * i + 1], i);
    }
    assert.deepEqual(pool.stats().budget, { size: 2, used: 0, waiting: 0 });
  });

  test('a π job the Rust pool shares out weighs every thread: no task runs beside it', async () => {
    const pool = track(new Pool({ threads: 2 }));
    const work = tasks(fixture, { pool });
    const live = shared(2);
    await work.busy(live, 0);
    let beside = 0;
    const calls = [];
    for (let i = 0; i < 6; i++) {
      calls.push(pi.estimate(2e7, { pool, seed: i + 1 }));
      calls.push(work.busy(live, 3, i));
    }
    let over = false;
    const all = Promise.all(calls).finally(() => {
      over = true;
    });
    while (!over) {
      if (pool.stats().running > 0 && Atomics.load(live, 0) > 0) beside++;
      await tick();
    }
    const results = await all;
    assert.equal(beside, 0, 'a task ran beside a π job spread over both threads');
    for (let i = 0; i < 6; i++) {
      assert.equal(results[2 * i].samples, 2e7);
      assert.equal(results[2 * i + 1], i);
    }
  });

  test('waiting jobs start by priority, first come first served within one', async () => {
    const pool = track(new Pool({ threads: 1 }));
    const work = tasks(fixture, { pool });
    const live = shared(2);
    const log = shared(8);
    await work.busy(live, 0);
    const holder = work.busy(live, 150, 0); // holds the one slot
    await untilRunning(live, 1);
    const native = md5.iterate('n', ROUNDS, { pool }); // waits: normal, first
    const low = work.busy.with({ priority: 'low' })(live, 1, 3, log);
    const normal = work.busy.with({ priority: 'normal' })(live, 1, 2, log);
    const high = work.busy.with({ priority: 'high' })(live, 1, 1, log);
    // The native job, then `low` and `normal` wait for the slot; `high`, first in line, is
    // let into the task workers' own queue at once (they hold the slot: it runs next there).
    assert.equal(pool.stats().budget.waiting, 3);
    assert.deepEqual(await Promise.all([holder, native, low, normal, high]), [
      0,
      md5.iterateSync('n', ROUNDS),
      3,
      2,
      1,
    ]);
    assert.deepEqual([...log.slice(1, 4)], [1, 2, 3]);
    assert.equal(Atomics.load(live, 1), 1);
  });

  test('a low-priority job behind a stream of high ones is not starved', async () => {
    const pool = track(new Pool({ threads: 1 }));
    const work = tasks(fixture, { pool });
    const live = shared(2);
    const log = shared(64);
    await work.busy(live, 0);
    const holder = md5.iterate('h', 4 * ROUNDS, { pool }); // the native engine holds the slot
    const low = work.busy.with({ priority: 'low' })(live, 1, 99, log);
    const highs = Array.from({ length: 40 }, (_, i) => work.busy.with({ priority: 'high' })(live, 1, i + 1, log));
    await Promise.all([holder, low, ...highs]);
    const order = [...log.slice(1, 42)];
    assert.equal(order.length, 41);
    assert.ok(order.indexOf(99) < 40, `the low job ran last: ${order}`);
  });

  test('a job waiting for a slot can be aborted or time out; the rest still run', async () => {
    const pool = track(new Pool({ threads: 1 }));
    const work = tasks(fixture, { pool });
    const live = shared(2);
    await work.busy(live, 0);
    const holder = work.busy(live, 300, 7);
    await untilRunning(live, 1);
    const timedOut = md5.iterate('t', ROUNDS, { pool, timeout: 20 });
    const ac = new AbortController();
    const aborted = work.busy.with({ signal: ac.signal })(live, 1, 8);
    const nativeAborted = md5.iterate('a', ROUNDS, { pool, signal: ac.signal });
    const after = md5.iterate('b', ROUNDS, { pool });
    const afterTask = work.busy(live, 1, 9);
    assert.equal(pool.stats().budget.waiting, 5);
    assert.equal(pool.stats().queued, 3, 'the native jobs waiting for a slot are queued');
    ac.abort();
    await rejectsWith(aborted, 'ERR_ABORTED');
    await rejectsWith(nativeAborted, 'ERR_ABORTED');
    await rejectsWith(timedOut, 'ERR_TIMEOUT');
    assert.equal(pool.stats().budget.waiting, 2, 'the aborted and timed-out jobs left the queue');
    assert.equal(await holder, 7);
    assert.equal(await after, md5.iterateSync('b', ROUNDS));
    assert.equal(await afterTask, 9);
    assert.deepEqual(pool.stats().budget, { size: 1, used: 0, waiting: 0 });
  });

  test('destroy rejects the jobs waiting for a slot and gives every slot back', async () => {
    const pool = new Pool({ threads: 1 });
    const work = tasks(fixture, { pool });
    const live = shared(2);
    await work.busy(live, 0);
    const holder = work.busy(live, 100, 1);
    await untilRunning(live, 1);
    const waitingNative = md5.iterate('w', ROUNDS, { pool });
    const waitingTask = work.busy(live, 1, 2);
    await pool.destroy();
    await rejectsWith(holder, 'ERR_POOL_CLOSED');
    await rejectsWith(waitingNative, 'ERR_POOL_CLOSED');
    await rejectsWith(waitingTask, 'ERR_POOL_CLOSED');
    assert.deepEqual(pool.stats().budget, { size: 1, used: 0, waiting: 0 });
  });

  test('an uncontended pool keeps hundreds of native jobs in flight', async () => {
    const pool = track(new Pool({ threads: 2 }));
    const values = await Promise.all(Array.from({ length: 500 }, (_, i) => pool.echo(i)));
    assert.deepEqual(
      values,
      Array.from({ length: 500 }, (_, i) => i),
    );
    assert.deepEqual(pool.stats().budget, { size: 2, used: 0, waiting: 0 });
  });

  test('guest hosts share the default pool budget: a guest call waits for a slot', async () => {
    const wasm = new URL('../../../target/wasm32-unknown-unknown/release/guest_basic.wasm', import.meta.url);
    const host = await guests.load([{ name: 'a', bytes: readFileSync(wasm) }], { threads: 1 });
    try {
      const work = tasks(fixture); // the default pool
      const live = shared(2);
      await work.busy(live, 0);
      const cores = Math.min(availableParallelism(), 1024);
      let holding = cores;
      const holders = Array.from({ length: cores }, (_, i) =>
        work.busy(live, 150, i).then(() => {
          holding--;
        }),
      );
      await untilRunning(live, cores); // every slot of the default budget is a task's
      const answer = await host.call('echo', 'empty');
      assert.equal(answer.length, 0);
      assert.ok(holding < cores, 'the guest call ran while every slot was held by a task');
      await Promise.all(holders);
    } finally {
      await host.close();
    }
  });

  test('both job transports (shared memory, messages) keep to one budget they share', async () => {
    const budget = new Budget(2);
    const options = { threads: 2, maxQueue: 1000, script: 'tasks', grace: 200, nice: 0, budget };
    const pools = [new JobPool(options), new MessageJobPool(options)];
    const live = shared(2);
    try {
      for (const p of pools) {
        p.setup({ kind: 'module', mod: 0, url: fixture.href });
        p.setup({ kind: 'export', fn: 0, mod: 0, name: 'busy' });
        await p.run(0, [live, 0], {});
      }
      const calls = [];
      for (let i = 0; i < 30; i++) for (const p of pools) calls.push(p.run(0, [live, 2, i], {}));
      const results = await Promise.all(calls);
      assert.ok(Atomics.load(live, 1) <= 2, `${Atomics.load(live, 1)} jobs ran at once on a budget of 2`);
      assert.deepEqual(
        results,
        Array.from({ length: 60 }, (_, k) => k >> 1),
      );
      assert.deepEqual(budget.stats(), { size: 2, used: 0, waiting: 0 });
    } finally {
      await Promise.all(pools.map((p) => p.close()));
    }
  });
});
