// Reliability of the native binding: memory a job reads must outlive the caller's
// buffer (issue 11 item 1), every error from the binding carries a registry code
// (issue 11 item 4, issue 12), and a pool nobody closed frees its threads (item 7).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { backendInfo, errorRegistry, Pool, pi, schema, stats } from 'offthread';
// The test build of the addon: the table below covers its test hooks too.
import 'offthread/internal';

const here = dirname(fileURLToPath(import.meta.url));
const hasNative = backendInfo().native.loaded;
/** The addon itself: it is public too, so it must throw registry codes on its own. */
const binding = hasNative ? createRequire(import.meta.url)(backendInfo().native.path) : null;

function writeBatch(n) {
  const writer = schema.TemperatureBatchWriter.create();
  const readings = writer.readings(n);
  const values = readings.value();
  for (let i = 0; i < n; i++) values[i] = ((i * 7919) % 1000) / 10 - 20;
  return writer.finish();
}

/**
 * The repro, made deterministic: a one-thread pool is kept busy by a π job that
 * runs until aborted, so the stats job is still queued when its buffer is transferred
 * away and the new owner is collected; only then does it run. Before the fix the job
 * read the freed backing store (48 MB: above glibc's mmap threshold, so it is unmapped
 * on free and the read faults). scripts/asan.sh runs this file under AddressSanitizer.
 */
const uafRepro = `
import { Pool, pi, schema, stats } from 'offthread';
const n = 4_000_000; // 12 bytes a reading: 48 MB
const writer = schema.TemperatureBatchWriter.create();
const values = writer.readings(n).value();
for (let i = 0; i < n; i++) values[i] = ((i * 7919) % 1000) / 10 - 20;
const batch = writer.finish();
const expected = stats.temperatureSync(batch);
const pool = new Pool({ threads: 1 });
const blocker = new AbortController();
const busy = pi.estimate(2 ** 52, { pool, signal: blocker.signal }).catch((e) => e.code);
let b = batch.slice();
const p = stats.temperature(b, { pool });
structuredClone(b.buffer, { transfer: [b.buffer] }); // detaches b; the clone is garbage
b = null;
let junk = [];
for (let i = 0; i < 25; i++) junk.push(new Uint8Array(8 << 20).fill(i)); // ~200 MB
junk = null;
globalThis.gc();
await new Promise((r) => setTimeout(r, 50)); // let V8 sweep the freed backing stores
globalThis.gc();
blocker.abort();
const got = await p;
console.log(JSON.stringify({ got, expected, busy: await busy }));
await pool.close();
`;

test('an async job owns the bytes of a buffer that is transferred away (no use-after-free)', {
  skip: !hasNative && 'needs the native addon',
}, () => {
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', uafRepro], {
    cwd: here,
    encoding: 'utf8',
  });
  assert.equal(r.signal, null, `child died of ${r.signal}: ${r.stderr}`);
  assert.equal(r.status, 0, r.stderr);
  const { got, expected, busy } = JSON.parse(r.stdout);
  assert.equal(expected.count, 4_000_000);
  assert.deepEqual(got, expected);
  assert.equal(busy, 'ERR_ABORTED');
});

/** A one-thread pool kept busy until `release()`: jobs submitted meanwhile stay queued. */
function blockedPool() {
  const pool = new Pool({ threads: 1 });
  const ac = new AbortController();
  const busy = pi.estimate(2 ** 52, { pool, signal: ac.signal }).catch((e) => e.code);
  return {
    pool,
    release: async () => {
      ac.abort();
      assert.equal(await busy, 'ERR_ABORTED');
    },
  };
}

test('a detachable buffer is copied at submit; a SharedArrayBuffer view is read in place', {
  skip: !hasNative && 'needs the native addon',
}, async () => {
  const first = writeBatch(1000);
  const second = writeBatch(1000);
  schema.TemperatureBatchReader.fromBytes(second).readings().value().fill(5);
  assert.equal(second.length, first.length);
  const before = stats.temperatureSync(first);
  const after = stats.temperatureSync(second);
  assert.notDeepEqual(before, after);

  const { pool, release } = blockedPool();
  try {
    const plain = first.slice();
    const shared = new Uint8Array(new SharedArrayBuffer(first.length));
    shared.set(first);
    const fromPlain = stats.temperature(plain, { pool });
    const fromShared = stats.temperature(shared, { pool });
    // Both jobs are queued behind the blocker: change the bytes under them.
    plain.set(second);
    shared.set(second);
    await release();
    assert.deepEqual(await fromPlain, before, 'the job read its own copy');
    assert.deepEqual(await fromShared, after, 'the job read the shared memory');
  } finally {
    await pool.close();
  }
});

const badValues = [
  ['a Symbol', Symbol('x')],
  ['a bigint', 1n],
  ['undefined', undefined],
  ['an object', {}],
];

test('pool.echo with a Symbol, a bigint, undefined or an object rejects with ERR_INVALID_ARG', {
  skip: !hasNative && 'needs the native addon',
}, async () => {
  const pool = new Pool({ threads: 1 });
  try {
    for (const [what, value] of badValues) {
      await assert.rejects(pool.echo(value), { code: 'ERR_INVALID_ARG' }, what);
    }
    assert.equal(await pool.echo(3), 3, 'the pool still works');
  } finally {
    await pool.close();
  }
});

/** Valid arguments of every binding function and NativePool method (never called as is). */
function bindingCalls() {
  const bytes = writeBatch(1);
  const fns = {
    errorCodes: [],
    kernelCallSync: [0, 'a', 0, 0, 0],
    kernelCallUv: [0, 'a', 0, 0, 0],
    kernelNames: [],
    layoutRunSync: [0, 1, 1, 1],
    piCountParallelSync: [10, 1],
    piCountRangeUv: [0, 10, 1],
    statsTemperatureOffsetSync: [bytes, 1],
    NativePool: [1, 0, 10, () => {}],
    NativeFilter: ['{"kind":"md5"}'],
    filterErrorCodes: [],
    trimMemory: [],
  };
  const filter = new binding.NativeFilter('{"kind":"md5"}');
  const methods = {
    submitKernel: [0, 0, 'a', 0, 0, 0, false],
    submitNoop: [0, 1],
    submitPanic: [0],
    submitSpin: [0],
    submitFilterPush: [0, filter, bytes],
    submitFilterFinish: [0, filter],
    awaitCompletion: [0],
    cancel: [0],
    drain: [new Float64Array(3)],
    take: [0],
    keepAlive: [false],
    stats: [],
    close: [],
    destroy: [],
    release: [],
  };
  return { fns, methods };
}

test('every argument of the binding refuses a wrong type with TypeError ERR_INVALID_ARG', {
  skip: !hasNative && 'needs the native addon',
}, () => {
  const { fns, methods } = bindingCalls();
  // The table must list the whole binding, so a new export cannot skip this test.
  assert.deepEqual(Object.keys(binding).sort(), Object.keys(fns).sort());
  const proto = Object.getOwnPropertyNames(binding.NativePool.prototype).filter(
    (k) =>
      k !== 'constructor' &&
      typeof Object.getOwnPropertyDescriptor(binding.NativePool.prototype, k).value === 'function',
  );
  assert.deepEqual(proto.sort(), Object.keys(methods).sort());
  const pool = new binding.NativePool(1, 0, 10, () => {});
  const targets = [
    ...Object.entries(fns).map(([name, args]) => [
      name,
      args,
      name === 'NativePool' || name === 'NativeFilter' ? (...a) => new binding[name](...a) : binding[name],
    ]),
    ...Object.entries(methods).map(([name, args]) => [name, args, (...a) => pool[name](...a)]),
  ];
  let checked = 0;
  try {
    for (const [name, args, call] of targets) {
      for (let i = 0; i < args.length; i++) {
        for (const [what, value] of badValues) {
          const bad = args.with(i, value);
          assert.throws(
            () => call(...bad),
            (err) =>
              err instanceof TypeError && err.code === 'ERR_INVALID_ARG' && /^expected .+, got /.test(err.message),
            `${name} argument ${i} as ${what}`,
          );
          checked++;
        }
      }
    }
  } finally {
    pool.release();
  }
  assert.ok(checked >= 150, `${checked} calls checked`);
  assert.ok('ERR_INVALID_ARG' in errorRegistry);
});

test('the libuv AsyncTask (nativeAsync) rejects with the registry code, not GenericFailure', {
  skip: !hasNative && 'needs the native addon',
}, async () => {
  await assert.rejects(binding.piCountRangeUv(0, -1, 1), { code: 'ERR_INVALID_SAMPLES', message: /got -1/ });
  await assert.rejects(binding.piCountRangeUv(0, 10, 0.5), { code: 'ERR_INVALID_SEED' });
  await assert.rejects(binding.piCountRangeUv(-1, 10, 1), { code: 'ERR_INVALID_SAMPLES' });
  const range = binding.kernelNames().indexOf('pi.range');
  assert.equal(await binding.piCountRangeUv(7, 1000, 1), binding.kernelCallSync(range, new Uint8Array(0), 7, 1000, 1));
  // The generic form of the same task: any registry kernel, its registry codes.
  const none = new Uint8Array(0);
  await assert.rejects(binding.kernelCallUv(range, none, 0, -1, 1), { code: 'ERR_INVALID_SAMPLES', message: /got -1/ });
  const md5 = binding.kernelNames().indexOf('md5.iterate');
  await assert.rejects(binding.kernelCallUv(md5, 'a', 1.5, 0, 0), { code: 'ERR_INVALID_ROUNDS' });
  assert.equal(await binding.kernelCallUv(range, none, 7, 1000, 1), await binding.piCountRangeUv(7, 1000, 1));
  assert.equal(await binding.kernelCallUv(md5, 'abc', 1, 0, 0), '900150983cd24fb0d6963f7d28e17f72');
  assert.throws(() => binding.kernelCallUv(999, none, 0, 0, 0), { code: 'ERR_INVALID_ARG' });
});

/**
 * 20 two-thread NativePools, each running a job that only stops when cancelled, are
 * dropped without close(). Collecting them must cancel the jobs and free the threads;
 * before, the finalizer dropped the pool in place, which waits for the running job:
 * the JS thread hung in the finalizer. The child exits 0 once /proc lists no pool
 * thread (bounded wait: it fails rather than hangs).
 */
const collectRepro = `
const { readdirSync, readFileSync } = require('node:fs');
const binding = require(${JSON.stringify(binding ? backendInfo().native.path : '')});
const poolThreads = () =>
  readdirSync('/proc/self/task').filter((t) => {
    try {
      return /^offthread-\\d+$/.test(readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim());
    } catch {
      return false; // exited between the listing and the read
    }
  }).length;
(() => {
  for (let i = 0; i < 20; i++) {
    const pool = new binding.NativePool(2, 0, 10, () => {});
    const range = binding.kernelNames().indexOf('pi.range');
    pool.submitKernel(0, range, new Uint8Array(0), 0, 2 ** 52, 1, true); // hours of work unless cancelled
  }
})();
const until = Date.now() + 20_000;
const poll = () => {
  globalThis.gc();
  const left = poolThreads();
  if (left === 0) return console.log('released');
  if (Date.now() > until) {
    console.log(left + ' pool threads still alive');
    process.exit(1);
  }
  setTimeout(poll, 20);
};
poll();
`;

test('a NativePool collected without close() cancels its jobs and frees its threads', {
  skip: !hasNative && 'needs the native addon',
}, () => {
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', collectRepro], {
    encoding: 'utf8',
    timeout: 60_000, // the old finalizer blocks forever: fail, do not hang
  });
  assert.equal(r.signal, null, `child killed (${r.signal}): the finalizer blocked? ${r.stderr}`);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.stdout.trim(), 'released');
});
