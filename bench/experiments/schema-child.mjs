// The `schema` experiment's measurements, in one child process. Write: the same JS
// source array (objects with numeric timestamp and value) encoded by each format.
// Read + analyse: average/min/max of the values from each format's encoding.
import * as flatbuffers from 'flatbuffers';
import { schema, stats } from 'offthread';
import { wasmKernels } from 'offthread/internal';
import { progress, timeFn } from '../lib/measure.mjs';

export function source(n) {
  return Array.from({ length: n }, (_, i) => ({
    timestamp: 1_700_000_000_000 + i * 1000,
    value: 15 + ((i * 7919) % 200) / 10,
  }));
}

// FlatBuffers, written as flatc would generate it for:
//   struct Reading { timestamp: long; value: float; }   table Batch { readings: [Reading]; }
// (a struct vector: 16 bytes per reading, 8-aligned, the layout closest to ours).
export function flatbuffersWrite(builder, readings) {
  builder.clear();
  builder.startVector(16, readings.length, 8);
  for (let i = readings.length - 1; i >= 0; i--) {
    builder.prep(8, 16);
    builder.pad(4);
    builder.writeFloat32(readings[i].value);
    builder.writeInt64(BigInt(readings[i].timestamp));
  }
  const vector = builder.endVector();
  builder.startObject(1);
  builder.addFieldOffset(0, vector, 0);
  builder.finish(builder.endObject());
  return builder.asUint8Array();
}

export function flatbuffersAnalyse(bytes) {
  const bb = new flatbuffers.ByteBuffer(bytes);
  const root = bb.readInt32(bb.position()) + bb.position();
  const o = bb.__offset(root, 4);
  const start = bb.__vector(root + o);
  const n = bb.__vector_len(root + o);
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const v = bb.readFloat32(start + i * 16 + 8);
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { count: n, average: sum / n, min, max };
}

// Resolved once, as the flatbuffers import above is: `schema` is a CommonJS namespace of
// getters, so `schema.TemperatureBatchReader` per call would time a getter lookup too.
const { TemperatureBatchReader } = schema;

/** The generated TS reader's `value` column (a Float32Array view, no copy), one indexed loop. */
export function offthreadAnalyse(bytes) {
  const values = TemperatureBatchReader.fromBytes(bytes).readings().value();
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { count: values.length, average: sum / values.length, min, max };
}

function jsonAnalyse(text) {
  const { readings } = JSON.parse(text);
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const r of readings) {
    sum += r.value;
    if (r.value < min) min = r.value;
    if (r.value > max) max = r.value;
  }
  return { count: readings.length, average: sum / readings.length, min, max };
}

/**
 * The generated plain-object writer (`fill`, what `encodeTemperatureBatch` runs) with the
 * builder reused: JS number timestamps go straight into the i64 column (two u32 halves
 * each, no BigInt).
 */
export function offthreadWrite(builder, readings) {
  builder.reset();
  return schema.TemperatureBatchWriter.alloc(builder).fill({ readings }).finish();
}

/**
 * The top-down writer (allocate N, fill the typed-array columns), converting each
 * timestamp to a BigInt for the BigInt64Array column: what code that holds bigint
 * timestamps, or converts numbers by hand, pays.
 */
function offthreadWriteColumnsBigInt(builder, readings) {
  builder.reset();
  const writer = schema.TemperatureBatchWriter.alloc(builder);
  const columns = writer.readings(readings.length);
  const ts = columns.timestamp();
  const values = columns.value();
  for (let i = 0; i < readings.length; i++) {
    ts[i] = BigInt(readings[i].timestamp);
    values[i] = readings[i].value;
  }
  return writer.finish();
}

export async function measure({ sizes, quick }) {
  const budget = { minTime: quick ? 200 : 1000, minIterations: 10 };
  const rows = [];
  for (const n of sizes) {
    const readings = source(n);
    const fb = new flatbuffers.Builder(64 + n * 16);
    const ours = new schema.rt.Builder(1024 + n * 16);
    const encoded = {
      json: JSON.stringify({ readings }),
      flatbuffers: flatbuffersWrite(fb, readings).slice(),
      offthread: offthreadWrite(ours, readings).slice(),
    };
    // Every reader must agree before anything is timed.
    const viaBigInt = offthreadWriteColumnsBigInt(new schema.rt.Builder(1024 + n * 16), readings);
    if (Buffer.compare(Buffer.from(viaBigInt), Buffer.from(encoded.offthread)) !== 0) {
      throw new Error(`the BigInt column writer differs from the generated fill at n=${n}`);
    }
    const expected = stats.temperatureReference(encoded.offthread);
    for (const got of [
      stats.temperatureSync(encoded.offthread),
      offthreadAnalyse(encoded.offthread),
      jsonAnalyse(encoded.json),
      flatbuffersAnalyse(encoded.flatbuffers),
    ]) {
      // Values are stored as f32 by offthread and flatbuffers; JSON keeps the f64 source.
      const f = Math.fround;
      if (got.count !== expected.count || f(got.min) !== f(expected.min) || f(got.max) !== f(expected.max)) {
        throw new Error(`readers disagree at n=${n}: ${JSON.stringify(got)} vs ${JSON.stringify(expected)}`);
      }
    }
    // WASM: the batch placed once in linear memory (64-byte aligned), read there.
    const kernels = wasmKernels();
    const w = kernels.x;
    const wasmPtr = w.alloc(encoded.offthread.length + 64);
    const wasmAt = (wasmPtr + 63) & ~63;
    new Uint8Array(w.memory.buffer, wasmAt, encoded.offthread.length).set(encoded.offthread);
    const inWasm = kernels.statsTemperatureAt(wasmAt, encoded.offthread.length);
    if (inWasm.count !== expected.count || inWasm.max !== expected.max) throw new Error('WASM reader disagrees');
    const cases = [
      ['write', 'offthread TS writer', () => offthreadWrite(ours, readings)],
      ['write', 'offthread TS writer, columns, BigInt per value', () => offthreadWriteColumnsBigInt(ours, readings)],
      ['write', 'flatbuffers', () => flatbuffersWrite(fb, readings)],
      // The call as most code makes it: no builder kept by the caller.
      [
        'write',
        'offthread encodeTemperatureBatch (no builder given)',
        () => schema.encodeTemperatureBatch({ readings }),
      ],
      ['write', 'flatbuffers, new Builder per call', () => flatbuffersWrite(new flatbuffers.Builder(1024), readings)],
      ['write', 'JSON.stringify', () => JSON.stringify({ readings })],
      ['read', 'offthread native (zero copy)', () => stats.temperatureSync(encoded.offthread)],
      [
        'read',
        'offthread WASM (batch in linear memory)',
        () => kernels.statsTemperatureAt(wasmAt, encoded.offthread.length),
      ],
      ['read', 'offthread TS reader', () => offthreadAnalyse(encoded.offthread)],
      ['read', 'flatbuffers', () => flatbuffersAnalyse(encoded.flatbuffers)],
      ['read', 'JSON.parse + loop', () => jsonAnalyse(encoded.json)],
    ];
    for (const [op, impl, fn] of cases) {
      const t = await timeFn(fn, budget);
      rows.push({ op, impl, items: n, medianNs: t.median, opsPerSec: t.opsPerSec, bytes: byteSize(impl, encoded) });
      progress(`${op} ${impl} ×${n}: ${t.median.toFixed(0)} ns`);
    }
  }
  return rows;
}

function byteSize(impl, encoded) {
  if (impl.startsWith('JSON')) return Buffer.byteLength(encoded.json);
  if (impl.startsWith('flatbuffers')) return encoded.flatbuffers.length;
  return encoded.offthread.length;
}
