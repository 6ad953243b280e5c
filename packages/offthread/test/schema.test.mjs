// node:test suite for the generated schema TS. Runs against the compiled package
// output (`dist/schema`, built from src/schema by the package build). The golden
// buffers are the Rust writer's bytes (tests/fixtures/schema/golden/*.hex): the TS
// writers must produce them byte for byte, and the TS readers must read them.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as v1 from '../dist/schema/generated/fixtures/evolution_v1.js';
import * as v2 from '../dist/schema/generated/fixtures/evolution_v2.js';
import * as ks from '../dist/schema/generated/fixtures/kitchen_sink.js';
import * as scooter from '../dist/schema/generated/scooter.js';
import * as temperature from '../dist/schema/generated/temperature.js';
import * as rt from '../dist/schema/runtime.js';

const golden = (name) => {
  const url = new URL(`../../../tests/fixtures/schema/golden/${name}.hex`, import.meta.url);
  return Uint8Array.from(Buffer.from(readFileSync(fileURLToPath(url), 'utf8').replace(/\s+/g, ''), 'hex'));
};

/** A copy of `bytes` starting on a 64-byte boundary of its own buffer (like WASM memory). */
const aligned = (bytes, Buffer = ArrayBuffer) => {
  const u8 = new Uint8Array(new Buffer(bytes.length));
  u8.set(bytes);
  return u8;
};

const readings = (n) =>
  Array.from({ length: n }, (_, i) => ({ timestamp: 1_700_000_000_000n + BigInt(i), value: 20 + i / 4 }));

test('TemperatureBatch: plain-object writer matches the Rust golden bytes', () => {
  const bytes = temperature.encodeTemperatureBatch({ readings: readings(10) });
  assert.deepEqual(bytes, golden('temperature_10'));
});

test('TemperatureBatch: top-down writer (create array of N, fill columns) matches too', () => {
  const w = temperature.TemperatureBatchWriter.create();
  const cols = w.readings(10);
  const ts = cols.timestamp();
  const values = cols.value();
  assert.ok(ts instanceof BigInt64Array && values instanceof Float32Array);
  for (let i = 0; i < 10; i++) {
    ts[i] = 1_700_000_000_000n + BigInt(i);
    values[i] = 20 + i / 4;
  }
  assert.deepEqual(w.finish(), golden('temperature_10'));
});

test('64-bit fields take safe-integer numbers too: same bytes as bigint, no rounding', () => {
  const edges = [
    0,
    1,
    -1,
    2 ** 32 - 1,
    2 ** 32,
    -(2 ** 32),
    -(2 ** 32) - 1,
    Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER,
  ];
  const big = edges.map((t, i) => ({ timestamp: BigInt(t), value: i }));
  const num = edges.map((t, i) => ({ timestamp: t, value: i }));
  const mixed = edges.map((t, i) => ({ timestamp: i % 2 ? BigInt(t) : t, value: i }));
  const want = temperature.encodeTemperatureBatch({ readings: big }).slice();
  assert.deepEqual(temperature.encodeTemperatureBatch({ readings: num }), want, 'SoA column from numbers');
  assert.deepEqual(temperature.encodeTemperatureBatch({ readings: mixed }), want, 'SoA column, mixed');
  assert.deepEqual(temperature.decodeTemperatureBatch(want).readings, big, 'reads back as bigint');
  for (const t of edges) {
    assert.deepEqual(
      temperature.encodeTemperatureReading({ timestamp: t, value: 1 }),
      temperature.encodeTemperatureReading({ timestamp: BigInt(t), value: 1 }),
      `struct field ${t}`,
    );
  }
  // Struct fields (u64, i64) and AoS items: the Rust golden bytes again.
  const sink = kitchenSink();
  const numeric = {
    ...sink,
    aI64: Number(sink.aI64),
    head: { ...sink.head, id: 1, next: { ...sink.head.next, id: 2 } },
    nodes: sink.nodes.map((n) => ({ ...n, id: Number(n.id), next: n.next && { ...n.next, id: Number(n.next.id) } })),
  };
  assert.deepEqual(ks.encodeKitchenSink(numeric), golden('kitchen_sink'));
  // A []i64 / []u64 slice.
  const fromNumbers = slice('i64', [5, -7, 2 ** 40]);
  assert.deepEqual(fromNumbers, slice('i64', BigInt64Array.of(5n, -7n, 2n ** 40n)));
  assert.deepEqual(fromNumbers, slice('i64', [5n, -7, 2n ** 40n]));
  assert.notDeepEqual(fromNumbers, slice('i64', [5, -7, 2 ** 40 + 1]));
  assert.deepEqual(slice('u64', [2 ** 53 - 1]), slice('u64', [2n ** 53n - 1n]));
});

/** A message with a root struct and then one scalar slice (header 0 would mean "empty"). */
function slice(kind, values) {
  const b = new rt.Builder();
  b.dynamicStruct(8);
  b.scalars(kind, values);
  return b.finish().slice();
}

test('64-bit fields refuse numbers a bigint would be needed for (W0004)', () => {
  const w0004 = { name: 'SchemaWriteError', code: 'W0004' };
  for (const t of [2 ** 53, -(2 ** 53), 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(() => temperature.encodeTemperatureBatch({ readings: [{ timestamp: t, value: 0 }] }), w0004, `${t}`);
    assert.throws(() => temperature.encodeTemperatureReading({ timestamp: t, value: 0 }), w0004, `${t}`);
    assert.throws(() => slice('i64', [t]), w0004, `${t}`);
  }
  assert.throws(() => ks.encodeKitchenSink({ ...kitchenSink(), aU64: -1 }), w0004, 'u64 refuses negatives');
  assert.throws(() => slice('u64', [-1]), w0004);
  assert.throws(() => temperature.encodeTemperatureBatch({ readings: [{ timestamp: 2 ** 60, value: 0 }] }), /bigint/);
});

test('TemperatureBatch: columns are typed-array views over the input, no copy', () => {
  for (const Buf of [ArrayBuffer, SharedArrayBuffer]) {
    const u8 = aligned(golden('temperature_10'), Buf);
    const soa = temperature.TemperatureBatchReader.fromBytes(u8.buffer).readings();
    assert.equal(soa.length, 10);
    const values = soa.value();
    const ts = soa.timestamp();
    assert.equal(values.buffer, u8.buffer, `${Buf.name}: value column must alias the message`);
    assert.equal(ts.buffer, u8.buffer);
    assert.equal(values[3], 20.75);
    assert.equal(ts[9], 1_700_000_000_009n);
    assert.deepEqual(temperature.decodeTemperatureBatch(u8).readings, readings(10));
  }
});

test('TemperatureBatch: a message at an unaligned offset still reads (copied columns)', () => {
  const bytes = golden('temperature_10');
  const big = new Uint8Array(bytes.length + 3);
  big.set(bytes, 3);
  const soa = temperature.TemperatureBatchReader.fromBytes(big.subarray(3)).readings();
  assert.notEqual(soa.value().buffer, big.buffer);
  assert.equal(soa.value()[9], 22.25);
});

test('Scooter fleet: SoA and AoS golden bytes and readers', () => {
  const fleet = Array.from({ length: 4 }, (_, i) => ({ id: i, distance: i * 100 }));
  const bytes = scooter.encodeScooterFleet({ soa: fleet, aos: fleet });
  assert.deepEqual(bytes, golden('scooter_fleet'));
  const r = scooter.ScooterFleetReader.fromBytes(bytes);
  assert.deepEqual([...r.soa().distance()], [0, 100, 200, 300]);
  assert.deepEqual(
    [...r.aos()].map((s) => s.distance()),
    [0, 100, 200, 300],
  );
});

function kitchenSink() {
  const particle = (i) => ({
    pos: { x: i + 0.5, y: -i },
    color: i % 3,
    alive: i % 2 === 0,
    tags: [i, i + 1, i + 2, i + 3],
    weights: [i * 1.5, -0.25],
    hues: [ks.Color.RED, ks.Color.GREEN, i],
    flags: [true, i % 2 === 1],
  });
  return {
    aU8: 0xab,
    aU16: 0xbeef,
    aU32: 0xdeadbeef,
    aU64: 0x0123456789abcdefn,
    aI8: -5,
    aI16: -300,
    aI32: -70000,
    aI64: -5000000000n,
    aF32: 1.25,
    aF64: -2.5e10,
    aBool: true,
    color: ks.Color.BLUE,
    fixed: [1, -2, 3],
    origin: { x: 3, y: 4 },
    shape: { tag: 'point3d', value: { x: 1, y: 2, z: 3 } },
    head: { id: 1n, next: { id: 2n, next: null, name: 'second' }, name: 'first ✓' },
    title: 'Grüße',
    wideTitle: 'π≈3.14 𝄞',
    bytes: [1, 2, 3, 4, 5],
    numbers: [0.5, 1.5, 2.5],
    flags: [true, false, true],
    colors: [ks.Color.GREEN, ks.Color.BLUE, 7],
    particles: [0, 1, 2].map(particle),
    particlesAos: [3, 4].map(particle),
    nodes: [
      { id: 10n, next: null, name: 'a' },
      { id: 11n, next: { id: 12n, next: null, name: '' }, name: 'b' },
    ],
    type: 42,
  };
}

test('kitchen sink: every construct encodes to the Rust golden bytes', () => {
  assert.deepEqual(ks.encodeKitchenSink(kitchenSink()), golden('kitchen_sink'));
});

test('kitchen sink: readers and decode see the written values', () => {
  const bytes = golden('kitchen_sink');
  const r = ks.KitchenSinkReader.fromBytes(bytes);
  assert.equal(r.aI64(), -5000000000n);
  assert.equal(r.origin().y(), 4);
  const shape = r.shape();
  assert.equal(shape.tag, 'point3d');
  assert.equal(shape.tag === 'point3d' && shape.value.z(), 3);
  assert.equal(r.head()?.next()?.id(), 2n);
  assert.equal(r.wideTitle(), 'π≈3.14 𝄞');
  assert.equal(r.particles().tags().length, 12);
  assert.deepEqual([...r.particlesAos().get(1).tags()], [4, 5, 6, 7]);
  const plain = ks.decodeKitchenSink(bytes);
  const want = kitchenSink();
  assert.deepEqual({ ...plain, bytes: [...plain.bytes], numbers: [...plain.numbers], colors: [...plain.colors] }, want);
});

test('evolution: a v2 reader reads v1 data, missing fields and columns as zero', () => {
  const got = v2.decodeBatch(golden('evolution_v1'));
  assert.equal(got.label, 7);
  assert.equal(got.note, '');
  assert.equal(got.count, 0n);
  assert.deepEqual(
    got.readings.map((r) => [r.id, r.value, r.quality, r.extra]),
    [0, 1, 2, 3, 4].map((i) => [i, i * 2, 0, 0]),
  );
  assert.deepEqual(
    got.readingsAos.map((r) => [r.id, r.quality]),
    [
      [100, 0],
      [101, 0],
      [102, 0],
    ],
  );
  const extra = v2.BatchReader.fromBytes(golden('evolution_v1')).readings().extra();
  assert.deepEqual([...extra], [0, 0, 0, 0, 0]);
});

test('evolution: a v1 reader reads v2 data, ignoring new fields', () => {
  const got = v1.decodeBatch(golden('evolution_v2'));
  assert.deepEqual(got, {
    label: 7,
    readings: [0, 1, 2, 3, 4].map((i) => ({ id: i, value: i * 2 })),
    readingsAos: [100, 101, 102].map((i) => ({ id: i, value: i * 2 })),
  });
});

test('evolution: TS writers produce the Rust golden bytes for both versions', () => {
  const b1 = v1.encodeBatch({
    label: 7,
    readings: [0, 1, 2, 3, 4].map((i) => ({ id: i, value: i * 2 })),
    readingsAos: [0, 1, 2].map((i) => ({ id: 100 + i, value: -i })),
  });
  assert.deepEqual(b1, golden('evolution_v1'));
  const reading = (i) => ({ id: i, value: i * 2, quality: 9, extra: i / 3 });
  const b2 = v2.encodeBatch({
    label: 7,
    readings: [0, 1, 2, 3, 4].map(reading),
    readingsAos: [100, 101, 102].map(reading),
    note: 'appended in v2',
    count: 1n << 40n,
  });
  assert.deepEqual(b2, golden('evolution_v2'));
});

test('SoA lookup respects maxSoaColumns', () => {
  const bytes = golden('evolution_v2');
  assert.throws(
    () => v2.decodeBatch(bytes, { maxSoaColumns: 3 }),
    (e) => e instanceof rt.SchemaReadError && e.code === 'R0005',
  );
  assert.equal(v2.decodeBatch(bytes, { maxSoaColumns: 4 }).label, 7);
});

/** xorshift32, seeded: reproducible mutations. */
function rng(seed) {
  let s = seed >>> 0 || 1;
  return (n) => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s % n;
  };
}

function mutateAndRead(valid, iterations, seed, read) {
  const below = rng(seed);
  const interesting = [0, 1, 7, 8, 63, 64, 0x7fffffff, 0xffffffff, 0x20000001, 0xe0000001];
  let rejected = 0;
  for (let it = 0; it < iterations; it++) {
    let buf = valid.slice();
    switch (below(4)) {
      case 0:
        for (let k = 0; k < 1 + below(4); k++) buf[below(buf.length)] ^= 1 << below(8);
        break;
      case 1: {
        const i = below(buf.length - 3) & ~3;
        new DataView(buf.buffer).setUint32(i, interesting[below(interesting.length)], true);
        break;
      }
      case 2:
        buf = buf.slice(0, below(buf.length + 1));
        break;
      default:
        for (let i = 0; i < buf.length; i++) buf[i] = below(256);
    }
    try {
      read(buf);
    } catch (e) {
      if (!(e instanceof rt.SchemaReadError)) throw new Error(`iteration ${it}: untyped error ${e}`, { cause: e });
      rejected++;
    }
  }
  return rejected;
}

test('mutated buffers only ever throw SchemaReadError', () => {
  const n = Number(process.env.SCHEMA_MUTATIONS ?? 20000);
  const r1 = mutateAndRead(golden('kitchen_sink'), n, 1, (b) => ks.decodeKitchenSink(b));
  const r2 = mutateAndRead(golden('temperature_10'), n, 2, (b) => {
    const soa = temperature.TemperatureBatchReader.fromBytes(b).readings();
    soa.value().reduce((a, x) => a + x, 0);
    temperature.decodeTemperatureBatch(b);
  });
  const r3 = mutateAndRead(golden('evolution_v2'), n, 3, (b) => v1.decodeBatch(b));
  assert.ok(r1 > n / 10 && r2 > n / 10 && r3 > n / 10, `rejected ${r1}, ${r2}, ${r3}`);
});

test('unions: single value and all four slice layouts match the Rust golden bytes', async () => {
  const un = await import('../dist/schema/generated/fixtures/unions.js');
  const p2 = (x) => ({ tag: 'point2d', value: { x, y: -x } });
  const p3 = (x) => ({ tag: 'point3d', value: { x, y: 2 * x, z: 3 * x } });
  const mixed = [p2(1), null, p3(2), p2(3)];
  const value = { single: p3(9), aos: mixed, soa: mixed, bovoa: [p3(4), p2(5), p3(6)], bovos: [p2(7), p3(8), p2(10)] };
  const bytes = un.encodeParticles(value);
  assert.deepEqual(bytes, golden('unions'));

  const r = un.ParticlesReader.fromBytes(bytes);
  assert.deepEqual([...r.soa().tags], [1, 0, 2, 1]);
  assert.equal(r.aos().get(1).tag, 'empty');
  assert.deepEqual([...r.bovos().point2d().x()], [7, 10]);
  assert.equal(r.bovoa().point3d().length, 2);
  // BoV drops insertion order: items come back grouped by variant.
  assert.deepEqual(un.decodeParticles(bytes), {
    ...value,
    bovoa: [p2(5), p3(4), p3(6)],
    bovos: [p2(7), p2(10), p3(8)],
  });
  const rejected = mutateAndRead(golden('unions'), 5000, 4, (b) => un.decodeParticles(b));
  assert.ok(rejected > 500, `rejected ${rejected}`);
});

test('Builder.onBuffer writes in place into a SharedArrayBuffer, zeroing stale bytes', () => {
  const want = golden('temperature_10');
  const sab = new SharedArrayBuffer(want.length + 64);
  new Uint8Array(sab).fill(0xee);
  const view = temperature.encodeTemperatureBatch({ readings: readings(10) }, rt.Builder.onBuffer(sab));
  assert.equal(view.buffer, sab, 'finish() is a view of the caller buffer');
  assert.deepEqual(new Uint8Array(view), want);
  assert.equal(new Uint8Array(sab)[want.length], 0xee, 'nothing written past the message');
  // A worker would now read it without a copy:
  assert.equal(temperature.TemperatureBatchReader.fromBytes(sab).readings().value().buffer, sab);
  assert.throws(
    () =>
      temperature.encodeTemperatureBatch(
        { readings: readings(10) },
        rt.Builder.onBuffer(new ArrayBuffer(want.length - 1)),
      ),
    (e) => e instanceof rt.SchemaWriteError && e.code === 'W0002',
  );
  assert.throws(
    () => rt.Builder.onBuffer(new Uint8Array(sab, 4)),
    (e) => e instanceof rt.SchemaWriteError && e.code === 'W0003',
  );
});

test('a self-referencing node stops at the depth limit (R0006), not in a loop', () => {
  const bytes = ks.encodeNode({ id: 1n, next: null, name: '' });
  // Point `next` (at +16) at the node itself… which sits at offset 0, i.e. "none". So
  // append a copy of the node and make that copy point to itself.
  const at = bytes.length;
  const buf = new Uint8Array(at * 2);
  buf.set(bytes);
  buf.set(bytes, at);
  const dv = new DataView(buf.buffer);
  dv.setUint32(16, at, true);
  dv.setUint32(at + 16, at, true);
  assert.throws(
    () => ks.decodeNode(buf),
    (e) => e instanceof rt.SchemaReadError && e.code === 'R0006',
  );
});
