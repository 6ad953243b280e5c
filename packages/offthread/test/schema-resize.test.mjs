// Karmem §4.3.1: arrays resize in place within the capacity they were written with.
// Shrinking erases the rest of the last 64-byte block; growing back exposes zeroed
// items; past the capacity is W0010. The same rules as Rust's rt::resize_array.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as ks from '../dist/schema/generated/fixtures/kitchen_sink.js';
import * as scooter from '../dist/schema/generated/scooter.js';
import * as temperature from '../dist/schema/generated/temperature.js';
import * as rt from '../dist/schema/runtime.js';

const fleet = () => {
  const s = (i) => ({ id: i, distance: i * 100 });
  return { soa: [0, 1, 2, 3].map(s), aos: [0, 1, 2, 3].map(s) };
};

test('SoA and AoS arrays shrink and grow back in place; past the capacity is W0010', () => {
  const bytes = scooter.encodeScooterFleet(fleet());
  const len = bytes.length;
  scooter.ScooterFleetWriter.resizeSoa(bytes, 2);
  scooter.ScooterFleetWriter.resizeAos(bytes, 1);
  assert.equal(bytes.length, len);
  assert.deepEqual(scooter.decodeScooterFleet(bytes), { soa: fleet().soa.slice(0, 2), aos: fleet().aos.slice(0, 1) });
  scooter.ScooterFleetWriter.resizeSoa(bytes, 4);
  scooter.ScooterFleetWriter.resizeAos(bytes, 4);
  const zero = { id: 0, distance: 0 };
  assert.deepEqual(scooter.decodeScooterFleet(bytes), {
    soa: [...fleet().soa.slice(0, 2), zero, zero],
    aos: [fleet().aos[0], zero, zero, zero],
  });
  const before = bytes.slice();
  for (const resize of [scooter.ScooterFleetWriter.resizeSoa, scooter.ScooterFleetWriter.resizeAos]) {
    assert.throws(
      () => resize(bytes, 5),
      (e) => e instanceof rt.SchemaWriteError && e.code === 'W0010',
    );
    assert.throws(
      () => resize(bytes, -1),
      (e) => e instanceof rt.SchemaWriteError && e.code === 'W0008',
    );
  }
  assert.deepEqual(bytes, before, 'a refused resize changes nothing');
  assert.throws(
    () => scooter.ScooterFleetWriter.resizeSoa(bytes, 1, len),
    (e) => e.code === 'R0001',
  );
});

test('shrinking erases the rest of the last 64-byte block, and only that block', () => {
  const readings = Array.from({ length: 40 }, (_, i) => ({ timestamp: 1000 + i, value: i + 1 }));
  const bytes = temperature.encodeTemperatureBatch({ readings });
  const values = () => temperature.TemperatureBatchReader.fromBytes(bytes).readings();
  const column = values().value();
  const raw = new Float32Array(column.buffer, column.byteOffset, 40); // the whole column's room
  temperature.TemperatureBatchWriter.resizeReadings(bytes, 5);
  assert.equal(values().length, 5);
  // f32 column: 16 values per 64-byte block. Items 5..15 erased, 16..39 left as they were.
  assert.deepEqual(Array.from(raw.subarray(0, 5)), [1, 2, 3, 4, 5]);
  assert.ok(raw.subarray(5, 16).every((v) => v === 0));
  assert.deepEqual(Array.from(raw.subarray(16, 18)), [17, 18]);
  // Growing back zeroes every exposed item, stale ones included.
  temperature.TemperatureBatchWriter.resizeReadings(bytes, 40);
  assert.ok(
    values()
      .value()
      .subarray(5)
      .every((v) => v === 0),
  );
  assert.equal(values().timestamp()[39], 0n);
});

test('scalar slices resize too, through the writer of a message being built', () => {
  const value = { ...ks.decodeKitchenSink(ks.encodeKitchenSink(kitchenSink())), numbers: [1.5, 2.5, 3.5] };
  const bytes = ks.encodeKitchenSink(value);
  ks.KitchenSinkWriter.resizeNumbers(bytes, 1);
  assert.deepEqual(Array.from(ks.decodeKitchenSink(bytes).numbers), [1.5]);
  ks.KitchenSinkWriter.resizeNumbers(bytes, 3);
  assert.deepEqual(Array.from(ks.decodeKitchenSink(bytes).numbers), [1.5, 0, 0]);
  // An empty slice has no room: 0 is fine, 1 is W0010.
  const empty = ks.encodeKitchenSink({ ...value, numbers: [] });
  ks.KitchenSinkWriter.resizeNumbers(empty, 0);
  assert.throws(
    () => ks.KitchenSinkWriter.resizeNumbers(empty, 1),
    (e) => e.code === 'W0010',
  );
});

function kitchenSink() {
  const particle = {
    pos: { x: 1, y: 2 },
    color: 1,
    alive: true,
    tags: [1, 2, 3, 4],
    weights: [0.5, 1.5],
    hues: [1, 2, 3],
    flags: [true, false],
  };
  return {
    aU8: 1,
    aU16: 2,
    aU32: 3,
    aU64: 4n,
    aI8: -1,
    aI16: -2,
    aI32: -3,
    aI64: -4n,
    aF32: 1.5,
    aF64: 2.5,
    aBool: true,
    color: 2,
    fixed: [1, 2, 3],
    origin: { x: 1, y: 2 },
    shape: null,
    head: null,
    title: 'title',
    wideTitle: 'wide',
    bytes: [1, 2],
    numbers: [1.5],
    flags: [true],
    colors: [1],
    particles: [particle],
    particlesAos: [particle],
    nodes: [],
    type: 7,
  };
}
