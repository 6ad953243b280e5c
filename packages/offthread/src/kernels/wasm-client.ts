/**
 * The one client of offthread.wasm's C-ABI exports (crates/offthread-wasm), used on the
 * calling thread and inside every worker, in Node and in browsers. Inputs are copied
 * into linear memory with `alloc`/`dealloc`; a negative return −(1 + i) is the error
 * code WASM_ERRORS[i], its message readable at `last_error_ptr/len`.
 */

import { type ErrorCode, makeError } from '../errors.js';
import type { WebAssembly } from '../host.js';
import { FILTER_WASM_EXPORTS } from './wasm-filter.js';

/** The module's exports this client calls (a test checks them against the built .wasm). */
export interface WasmExports {
  memory: WebAssembly.Memory;
  alloc(len: number): number;
  dealloc(ptr: number, len: number): void;
  last_error_ptr(): number;
  last_error_len(): number;
  layout_run(variant: number, n: number, reps: number, speed: number): number;
  // Stream filters (wasm-filter.ts, crates/offthread-wasm/src/filters.rs).
  filter_new(spec: number, len: number): number;
  filter_push(handle: number, ptr: number, len: number): number;
  filter_finish(handle: number): number;
  filter_free(handle: number): void;
  filter_out_ptr(): number;
  filter_error_ptr(): number;
  filter_error_len(): number;
  kernel_names(): number;
  kernel_call(kernel: number, input: number, len: number, a: number, b: number, c: number): number;
  kernel_out_ptr(): number;
  kernel_out_len(): number;
  kernel_out_number(): number;
}

/** Names of the exports above, for the export-list test. */
export const WASM_EXPORTS: readonly (keyof WasmExports)[] = [
  'memory',
  'alloc',
  'dealloc',
  'last_error_ptr',
  'last_error_len',
  'layout_run',
  ...FILTER_WASM_EXPORTS,
  'kernel_names',
  'kernel_call',
  'kernel_out_ptr',
  'kernel_out_len',
  'kernel_out_number',
];

/** −(1 + i) is WASM_ERRORS[i] (crates/offthread-wasm/src/abi.rs; only grows at the end). */
export const WASM_ERRORS: readonly ErrorCode[] = [
  'ERR_INVALID_SAMPLES',
  'ERR_INVALID_SEED',
  'ERR_INVALID_ARG',
  'ERR_ABORTED',
  'ERR_TIMEOUT',
  'ERR_INVALID_TEXT',
  'ERR_TEXT_TOO_LONG',
  'ERR_INVALID_ROUNDS',
  'ERR_INVALID_QR_OPTIONS',
  'ERR_INVALID_BUFFER',
];

/** Returns true when the running call should stop (an abort reached this thread). */
export type Stop = () => boolean;
const never: Stop = () => false;

/**
 * The module's one import: long kernels ask `offthread.interrupted()` between chunks
 * (≈ 1 ms apart) and stop with ERR_ABORTED when it is non-zero. A pool worker passes its
 * shared-memory cancel flag; a thread with nothing to cancel, nothing.
 */
export function wasmImports(stop: Stop = never): WebAssembly.Imports {
  return { offthread: { interrupted: () => (stop() ? 1 : 0) } };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const EMPTY = new Uint8Array(0);

export interface TemperatureSummary {
  count: number;
  /** Mean of the values (summed in f64); NaN for an empty batch. */
  average: number;
  min: number;
  max: number;
}

/** `stats.temperature`'s 32 bytes: [count, average, min, max] as little-endian f64. */
export function temperatureSummary(bytes: Uint8Array): TemperatureSummary {
  const v = new DataView(bytes.buffer, bytes.byteOffset, 32);
  const [count, average, min, max] = [0, 8, 16, 24].map((at) => v.getFloat64(at, true)) as [
    number,
    number,
    number,
    number,
  ];
  return { count, average, min, max };
}

/** What a registry kernel returns (crates/offthread-core/src/registry.rs). */
export type RegistryValue = number | string | Uint8Array;

export class WasmKernels {
  readonly instance: WebAssembly.Instance;
  readonly x: WasmExports;
  #registry: Map<string, number> | undefined;

  constructor(instance: WebAssembly.Instance) {
    this.instance = instance;
    this.x = instance.exports as unknown as WasmExports;
  }

  /** A new instance of `module`; its long kernels stop when `stop()` says so. */
  static fromModule(module: WebAssembly.Module, stop: Stop = never): WasmKernels {
    return new WasmKernels(new WebAssembly.Instance(module, wasmImports(stop)));
  }

  #bytes(): Uint8Array {
    return new Uint8Array(this.x.memory.buffer);
  }

  /** The registry error behind a negative return. */
  #fail(ret: number): Error {
    const code = WASM_ERRORS[-ret - 1] ?? 'ERR_KERNEL_PANIC';
    const len = this.x.last_error_len();
    const ptr = this.x.last_error_ptr();
    const raw = len > 0 ? decoder.decode(this.#bytes().subarray(ptr, ptr + len)) : '';
    const message = raw.startsWith(`${code}: `) ? raw.slice(code.length + 2) : raw || `${code} (${ret})`;
    return makeError(code, message);
  }

  #check(ret: number): number {
    if (ret < 0) throw this.#fail(ret);
    return ret;
  }

  /** Runs `f` with `data` copied into linear memory at a block `extra` bytes longer. */
  #withInput<T>(data: string | Uint8Array, extra: number, align: number, f: (ptr: number, len: number) => T): T {
    const bytes = typeof data === 'string' ? encoder.encode(data) : data;
    const size = bytes.length + extra + align;
    const block = this.x.alloc(size);
    if (block === 0) throw makeError('ERR_BACKEND_UNAVAILABLE', 'WebAssembly memory exhausted');
    try {
      const ptr = align > 0 ? (block + align - 1) & ~(align - 1) : block;
      this.#bytes().set(bytes, ptr); // a view made after alloc, which may grow memory
      return f(ptr, bytes.length);
    } finally {
      this.x.dealloc(block, size);
    }
  }

  /** Registry kernel `name` by its number in this module, or ERR_BACKEND_UNAVAILABLE. */
  #kernelIndex(name: string): number {
    if (!this.#registry) {
      const n = this.#check(this.x.kernel_names());
      const at = this.x.kernel_out_ptr();
      const names = decoder.decode(this.#bytes().subarray(at, at + n)).split('\n');
      this.#registry = new Map(names.map((k, i) => [k, i]));
    }
    const index = this.#registry.get(name);
    if (index === undefined) throw makeError('ERR_BACKEND_UNAVAILABLE', `offthread.wasm has no kernel ${name}`);
    return index;
  }

  /**
   * Runs registry kernel `name` (the generic entry: every kernel of
   * `offthread_kernels::KERNELS`). The input is copied 64-byte aligned, as schema
   * buffers want (stats.temperature reads them in place).
   */
  call(name: string, input: string | Uint8Array = EMPTY, a = 0, b = 0, c = 0): RegistryValue {
    const kernel = this.#kernelIndex(name);
    return this.#withInput(input, 0, 64, (ptr, len) => this.#callAt(kernel, ptr, len, a, b, c));
  }

  /** Kernel number `kernel` on `len` bytes at `ptr`; its output copied out of linear memory. */
  #callAt(kernel: number, ptr: number, len: number, a: number, b: number, c: number): RegistryValue {
    const kind = this.#check(this.x.kernel_call(kernel, ptr, len, a, b, c));
    if (kind === 0) return this.x.kernel_out_number();
    const at = this.x.kernel_out_ptr();
    const out = this.#bytes().slice(at, at + this.x.kernel_out_len());
    return kind === 1 ? decoder.decode(out) : out;
  }

  /**
   * Statistics of a batch already in linear memory at `ptr` (64-byte aligned): no
   * copy. The registry's `stats.temperature` on memory the caller placed itself, for
   * bench/experiments/schema-child.mjs (the public call is `stats.temperatureWasm`).
   */
  statsTemperatureAt(ptr: number, len: number): TemperatureSummary {
    return temperatureSummary(this.#callAt(this.#kernelIndex('stats.temperature'), ptr, len, 0, 0, 0) as Uint8Array);
  }
}
