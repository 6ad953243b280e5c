// filters.web.task(work.fn): the task filter as a WHATWG TransformStream — the same job on
// one worker, options, order, credit both ways, typed errors; cancel and abort end the
// transform on its worker (its finally runs). Also: the driver as a data: URL (what a
// browser's task workers import) runs in Node too, and the types of the web form.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { threadId } from 'node:worker_threads';
import { filters, Pool, tasks } from 'offthread';

const require = createRequire(import.meta.url);
const fixture = new URL('./fixtures/nexus-work.mjs', import.meta.url);
const flag = () => new Int32Array(new SharedArrayBuffer(4));
const until = async (check, what) => {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(check(), what);
};
const enc = new TextEncoder();
const dec = new TextDecoder();

/** A ReadableStream of `chunks`. */
const source = (chunks) =>
  new ReadableStream({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  });

/** Runs `chunks` through the TransformStream `ts`; what comes out. */
async function through(ts, chunks) {
  const out = [];
  for await (const chunk of source(chunks).pipeThrough(ts)) out.push(chunk);
  return out;
}

/** What `promise` rejects with. */
const rejection = (promise) =>
  promise.then(
    () => assert.fail('it resolved'),
    (err) => err,
  );

describe('filters.web.task()', () => {
  const pool = new Pool({ threads: 2 });
  const work = tasks(fixture, { pool });
  after(() => pool.close());

  test('a generator export transforms bytes (Uint8Arrays and strings in), in order, off the loop', async () => {
    const chunks = Array.from({ length: 50 }, (_, i) => (i % 2 ? enc.encode(`chunk ${i} of abc; `) : `chunk ${i}; `));
    const ts = filters.web.task(work.upper);
    assert.ok(ts instanceof TransformStream);
    const out = await through(ts, chunks);
    assert.ok(out.every((c) => c instanceof Uint8Array));
    const text = chunks.map((c) => (typeof c === 'string' ? c : dec.decode(c))).join('');
    assert.equal(out.map((c) => dec.decode(c)).join(''), text.toUpperCase());
  });

  test('arguments reach the export; output made at the end (strings become bytes) comes through', async () => {
    const out = await through(filters.web.task(work.total, { args: ['bytes='] }), ['ab', 'cde', 'f']);
    assert.equal(out.map((c) => dec.decode(c)).join(''), 'bytes=6');
  });

  test('object mode: a per-chunk export keeps its state on one worker for the stream', async () => {
    const chunks = Array.from({ length: 20 }, (_, i) => ({ n: i }));
    const out = await through(filters.web.task(work.numbered, { objectMode: true, args: [100] }), chunks);
    assert.deepEqual(
      out.map((o) => o.i),
      chunks.map((_, i) => 100 + i),
    );
    assert.deepEqual(
      out.map((o) => o.chunk),
      chunks,
    );
    assert.equal(new Set(out.map((o) => o.threadId)).size, 1);
    assert.notEqual(out[0].threadId, threadId);
  });

  test('a big stream with transfer: every byte, in order', async () => {
    const chunks = Array.from({ length: 200 }, (_, i) => new Uint8Array(64 * 1024).fill(97 + (i % 26)));
    const expected = chunks.reduce((n, c) => n + c.length, 0);
    const out = await through(filters.web.task(work.upper, { transfer: true }), chunks);
    assert.equal(
      out.reduce((n, c) => n + c.length, 0),
      expected,
    );
    const firsts = out.map((c) => c[0]);
    assert.deepEqual(
      firsts,
      chunks.map((_, i) => 65 + (i % 26)),
    );
  });

  test("a throw in the transform errors the stream with the task's error, typed", async () => {
    const err = await rejection(through(filters.web.task(work.failAfter, { args: [2] }), ['a', 'b', 'c', 'd']));
    assert.ok(err instanceof RangeError);
    assert.equal(err.code, 'E_TOO_MANY');
    assert.match(err.message, /chunk 3 is one too many/);
  });

  test('a missing export errors with ERR_TASK_EXPORT; a non-byte output with ERR_TASK_DATA', async () => {
    assert.equal((await rejection(through(filters.web.task(work.nope), ['a']))).code, 'ERR_TASK_EXPORT');
    const bad = await rejection(through(filters.web.task(work.numbered, { args: [0] }), ['a']));
    assert.equal(bad.code, 'ERR_TASK_DATA');
  });

  test('bad arguments and bad chunks are typed errors', async () => {
    assert.throws(() => filters.web.task((c) => c), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => filters.web.task(work.upper, { args: 1 }), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => filters.web.task(work.upper, { objectMode: 'yes' }), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => filters.web.task(work.upper, { nope: 1 }), { code: 'ERR_INVALID_ARG' });
    const err = await rejection(through(filters.web.task(work.upper), [{ not: 'bytes' }]));
    assert.equal(err.code, 'ERR_INVALID_ARG');
  });

  test('cancelling the readable ends the transform on its worker (its finally runs)', async () => {
    const ended = flag();
    const ts = filters.web.task(work.watched, { args: [ended] });
    const writer = ts.writable.getWriter();
    const reader = ts.readable.getReader();
    void writer.write('first');
    assert.equal(dec.decode((await reader.read()).value), 'first');
    await reader.cancel(new Error('enough'));
    await until(() => Atomics.load(ended, 0) === 1, 'the generator finally ran on the worker');
    const counter = flag();
    const [a, b] = await Promise.all([work.meet(counter, 2), work.meet(counter, 2)]);
    assert.notEqual(a, b, 'both workers serve again');
  });

  test('aborting the writable ends the transform on its worker', async () => {
    const ended = flag();
    const ts = filters.web.task(work.watched, { args: [ended] });
    const writer = ts.writable.getWriter();
    const reader = ts.readable.getReader();
    void writer.write('first');
    await reader.read();
    await writer.abort(new Error('stop'));
    await until(() => Atomics.load(ended, 0) === 1, 'the generator finally ran on the worker');
  });

  test('an aborted signal errors the stream with ERR_ABORTED', async () => {
    const ended = flag();
    const controller = new AbortController();
    const ts = filters.web.task(work.watched, { args: [ended], signal: controller.signal });
    const writer = ts.writable.getWriter();
    const reader = ts.readable.getReader();
    void writer.write('x').catch(() => {});
    await reader.read();
    controller.abort();
    assert.equal((await rejection(reader.read())).code, 'ERR_ABORTED');
    await until(() => Atomics.load(ended, 0) === 1, 'the generator finally ran');
  });

  test('a transform that ends early ends the stream; the rest of the input is dropped', async () => {
    const out = await through(filters.web.task(work.head, { args: [2] }), ['a', 'b', 'c', 'd', 'e']);
    assert.equal(out.map((c) => dec.decode(c)).join(''), 'ab');
  });

  test('back-pressure out: a reader that stops pauses the transform on its worker', async () => {
    const made = flag();
    const ts = filters.web.task(work.flood, { objectMode: true, args: [made, 10_000] });
    const writer = ts.writable.getWriter();
    void writer.write('go');
    await until(() => Atomics.load(made, 0) > 0, 'the transform started');
    await new Promise((r) => setTimeout(r, 200));
    const paused = Atomics.load(made, 0);
    // 64 outputs the worker may send ahead, and the readable's one.
    assert.ok(paused <= 64 + 2, `made ${paused} with nobody reading`);
    let read = 0;
    for await (const item of ts.readable) {
      assert.equal(item.i, read);
      if (++read === 100) break;
    }
    assert.ok(Atomics.load(made, 0) > paused);
  });

  test('back-pressure in: a writer waits while the transform holds its chunks', async () => {
    const taken = flag();
    const gate = flag();
    const ts = filters.web.task(work.gated, { objectMode: true, args: [taken, gate] });
    const writer = ts.writable.getWriter();
    let accepted = 0;
    const writes = (async () => {
      for (let i = 0; i < 100; i++) {
        await writer.ready;
        void writer.write(i);
        accepted++;
      }
      await writer.close();
    })();
    await until(() => Atomics.load(taken, 0) === 1, 'the first chunk was taken');
    await new Promise((r) => setTimeout(r, 200));
    // 64 chunks on their way (IN_WINDOW) and the writable's one: no more.
    assert.ok(accepted <= 64 + 2, `the writer got ${accepted} of 100 chunks past a transform that took 1`);
    Atomics.store(gate, 0, 1);
    const out = [];
    for await (const item of ts.readable) out.push(item);
    await writes;
    assert.deepEqual(
      out,
      Array.from({ length: 100 }, (_, i) => i),
    );
  });

  test('a module that names its functions by side effect (exposeTasks, as Vite bundles) works as a filter', async () => {
    const exposed = tasks(new URL('../test-fixtures/tasks/exposed-a.mjs', import.meta.url), { pool });
    const out = await through(filters.web.task(exposed.twice, { objectMode: true }), [1, 2, 3]);
    assert.deepEqual(out, [2, 4, 6]);
  });

  test('the driver as a data: URL (what browsers import) runs the same', async () => {
    const channel = require('../dist/filters/task-channel.js');
    const fileUrl = channel.driverModule();
    assert.match(fileUrl, /^file:/);
    channel.setDriverUrl(undefined);
    try {
      assert.match(channel.driverModule(), /^data:text\/javascript,/);
      const other = new Pool({ threads: 1 });
      try {
        const w = tasks(fixture, { pool: other });
        const out = await through(
          filters.web.task(w.numbered, { objectMode: true, args: [5], pool: other }),
          [1, 2, 3],
        );
        assert.deepEqual(
          out.map((o) => o.i),
          [5, 6, 7],
        );
        const err = await rejection(through(filters.web.task(w.nope, { pool: other }), ['a']));
        assert.equal(err.code, 'ERR_TASK_EXPORT');
      } finally {
        await other.close();
      }
    } finally {
      channel.setDriverUrl(fileUrl);
    }
  });
});

test('types: the web form takes task exports; object mode is typed by the export', () => {
  // Every @ts-expect-error in the fixture must find its error: a type too loose fails too.
  const tsc = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));
  const file = fileURLToPath(new URL('./fixtures/web-task-types.mts', import.meta.url));
  const flags = ['--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext'];
  const r = spawnSync(process.execPath, [tsc, ...flags, '--types', 'node', file], { encoding: 'utf8' });
  assert.equal(r.stdout + r.stderr, '', 'tsc found errors');
  assert.equal(r.status, 0);
});
