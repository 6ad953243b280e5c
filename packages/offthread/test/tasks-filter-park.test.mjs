// A parked task filter gives its thread back (issues 29 and 34). While a filter's export
// waits on the caller (for input, or for a reader) with everything sent seen, the filter
// holds no slot of its pool's thread budget and its worker runs other jobs; work for it
// (a write, a read's room, the end) takes a slot again before the worker is told. Its
// state stays in its worker's heap meanwhile. No timing in the assertions: the tests
// wait for states that, before, never came (the test's timeout fails them).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, test } from 'node:test';
import { filters, Pool, tasks } from 'offthread';

const require = createRequire(import.meta.url);
// The pool's internals (not exported by the package): the Node build's own files.
const { Budget } = require('../dist/pool/budget.js');
const { JobPool } = require('../dist/pool/jobs.js');
const { MessageJobPool } = require('../dist/pool/message-jobs.js');

const fixture = new URL('../test-fixtures/tasks/park-work.mjs', import.meta.url);
const shared = (n) => new Int32Array(new SharedArrayBuffer(4 * n));
/** Waits until `check()` holds (not a timing assertion: if it never does, the test times out). */
const until = async (check) => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 1));
};
const read = async (stream) => (await once(stream, 'data'))[0];
const LIMIT = { timeout: 20_000 };

describe('a parked task filter gives its thread back', () => {
  test(
    'threads: 2, two parked filters: no budget slot is theirs, a task runs, a chunk takes one again',
    LIMIT,
    async () => {
      const pool = new Pool({ threads: 2 });
      try {
        const work = tasks(fixture, { pool });
        const gate = shared(2);
        const a = filters.task(work.step, { objectMode: true, args: [gate] });
        const b = filters.task(work.step, { objectMode: true, args: [gate] });
        a.write('a');
        b.write('b');
        assert.match(await read(a), /^1:a@\d+$/);
        assert.match(await read(b), /^1:b@\d+$/);
        // Both wait for input now: parked, they hold none of the pool's 2 slots.
        await until(() => pool.stats().budget.used === 0);
        assert.deepEqual(pool.stats().budget, { size: 2, used: 0, waiting: 0 });
        // Before, the two filters held both slots and both workers until one ended.
        assert.equal(await work.add(2, 3), 5);
        // A chunk being transformed holds one slot again (the other filter stays parked).
        a.write('hold');
        await until(() => Atomics.load(gate, 0) === 1);
        assert.deepEqual(pool.stats().budget, { size: 2, used: 1, waiting: 0 });
        Atomics.store(gate, 1, 1);
        Atomics.notify(gate, 1);
        assert.match(await read(a), /^2:hold@\d+$/);
        await until(() => pool.stats().budget.used === 0);
        a.end();
        b.end();
      } finally {
        await pool.close();
      }
    },
  );

  test("threads: 1: tasks run on a parked filter's worker; its state is there after", LIMIT, async () => {
    const pool = new Pool({ threads: 1 });
    try {
      const work = tasks(fixture, { pool });
      const t = filters.task(work.step, { objectMode: true });
      t.write('a');
      const [, worker] = /^1:a@(\d+)$/.exec(await read(t));
      await until(() => pool.stats().budget.used === 0);
      assert.equal(await work.thread(), Number(worker), 'the task ran on the filter’s worker');
      // An async task waits on a timer of its own there while the filter takes a chunk.
      const napping = work.nap(50);
      t.write('b');
      assert.equal(await read(t), `2:b@${worker}`);
      assert.equal(await napping, Number(worker));
      t.write('c');
      assert.equal(await read(t), `3:c@${worker}`);
      t.end();
    } finally {
      await pool.close();
    }
  });

  test('destroying a parked filter ends its export on its worker (its finally runs)', LIMIT, async () => {
    const pool = new Pool({ threads: 1 });
    try {
      const work = tasks(fixture, { pool });
      const ended = shared(1);
      const t = filters.task(work.watched, { args: [ended] });
      t.write('x');
      assert.equal((await read(t)).toString(), 'x');
      await until(() => pool.stats().budget.used === 0);
      assert.equal(await work.add(1, 1), 2); // its worker ran another task meanwhile
      t.destroy();
      await until(() => Atomics.load(ended, 0) === 1);
      assert.equal(await work.add(2, 2), 4);
    } finally {
      await pool.close();
    }
  });

  test("aborting a parked filter's signal fails it with ERR_ABORTED; its finally runs", LIMIT, async () => {
    const pool = new Pool({ threads: 1 });
    try {
      const work = tasks(fixture, { pool });
      const ended = shared(1);
      const controller = new AbortController();
      const t = filters.task(work.watched, { args: [ended], signal: controller.signal });
      const failed = once(t, 'error');
      t.write('x');
      await read(t);
      await until(() => pool.stats().budget.used === 0);
      assert.equal(await work.add(1, 2), 3);
      controller.abort();
      const [err] = await failed;
      assert.equal(err.code, 'ERR_ABORTED');
      await until(() => Atomics.load(ended, 0) === 1);
      assert.deepEqual(pool.stats().budget, { size: 1, used: 0, waiting: 0 });
    } finally {
      await pool.close();
    }
  });

  test("chunks keep their order while tasks run on the filter's worker between them", LIMIT, async () => {
    const pool = new Pool({ threads: 1 });
    try {
      const work = tasks(fixture, { pool });
      const t = filters.task(work.step, { objectMode: true });
      const outs = [];
      t.on('data', (out) => outs.push(out));
      const ended = once(t, 'end');
      const calls = [];
      for (let i = 0; i < 200; i++) {
        t.write(`c${i}`);
        calls.push(work.add(i, 1));
        // Now and then a turn of the loop: the filter parks, tasks run, chunks resume it.
        if (i % 7 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      t.end();
      await ended;
      assert.deepEqual(
        await Promise.all(calls),
        Array.from({ length: 200 }, (_, i) => i + 1),
      );
      assert.deepEqual(
        outs.map((out) => out.replace(/@\d+$/, '')),
        Array.from({ length: 200 }, (_, i) => `${i + 1}:c${i}`),
      );
      // The stream ended; its job settles just after (its result comes by another path).
      await until(() => pool.stats().budget.used === 0);
    } finally {
      await pool.close();
    }
  });

  test('a worker lost with another task takes a parked filter with it: ERR_WORKER_DIED', LIMIT, async () => {
    const pool = new Pool({ threads: 1 });
    try {
      const work = tasks(fixture, { pool });
      const t = filters.task(work.step, { objectMode: true });
      const failed = once(t, 'error');
      t.write('a');
      assert.match(await read(t), /^1:a@\d+$/);
      await until(() => pool.stats().budget.used === 0);
      await assert.rejects(work.die(), { code: 'ERR_WORKER_DIED' });
      const [err] = await failed;
      assert.equal(err.code, 'ERR_WORKER_DIED');
      assert.equal(await work.add(1, 1), 2, 'its replacement serves');
      assert.deepEqual(pool.stats().budget, { size: 1, used: 0, waiting: 0 });
    } finally {
      await pool.close();
    }
  });

  test('a pipeline of two task filters runs on a pool of 1', LIMIT, async () => {
    const pool = new Pool({ threads: 1 });
    try {
      const work = tasks(fixture, { pool });
      const chunks = Array.from({ length: 100 }, (_, i) => `c${i}`);
      const out = [];
      // Before, the first filter held the one slot and worker while it waited for the
      // second to read: the second never started, and the pipeline waited for good.
      await pipeline(
        Readable.from(chunks),
        filters.task(work.step, { objectMode: true }),
        filters.task(work.step, { objectMode: true }),
        new Writable({
          objectMode: true,
          write(chunk, _encoding, callback) {
            out.push(chunk);
            callback();
          },
        }),
      );
      assert.equal(out.length, 100);
      assert.match(out[99], /^100:100:c99@\d+@\d+$/);
    } finally {
      await pool.close();
    }
  });

  test('the web form (TransformStream) parks the same way', LIMIT, async () => {
    const pool = new Pool({ threads: 1 });
    try {
      const work = tasks(fixture, { pool });
      const ts = filters.web.task(work.step, { objectMode: true });
      const writer = ts.writable.getWriter();
      const reader = ts.readable.getReader();
      await writer.write('a');
      const [, worker] = /^1:a@(\d+)$/.exec((await reader.read()).value);
      await until(() => pool.stats().budget.used === 0);
      assert.equal(await work.thread(), Number(worker));
      await writer.write('b');
      assert.equal((await reader.read()).value, `2:b@${worker}`);
      await writer.close();
      assert.equal((await reader.read()).done, true);
    } finally {
      await pool.close();
    }
  });
});

describe('the job pools: JobOptions.park', () => {
  for (const Transport of [JobPool, MessageJobPool]) {
    test(
      `${Transport.name}: parked, a job gives its slot back; resumed, it takes one before it goes on`,
      LIMIT,
      async () => {
        // One slot for two workers: the parked job's worker is not the point here, its slot is.
        const budget = new Budget(1);
        const jobs = new Transport({ threads: 2, maxQueue: 10, script: 'tasks', grace: 200, nice: 0, budget });
        try {
          jobs.setup({ kind: 'module', mod: 0, url: fixture.href });
          jobs.setup({ kind: 'export', fn: 0, mod: 0, name: 'untilOpen' });
          jobs.setup({ kind: 'export', fn: 1, mod: 0, name: 'add' });
          const gate = shared(1);
          let sw;
          const long = jobs.run(0, [gate], {
            park: (s) => {
              sw = s;
            },
          });
          assert.equal(budget.used, 1);
          sw.park({ keepAlive: true });
          assert.deepEqual(budget.stats(), { size: 1, used: 0, waiting: 0 });
          let went = 0;
          sw.resume(() => went++); // a slot is free: at once
          assert.equal(went, 1);
          assert.equal(budget.used, 1);
          sw.park({ keepAlive: true });
          const other = jobs.run(1, [1, 2], {}); // takes the slot the parked job gave back
          assert.equal(budget.used, 1);
          sw.resume(() => went++);
          sw.resume(() => went++); // both wait, in order, for the slot
          assert.equal(went, 1);
          assert.deepEqual(budget.stats(), { size: 1, used: 1, waiting: 1 });
          assert.equal(await other, 3);
          assert.equal(went, 3, 'the slot went back to the parked job, which went on');
          Atomics.store(gate, 0, 1);
          assert.equal(typeof (await long), 'number');
          assert.deepEqual(budget.stats(), { size: 1, used: 0, waiting: 0 });
        } finally {
          await jobs.close();
        }
      },
    );
  }
});
