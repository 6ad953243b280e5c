/**
 * Calls of the Rust kernel registry (`offthread_kernels::KERNELS`) by name: on the
 * calling thread (the addon, else this thread's offthread.wasm) or on a pool. A
 * facade over a registry kernel validates its arguments in TS and calls one of these;
 * the engines, the worker loop and both bindings need nothing per kernel.
 */
import { fromNative, makeError } from './errors.js';
import { host } from './host.js';
import { nativeKernelIndex, type RegistryArgs } from './kernels.js';
import { type CallOptions, runOn } from './pool.js';
import type { RegistryValue } from './wasm-client.js';
import { wasmKernels } from './wasm-sync.js';

export type { RegistryArgs } from './kernels.js';
export type { RegistryValue } from './wasm-client.js';

/** Runs a registry kernel on the calling thread. */
export function callSync(args: RegistryArgs): RegistryValue {
  const { kernel, input, a = 0, b = 0, c = 0 } = args;
  const native = host().native();
  if (native) {
    try {
      return native.kernelCallSync(nativeKernelIndex(kernel), input, a, b, c);
    } catch (err) {
      throw fromNative(err);
    }
  }
  const w = wasmKernels();
  if (!w) {
    throw makeError(
      'ERR_BACKEND_UNAVAILABLE',
      `${kernel} needs the native addon or offthread.wasm (the pure-JS tier covers π and MD5 only): ${host().wasmError()}`,
    );
  }
  return w.call(kernel, input, a, b, c);
}

/** Runs a registry kernel on the call's pool (`{ pool, signal, timeout }`, checked by the caller). */
export function callAsync(call: CallOptions, args: RegistryArgs): Promise<RegistryValue> {
  return runOn(call, 'registry', args);
}
