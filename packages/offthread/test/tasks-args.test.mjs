// A call's arguments are copied when it is made (issue 29): a call that waits for a
// worker (the thread budget held by other work, past the 1,024 slots, the message
// transport's queue) carries the values of the call, not what the caller changed them to
// afterwards — on both job transports. Big buffers (≥ 64 KiB) are copied once and moved
// instead of cloned; what the worker gets is still exactly what structured clone gives
// (the oracle), and the caller's own buffer is left as it was.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, describe, test } from 'node:test';
import { md5, Pool, tasks } from 'offthread';

const require = createRequire(import.meta.url);
// The pool's internals (not exported by the package): the Node build's own file.
const { MessageJobPool } = require('../dist/pool/message-jobs.js');

const fixture = (name) => new URL(`../test-fixtures/tasks/${name}`, import.meta.url);
const MiB = 1 << 20;

/** Calls `sum` and `echo` while `busy` holds the pool, then changes every argument. */
async function changedAfterTheCall(sum, echo, busy) {
  const small = new Uint8Array(100).fill(1);
  const big = new Uint8Array(MiB).fill(1);
  const list = [1, 2, 3];
  const moved = new Uint8Array(MiB).fill(1);
  const calls = [sum(small), sum(big), sum(big.subarray(10, 20)), echo(list), sum(moved, [moved.buffer])];
  assert.equal(moved.byteLength, 0, 'a transferred buffer is detached at the call');
  small.fill(0);
  big.fill(0);
  list.push(4);
  assert.deepEqual(await Promise.all(calls), [100, MiB, 10, [1, 2, 3], MiB]);
  await busy;
}

describe('arguments are the values at the call', () => {
  const pool = new Pool({ threads: 1 });
  const work = tasks(fixture('work.mjs'), { pool });
  after(() => pool.close());

  test("while the pool's thread budget is held by a kernel (the calls wait for it)", async () => {
    await work.add(1, 2);
    // One thread: a native MD5 loop holds the pool's whole budget, so the task calls wait.
    const kernel = md5.iterate('x', 400_000, { pool });
    await changedAfterTheCall(
      (bytes, transfer) => (transfer ? work.sum.with({ transfer })(bytes) : work.sum(bytes)),
      work.echo,
      kernel,
    );
  });

  test('past the 1,024 slots', async () => {
    const before = Array.from({ length: 1_100 }, (_, i) => work.add(i, 1));
    await changedAfterTheCall(
      (bytes, transfer) => (transfer ? work.sum.with({ transfer })(bytes) : work.sum(bytes)),
      work.echo,
      work.hog(50),
    );
    assert.equal((await Promise.all(before)).length, 1_100);
  });

  test('on the message transport (a page without SharedArrayBuffer)', async () => {
    const mp = new MessageJobPool({ threads: 1, maxQueue: 100, script: 'tasks', grace: 100, nice: 0 });
    mp.setup({ kind: 'module', mod: 0, url: fixture('portable.mjs').href });
    ['sum', 'echo', 'hog'].forEach((name, fn) => {
      mp.setup({ kind: 'export', fn, mod: 0, name });
    });
    try {
      await changedAfterTheCall(
        (bytes, transfer) => mp.run(0, [bytes], { transfer }),
        (v) => mp.run(1, [v], {}),
        mp.run(2, [100], {}),
      );
    } finally {
      await mp.close();
    }
  });

  test('a waiting call whose arguments cannot be copied fails with ERR_TASK_DATA at once', async () => {
    let hogDone = false;
    const busy = work.hog(50).then(() => {
      hogDone = true;
    });
    // Past the 1,024 slots behind the hog: the call waits, so it is copied at the call.
    const before = Array.from({ length: 1_100 }, (_, i) => work.add(i, 1));
    const moved = new Uint8Array(8);
    await assert.rejects(work.echo.with({ transfer: [moved.buffer] })([moved, () => 1]), { code: 'ERR_TASK_DATA' });
    assert.equal(hogDone, false, 'refused at the call, not once a worker took it');
    await busy;
    assert.equal((await Promise.all(before)).length, 1_100);
  });
});

describe('big buffers cross as structured clone gives them', () => {
  const pool = new Pool({ threads: 1 });
  const work = tasks(fixture('work.mjs'), { pool });
  after(() => pool.close());

  const big = () => {
    const bytes = new Uint8Array(MiB + 3);
    for (let i = 0; i < bytes.length; i += 4093) bytes[i] = i & 255;
    return bytes;
  };

  test('views, a Buffer, a DataView and buffers in objects and arrays equal their clone', async () => {
    const bytes = big();
    const values = [
      bytes,
      bytes.subarray(4097, 70_000),
      new Float64Array(bytes.buffer, 8, 9_000),
      new DataView(bytes.buffer, 5, 100),
      Buffer.from(bytes),
      bytes.buffer,
      { pixels: bytes, width: 7, nested: { again: bytes.subarray(1) } },
      [bytes, 'x', [bytes.buffer]],
      new Map([['k', bytes]]),
      Object.assign([bytes], { extra: bytes }),
    ];
    for (const [i, value] of values.entries()) {
      const copy = structuredClone(value);
      assert.deepEqual(await work.echo(value), copy, `#${i}`);
      assert.deepEqual(structuredClone(value), copy, `#${i}: the caller's value is untouched`);
    }
    assert.equal(bytes.byteLength, MiB + 3);
  });

  test('one buffer seen twice arrives as one buffer; a cycle crosses', async () => {
    const bytes = big();
    assert.equal(await work.sameBuffer(bytes, bytes.subarray(9)), true);
    assert.equal(await work.sameBuffer(bytes, new Map([['k', bytes.subarray(9)]]).get('k')), true);
    const cyclic = { bytes };
    cyclic.self = cyclic;
    const back = await work.echo(cyclic);
    assert.equal(back.self, back);
    assert.deepEqual(back.bytes, bytes);
  });

  test("a big result is a copy: the worker's own buffer stays whole", async () => {
    const first = await work.keepBig(MiB);
    const again = await work.keepBig(MiB);
    assert.deepEqual(again, first);
    assert.equal(first.length, MiB);
    assert.equal(first[MiB - 1], 3);
    assert.equal(await work.keptLength(), MiB);
  });

  test('a resizable buffer stays resizable; a shared one is shared', async () => {
    const growable = new ArrayBuffer(MiB, { maxByteLength: 2 * MiB });
    assert.equal(await work.resizable(new Uint8Array(growable)), true);
    const shared = new Uint8Array(new SharedArrayBuffer(MiB));
    await work.fill(shared, 7);
    assert.equal(shared[MiB - 1], 7);
  });
});
