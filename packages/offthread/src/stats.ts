/**
 * Batch statistics over schema buffers (the Karmem paper's TemperatureBatch): the
 * kernel reads the caller's bytes where they lie — no JSON, no decode, no copy.
 * Build the buffer with the generated writer (`offthread/schema`'s
 * `TemperatureBatchWriter` or `encodeTemperatureBatch`).
 */
import { native } from './backends/native';
import { wasm, wasmCheck } from './backends/wasm';
import { fromNative, makeError } from './errors';
import { type CallOptions, checkCallOptions, defaultPool } from './pool';
import { TemperatureBatchReader } from './schema/generated/temperature';
import { toOptions } from './validate';

export interface TemperatureSummary {
  count: number;
  /** Mean of the values (summed in f64); NaN for an empty batch. */
  average: number;
  min: number;
  max: number;
}

function checkBuffer(buf: unknown): Uint8Array {
  if (buf instanceof Uint8Array) return buf;
  throw makeError('ERR_INVALID_ARG', 'buf must be a Uint8Array (an encoded TemperatureBatch)');
}

/** The reference in TS: the generated reader's Float32Array view, one loop. */
export function temperatureReference(buf: Uint8Array): TemperatureSummary {
  let values: Float32Array;
  try {
    values = TemperatureBatchReader.fromBytes(buf).readings().value();
  } catch (err) {
    throw makeError('ERR_INVALID_BUFFER', `not a valid TemperatureBatch: ${(err as Error).message}`);
  }
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const v of values) {
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const count = values.length;
  return count === 0
    ? { count, average: Number.NaN, min: Number.NaN, max: Number.NaN }
    : { count, average: sum / count, min, max };
}

/** The WASM kernel over a batch at `ptr` (`len` bytes) already in the instance's memory. */
export function temperatureInWasmMemory(ptr: number, len: number): TemperatureSummary {
  const w = wasm();
  if (!w) throw makeError('ERR_BACKEND_UNAVAILABLE', 'offthread.wasm is not built (npm run setup)');
  const out = w.alloc(32 + 8);
  try {
    const aligned = (out + 7) & ~7;
    wasmCheck(w, w.stats_temperature(ptr, len, aligned));
    const [count, average, min, max] = new Float64Array(w.memory.buffer, aligned, 4);
    return { count, average, min, max };
  } finally {
    w.dealloc(out, 32 + 8);
  }
}

/** The WASM kernel: copies `buf` into linear memory, then reads it there. */
export function temperatureWasm(buf: Uint8Array): TemperatureSummary {
  const bytes = checkBuffer(buf);
  const w = wasm();
  if (!w) throw makeError('ERR_BACKEND_UNAVAILABLE', 'offthread.wasm is not built (npm run setup)');
  // Schema arrays are 64-byte aligned relative to the buffer start: keep that in memory.
  const len = bytes.length + 64;
  const ptr = w.alloc(len);
  if (ptr === 0) throw makeError('ERR_BACKEND_UNAVAILABLE', 'WebAssembly memory exhausted');
  try {
    const at = (ptr + 63) & ~63;
    new Uint8Array(w.memory.buffer, at, bytes.length).set(bytes);
    return temperatureInWasmMemory(at, bytes.length);
  } finally {
    w.dealloc(ptr, len);
  }
}

/** Average/min/max on the calling thread, reading `buf` in place. */
export function temperatureSync(buf: Uint8Array): TemperatureSummary {
  const bytes = checkBuffer(buf);
  if (!native) return wasm() ? temperatureWasm(bytes) : temperatureReference(bytes);
  try {
    return native.statsTemperatureSync(bytes);
  } catch (err) {
    throw fromNative(err);
  }
}

/** Average/min/max on the pool; the job reads `buf` in place (do not modify it meanwhile). */
export async function temperature(buf: Uint8Array, options?: CallOptions): Promise<TemperatureSummary> {
  const bytes = checkBuffer(buf);
  const call = checkCallOptions(toOptions<CallOptions>(options));
  if (!native) return temperatureReference(bytes);
  const packed = await (call.pool ?? defaultPool()).submitStatsTemperature(bytes, call);
  const [count, average, min, max] = new Float64Array(packed.buffer.slice(packed.byteOffset, packed.byteOffset + 32));
  return { count, average, min, max };
}

/** Adds `delta` to every value, in the caller's memory; returns how many were updated. */
export function temperatureOffsetSync(buf: Uint8Array, delta: number): number {
  const bytes = checkBuffer(buf);
  if (typeof delta !== 'number') throw makeError('ERR_INVALID_ARG', 'delta must be a number');
  if (!native) throw makeError('ERR_BACKEND_UNAVAILABLE', 'temperatureOffsetSync needs the native addon');
  try {
    return native.statsTemperatureOffsetSync(bytes, delta);
  } catch (err) {
    throw fromNative(err);
  }
}
