/**
 * The same Rust kernels compiled to wasm32 (crates/offthread-wasm): plain C-ABI
 * exports, numbers in and out. Used by the `wasm` variant and as the Node fallback.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface WasmExports {
  memory: WebAssembly.Memory;
  pi_count_range(first: number, samples: number, seed: number): number;
  pi_count_range_reference(first: number, samples: number, seed: number): number;
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
