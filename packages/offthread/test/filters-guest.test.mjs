// A user's WebAssembly guest as a stream filter (filters.guest / filters.web.guest): every
// chunk one guest call on the host's workers, answers in input order with several chunks
// in flight, the guest's failures and timeouts failing the stream with their codes, and
// options checked against the loaded interfaces.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, test } from 'node:test';
import { filters, guests } from 'offthread';
import * as msg from '../dist/schema/generated/fixtures/guests.js';

const basic = readFileSync(new URL('../../../target/wasm32-unknown-unknown/release/guest_basic.wasm', import.meta.url));

// The echo guest takes and answers `blob` messages: the codec between chunks and messages.
const encode = (chunk) => msg.encodeBlob({ data: chunk });
const decode = (answer) => msg.decodeBlob(answer).data;

let host;
before(async () => {
  host = await guests.load(
    [
      { name: 'a', bytes: basic },
      { name: 'b', bytes: basic },
    ],
    { threads: 2, memoryPages: 64 },
  );
});
after(() => host.close());

/** Chunks of uneven sizes, so order mistakes cannot hide behind equal lengths. */
function chunksOf(data) {
  const out = [];
  for (let at = 0, i = 0; at < data.length; i++) {
    const n = [65536, 1, 40000, 7, 100000][i % 5];
    out.push(data.subarray(at, at + n));
    at += n;
  }
  return out;
}

async function collect(stream, chunks) {
  const got = [];
  await pipeline(
    Readable.from(chunks),
    stream,
    new Writable({
      write(chunk, _enc, cb) {
        got.push(chunk);
        cb();
      },
    }),
  );
  return Buffer.concat(got);
}

test('every chunk goes through the guest, answers in input order, several in flight', async () => {
  const data = randomBytes(1 << 20);
  const t = filters.guest(host, { interface: 'echo', fn: 'echo', encode, decode, inFlight: 3 });
  assert.equal(t.inFlight, 3);
  assert.deepEqual(t.spec, { kind: 'guest', interface: 'echo', fn: 'echo' });
  const before = host.stats().calls;
  const out = await collect(t, chunksOf(data));
  assert.ok(out.equals(data), 'the echoed stream equals the input');
  assert.equal(host.stats().calls - before, chunksOf(data).length);
});

test('without a codec the chunk is the message: a malformed one fails the stream with the guest’s code', async () => {
  const t = filters.guest(host, { interface: 'echo', fn: 'echo' });
  await assert.rejects(collect(t, [Buffer.from('not a blob message')]), (err) => {
    assert.match(err.code, /^ERR_GUEST_/);
    return true;
  });
});

test('a guest at its memory limit fails the stream with ERR_GUEST_MEMORY_LIMIT', async () => {
  const t = filters.guest(host, {
    interface: 'echo',
    fn: 'grow',
    encode: () => msg.encodeCount({ value: 8n << 20n }),
    exporter: 'b',
  });
  await assert.rejects(collect(t, [Buffer.from('x')]), { code: 'ERR_GUEST_MEMORY_LIMIT' });
});

test('finish runs once at the end, under the same timeout', async () => {
  const t = filters.guest(host, { interface: 'echo', fn: 'echo', encode, decode, finish: 'spin', timeout: 100 });
  await assert.rejects(collect(t, [Buffer.from('abc')]), { code: 'ERR_TIMEOUT' });
  // The host still serves the next stream (the stuck worker was replaced).
  const again = filters.guest(host, { interface: 'echo', fn: 'echo', encode, decode });
  assert.equal((await collect(again, [Buffer.from('abc')])).toString(), 'abc');
});

test('a decode that returns something else than bytes fails the stream with ERR_INVALID_ARG', async () => {
  const t = filters.guest(host, { interface: 'echo', fn: 'echo', encode, decode: () => 'text' });
  await assert.rejects(collect(t, [Buffer.from('abc')]), { code: 'ERR_INVALID_ARG' });
});

test('options are checked against the loaded interfaces', () => {
  const bad = [
    [{ interface: 'scan', fn: 'checksum' }, /fanout/],
    [{ interface: 'nope', fn: 'x' }, /no loaded module/],
    [{ interface: 'echo', fn: 'nope' }, /no function/],
    [{ interface: 'echo', fn: 'echo', finish: 'nope' }, /no function/],
    [{ interface: 'echo', fn: 'echo', inFlght: 2 }, /inFlght/],
    [{ interface: 'echo', fn: 'echo', inFlight: 0 }, /inFlight/],
    [{ interface: 'echo', fn: 'echo', encode: 'x' }, /encode/],
    [undefined, /required/],
  ];
  for (const [options, message] of bad) {
    assert.throws(() => filters.guest(host, options), { code: 'ERR_INVALID_ARG', message });
  }
  assert.throws(() => filters.guest({}, { interface: 'echo', fn: 'echo' }), { code: 'ERR_INVALID_ARG' });
  // A direct interface defaults to one chunk in flight per worker of the host.
  assert.equal(filters.guest(host, { interface: 'echo', fn: 'echo' }).inFlight, 2);
});

test('filters.web.guest is the same filter as a TransformStream', async () => {
  const data = randomBytes(300_000);
  const stream = filters.web.guest(host, { interface: 'echo', fn: 'echo', encode, decode });
  const got = [];
  await ReadableStream.from(chunksOf(data))
    .pipeThrough(stream)
    .pipeTo(
      new WritableStream({
        write(chunk) {
          got.push(chunk);
        },
      }),
    );
  assert.ok(Buffer.concat(got).equals(data));
});
