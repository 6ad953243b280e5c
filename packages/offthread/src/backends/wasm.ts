/**
 * The same Rust kernels compiled to wasm32 (crates/offthread-wasm): plain C-ABI
 * exports, numbers in and out. Used by the `wasm` variant and as the Node fallback.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ErrorCode, errorRegistry, makeError } from '../errors';

export interface WasmExports {
  memory: WebAssembly.Memory;
  pi_count_range(first: number, samples: number, seed: number): number;
  pi_count_range_reference(first: number, samples: number, seed: number): number;
  alloc(len: number): number;
  dealloc(ptr: number, len: number): void;
  last_error_ptr(): number;
  last_error_len(): number;
  md5_hex(text: number, len: number, out: number): number;
  md5_iterate(text: number, len: number, rounds: number, out: number): number;
  md5_iterate_from(text: number, len: number, rounds: number, io: number): number;
  qr_data_url(text: number, len: number, ecc: number, size: number, margin: number): number;
  qr_png(text: number, len: number, ecc: number, size: number, margin: number): number;
  qr_svg(text: number, len: number, ecc: number, size: number, margin: number): number;
  qr_last_ptr(): number;
  qr_last_len(): number;
  stats_temperature(buf: number, len: number, out: number): number;
  layout_run(variant: number, n: number, reps: number, speed: number): number;
}

export const wasmPath = join(__dirname, '..', '..', 'wasm', 'offthread.wasm');

let instance: WasmExports | null = null;
export let wasmLoadError: string | null = null;

/** The instance, compiled on first use (synchronous: the module is ~10 KB). */
export function wasm(): WasmExports | null {
  if (instance || wasmLoadError) return instance;
  if (process.env.OFFTHREAD_BACKEND === 'js') {
    wasmLoadError = 'disabled by OFFTHREAD_BACKEND=js';
    return null;
  }
  try {
    const module = new WebAssembly.Module(readFileSync(wasmPath));
    instance = new WebAssembly.Instance(module, {}).exports as unknown as WasmExports;
  } catch (err) {
    wasmLoadError = `cannot load ${wasmPath}: ${(err as Error).message}. Build it with \`npm run setup\`.`;
  }
  return instance;
}

/** Throws the registry error behind a negative return (`last_error_*` holds the message). */
export function wasmCheck(w: WasmExports, ret: number): number {
  if (ret >= 0) return ret;
  const message = Buffer.from(w.memory.buffer, w.last_error_ptr(), w.last_error_len()).toString('utf8');
  const code = message.split(':')[0] as ErrorCode;
  throw makeError(code in errorRegistry ? code : 'ERR_INVALID_ARG', message.slice(code.length + 2) || message);
}

/**
 * Runs `f` with `bytes` copied into the instance's memory (plus `extra` scratch bytes
 * after them), then frees the block. Views over memory are made after `alloc`, which
 * may grow it.
 */
export function withBytes<T>(w: WasmExports, bytes: Uint8Array, extra: number, f: (ptr: number) => T): T {
  const len = bytes.length + extra;
  const ptr = w.alloc(len);
  if (ptr === 0) throw makeError('ERR_BACKEND_UNAVAILABLE', 'WebAssembly memory exhausted');
  try {
    new Uint8Array(w.memory.buffer, ptr, bytes.length).set(bytes);
    return f(ptr);
  } finally {
    w.dealloc(ptr, len);
  }
}
