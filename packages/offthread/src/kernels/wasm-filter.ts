/**
 * The filter exports of offthread.wasm (crates/offthread-wasm/src/filters.rs): a handle
 * per stream, run in place on the calling thread. Used where the native addon is
 * missing (browsers, other platforms): there a filter costs the calling thread its
 * CPU time — run the stream in a worker to keep a page responsive.
 */

import { type ErrorCode, errorRegistry, makeError } from '../errors.js';
import type { WebAssembly } from '../host.js';

export interface FilterWasmExports {
  memory: WebAssembly.Memory;
  alloc(len: number): number;
  dealloc(ptr: number, len: number): void;
  filter_new(spec: number, len: number): number;
  filter_push(handle: number, ptr: number, len: number): number;
  filter_finish(handle: number): number;
  filter_free(handle: number): void;
  filter_out_ptr(): number;
  filter_error_ptr(): number;
  filter_error_len(): number;
}

/** The names above that only the filters use (wasm-client.ts lists them with the rest). */
export const FILTER_WASM_EXPORTS = [
  'filter_new',
  'filter_push',
  'filter_finish',
  'filter_free',
  'filter_out_ptr',
  'filter_error_ptr',
  'filter_error_len',
] as const;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One stream's filter inside a WASM instance. */
export class WasmFilter {
  readonly #x: FilterWasmExports;
  #handle: number;

  constructor(instance: WebAssembly.Instance, spec: string) {
    this.#x = instance.exports as unknown as FilterWasmExports;
    this.#handle = this.#check(this.#withInput(encoder.encode(spec), (p, n) => this.#x.filter_new(p, n)));
  }

  #withInput(bytes: Uint8Array, f: (ptr: number, len: number) => number): number {
    const size = Math.max(bytes.length, 1);
    const ptr = this.#x.alloc(size);
    if (ptr === 0) throw makeError('ERR_BACKEND_UNAVAILABLE', 'WebAssembly memory exhausted');
    try {
      new Uint8Array(this.#x.memory.buffer).set(bytes, ptr);
      return f(ptr, bytes.length);
    } finally {
      this.#x.dealloc(ptr, size);
    }
  }

  #check(ret: number): number {
    if (ret >= 0) return ret;
    const ptr = this.#x.filter_error_ptr();
    const raw = decoder.decode(new Uint8Array(this.#x.memory.buffer, ptr, this.#x.filter_error_len()));
    const sep = raw.indexOf(': ');
    const code = raw.slice(0, sep);
    if (!(code in errorRegistry)) return this.#fail('ERR_KERNEL_PANIC', raw);
    return this.#fail(code as ErrorCode, raw.slice(sep + 2));
  }

  #fail(code: ErrorCode, message: string): never {
    throw makeError(code, message);
  }

  #out(len: number): Uint8Array {
    return new Uint8Array(this.#x.memory.buffer, this.#x.filter_out_ptr(), len).slice();
  }

  push(chunk: Uint8Array): Uint8Array {
    return this.#out(this.#check(this.#withInput(chunk, (p, n) => this.#x.filter_push(this.#handle, p, n))));
  }

  finish(): Uint8Array {
    try {
      return this.#out(this.#check(this.#x.filter_finish(this.#handle)));
    } finally {
      this.free();
    }
  }

  free(): void {
    if (this.#handle >= 0) this.#x.filter_free(this.#handle);
    this.#handle = -1;
  }
}
