// filters.task(work.fn): a task module's export as a stream transform on one worker —
// generator and per-chunk forms, state for the stream's life, order, back-pressure both
// ways, typed errors, destroy ending the worker-side state, the Nexus shape.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, describe, test } from 'node:test';
import { threadId } from 'node:worker_threads';
import { filters, Pool, TaskTransform, tasks } from 'offthread';

const fixture = new URL('./fixtures/nexus-work.mjs', import.meta.url);
const flag = () => new Int32Array(new SharedArrayBuffer(4));
const until = async (check, what) => {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(check(), what);
};

/** Runs `chunks` through `transform` and collects what comes out. */
async function through(transform, chunks, objectMode = false) {
  const out = [];
  await pipeline(
    Readable.from(chunks, { objectMode: true }),
    transform,
    new Writable({
      objectMode,
      write(chunk, _enc, cb) {
        out.push(chunk);
        cb();
      },
    }),
  );
  return out;
}

describe('filters.task()', () => {
  const pool = new Pool({ threads: 2 });
  const work = tasks(fixture, { pool });
  after(() => pool.close());

  test('a generator export transforms a byte stream, in order, off the loop', async () => {
    const chunks = Array.from({ length: 50 }, (_, i) => Buffer.from(`chunk ${i} of abc; `));
    const t = filters.task(work.upper);
    assert.ok(t instanceof TaskTransform);
    const out = await through(t, chunks);
    assert.ok(out.every((c) => Buffer.isBuffer(c)));
    assert.equal(Buffer.concat(out).toString(), Buffer.concat(chunks).toString().toUpperCase());
  });

  test('arguments reach the export; output made at the end (a flush) comes through', async () => {
    const out = await through(filters.task(work.total, { args: ['bytes='] }), ['ab', 'cde', 'f']);
    assert.equal(Buffer.concat(out).toString(), 'bytes=6');
  });

  test('a per-chunk export keeps its state on one worker for the stream; object mode carries values', async () => {
    const chunks = Array.from({ length: 20 }, (_, i) => ({ n: i }));
    const out = await through(filters.task(work.numbered, { objectMode: true, args: [100] }), chunks, true);
    assert.deepEqual(
      out.map((o) => o.i),
      chunks.map((_, i) => 100 + i),
    );
    assert.deepEqual(
      out.map((o) => o.chunk),
      chunks,
    );
    assert.equal(new Set(out.map((o) => o.threadId)).size, 1, 'every chunk on the same worker');
    assert.notEqual(out[0].threadId, threadId);
    assert.ok(
      out.every((o) => o.live),
      'currentTask() works inside the per-chunk export',
    );
    // A second stream starts with fresh state.
    const again = await through(filters.task(work.numbered, { objectMode: true, args: [0] }), [1, 2], true);
    assert.deepEqual(
      again.map((o) => o.i),
      [0, 1],
    );
  });

  test('a per-chunk result of undefined passes nothing on', async () => {
    const out = await through(filters.task(work.dropComments), ['# a\n', 'b\n', '# c\n', 'd\n']);
    assert.equal(Buffer.concat(out).toString(), 'b\nd\n');
  });

  test('a big stream: every byte, in order, and a writer may reuse its buffer once its write is done', async () => {
    const total = 300;
    const scratch = Buffer.alloc(4096);
    const expected = [];
    const t = filters.task(work.upper);
    const out = [];
    t.on('data', (c) => out.push(c));
    const ended = new Promise((resolve, reject) => t.on('end', resolve).on('error', reject));
    for (let i = 0; i < total; i++) {
      scratch.fill(97 + (i % 26));
      expected.push(scratch.toString().toUpperCase());
      // The same buffer every time, refilled once its write's callback came.
      await new Promise((resolve, reject) => t.write(scratch, (err) => (err ? reject(err) : resolve())));
    }
    t.end();
    await ended;
    const got = Buffer.concat(out).toString();
    assert.equal(got.length, total * 4096);
    assert.ok(got === expected.join(''), 'the output is the input upper-cased, chunk by chunk');
  });

  test('transfer: true moves whole-buffer chunks instead of copying them; the default copies', async () => {
    const whole = new Uint8Array(4096).fill(97);
    const pooled = Buffer.from('abc'); // a view into Node's shared pool: copied all the same
    const t = filters.task(work.upper, { transfer: true });
    const out = [];
    t.on('data', (c) => out.push(c));
    const done = new Promise((resolve, reject) => t.on('end', resolve).on('error', reject));
    t.write(whole);
    t.write(pooled);
    t.end();
    await done;
    assert.equal(whole.byteLength, 0, 'the whole-buffer chunk was moved');
    assert.equal(pooled.toString(), 'abc');
    assert.equal(Buffer.concat(out).toString(), `${'A'.repeat(4096)}ABC`);
    const kept = new Uint8Array(4096).fill(98);
    await through(filters.task(work.upper), [kept]);
    assert.equal(kept.byteLength, 4096, 'copied by default');
    assert.throws(() => filters.task(work.upper, { transfer: 1 }), { code: 'ERR_INVALID_ARG' });
  });

  test("a throw in the transform fails the stream with the task's error, typed", async () => {
    await assert.rejects(through(filters.task(work.failAfter, { args: [2] }), ['a', 'b', 'c', 'd']), (err) => {
      assert.equal(err.name, 'RangeError');
      assert.equal(err.code, 'E_TOO_MANY');
      assert.equal(err.message, 'chunk 3 is one too many');
      return true;
    });
  });

  test('an export that is missing fails the stream with ERR_TASK_EXPORT', async () => {
    await assert.rejects(through(filters.task(work.nope), ['a']), { code: 'ERR_TASK_EXPORT' });
  });

  test('a byte stream refuses a non-byte output with ERR_TASK_DATA; object mode refuses null', async () => {
    await assert.rejects(through(filters.task(work.notBytes), ['abc']), (err) => {
      assert.equal(err.code, 'ERR_TASK_DATA');
      assert.match(err.message, /notBytes\(\) passed on 3: a byte stream/);
      return true;
    });
    await assert.rejects(through(filters.task(work.upper, { objectMode: true }), [Symbol('x')], true), {
      code: 'ERR_TASK_DATA',
    });
  });

  test('a module that names its functions by side effect (exposeTasks) works as a filter', async () => {
    const exposed = tasks(new URL('../test-fixtures/tasks/exposed-a.mjs', import.meta.url), { pool });
    assert.deepEqual(await through(filters.task(exposed.twice, { objectMode: true }), [1, 2, 3], true), [2, 4, 6]);
  });

  test('bad arguments are typed errors', () => {
    assert.throws(() => filters.task((c) => c), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => filters.task(work.upper, { args: 1 }), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => filters.task(work.upper, { objectMode: 'yes' }), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => filters.task(work.upper, { pool: {} }), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => filters.task(work.upper, { nope: 1 }), { code: 'ERR_INVALID_ARG' });
  });

  test('destroying the stream ends the transform on its worker (its finally runs) and frees the worker', async () => {
    const ended = flag();
    const t = filters.task(work.watched, { args: [ended] });
    t.write('first');
    await new Promise((resolve) => t.once('data', resolve));
    t.destroy();
    await until(() => Atomics.load(ended, 0) === 1, 'the generator finally ran on the worker');
    // Both workers serve again: a rendezvous of two calls passes.
    const counter = flag();
    const [a, b] = await Promise.all([work.meet(counter, 2), work.meet(counter, 2)]);
    assert.notEqual(a, b);
  });

  test('an aborted signal destroys the stream with ERR_ABORTED', async () => {
    const ended = flag();
    const controller = new AbortController();
    const t = filters.task(work.watched, { args: [ended], signal: controller.signal });
    const failed = new Promise((resolve) => t.once('error', resolve));
    t.write('x');
    await new Promise((resolve) => t.once('data', resolve)); // running on its worker
    controller.abort();
    assert.equal((await failed).code, 'ERR_ABORTED');
    await until(() => Atomics.load(ended, 0) === 1, 'the generator finally ran');
  });

  test('a transform that ends early ends the stream; the rest of the input is dropped', async () => {
    const out = await through(filters.task(work.head, { args: [2] }), ['a', 'b', 'c', 'd', 'e']);
    assert.equal(Buffer.concat(out).toString(), 'ab');
  });

  test('back-pressure out: a reader that stops pauses the transform on its worker', async () => {
    const made = flag();
    const t = filters.task(work.flood, { objectMode: true, args: [made, 10_000] });
    t.write('go');
    // Nobody reads: the worker makes at most its credit plus what the readable side buffers.
    await until(() => Atomics.load(made, 0) > 0, 'the transform started');
    await new Promise((r) => setTimeout(r, 200));
    const paused = Atomics.load(made, 0);
    // 64: the outputs the worker may send ahead (OUT_WINDOW).
    assert.ok(paused <= 64 + t.readableHighWaterMark + 2, `made ${paused} with nobody reading`);
    // Reading resumes it.
    let read = 0;
    for await (const item of t) {
      assert.equal(item.i, read);
      if (++read === 100) break;
    }
    assert.ok(Atomics.load(made, 0) > paused);
  });

  test('back-pressure in: a writer waits while the transform holds its chunks', async () => {
    const taken = flag();
    const gate = flag();
    const t = filters.task(work.gated, { objectMode: true, args: [taken, gate] });
    let accepted = 0;
    const writes = (async () => {
      for (let i = 0; i < 100; i++) {
        if (!t.write(i)) await new Promise((r) => t.once('drain', r));
        accepted++;
      }
      t.end();
    })();
    await until(() => Atomics.load(taken, 0) === 1, 'the first chunk was taken');
    await new Promise((r) => setTimeout(r, 200));
    // 64 chunks on their way (IN_WINDOW) and the writable side's buffer: no more.
    const most = 64 + t.writableHighWaterMark + 1;
    assert.ok(accepted <= most, `the writer got ${accepted} of 100 chunks past a transform that took 1`);
    Atomics.store(gate, 0, 1);
    const out = [];
    for await (const item of t) out.push(item);
    await writes;
    assert.deepEqual(
      out,
      Array.from({ length: 100 }, (_, i) => i),
    );
  });

  test('back-pressure in counts bytes too: big chunks wait sooner', async () => {
    const taken = flag();
    const gate = flag();
    const t = filters.task(work.gated, { args: [taken, gate] });
    const MiB = 1024 * 1024;
    let accepted = 0;
    const writes = (async () => {
      for (let i = 0; i < 20; i++) {
        if (!t.write(Buffer.alloc(MiB, i))) await new Promise((r) => t.once('drain', r));
        accepted++;
      }
      t.end();
    })();
    await until(() => Atomics.load(taken, 0) === 1, 'the first chunk was taken');
    await new Promise((r) => setTimeout(r, 200));
    // 8 MiB on their way (IN_BYTES), one more written past it, one in the writable buffer.
    assert.ok(accepted <= 10, `the writer got ${accepted} MiB past a transform that took 1`);
    Atomics.store(gate, 0, 1);
    let bytes = 0;
    for await (const chunk of t) bytes += chunk.length;
    await writes;
    assert.equal(bytes, 20 * MiB);
  });

  test('in the Nexus shape: source → task filter → two sinks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'offthread-task-filter-'));
    try {
      const input = join(dir, 'in.txt');
      const text = 'hello nexus, '.repeat(20_000);
      writeFileSync(input, text);
      const [a, b] = [join(dir, 'a.txt'), join(dir, 'b.txt')];
      const src = filters.source(filters.fileSource(input, { highWaterMark: 16 * 1024 }));
      src.pushFilter(filters.task(work.upper)).pipe(filters.fileSink(a), filters.fileSink(b));
      await src.resume();
      assert.equal(readFileSync(a, 'utf8'), text.toUpperCase());
      assert.equal(readFileSync(b, 'utf8'), text.toUpperCase());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a task filter's failure in the Nexus shape rejects resume() with the task's error", async () => {
    const src = filters.source(Readable.from(['a', 'b', 'c']));
    src.pushFilter(filters.task(work.failAfter, { args: [1] })).pipe(new PassThrough().resume());
    await assert.rejects(src.resume(), { code: 'E_TOO_MANY' });
  });
});
