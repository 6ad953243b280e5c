// The offthread pool behind Promises: results, cancellation, timeouts, back-pressure,
// panics, close vs destroy, bad options, and a process that exits on its own.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { md5, Pool, pi } from 'offthread';
import { countInsideJsBitwise, piVariants, stateAt, testPanic, testSpin } from 'offthread/internal';

/** Every engine runs the same suite; π's pool variant is named after the engine. */
const ENGINES = ['native', 'wasm', 'js'];
const POOL_VARIANT = { native: 'parallelAsync', wasm: 'wasmWorkers', js: 'jsWorkers' };
const PANIC = { native: /test panic requested/, wasm: /crashed/, js: /crashed/ };

for (const engine of ENGINES)
  describe(`Pool (${engine} engine)`, () => {
    test('thousands of concurrent jobs all resolve with their own values', async () => {
      const pool = new Pool({ engine, threads: 2 });
      const values = Array.from({ length: 20_000 }, (_, i) => i * 1.5);
      assert.deepEqual(await Promise.all(values.map((v) => pool.echo(v))), values);
      const s = pool.stats();
      assert.equal(s.completed, 20_000);
      assert.equal(s.pending, 0);
      assert.equal(s.queued + s.running + s.failed + s.cancelled, 0);
      for (const t of [s.waitTime, s.runTime]) {
        assert.ok(t.p50 >= 0 && t.p50 <= t.p99 && t.p99 <= t.max, JSON.stringify(t));
      }
      await pool.close();
    });

    test('π jobs of different sizes resolve to their own counts', async () => {
      const pool = new Pool({ engine, threads: 2 });
      const sizes = [1, 10, 1000, 100_000, 3_000_001, 7];
      const got = await Promise.all(sizes.map((n) => piVariants.estimate(n, POOL_VARIANT[engine], { pool, seed: n })));
      for (const [i, n] of sizes.entries()) {
        assert.equal(got[i].inside, piVariants.estimateSync(n, 'js', { seed: n }).inside, `n=${n}`);
      }
      await pool.close();
    });

    test('aborting a running job rejects with AbortError and stops it', async () => {
      const pool = new Pool({ engine, threads: 1 });
      const controller = new AbortController();
      const running = testSpin(pool, { signal: controller.signal });
      setTimeout(() => controller.abort(new Error('user gave up')), 20);
      await assert.rejects(running, (err) => {
        assert.equal(err.name, 'AbortError');
        assert.equal(err.code, 'ERR_ABORTED');
        assert.equal(err.cause.message, 'user gave up');
        return true;
      });
      // The single thread is free again: a following job completes.
      assert.equal(await pool.echo(42), 42);
      await pool.close();
    });

    test('aborting a queued job rejects at once; it never runs', async () => {
      const pool = new Pool({ engine, threads: 1 });
      const blocker = new AbortController();
      const spin = testSpin(pool, { signal: blocker.signal });
      const controller = new AbortController();
      const queued = piVariants.estimate(1e6, POOL_VARIANT[engine], { pool, signal: controller.signal });
      controller.abort();
      await assert.rejects(queued, { name: 'AbortError', code: 'ERR_ABORTED' });
      blocker.abort();
      await assert.rejects(spin, { code: 'ERR_ABORTED' });
      await pool.close();
      assert.equal(pool.stats().completed, 0, 'the aborted π job must not have completed');
    });

    test('an already-aborted signal rejects without queueing', async () => {
      const pool = new Pool({ engine, threads: 1 });
      await assert.rejects(pool.echo(1, { signal: AbortSignal.abort() }), { code: 'ERR_ABORTED' });
      assert.equal(pool.stats().completed, 0);
      await pool.close();
    });

    test('timeout rejects with ERR_TIMEOUT and cancels the job', async () => {
      const pool = new Pool({ engine, threads: 1 });
      await assert.rejects(testSpin(pool, { timeout: 30 }), { code: 'ERR_TIMEOUT' });
      await assert.rejects(piVariants.estimate(2 ** 40, POOL_VARIANT[engine], { pool, timeout: 30 }), {
        code: 'ERR_TIMEOUT',
      });
      assert.equal(await pool.echo(7), 7);
      await pool.close();
    });

    test('a π range anywhere in the stream runs on the pool and stops mid-range on abort', async () => {
      const pool = new Pool({ engine, threads: 1 });
      // pool.run is internal: the range job src/queue sends for a chunk of a π job.
      const got = await pool.run('pi', { first: 123_457, count: 3_000_001, seed: 5 }, {});
      assert.equal(got, countInsideJsBitwise(stateAt(5, 123_457), 3_000_001));
      const controller = new AbortController();
      const running = pool.run('pi', { first: 2 ** 40, count: 2 ** 52, seed: 1 }, { signal: controller.signal });
      setTimeout(() => controller.abort(), 20);
      await assert.rejects(running, { code: 'ERR_ABORTED' });
      // One thread: a range that did not stop would hold it for hours.
      assert.equal(await pool.echo(5, { timeout: 60_000 }), 5);
      await pool.close();
    });

    test('a long MD5 loop stops on abort, and its thread takes the next job', async () => {
      // One thread: if the kernel did not see the cancel, the next job would wait minutes.
      const pool = new Pool({ engine, threads: 1 });
      const controller = new AbortController();
      const running = md5.iterate('abort me', 1e9, { pool, signal: controller.signal });
      setTimeout(() => controller.abort(), 20);
      await assert.rejects(running, { code: 'ERR_ABORTED' });
      assert.equal(await md5.iterate('a', 3, { pool, timeout: 60_000 }), md5.iterateReference('a', 3));
      await pool.close();
    });

    test('maxQueue: past it calls reject with ERR_QUEUE_FULL; accepted ones complete', async () => {
      const pool = new Pool({ engine, threads: 1, maxQueue: 4 });
      const controller = new AbortController();
      const spin = testSpin(pool, { signal: controller.signal });
      while (pool.stats().running !== 1) await new Promise((r) => setTimeout(r, 5)); // running, not queued
      const accepted = [1, 2, 3, 4].map((v) => pool.echo(v));
      // The code is in err.code; the message says what happened without repeating it.
      await assert.rejects(pool.echo(5), (err) => err.code === 'ERR_QUEUE_FULL' && !err.message.startsWith('ERR_'));
      controller.abort();
      await assert.rejects(spin, { code: 'ERR_ABORTED' });
      assert.deepEqual(await Promise.all(accepted), [1, 2, 3, 4]);
      await pool.close();
      // After close() resolved nothing runs, and the aborted job is cancelled, not completed.
      const s = pool.stats();
      assert.equal(s.running, 0, JSON.stringify(s));
      assert.equal(s.completed, 4, JSON.stringify(s));
      assert.equal(s.cancelled, 1, JSON.stringify(s));
    });

    test('a panicking kernel rejects with ERR_KERNEL_PANIC and the pool goes on', async () => {
      const pool = new Pool({ engine, threads: 2 });
      await assert.rejects(testPanic(pool), { code: 'ERR_KERNEL_PANIC', message: PANIC[engine] });
      assert.deepEqual(await Promise.all([1, 2, 3].map((v) => pool.echo(v))), [1, 2, 3]);
      assert.equal(pool.stats().failed, 1);
      await pool.close();
    });

    test('close() lets accepted jobs finish and refuses new ones', async () => {
      const pool = new Pool({ engine, threads: 1 });
      const jobs = [1, 2, 3].map((v) => pool.echo(v));
      const closed = pool.close();
      await assert.rejects(pool.echo(4), { code: 'ERR_POOL_CLOSED' });
      assert.deepEqual(await Promise.all(jobs), [1, 2, 3]);
      await closed;
    });

    test('destroy() rejects pending jobs with ERR_POOL_CLOSED', async () => {
      const pool = new Pool({ engine, threads: 1 });
      const spin = testSpin(pool);
      await pool.destroy();
      await assert.rejects(spin, { code: 'ERR_POOL_CLOSED' });
      await assert.rejects(pool.echo(1), { code: 'ERR_POOL_CLOSED' });
    });

    test('a closed pool refuses even calls small enough to run inline, and keeps its stats', async () => {
      const pool = new Pool({ engine, threads: 1 });
      assert.equal(await pool.echo(1), 1);
      assert.equal((await pi.estimate(10, { pool })).inside, pi.estimateSync(10).inside);
      await pool.close();
      await assert.rejects(pi.estimate(10, { pool }), { code: 'ERR_POOL_CLOSED' });
      const s = pool.stats();
      assert.equal(s.completed, 1, 'the figures survive close()');
      assert.equal(s.engine, engine);
    });

    test('echo refuses what is not a number with a code, never a crash', async () => {
      const pool = new Pool({ engine, threads: 1 });
      for (const bad of [Symbol('x'), 1n, undefined, {}, '1', null]) {
        await assert.rejects(pool.echo(bad), { code: 'ERR_INVALID_ARG' });
      }
      await pool.close();
    });

    test('Symbol.asyncDispose closes the pool (await using)', async () => {
      const pool = new Pool({ engine, threads: 1 });
      assert.equal(await pool.echo(3), 3);
      await pool[Symbol.asyncDispose]();
      await assert.rejects(pool.echo(1), { code: 'ERR_POOL_CLOSED' });
    });

    test('bad pool and call options are typed errors', async () => {
      for (const threads of [0, -1, 1.5, 'two', 2000]) {
        assert.throws(() => new Pool({ engine, threads }), { name: 'RangeError', code: 'ERR_INVALID_POOL_OPTIONS' });
      }
      for (const nice of [-1, 20, 2.5]) {
        assert.throws(() => new Pool({ nice }), { code: 'ERR_INVALID_POOL_OPTIONS' });
      }
      for (const maxQueue of [0, -5, Number.NaN]) {
        assert.throws(() => new Pool({ maxQueue }), { code: 'ERR_INVALID_POOL_OPTIONS' });
      }
      assert.throws(() => new Pool(5), { code: 'ERR_INVALID_ARG' });
      await assert.rejects(piVariants.estimate(10, POOL_VARIANT[engine], { signal: {} }), { code: 'ERR_INVALID_ARG' });
      await assert.rejects(pi.estimate(10, { timeout: -1 }), { code: 'ERR_INVALID_ARG' });
      await assert.rejects(pi.estimate(10, { pool: {} }), { code: 'ERR_INVALID_ARG' });
    });

    test('pools dropped without close() give their threads back when collected', () => {
      // 40 two-thread pools, each used once, then dropped; after gc the process's thread
      // count must come back to where it was (polled: threads exit asynchronously).
      const script = `
      const { Pool } = require('offthread');
      const { readdirSync } = require('node:fs');
      const threads = () => readdirSync('/proc/self/task').length;
      (async () => {
        const before = threads();
        for (let i = 0; i < 40; i++) await new Pool({ engine: '${engine}', threads: 2 }).echo(i);
        const peak = threads();
        let after = peak;
        for (let t = 0; t < 200 && after > before + 2; t++) {
          globalThis.gc();
          await new Promise((r) => setTimeout(r, 25));
          after = threads();
        }
        console.log(JSON.stringify({ before, peak, after }));
      })();`;
      const cwd = fileURLToPath(new URL('..', import.meta.url));
      const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { cwd, encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, r.stderr);
      const { before, peak, after } = JSON.parse(r.stdout);
      assert.ok(peak >= before + 2, `the pools did start threads (${before} → ${peak})`);
      assert.ok(after <= before + 2, `threads left after gc: ${before} → ${peak} → ${after}`);
    });

    test('a process with finished jobs exits by itself (no dangling handles)', () => {
      const script = `
      const { pi, Pool } = require('offthread');
      const pool = new Pool({ engine: '${engine}', threads: 2 });
      Promise.all([pi.estimate(1e7), pool.echo(1), pi.estimate(1e6, { pool })])
        .then((r) => console.log('done', r[0].inside > 0, r[1]));`;
      const cwd = fileURLToPath(new URL('..', import.meta.url));
      const r = spawnSync(process.execPath, ['-e', script], { cwd, encoding: 'utf8', timeout: 20_000 });
      assert.equal(r.signal, null, 'the child had to be killed: something kept it alive');
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout.trim(), 'done true 1');
    });
  });

test('a job structured clone refuses fails alone: the worker engine and the process go on', async () => {
  // A detached view reached a worker engine's postMessage and the DataCloneError escaped
  // from a message handler: the process died.
  const { stats } = await import('offthread');
  const pool = new Pool({ engine: 'wasm', threads: 1 });
  const buffer = new ArrayBuffer(64);
  const view = new Uint8Array(buffer);
  structuredClone(buffer, { transfer: [buffer] }); // detaches it
  // The timeout turns the old hang (the call was never settled) into a failure.
  const calls = [stats.temperature(view, { pool, timeout: 20_000 }), md5.hexAsync('abc', { pool })];
  await assert.rejects(calls[0], { code: 'ERR_INVALID_ARG', message: /cannot be sent to a worker/ });
  assert.equal(await calls[1], '900150983cd24fb0d6963f7d28e17f72');
  await pool.close();
});
