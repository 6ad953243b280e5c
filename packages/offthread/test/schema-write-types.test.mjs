// Generated TS writers refuse values of the wrong JS type with a W code (issue 11):
// before, `encodeTemperatureBatch(null)` threw a TypeError without a code, a string in
// an f32 field was stored as NaN, 300 in a u8 as 44, a lone surrogate as U+FFFD, and an
// AoS fill with more items than allocated wrote past the array.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as ks from '../dist/schema/generated/fixtures/kitchen_sink.js';
import * as rec from '../dist/schema/generated/fixtures/records.js';
import * as un from '../dist/schema/generated/fixtures/unions.js';
import * as scooter from '../dist/schema/generated/scooter.js';
import * as temperature from '../dist/schema/generated/temperature.js';
import * as rt from '../dist/schema/runtime.js';

const w = (code) => (e) => e instanceof rt.SchemaWriteError && e.code === code;
const batch = (reading) => () => temperature.encodeTemperatureBatch({ readings: [reading] });

test('wrong JS types into the TemperatureBatch writer → W0007', () => {
  for (const v of [null, undefined, 5, 'x', Symbol('s')]) {
    assert.throws(() => temperature.encodeTemperatureBatch(v), w('W0007'), String(v?.toString?.() ?? v));
  }
  for (const readings of [5, undefined, null, 'abc', { length: 3 }]) {
    assert.throws(() => temperature.encodeTemperatureBatch({ readings }), w('W0007'), `readings: ${String(readings)}`);
  }
  assert.throws(() => temperature.encodeTemperatureBatch({ readings: [null] }), w('W0007'));
  assert.throws(batch({ timestamp: 'x', value: 1 }), w('W0007'));
  assert.throws(batch({ timestamp: Symbol(), value: 1 }), w('W0007'));
  assert.throws(batch({ timestamp: 1, value: '1.5' }), w('W0007'), 'a string is not stored as NaN');
  assert.throws(batch({ timestamp: 1, value: 1n }), w('W0007'));
  assert.throws(batch({ timestamp: 1 }), w('W0007'), 'a missing value is not stored as NaN');
  assert.throws(() => temperature.encodeTemperatureReading({ timestamp: 1, value: 'y' }), w('W0007'));
  assert.throws(
    () => temperature.encodeAnalysisResult({ averageTemperature: {}, maxTemperature: 1, minTemperature: 1 }),
    w('W0007'),
  );
  // Valid values still write, numbers and bigints alike.
  const bytes = temperature.encodeTemperatureBatch({
    readings: [
      { timestamp: 5n, value: 1.5 },
      { timestamp: 6, value: -0 },
    ],
  });
  assert.deepEqual(temperature.decodeTemperatureBatch(bytes).readings, [
    { timestamp: 5n, value: 1.5 },
    { timestamp: 6n, value: -0 },
  ]);
});

test('numbers outside the field type → W0008 (never wrapped or truncated), bigints past 64 bits too', () => {
  const base = ks.decodeKitchenSink(ks.encodeKitchenSink(kitchenSink()));
  for (const [field, bad] of [
    ['aU8', 256],
    ['aU8', -1],
    ['aU8', 1.5],
    ['aU16', 65536],
    ['aU32', 2 ** 32],
    ['aU32', Number.NaN],
    ['aI8', 128],
    ['aI16', -32769],
    ['aI32', 2 ** 31],
    ['color', 300],
    ['type', -1],
    ['aI64', 2n ** 63n],
    ['aU64', -1n],
    ['aU64', 2n ** 64n],
  ]) {
    assert.throws(() => ks.encodeKitchenSink({ ...base, [field]: bad }), w('W0008'), `${field}: ${bad}`);
  }
  for (const [field, bad] of [
    ['aBool', 1],
    ['aF64', '2'],
    ['aI32', '3'],
    ['title', 5],
    ['fixed', [1, 2]],
    ['fixed', [1, 2, 3, 4]],
    ['fixed', 'abc'],
    ['origin', null],
    ['numbers', 'abc'],
    ['numbers', [1, 'x']],
    ['bytes', [1, 2, '3']],
    ['flags', [true, 1]],
    ['particles', [null]],
    ['particles', 3],
    ['nodes', {}],
    ['head', 7],
  ]) {
    assert.throws(() => ks.encodeKitchenSink({ ...base, [field]: bad }), w('W0007'), `${field}: ${String(bad)}`);
  }
  // SoA items: nested inline structs, fixed arrays and bools are checked per value.
  const p = base.particles.length ? base.particles[0] : particle();
  for (const bad of [
    { ...p, pos: null },
    { ...p, tags: [1, 2] },
    { ...p, alive: 'yes' },
    { ...p, color: 999 },
  ]) {
    assert.throws(
      () => ks.encodeKitchenSink({ ...base, particles: [bad] }),
      (e) => e instanceof rt.SchemaWriteError && (e.code === 'W0007' || e.code === 'W0008'),
    );
  }
  assert.throws(() => ks.encodeKitchenSink({ ...base, bytes: [300] }), w('W0008'));
  assert.throws(() => ks.encodeKitchenSink({ ...base, bytes: new Int16Array([300]) }), w('W0008'));
  // Typed arrays of the field's own kind are copied as they are.
  const ok = ks.decodeKitchenSink(ks.encodeKitchenSink({ ...base, bytes: new Uint8Array([1, 255]) }));
  assert.deepEqual(Array.from(ok.bytes), [1, 255]);
});

test('a lone surrogate in a string field → W0009 (UTF-8 and UTF-16 fields, SoA string columns)', () => {
  const base = ks.decodeKitchenSink(ks.encodeKitchenSink(kitchenSink()));
  for (const s of ['\ud800', 'a\udc00b', 'x\ud83d']) {
    assert.throws(() => ks.encodeNode({ id: 1, next: null, name: s }), w('W0009'));
    assert.throws(() => ks.encodeKitchenSink({ ...base, wideTitle: s }), w('W0009'));
  }
  // A surrogate pair is text.
  assert.equal(ks.decodeNode(ks.encodeNode({ id: 1, next: null, name: 'a😀' })).name, 'a😀');
  const row = { id: 0, score: 0, label: '\ud800', samples: [], levels: [], flags: [], wide: '' };
  assert.throws(() => rec.encodeRowBatch({ name: '', rows: [row], tail: 0 }), w('W0009'));
  assert.throws(
    () => rec.encodeRowBatch({ name: '', rows: [{ ...row, label: '', wide: '\udfff' }], tail: 0 }),
    w('W0009'),
  );
  assert.throws(() => rec.encodeRowBatch({ name: '', rows: [{ ...row, label: 5 }], tail: 0 }), w('W0007'));
  assert.throws(
    () => rec.encodeRowBatch({ name: '', rows: [{ ...row, label: '', samples: 'ab' }], tail: 0 }),
    w('W0007'),
  );
  assert.throws(() => rec.encodeRowBatch({ name: '', rows: [{ ...row, label: '', flags: [1] }], tail: 0 }), w('W0007'));
  assert.throws(
    () => rec.encodeRowBatch({ name: '', rows: [{ ...row, label: '', samples: [70000] }], tail: 0 }),
    w('W0008'),
  );
  assert.throws(() => rec.encodeRowBatch({ name: '', rows: 'x', tail: 0 }), w('W0007'));
});

test('union values: unknown tags W0005, a known tag without a value W0007, slices that are not arrays W0007', () => {
  const base = { single: null, aos: [], soa: [], bovoa: [], bovos: [] };
  assert.throws(() => un.encodeParticles({ ...base, single: { tag: 'zz', value: {} } }), w('W0005'));
  assert.throws(() => un.encodeParticles({ ...base, single: { tag: 'point2d' } }), w('W0007'));
  for (const field of ['aos', 'soa', 'bovoa', 'bovos']) {
    assert.throws(() => un.encodeParticles({ ...base, [field]: 7 }), w('W0007'), field);
    assert.throws(() => un.encodeParticles({ ...base, [field]: [{ tag: 'point3d', value: null }] }), w('W0007'), field);
  }
});

test('top-down writers: filling more or fewer items than allocated → W0006, not a write past the array', () => {
  const b = new rt.Builder();
  const fleet = scooter.ScooterFleetWriter.alloc(b);
  const items = [
    { id: 1, distance: 2 },
    { id: 3, distance: 4 },
  ];
  assert.throws(() => fleet.soa(1).fill(items), w('W0006'));
  assert.throws(() => fleet.aos(1).fill(items), w('W0006'));
  assert.throws(() => fleet.aos(3).fill(items), w('W0006'));
  // Counts are u32 (W0008 for the rest).
  assert.throws(() => scooter.ScooterFleetWriter.create().soa(-1), w('W0008'));
  assert.throws(() => scooter.ScooterFleetWriter.create().aos(1.5), w('W0008'));
});

test('read options of the wrong type → ERR_INVALID_ARG (a NaN limit would disable the limit)', () => {
  const bytes = temperature.encodeTemperatureBatch({ readings: [] });
  for (const opts of [null, 5, 'x', { maxDepth: 'deep' }, { maxTraversal: -1 }, { maxSoaColumns: Number.NaN }]) {
    assert.throws(() => temperature.decodeTemperatureBatch(bytes, opts), { code: 'ERR_INVALID_ARG' }, String(opts));
  }
  assert.deepEqual(temperature.decodeTemperatureBatch(bytes, { maxDepth: 3 }).readings, []);
});

function particle() {
  return {
    pos: { x: 1, y: 2 },
    color: 1,
    alive: true,
    tags: [1, 2, 3, 4],
    weights: [0.5, 1.5],
    hues: [1, 2, 3],
    flags: [true, false],
  };
}

function kitchenSink() {
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
    particles: [particle()],
    particlesAos: [particle()],
    nodes: [],
    type: 7,
  };
}
