/**
 * Batch statistics over schema buffers (the Karmem paper's TemperatureBatch): the
 * kernel reads the bytes of an encoded batch — no JSON, no decode. Build the buffer
 * with the generated writer (`schema.TemperatureBatchWriter` / `encodeTemperatureBatch`).
 * Registry kernel `stats.temperature` (its result: 32 bytes, `temperatureSummary`).
 */
import { describe, fromNative, makeError } from '../errors.js';
import { host } from '../host.js';
import { type CallOptions, checkCallOptions } from '../pool/pool.js';
import { TemperatureBatchReader } from '../schema/generated/temperature.js';
import { CALL_KEYS, isInstance, toOptions } from '../validate.js';
import { callAsync, callSync } from './registry.js';
import { type TemperatureSummary, temperatureSummary } from './wasm-client.js';
import { wasmKernels } from './wasm-sync.js';

export type { TemperatureSummary } from './wasm-client.js';

function checkBuffer(buf: unknown): Uint8Array {
  if (isInstance(buf, Uint8Array)) return buf;
  throw makeError('ERR_INVALID_ARG', `buf must be a Uint8Array (an encoded TemperatureBatch), got ${describe(buf)}`);
}

/** The reference in TS: the generated reader's Float32Array view, one loop. */
export function temperatureReference(buf: Uint8Array): TemperatureSummary {
  let values: Float32Array;
  try {
    values = TemperatureBatchReader.fromBytes(checkBuffer(buf)).readings().value();
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

/** The WASM kernel on the calling thread (the batch is copied into linear memory). */
export function temperatureWasm(buf: Uint8Array): TemperatureSummary {
  const input = checkBuffer(buf);
  return temperatureSummary(callSync({ kernel: 'stats.temperature', input }, 'wasm') as Uint8Array);
}

/** Average/min/max on the calling thread, reading `buf` in place (natively). */
export function temperatureSync(buf: Uint8Array): TemperatureSummary {
  const input = checkBuffer(buf);
  if (!host().native() && !wasmKernels()) return temperatureReference(input);
  return temperatureSummary(callSync({ kernel: 'stats.temperature', input }) as Uint8Array);
}

/**
 * Average/min/max on the pool. The job owns a copy of `buf` (taken during this call), so
 * `buf` may be reused or transferred at once — except a view of a SharedArrayBuffer,
 * which cannot be detached and is read in place (do not write to it meanwhile).
 */
export async function temperature(buf: Uint8Array, options?: CallOptions): Promise<TemperatureSummary> {
  const input = checkBuffer(buf);
  const call = checkCallOptions(toOptions<CallOptions>(options, CALL_KEYS));
  return temperatureSummary((await callAsync(call, { kernel: 'stats.temperature', input })) as Uint8Array);
}

/** Adds `delta` to every value, in the caller's memory; returns how many were updated. */
export function temperatureOffsetSync(buf: Uint8Array, delta: number): number {
  const bytes = checkBuffer(buf);
  if (typeof delta !== 'number') throw makeError('ERR_INVALID_ARG', `delta must be a number, got ${describe(delta)}`);
  const native = host().native();
  if (!native) throw makeError('ERR_BACKEND_UNAVAILABLE', 'temperatureOffsetSync needs the native addon');
  try {
    return native.statsTemperatureOffsetSync(bytes, delta);
  } catch (err) {
    throw fromNative(err);
  }
}
