// Forged schema buffers and bad arguments (issue 11, item 2): decode work and allocation
// are bounded by what the bytes can hold, non-bytes input is refused before any work,
// and a union value with an unknown tag is a W-code error, not a TypeError from deep inside.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as un from '../dist/schema/generated/fixtures/unions.js';
import * as temperature from '../dist/schema/generated/temperature.js';
import { SchemaWriteError } from '../dist/schema/runtime.js';

/**
 * A TemperatureBatch whose `readings` SoA claims count = byteLength items (the issue's
 * layout: root @0 → array header @64, lookup table @128). `columns` are [hash, block].
 */
function forged(len, columns = []) {
  const u32 = new Uint32Array(len / 4);
  u32[0] = 1; // dynamic header: 8 bytes
  u32[1] = 64; // readings → array header
  u32[16] = len; // count
  u32[17] = len; // capacity
  u32[18] = columns.length;
  u32[19] = 128; // lookup table
  columns.forEach(([hash, block], i) => {
    u32[32 + i] = hash;
    u32[48 + i] = block; // hashes padded to 64 bytes, then the block offsets
  });
  return new Uint8Array(u32.buffer);
}

test('an SoA count with an empty column table is refused (R0009), not decoded into count objects', () => {
  const bytes = forged(4096);
  assert.throws(() => temperature.decodeTemperatureBatch(bytes), { code: 'R0009' });
  assert.throws(() => temperature.TemperatureBatchReader.fromBytes(bytes).readings(), { code: 'R0009' });
});

test('an SoA count that an unknown column cannot hold is refused too (R0001)', () => {
  // One column the reader does not know, starting 64 bytes before the end: it cannot hold 4096 items.
  const bytes = forged(4096, [[0xdeadbeef, 4096 / 64 - 1]]);
  assert.throws(() => temperature.decodeTemperatureBatch(bytes), { code: 'R0001' });
  // The same column with room for every item is a legal evolution: zeros for the known columns.
  const ok = forged(8192, [[0xdeadbeef, 4096 / 64]]);
  new DataView(ok.buffer).setUint32(64, 100, true);
  new DataView(ok.buffer).setUint32(68, 100, true);
  const plain = temperature.decodeTemperatureBatch(ok);
  assert.equal(plain.readings.length, 100);
  assert.deepEqual(plain.readings[99], { timestamp: 0n, value: 0 });
});

test('non-bytes input is refused at once with ERR_INVALID_ARG (no allocation from a fake length)', () => {
  for (const bad of [{ length: 4096 }, { length: 1e8 }, Symbol('x'), 42, 'bytes', null, undefined, [1, 2, 3]]) {
    assert.throws(
      () => temperature.decodeTemperatureBatch(bad),
      (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG',
      String(typeof bad === 'symbol' ? 'symbol' : JSON.stringify(bad)),
    );
  }
  // Views other than Uint8Array read the same bytes, without a copy.
  const good = temperature.encodeTemperatureBatch({ readings: [{ timestamp: 5n, value: 1.5 }] });
  const view = new DataView(good.buffer, good.byteOffset, good.byteLength);
  assert.deepEqual(temperature.decodeTemperatureBatch(view), temperature.decodeTemperatureBatch(good));
});

test('a union value with an unknown tag is SchemaWriteError W0005, in every layout', () => {
  const p2 = { tag: 'point2d', value: { x: 1, y: 2 } };
  const bogus = { tag: 'point4d', value: { x: 1 } };
  const base = { single: p2, aos: [p2], soa: [p2], bovoa: [p2], bovos: [p2] };
  for (const field of ['single', 'aos', 'soa', 'bovoa', 'bovos']) {
    const value = { ...base, [field]: field === 'single' ? bogus : [p2, bogus] };
    assert.throws(
      () => un.encodeParticles(value),
      (e) => e instanceof SchemaWriteError && e.code === 'W0005' && /point4d/.test(e.message),
      field,
    );
  }
  assert.throws(() => un.encodeParticles({ ...base, soa: [Symbol('s')] }), { code: 'W0005' });
});
