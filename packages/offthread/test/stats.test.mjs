// stats.temperature: the kernel reads the schema buffer JS wrote, in place, sync and
// on the pool; an in-place update made by the kernel is visible to JS; bad buffers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { schema, stats } from 'offthread';

function writeBatch(values) {
  const writer = schema.TemperatureBatchWriter.create();
  const readings = writer.readings(values.length);
  readings.timestamp().set(values.map((_, i) => BigInt(i) * 1000n));
  readings.value().set(values);
  return writer.finish();
}

const values = Array.from({ length: 10_000 }, (_, i) => ((i * 7919) % 1000) / 10 - 20);

test('native sync and async agree with the TS reference', async () => {
  const buf = writeBatch(values);
  const expected = stats.temperatureReference(buf);
  assert.equal(expected.count, 10_000);
  assert.equal(expected.min, -20);
  assert.ok(Math.abs(expected.max - 79.9) < 1e-4);
  assert.deepEqual(stats.temperatureSync(buf), expected);
  assert.deepEqual(await stats.temperature(buf), expected);
  assert.deepEqual(stats.temperatureWasm(buf), expected);
});

test('the kernel updates the buffer in place and JS sees it (zero copy)', () => {
  const buf = writeBatch([1, 2, 3]);
  const view = schema.TemperatureBatchReader.fromBytes(buf).readings().value(); // a Float32Array over buf
  assert.equal(view.buffer, buf.buffer, 'the reader column is a view, not a copy');
  assert.equal(stats.temperatureOffsetSync(buf, 0.5), 3);
  assert.deepEqual([...view], [1.5, 2.5, 3.5]);
});

test('an async job reads the same memory the caller wrote', async () => {
  const buf = writeBatch([10, 20]);
  schema.TemperatureBatchReader.fromBytes(buf).readings().value()[1] = 30; // JS writes in place
  assert.deepEqual(await stats.temperature(buf), { count: 2, average: 20, min: 10, max: 30 });
});

test('an empty batch has NaN statistics', () => {
  const s = stats.temperatureSync(writeBatch([]));
  assert.equal(s.count, 0);
  assert.ok(Number.isNaN(s.average) && Number.isNaN(s.min) && Number.isNaN(s.max));
});

test('malformed buffers are ERR_INVALID_BUFFER, sync and async; wrong types ERR_INVALID_ARG', async () => {
  const good = writeBatch([1, 2, 3, 4]);
  assert.throws(() => stats.temperatureSync(new Uint8Array(0)), { code: 'ERR_INVALID_BUFFER' });
  assert.throws(() => stats.temperatureSync(good.subarray(0, 40)), { code: 'ERR_INVALID_BUFFER' });
  await assert.rejects(stats.temperature(good.subarray(0, 40)), { code: 'ERR_INVALID_BUFFER' });
  assert.throws(() => stats.temperatureWasm(good.subarray(0, 40)), { code: 'ERR_INVALID_BUFFER' });
  let seed = 1;
  for (let i = 0; i < 20_000; i++) {
    const bad = good.slice();
    seed = (seed * 16807) % 2147483647;
    bad[seed % bad.length] ^= 1 + (seed % 255);
    try {
      stats.temperatureSync(bad);
    } catch (err) {
      assert.equal(err.code, 'ERR_INVALID_BUFFER');
    }
  }
  assert.throws(() => stats.temperatureSync([1, 2]), { code: 'ERR_INVALID_ARG' });
  await assert.rejects(stats.temperature('x'), { code: 'ERR_INVALID_ARG' });
});
