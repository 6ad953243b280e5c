// A pool's threads stop after `idleTimeout` ms without work and start again on the next
// call: a pool dropped without close() gives its threads back even if no garbage
// collection ever comes (issue 31, item 6: 1,000 dropped pools held 1,009 threads).
// Threads are counted from /proc/self/status: a stopped pool's threads must be gone
// from the process, not merely marked idle.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { filters, md5, Pool, tasks } from 'offthread';
import { outputs } from './stream-outputs.mjs';
import { sleep, threadCount, threadsDropTo, threadsRiseTo } from './threads.mjs';

const TASK_MODULE = new URL('../test-fixtures/tasks/work.mjs', import.meta.url);
const THREADS = 3;

const ABC = '900150983cd24fb0d6963f7d28e17f72';
const kernelCall = (engine) => ({
  make: (o) => new Pool({ engine, ...o }),
  call: (pool) => md5.hexAsync('abc', { pool }),
  answer: ABC,
});
const ENGINES = {
  native: kernelCall('native'),
  wasm: kernelCall('wasm'),
  js: kernelCall('js'),
  // A 'js' pool: its kernel workers start only for a kernel call, so every thread
  // counted is a task worker.
  tasks: {
    make: (o) => new Pool({ engine: 'js', ...o }),
    call: (pool) => tasks(TASK_MODULE, { pool }).add(2, 3),
    answer: 5,
  },
};

for (const [name, e] of Object.entries(ENGINES))
  describe(`idle pool (${name})`, () => {
    test('its threads stop after idleTimeout and start again on the next call', async () => {
      const pool = e.make({ threads: THREADS, idleTimeout: 100 });
      assert.equal(await e.call(pool), e.answer);
      const busy = threadCount();
      const idle = await threadsDropTo(busy - THREADS);
      assert.ok(idle <= busy - THREADS, `${busy} threads while in use, ${idle} after idleTimeout`);
      // Back from idle: the next call starts threads again and answers. (The count is
      // polled and asked only to rise: other threads of the process — V8's platform
      // workers, the heap trim's — come and go meanwhile; a one-off read of
      // `idle + THREADS` failed once on Node 26.)
      assert.equal(await e.call(pool), e.answer);
      const back = await threadsRiseTo(idle + 1);
      assert.ok(back > idle, `${idle} threads while idle, ${back} after the next call`);
      await pool.close();
    });

    test('a pool dropped without close() gives its threads back with no GC', async () => {
      const before = threadCount();
      for (let i = 0; i < 5; i++) {
        const pool = e.make({ threads: 2, idleTimeout: 50 });
        assert.equal(await e.call(pool), e.answer);
      }
      const after = await threadsDropTo(before);
      assert.ok(after <= before, `${before} threads before five dropped pools, ${after} after`);
    });
  });

test('idleTimeout Infinity keeps the threads; bad values are typed errors', async () => {
  const pool = new Pool({ engine: 'js', threads: 2, idleTimeout: Number.POSITIVE_INFINITY });
  assert.equal(await md5.hexAsync('abc', { pool }), ABC);
  await sleep(300);
  assert.equal(pool.stats().workers, 2, 'both workers still up');
  await pool.close();
  for (const idleTimeout of [-1, 1.5, '10', Number.NaN, 2 ** 31]) {
    assert.throws(() => new Pool({ idleTimeout }), { code: 'ERR_INVALID_POOL_OPTIONS' }, String(idleTimeout));
  }
});

test('native figures carry over an idle spell', async () => {
  const pool = new Pool({ engine: 'native', threads: 2, idleTimeout: 50 });
  for (let i = 0; i < 3; i++) await md5.hexAsync('abc', { pool });
  const busy = threadCount();
  await threadsDropTo(busy - 2);
  await md5.hexAsync('abc', { pool });
  const s = pool.stats();
  assert.equal(s.completed, 4);
  assert.equal(s.threads, 2);
  await pool.close();
});

test('a stream whose state is on a worker outlives idle spells between its chunks', async () => {
  const pool = new Pool({ engine: 'wasm', threads: 1, idleTimeout: 0 });
  const text = 'a stream that waits between its chunks; '.repeat(200);
  const chunks = [text.slice(0, 3000), text.slice(3000, 5000), text.slice(5000)].map((s) => Buffer.from(s));
  async function* slowly() {
    for (const c of chunks) {
      yield c;
      await sleep(150); // the pool is idle here, longer than its idleTimeout
    }
  }
  const out = await outputs(filters.transcode('utf8', 'utf16le', { pool }), slowly());
  assert.equal(Buffer.concat(out).toString('utf16le'), text);
  // The stream is done: its hold is released and the worker may now stop.
  const busy = threadCount();
  assert.ok((await threadsDropTo(busy - 1)) <= busy - 1, 'the worker stopped once the stream ended');
  await pool.close();
});

test('the idle timer does not keep the process alive', () => {
  const script = `
    import { md5, Pool } from 'offthread';
    const pool = new Pool({ engine: 'js', threads: 1, idleTimeout: 600000 });
    console.log(await md5.hexAsync('abc', { pool }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.signal, null, `killed: the process did not exit (${r.stderr})`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), ABC);
});
