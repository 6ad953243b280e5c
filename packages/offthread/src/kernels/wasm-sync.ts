/** The calling thread's own instance of offthread.wasm (sync calls without the addon). */
import { host } from '../host.js';
import { WasmKernels } from './wasm-client.js';

let kernels: WasmKernels | null = null;

/** The client over the host's current instance (re-made when `init()` loads another), or null. */
export function wasmKernels(): WasmKernels | null {
  const instance = host().wasmInstance();
  if (!instance) return null;
  if (kernels?.instance !== instance) kernels = new WasmKernels(instance);
  return kernels;
}
