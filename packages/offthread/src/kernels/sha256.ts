/**
 * SHA-256 (RustCrypto sha2): one-shot digests, lowercase hex, of a string (UTF-8) or
 * bytes. Native, else offthread.wasm — on the calling thread or on the pool. A kernel
 * of the Rust registry: this file is its whole TS side.
 */
import { describe, makeError } from '../errors.js';
import { type CallOptions, checkCallOptions } from '../pool/pool.js';
import { CALL_KEYS, toOptions } from '../validate.js';
import { callAsync, callSync } from './registry.js';

function checkData(data: unknown): string | Uint8Array {
  if (typeof data === 'string' || data instanceof Uint8Array) return data;
  throw makeError('ERR_INVALID_ARG', `data must be a string or Uint8Array, got ${describe(data)}`);
}

/** SHA-256 of a string (UTF-8) or bytes, 64 lowercase hex characters, on the calling thread. */
export function hex(data: string | Uint8Array): string {
  return callSync({ kernel: 'sha256.hex', input: checkData(data) }) as string;
}

/**
 * As `hex`, as one pool job; honours `{ pool, signal, timeout }`. The job owns a copy of
 * bytes taken during this call (a SharedArrayBuffer view is read in place).
 */
export async function hexAsync(data: string | Uint8Array, options?: CallOptions): Promise<string> {
  const input = checkData(data);
  const call = checkCallOptions(toOptions<CallOptions>(options, CALL_KEYS));
  return (await callAsync(call, { kernel: 'sha256.hex', input })) as string;
}
