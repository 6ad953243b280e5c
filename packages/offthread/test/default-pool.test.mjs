// The default pool survives its own close/destroy (issue 30 item 6): after
// `defaultPool().destroy()` or `.close()`, the next call that relies on the default
// pool gets a fresh one instead of ERR_POOL_CLOSED for the rest of the process.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultPool, md5, pi, tasks } from 'offthread';

const work = tasks(new URL('../test-fixtures/tasks/work.mjs', import.meta.url));

/** Every kind of call that runs on the default pool when given no `pool`. */
async function callsSucceed() {
  assert.equal(await md5.hexAsync('abc'), '900150983cd24fb0d6963f7d28e17f72');
  assert.equal(await md5.iterate('abc', 3), md5.iterateReference('abc', 3));
  const { samples } = await pi.estimate(100_000, { seed: 1 });
  assert.equal(samples, 100_000);
  assert.equal(await work.add(2, 3), 5);
}

describe('the default pool after close or destroy', () => {
  test('destroy(): the next calls get a fresh default pool', async () => {
    await callsSucceed();
    const old = defaultPool();
    await old.destroy();
    assert.equal(old.closed, true);
    await callsSucceed();
    const fresh = defaultPool();
    assert.notEqual(fresh, old);
    assert.equal(fresh.closed, false);
    assert.equal(defaultPool(), fresh, 'the fresh pool is kept, not remade per call');
  });

  test('close(): the next calls get a fresh default pool; calls in flight finish on the old one', async () => {
    const old = defaultPool();
    const inFlight = md5.iterate('in flight', 20_000);
    const closing = old.close();
    await callsSucceed();
    assert.notEqual(defaultPool(), old);
    assert.equal(await inFlight, md5.iterateReference('in flight', 20_000));
    await closing;
  });

  test('repeated destroys each leave the next call working', async () => {
    for (let i = 0; i < 3; i++) {
      await defaultPool().destroy();
      assert.equal(await md5.hexAsync('abc'), '900150983cd24fb0d6963f7d28e17f72');
      assert.equal(await work.add(i, 1), i + 1);
    }
  });

  test('an explicit pool stays closed: only the default one is replaced', async () => {
    const pool = defaultPool();
    await pool.destroy();
    await assert.rejects(md5.hexAsync('abc', { pool }), { code: 'ERR_POOL_CLOSED' });
  });
});
