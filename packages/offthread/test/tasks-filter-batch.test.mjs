// A task filter's messages carry batches (issue 34): a message per chunk each way, and a
// park and resume of the job per window, cost the loop more than a 64 KiB copy's work,
// so filters.task(copy) ran at 0.28–0.61× the same transform on the loop. Now the chunks
// written in one turn of the loop go in one message, the worker's outputs go back
// several to a message, and a steady stream keeps its budget slot between windows.
// The counts are of messages and calls, not of time.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, test } from 'node:test';
import { filters, Pool, tasks } from 'offthread';

const require = createRequire(import.meta.url);
// The pool's internals (not exported by the package): the Node build's own files.
const { Lease } = require('../dist/pool/budget.js');

const fixture = new URL('./fixtures/nexus-work.mjs', import.meta.url);
const pool = new Pool({ threads: 2 });
const work = tasks(fixture, { pool });
after(() => pool.destroy());

/** What the caller's side posts to drivers (chunk messages) and receives from them (output messages). */
const seen = { chunkMessages: 0, chunks: 0, outMessages: 0, outs: 0, creditOnly: 0 };
const post = MessagePort.prototype.postMessage;
MessagePort.prototype.postMessage = function (data, ...rest) {
  if (data?.t === 'chunk') {
    seen.chunkMessages++; // a message per chunk (before)
    seen.chunks++;
  } else if (Array.isArray(data?.c)) {
    seen.chunkMessages++;
    seen.chunks += data.c.length;
  } else if (data?.n > 0) {
    seen.creditOnly++; // credit in a message of its own: the worker may be waiting for it
  }
  return post.call(this, data, ...rest);
};
/** The onmessage accessor of Node's MessagePort (on its prototype chain). */
let proto = MessagePort.prototype;
while (!Object.getOwnPropertyDescriptor(proto, 'onmessage')) proto = Object.getPrototypeOf(proto);
const onmessage = Object.getOwnPropertyDescriptor(proto, 'onmessage');
Object.defineProperty(MessagePort.prototype, 'onmessage', {
  configurable: true,
  get() {
    return onmessage.get.call(this);
  },
  set(fn) {
    const counted =
      typeof fn === 'function'
        ? (event) => {
            const data = event.data;
            if (data?.t === 'out') {
              seen.outMessages++; // a message per output (before)
              seen.outs++;
            } else if (Array.isArray(data?.o) && data.o.length > 0) {
              seen.outMessages++;
              seen.outs += data.o.length;
            }
            return fn.call(this, event);
          }
        : fn;
    onmessage.set.call(this, counted);
  },
});
const reset = () => Object.assign(seen, { chunkMessages: 0, chunks: 0, outMessages: 0, outs: 0, creditOnly: 0 });

/** Reads a stream to its end: the byte count. */
async function drain(stream) {
  let bytes = 0;
  for await (const chunk of stream) bytes += chunk.length;
  return bytes;
}

/**
 * `n` chunks of 4 KiB (chunk i filled with i & 0xff) through filters.task(work.copy), from
 * a synchronous source (as a file read into memory: each read() pushes one chunk);
 * `each` sees every output.
 */
async function copyThrough(n, each) {
  let made = 0;
  await pipeline(
    new Readable({
      read() {
        this.push(made < n ? Buffer.alloc(4096, made++ & 0xff) : null);
      },
    }),
    filters.task(work.copy),
    new Writable({
      write(chunk, _enc, cb) {
        each(chunk);
        cb();
      },
    }),
  );
}

test('chunks written in one turn go to the worker in one message', async () => {
  reset();
  const t = filters.task(work.copy);
  const read = drain(t);
  for (let i = 0; i < 12; i++) t.write(Buffer.alloc(1024, i));
  // Let the first message go before the end (which would otherwise go with it).
  await new Promise((resolve) => setImmediate(resolve));
  t.end();
  assert.equal(await read, 12 * 1024);
  assert.equal(seen.chunks, 12);
  assert.equal(seen.chunkMessages, 1, `${seen.chunks} chunks in ${seen.chunkMessages} messages`);
});

test("the worker's outputs come back several to a message, every byte in order", async () => {
  reset();
  const n = 256;
  const out = [];
  await copyThrough(n, (chunk) => out.push(chunk));
  const bytes = Buffer.concat(out);
  assert.equal(bytes.length, n * 4096);
  for (let i = 0; i < n; i++) assert.equal(bytes[i * 4096], i & 0xff, `chunk ${i} in its place`);
  assert.equal(seen.outs, n);
  // Before: one message per output (256). Now up to 8 to a message; a worker kept off its
  // core for a while sends what it held sooner, hence the margin.
  assert.ok(seen.outMessages <= n / 2, `${seen.outs} outputs in ${seen.outMessages} messages`);
  assert.ok(seen.chunkMessages <= n / 2, `${seen.chunks} chunks in ${seen.chunkMessages} messages`);
});

test('credit rides with the chunks: a reader that keeps up never leaves the worker waiting for it', async () => {
  reset();
  const n = 2048;
  let got = 0;
  await copyThrough(n, () => got++);
  assert.equal(got, n);
  // Before: credit went in halves of the window, and the driver reports half a window
  // taken one output short of half made, so about every other window the transform ran
  // out of credit and waited for a message of credit alone (150 in 4,096 chunks).
  assert.ok(seen.creditOnly <= 4, `${seen.creditOnly} messages of credit alone in ${seen.chunkMessages} with chunks`);
});

test('a steady stream keeps its budget slot between windows (it parks only when input stops)', async () => {
  const leave = Lease.prototype.leave;
  let leaves = 0;
  Lease.prototype.leave = function (...args) {
    leaves++;
    return leave.apply(this, args);
  };
  try {
    const n = 512;
    let got = 0;
    let whileFlowing = -1;
    await copyThrough(n, () => {
      // Counted up to the last chunk's arrival: the job's own end leaves once after.
      if (++got === n) whileFlowing = leaves;
    });
    // Before: the job gave its slot back whenever the worker had taken every chunk sent
    // (a leave per window, dozens here), and took it again with the next write.
    assert.ok(whileFlowing <= 2, `the stream left its budget slot ${whileFlowing} times while flowing`);
  } finally {
    Lease.prototype.leave = leave;
  }
});

test('an output the export made before it awaits something of its own is not held for company', async () => {
  // An export that yields, then waits (on a timer of the worker's) without taking input:
  // its output must not wait for the next one. A module of its own, as a data: URL.
  const source = `export async function* thenWait(chunks, gate) {
    for await (const chunk of chunks) {
      yield chunk;
      while (Atomics.load(gate, 0) === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }`;
  const own = tasks(new URL(`data:text/javascript,${encodeURIComponent(source)}`), { pool });
  const gate = new Int32Array(new SharedArrayBuffer(4));
  const t = filters.task(own.thenWait, { args: [gate] });
  t.write('first');
  t.write('second');
  // Before, 'first' waited in the worker until 'second' was made: after the gate, never here.
  const [first] = await once(t, 'data');
  assert.equal(first.toString(), 'first');
  Atomics.store(gate, 0, 1);
  t.end();
  let rest = '';
  for await (const chunk of t) rest += chunk.toString();
  assert.equal(rest, 'second');
});
