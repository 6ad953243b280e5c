// Pools dropped without close() (issue 31, item 6), in a child process run with
// --expose-gc: a pool the GC collects before its idle timer fires must still give its
// threads back at the timer, not whenever V8 runs its FinalizationRegistry callback
// (1,000 dropped `js` pools: 110 threads and 950 MiB still up 60 s after the last call,
// gone only at the next GC). And dropped pools of every engine leave the process with
// its threads, and no pool's shared memory, once they are idle and collected.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sleep, threadCount, threadsDropTo } from './threads.mjs';

const TASK_MODULE = new URL('../test-fixtures/tasks/work.mjs', import.meta.url);
/** Threads of this process named `name` (/proc/self/task/N/comm). */
function threadsNamed(name) {
  let n = 0;
  for (const t of readdirSync('/proc/self/task')) {
    try {
      if (readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim() === name) n++;
    } catch {
      // the thread exited meanwhile
    }
  }
  return n;
}
const blockFor = (ms) => {
  const end = Date.now() + ms;
  while (Date.now() < end);
};

/** The child's cases; each prints one JSON line. */
const cases = {
  /**
   * The pool is collected first, then its idle timer is due: a timer of the test's own,
   * due after the pool's, reads the engine's workers in the same timers phase — before
   * the finalizer's task can run (that runs in the loop's poll phase, after timers).
   * `kind`: 'js' or 'wasm' (whose workers also instantiate offthread.wasm).
   */
  async collectedBeforeIdle(kind) {
    const { md5, Pool } = await import('offthread');
    let pool = new Pool({ engine: kind, threads: 2, idleTimeout: 100 });
    await md5.hexAsync('abc', { pool });
    const engine = pool._engine; // holds the workers, not the pool (its busy callback is a WeakRef)
    const ref = new WeakRef(pool);
    pool = null;
    await new Promise((resolve) => setImmediate(resolve)); // ends the job that made `ref`
    const workersBefore = engine.stats().workers;
    const read = new Promise((resolve) => setTimeout(() => resolve(engine.stats().workers), 150));
    globalThis.gc();
    const collected = ref.deref() === undefined;
    blockFor(300); // both timers are due when the loop runs again
    return { collected, workersBefore, workersAtTimer: await read };
  },

  /** 20 dropped pools per engine, 2 threads each: threads back; after a GC, no shared memory held. */
  async manyDropped() {
    const { md5, Pool, tasks } = await import('offthread');
    await new Pool({ engine: 'js', threads: 1 }).close(); // modules loaded before the count
    await sleep(100);
    const start = threadCount();
    const made = {};
    for (const engine of ['native', 'wasm', 'js', 'tasks']) {
      for (let i = 0; i < 20; i++) {
        const pool = new Pool({ engine: engine === 'tasks' ? 'js' : engine, threads: 2, idleTimeout: 100 });
        await (engine === 'tasks' ? tasks(TASK_MODULE, { pool }).add(2, 3) : md5.hexAsync('abc', { pool }));
      }
      made[engine] = threadCount();
    }
    const back = await threadsDropTo(start, 20_000);
    globalThis.gc();
    await sleep(200);
    globalThis.gc();
    return { start, made, back, arrayBuffers: process.memoryUsage().arrayBuffers };
  },

  /**
   * A burst of heap trims, as a GC that collects many pools asks for (each pool's
   * finalizer trims): at most one trim thread is up at any time, and none once they are
   * done. One thread per request let them overlap, each one more thread in the count.
   */
  async trimBurst() {
    const { nativeBinding } = await import('offthread/internal');
    const native = nativeBinding();
    /** Freed blocks in the allocator's arenas, for the trims to give back. */
    const litter = () => {
      for (let i = 0; i < 500; i++) Buffer.allocUnsafeSlow(64 * 1024).fill(1);
      globalThis.gc();
    };
    litter();
    await sleep(100);
    const start = threadCount();
    // Bursts with no pause: each call of the old code started a thread, and they were
    // still running (or starting) when the burst ended.
    let most = 0;
    for (let burst = 0; burst < 10; burst++) {
      litter();
      for (let i = 0; i < 100; i++) native.trimMemory();
      most = Math.max(most, threadCount() - start);
      await sleep(20);
    }
    const back = await threadsDropTo(start, 10_000);
    return { start, most, back, left: threadsNamed('offthread-trim') };
  },

  /**
   * A task worker that exits on its own (process.exit in a task): no pool told it to
   * stop, yet its heap went back to the allocator — the exit itself asks for a trim.
   * Counted by wrapping the addon's trimMemory (the host calls it through the binding).
   */
  async exitAsksForTrim() {
    const { Pool, tasks } = await import('offthread');
    const { nativeBinding } = await import('offthread/internal');
    const native = nativeBinding();
    const trimMemory = native.trimMemory;
    let trims = 0;
    native.trimMemory = () => {
      trims++;
      trimMemory();
    };
    const pool = new Pool({ engine: 'js', threads: 1, idleTimeout: 60_000 });
    const work = tasks(TASK_MODULE, { pool });
    await work.add(1, 2); // the worker is up; no stop comes within the test
    await sleep(1500); // any trim from starting has run
    const before = trims;
    const died = await work.exit(3).then(
      () => 'resolved',
      (err) => err.code,
    );
    const end = Date.now() + 10_000;
    while (trims === before && Date.now() < end) await sleep(50);
    await pool.close();
    return { died, before, after: trims };
  },
};

if (process.argv[2] === 'child') {
  const out = await cases[process.argv[3]](...process.argv.slice(4));
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.exit(0); // a pool still up must not keep the child alive
} else {
  const child = (name, ...args) => {
    const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), 'child', name, ...args], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout.trim().split('\n').pop());
  };

  for (const engine of ['js', 'wasm'])
    test(`a ${engine} pool collected before its idle timer fires: the timer stops its workers`, () => {
      const r = child('collectedBeforeIdle', engine);
      assert.ok(r.collected, 'the pool was not collected: the case proves nothing');
      assert.ok(r.workersBefore > 0, `no workers up before the idle timer (${r.workersBefore})`);
      assert.equal(r.workersAtTimer, 0, 'the idle timer left the collected pool’s workers up');
    });

  test('20 dropped pools per engine: threads back to the start, no shared memory held after a GC', () => {
    const r = child('manyDropped');
    for (const [engine, made] of Object.entries(r.made))
      assert.ok(made > r.start, `threads never rose for ${engine} (${JSON.stringify(r)})`);
    assert.ok(r.back <= r.start, `${r.start} threads at the start, ${r.back} after the pools went idle`);
    // Each task pool's shared memory is 1 MiB; 20 of them held would read ≥ 20 MiB.
    assert.ok(r.arrayBuffers < 2 ** 20, `${r.arrayBuffers} bytes of ArrayBuffers held after a GC`);
  });

  test('a worker that exits on its own asks for a heap trim', () => {
    const r = child('exitAsksForTrim');
    assert.equal(r.died, 'ERR_WORKER_DIED', JSON.stringify(r));
    assert.ok(r.after > r.before, `no trim after the worker exited (${JSON.stringify(r)})`);
  });

  test('a burst of heap trims runs one trim thread at a time, none after', () => {
    const r = child('trimBurst');
    assert.ok(r.most <= 1, `${r.most} trim threads up at once (${JSON.stringify(r)})`);
    assert.equal(r.left, 0, 'a trim thread is still up');
    assert.ok(r.back <= r.start, `${r.start} threads before the trims, ${r.back} after`);
  });
}
