/**
 * SHA-256 (RustCrypto sha2): one-shot digests, lowercase hex, of a string (UTF-8) or
 * bytes. Native, else offthread.wasm — on the calling thread or on the pool. A kernel
 * of the Rust registry: this file is its whole TS side.
 */
import type { CallOptions } from '../pool/pool.js';
import { checkHashData, hexAsync as digestHexAsync } from './digest.js';
import { callSync } from './registry.js';

/** SHA-256 of a string (UTF-8) or bytes, 64 lowercase hex characters, on the calling thread. */
export function hex(data: string | Uint8Array): string {
  return callSync({ kernel: 'sha256.hex', input: checkHashData(data) }) as string;
}

/**
 * As `hex`, on the pool; takes what `hex` takes. Honours `{ pool, signal, timeout }`.
 * Up to 1 MiB is one job owning a copy (a SharedArrayBuffer view: read in place); more
 * goes in 1 MiB pieces with the event loop free between them (kernels/digest.ts). Until
 * the promise settles, do not write to the bytes (the digest would mix old and new
 * bytes) nor transfer or shrink their buffer (the call rejects with ERR_INVALID_ARG).
 */
export function hexAsync(data: string | Uint8Array, options?: CallOptions): Promise<string> {
  return digestHexAsync('sha256', data, options);
}
