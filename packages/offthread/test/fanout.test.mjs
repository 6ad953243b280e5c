// pool.all and Emitter: concurrent kernels, results in order, failure aborts siblings;
// the loop-delay helper; the loop keeps turning while the pool is saturated.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { all, Emitter, monitorLoopDelay, Pool, pi } from 'offthread';
import { piVariants, testSpin } from 'offthread/internal';

describe('all()', () => {
  test('runs kernel tasks concurrently and returns results in task order', async () => {
    const pool = new Pool({ threads: 2 });
    const sizes = [3_000_000, 10, 100_000, 1];
    const results = await all(
      sizes.map((n) => (ctx) => piVariants.estimate(n, 'parallelAsync', { ...ctx, seed: 2 })),
      { pool },
    );
    assert.deepEqual(
      results.map((r) => r.inside),
      sizes.map((n) => pi.estimateSync(n, { seed: 2 }).inside),
    );
    await pool.close();
  });

  test('JS tasks run on the loop and mix with kernel tasks', async () => {
    const results = await all([() => 'js', (ctx) => pi.estimate(100_000, ctx).then((r) => r.inside), async () => 3]);
    assert.deepEqual(results, ['js', 78463, 3]);
  });

  test('the first failure rejects and aborts the sibling tasks', async () => {
    const pool = new Pool({ threads: 1 });
    let siblingSignal;
    const boom = new Error('boom');
    await assert.rejects(
      all(
        [
          (ctx) => {
            siblingSignal = ctx.signal;
            return testSpin(pool, { signal: ctx.signal });
          },
          async () => {
            await new Promise((r) => setTimeout(r, 10));
            throw boom;
          },
        ],
        { pool },
      ),
      (err) => err === boom,
    );
    assert.equal(siblingSignal.aborted, true);
    await pool.close();
  });

  test('rejects non-function tasks', async () => {
    await assert.rejects(all([1]), { code: 'ERR_INVALID_ARG' });
  });
});

describe('Emitter', () => {
  test('emit runs every listener and resolves to their results in listener order', async () => {
    const emitter = new Emitter();
    emitter.on('job', (n, ctx) => pi.estimate(n, { ...ctx, seed: 1 }).then((r) => r.inside));
    emitter.on('job', (n) => `js saw ${n}`);
    emitter.on('job', (n, ctx) => piVariants.estimate(n, 'parallelAsync', { ...ctx, seed: 1 }).then((r) => r.samples));
    assert.equal(emitter.listenerCount('job'), 3);
    assert.deepEqual(await emitter.emit('job', 100_000), [78463, 'js saw 100000', 100_000]);
  });

  test('an event with no listeners resolves to []; off() removes a listener', async () => {
    const emitter = new Emitter();
    const listener = () => 1;
    emitter.on('a', listener).off('a', listener);
    assert.deepEqual(await emitter.emit('a', null), []);
  });

  test('bad arguments are typed errors', () => {
    assert.throws(() => new Emitter({ pool: {} }), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => new Emitter().on('a', 5), { code: 'ERR_INVALID_ARG' });
  });
});

describe('event-loop health', () => {
  test('monitorLoopDelay reports milliseconds at the stated resolution', async () => {
    const monitor = monitorLoopDelay({ resolutionMs: 1 });
    await new Promise((r) => setTimeout(r, 50));
    const s = monitor.stop();
    assert.equal(s.resolutionMs, 1);
    assert.ok(s.count > 0);
    assert.ok(s.p50Ms > 0 && s.p50Ms <= s.p99Ms && s.p99Ms <= s.maxMs, JSON.stringify(s));
    assert.throws(() => monitorLoopDelay({ resolutionMs: 0 }), { code: 'ERR_INVALID_ARG' });
  });

  test('timers keep firing while the pool is saturated with heavy π jobs', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const jobs = Array.from({ length: 4 }, (_, i) => piVariants.estimate(2e8, 'parallelAsync', { seed: i }));
    let ticksBeforeFirstResult = -1;
    await Promise.race(jobs).then(() => {
      ticksBeforeFirstResult = ticks;
    });
    await Promise.all(jobs);
    clearInterval(timer);
    assert.ok(ticksBeforeFirstResult >= 5, `the loop ran only ${ticksBeforeFirstResult} timer ticks`);
  });
});
