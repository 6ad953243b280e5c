// The facade path (issue 35): a kernel call through its public function costs the pool's
// own promise and nothing more, so the caller's `await` is the only step between the job
// and its result. An async wrapper (or a `.then` building the result) adds a promise and
// a microtask per call; at 1,000 in flight that was the gap between the facade and
// `pool.echo`. Counted with a promise hook, not timed.
import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { describe, test } from 'node:test';
import { backendInfo, defaultPool, md5, Pool, sha256, tasks } from 'offthread';
import { piVariants } from 'offthread/internal';

const native = backendInfo().active === 'native';
const fixture = new URL('../test-fixtures/tasks/budget.mjs', import.meta.url);

/** How many promises `fn()` makes before it returns (not counting what it awaits later). */
function promisesMadeBy(fn) {
  let made = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') made++;
    },
  }).enable();
  let result;
  try {
    result = fn();
  } finally {
    hook.disable();
  }
  return { made, result };
}

describe('a facade call on the native pool is the pool promise only', { skip: !native && 'needs the addon' }, () => {
  const calls = [
    ['piVariants.estimate parallelAsync', () => piVariants.estimate(1, 'parallelAsync')],
    [
      'piVariants.estimate parallelAsync on a pool',
      () => piVariants.estimate(5, 'parallelAsync', { pool: defaultPool() }),
    ],
    ['md5.iterate', () => md5.iterate('', 1)],
    ['md5.hexAsync', () => md5.hexAsync('abc')],
    ['sha256.hexAsync', () => sha256.hexAsync('abc')],
  ];
  for (const [name, call] of calls) {
    test(name, async () => {
      await call(); // the default pool and the addon are made by the first call
      const { made, result } = promisesMadeBy(call);
      await result;
      assert.equal(made, 1, `${name} made ${made} promises`);
    });
  }

  test('the π result comes from the drain as the facade built it before', async () => {
    for (const [n, seed] of [
      [1, 1],
      [0, 3],
      [100_003, -7],
    ]) {
      const r = await piVariants.estimate(n, 'parallelAsync', { seed });
      const inside = piVariants.estimateSync(n, 'js', { seed }).inside;
      assert.deepEqual(r, { estimate: (4 * inside) / n, inside, samples: n, seed, variant: 'parallelAsync' });
      assert.deepEqual(Object.keys(r), ['estimate', 'inside', 'samples', 'seed', 'variant']);
    }
  });
});

test('bad input still rejects (never throws) once the facades are not async', async () => {
  const rejects = async (call, code) => {
    let promise;
    assert.doesNotThrow(() => {
      promise = call();
    });
    await assert.rejects(promise, { code });
  };
  await rejects(() => piVariants.estimate(-1, 'parallelAsync'), 'ERR_INVALID_SAMPLES');
  await rejects(() => piVariants.estimate(1, 'parallelAsync', { sead: 1 }), 'ERR_INVALID_ARG');
  await rejects(() => piVariants.estimate(1, 'parallelAsync', { chunks: 0 }), 'ERR_INVALID_ARG');
  await rejects(() => md5.iterate('', -1), 'ERR_INVALID_ROUNDS');
  await rejects(() => md5.iterate('', 1, { timeout: -1 }), 'ERR_INVALID_ARG');
  await rejects(() => md5.hexAsync(1), 'ERR_INVALID_ARG');
  await rejects(() => sha256.hexAsync('x', { sead: 1 }), 'ERR_INVALID_ARG');
  const closed = new Pool({ threads: 1 });
  await closed.destroy();
  await rejects(() => piVariants.estimate(1e6, 'auto', { pool: closed }), 'ERR_POOL_CLOSED');
  await rejects(() => md5.iterate('', 1, { pool: closed }), 'ERR_POOL_CLOSED');
});

test('a π job that waits for a budget slot resolves to its own result, in a drained id', {
  skip: !native && 'needs the addon',
}, async () => {
  const pool = new Pool({ threads: 2 });
  try {
    const live = new Int32Array(new SharedArrayBuffer(8));
    const work = tasks(fixture, { pool });
    await work.busy(live, 0);
    const holder = work.busy(live, 300, 7); // holds one of the two slots
    while (Atomics.load(live, 0) !== 1) await new Promise((r) => setTimeout(r, 1));
    // A takes the other slot; B waits for it, and starts from inside A's drain in the id
    // A's completion has just given back: A's result is built from A's arguments, B's
    // from B's (the drain reads A's before the id goes back).
    const a = piVariants.estimate(1_001, 'parallelAsync', { pool, seed: 5 });
    const b = piVariants.estimate(77, 'parallelAsync', { pool, seed: 6 });
    assert.equal(pool.stats().budget.waiting, 1);
    const [ra, rb] = await Promise.all([a, b]);
    assert.deepEqual(
      [ra.samples, ra.seed, ra.inside],
      [1_001, 5, piVariants.estimateSync(1_001, 'js', { seed: 5 }).inside],
    );
    assert.deepEqual([rb.samples, rb.seed, rb.inside], [77, 6, piVariants.estimateSync(77, 'js', { seed: 6 }).inside]);
    assert.equal(await holder, 7);
  } finally {
    await pool.close();
  }
});
