// One error base class (issue 30): every error offthread raises — bad arguments, abort,
// timeout, a full or closed pool, a dead worker, a bad schema buffer, bad filter input,
// task modules, guests, the queue, the native addon, the workers' wire format — is
// `instanceof OffthreadError` with a code from the registry, and the TypeError/RangeError
// kinds stay `instanceof TypeError`/`RangeError`. A task's own error stays the task's.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  AbortError,
  errorRegistry,
  filters,
  guests,
  md5,
  OffthreadError,
  OffthreadRangeError,
  OffthreadTypeError,
  Pool,
  pi,
  qr,
  SchemaReadError,
  SchemaWriteError,
  schema,
  stats,
  tasks,
} from 'offthread';
import { piVariants, testPanic } from 'offthread/internal';
import { createQueue, createWorker } from 'offthread/queue';

const fixture = (name) => new URL(`../test-fixtures/tasks/${name}`, import.meta.url);
const dist = new URL('../dist/index.mjs', import.meta.url).href;

/** What `f` throws or rejects with (fails if it does neither). */
async function caught(f) {
  try {
    await f();
  } catch (err) {
    return err;
  }
  assert.fail('expected an error');
}

/** The error of `f` is an offthread error of `code` and of the registry's kind for it. */
async function assertOffthread(what, f, code) {
  const err = await caught(f);
  assert.ok(err instanceof OffthreadError, `${what}: ${err?.constructor?.name} ${err?.code}: ${err?.message}`);
  assert.ok(err.code in errorRegistry, `${what}: ${err.code} is not in the registry`);
  if (code) assert.equal(err.code, code, `${what}: ${err.message}`);
  const kind = errorRegistry[err.code].kind;
  if (kind === 'TypeError') assert.ok(err instanceof TypeError && err instanceof OffthreadTypeError, what);
  if (kind === 'RangeError') assert.ok(err instanceof RangeError && err instanceof OffthreadRangeError, what);
  if (kind === 'AbortError') assert.ok(err instanceof AbortError, what);
  return err;
}

const sink = () =>
  new Writable({
    write(_chunk, _enc, cb) {
      cb();
    },
  });

describe('every error offthread raises is an OffthreadError with a registered code', () => {
  const pool = new Pool({ threads: 1 });
  after(() => pool.destroy());

  test('bad arguments, sync and async, every kernel', async () => {
    await assertOffthread('pi samples', () => pi.estimate(-1, { pool }), 'ERR_INVALID_SAMPLES');
    await assertOffthread('pi type', () => pi.estimate('x'), 'ERR_INVALID_ARG');
    await assertOffthread('pi sync', () => pi.estimateSync(1.5), 'ERR_INVALID_SAMPLES');
    await assertOffthread('pi seed', () => pi.estimate(10, { seed: 0.5 }), 'ERR_INVALID_SEED');
    await assertOffthread('pi variant', () => piVariants.estimate(10, 'nope'), 'ERR_INVALID_VARIANT');
    await assertOffthread('md5 rounds', () => md5.iterate('x', -1), 'ERR_INVALID_ROUNDS');
    await assertOffthread('qr size', () => qr.toPNG('x', { size: 0 }), 'ERR_INVALID_QR_OPTIONS');
    await assertOffthread('qr text', () => qr.toPNGSync(5), 'ERR_INVALID_ARG');
    await assertOffthread('qr too long', () => qr.toPNG('x'.repeat(5000), { pool }), 'ERR_TEXT_TOO_LONG');
    await assertOffthread('options', () => pi.estimate(10, { timeout: -1 }), 'ERR_INVALID_ARG');
    await assertOffthread('pool options', () => new Pool({ threads: 0 }), 'ERR_INVALID_POOL_OPTIONS');
  });

  test('abort, timeout, a full queue, a closed pool', async () => {
    await assertOffthread('abort', () => pi.estimate(1e12, { pool, signal: AbortSignal.abort() }), 'ERR_ABORTED');
    await assertOffthread('timeout', () => pi.estimate(1e12, { pool, timeout: 5 }), 'ERR_TIMEOUT');
    const small = new Pool({ threads: 1, maxQueue: 1 });
    const calls = [0, 1, 2].map(() => pi.estimate(1e12, { pool: small }));
    await assertOffthread('queue full', () => Promise.all(calls), 'ERR_QUEUE_FULL');
    small.destroy();
    await Promise.allSettled(calls);
    const closed = new Pool({ threads: 1 });
    await closed.close();
    await assertOffthread('closed pool', () => pi.estimate(10, { pool: closed }), 'ERR_POOL_CLOSED');
  });

  test('a kernel that panics or kills its worker, on every engine', async () => {
    for (const engine of ['native', 'wasm', 'js']) {
      const p = new Pool({ threads: 1, engine });
      try {
        await assertOffthread(`${engine} panic`, () => testPanic(p));
      } finally {
        p.destroy();
      }
    }
  });

  test('a bad schema buffer', async () => {
    await assertOffthread('stats', () => stats.temperature(new Uint8Array(3)), 'ERR_INVALID_BUFFER');
    await assertOffthread('stats sync', () => stats.temperatureSync(new Uint8Array(3)), 'ERR_INVALID_BUFFER');
  });

  test('the schema readers and writers, here and from a task on a worker', async () => {
    const read = await assertOffthread(
      'reader',
      () => schema.TemperatureBatchReader.fromBytes(new Uint8Array(3)),
      'R0001',
    );
    assert.ok(read instanceof schema.rt.SchemaReadError && read instanceof SchemaReadError, read.name);
    assert.equal(read.name, 'SchemaReadError');
    assert.match(read.message, /^R0001: /);
    const write = await assertOffthread(
      'writer',
      () => schema.encodeTemperatureBatch({ readings: [{ timestamp: 1.5, value: 1 }] }),
      'W0004',
    );
    assert.ok(write instanceof SchemaWriteError, write.name);
    assert.equal(write.name, 'SchemaWriteError');
    // The generated code's runtime subpath is the same module: one class, one registry.
    assert.equal((await import('offthread/schema')).SchemaReadError, SchemaReadError);
    const work = tasks(fixture('schema-errors.mjs'), { pool });
    const remote = await assertOffthread('task', () => work.readTemperatures(new Uint8Array(3)), 'R0001');
    assert.ok(remote instanceof SchemaReadError, remote.name);
    assert.equal(remote.message, read.message, 'the prefix is not doubled on the way back');
  });

  test('filters: a bad spec (from the native addon) and bad input', async () => {
    await assertOffthread('spec', () => filters.transcode('utf8', 'nope'), 'ERR_FILTER_INVALID_SPEC');
    const bad = Readable.from([Buffer.from([0xff, 0xfe])]);
    await assertOffthread(
      'utf8',
      () => pipeline(bad, filters.transcode('utf8', 'utf16le', { strict: true }), sink()),
      'ERR_FILTER_INVALID_UTF8',
    );
    const notGzip = Readable.from([Buffer.from('not gzip')]);
    await assertOffthread('gunzip', () => pipeline(notGzip, filters.gunzip(), sink()), 'ERR_FILTER_CORRUPT_DATA');
  });

  test('task modules: load, export, data, worker death', async () => {
    const work = tasks(fixture('work.mjs'), { pool });
    await assertOffthread('missing export', () => work.nothing(), 'ERR_TASK_EXPORT');
    await assertOffthread('load', () => tasks(fixture('throws-at-load.mjs'), { pool }).x(), 'ERR_TASK_MODULE');
    await assertOffthread('argument', () => work.echo(() => 1), 'ERR_TASK_DATA');
    await assertOffthread('result', () => work.returnFunction(), 'ERR_TASK_DATA');
    await assertOffthread('exit', () => work.exit(3), 'ERR_WORKER_DIED');
    const aborted = work.sleep.with({ signal: AbortSignal.abort() });
    await assertOffthread('abort', () => aborted(10_000, 1), 'ERR_ABORTED');
  });

  test('guests refused at load', async () => {
    await assertOffthread('empty', () => guests.load([]), 'ERR_INVALID_ARG');
    await assertOffthread(
      'not wasm',
      () => guests.load([new TextEncoder().encode('not a wasm module')], { threads: 1 }),
      'ERR_GUEST_MODULE',
    );
  });

  test('the queue: options, and a Redis that is not there', async () => {
    await assertOffthread('no url', () => createQueue({}), 'ERR_INVALID_ARG');
    await assertOffthread('bad url', () => createQueue({ url: 5 }), 'ERR_INVALID_ARG');
    await assertOffthread('worker', () => createWorker({}), 'ERR_INVALID_ARG');
    await assertOffthread(
      'timeout',
      () => createQueue({ url: 'redis://127.0.0.1:6379', redisTimeout: -1 }),
      'ERR_INVALID_ARG',
    );
    const srv = createServer();
    await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const { port } = srv.address();
    await new Promise((resolve) => srv.close(resolve));
    const queue = createQueue({ url: `redis://127.0.0.1:${port}`, redisTimeout: 200 });
    try {
      await assertOffthread('unreachable', () => queue.md5.iterate('x', 1), 'ERR_QUEUE_UNAVAILABLE');
    } finally {
      await queue.close();
    }
    await assertOffthread('closed', () => queue.md5.iterate('x', 1), 'ERR_QUEUE_CLOSED');
  });
});

describe("a task's errors", () => {
  const pool = new Pool({ threads: 1 });
  const dir = mkdtempSync(join(tmpdir(), 'offthread-errors-'));
  const mod = join(dir, 'calls-offthread.mjs');
  // A task that calls offthread on its worker, and one that throws its own coded error.
  writeFileSync(
    mod,
    `import { pi } from ${JSON.stringify(dist)};
export const badSamples = () => pi.estimateSync(-1);
export function coded() { const e = new Error('mine'); e.code = 'ERR_TIMEOUT'; throw e; }
`,
  );
  const work = tasks(pathToFileURL(mod), { pool });
  after(async () => {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("an offthread error on the worker arrives as one (the task's stack kept)", async () => {
    const err = await assertOffthread('in task', () => work.badSamples(), 'ERR_INVALID_SAMPLES');
    assert.match(err.stack, /calls-offthread\.mjs/);
  });

  test('a task\'s own error stays its own: not an OffthreadError, even with an "ERR_" code', async () => {
    const fail = await caught(() => tasks(fixture('work.mjs'), { pool }).fail());
    assert.ok(!(fail instanceof OffthreadError));
    const coded = await caught(() => work.coded());
    assert.equal(coded.code, 'ERR_TIMEOUT');
    assert.ok(!(coded instanceof OffthreadError));
  });
});

describe('OffthreadError as a class', () => {
  test("the brand is offthread's: a user error with a registry code is not one", () => {
    const forged = Object.assign(new Error('x'), { code: 'ERR_TIMEOUT' });
    assert.ok(!(forged instanceof OffthreadError));
    assert.ok(!(null instanceof OffthreadError) && !('ERR_TIMEOUT' instanceof OffthreadError));
  });

  test('the kinds keep their built-in classes; subclasses check their own prototype', () => {
    const range = new OffthreadRangeError('ERR_INVALID_SAMPLES', 'x');
    assert.ok(range instanceof OffthreadError && range instanceof RangeError && !(range instanceof TypeError));
    const type = new OffthreadTypeError('ERR_INVALID_ARG', 'x');
    assert.ok(type instanceof OffthreadError && type instanceof TypeError && !(type instanceof RangeError));
    assert.ok(new AbortError() instanceof OffthreadError);
    assert.ok(!(new OffthreadError('ERR_TIMEOUT', 'x') instanceof AbortError));
    assert.ok(!(range instanceof AbortError));
  });
});
