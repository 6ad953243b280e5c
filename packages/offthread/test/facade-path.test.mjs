// The facade path (issue 35): a kernel call through its public function costs the pool's
// own promise and nothing more, so the caller's `await` is the only step between the job
// and its result. An async wrapper adds a promise and a microtask per call; at 1,000 in
// flight that was the gap between the facade and `pool.echo`. Counted with a promise
// hook, not timed.
import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { describe, test } from 'node:test';
import { backendInfo, md5, Pool, sha256 } from 'offthread';

const native = backendInfo().active === 'native';

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
});

test('bad input still rejects (never throws) once the facades are not async', async () => {
  const rejects = async (call, code) => {
    let promise;
    assert.doesNotThrow(() => {
      promise = call();
    });
    await assert.rejects(promise, { code });
  };
  await rejects(() => md5.iterate('', -1), 'ERR_INVALID_ROUNDS');
  await rejects(() => md5.iterate('', 1, { timeout: -1 }), 'ERR_INVALID_ARG');
  await rejects(() => md5.hexAsync(1), 'ERR_INVALID_ARG');
  await rejects(() => sha256.hexAsync('x', { sead: 1 }), 'ERR_INVALID_ARG');
  const closed = new Pool({ threads: 1 });
  await closed.destroy();
  await rejects(() => md5.iterate('', 1, { pool: closed }), 'ERR_POOL_CLOSED');
});
