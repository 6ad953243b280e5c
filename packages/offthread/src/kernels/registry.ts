/**
 * Calls of the Rust kernel registry (`offthread_kernels::KERNELS`) by name: on the
 * calling thread (the addon, else this thread's offthread.wasm, else the pure-JS tier
 * where it has the kernel) or on a pool. A facade over a registry kernel validates its
 * arguments in TS and calls one of these; the engines, the worker loop and both
 * bindings need nothing per kernel.
 */
// The kernels' engines register into the pool here: every facade's calls come through this file.
import './engines.js';
import { fromNative, makeError } from '../errors.js';
import { host } from '../host.js';
import { type CallOptions, runOn } from '../pool/pool.js';
import { jsKernel } from './js/registry.js';
import { NO_INPUT, nativeKernelIndex, type RegistryArgs } from './kernels.js';
import type { RegistryValue } from './wasm-client.js';
import { wasmKernels } from './wasm-sync.js';

export type { RegistryArgs } from './kernels.js';
export type { RegistryValue } from './wasm-client.js';

/** Where a sync call runs: the addon, this thread's offthread.wasm, or the pure-JS tier. */
export type SyncTier = 'native' | 'wasm' | 'js';

const never = () => false;

/**
 * Runs a registry kernel on the calling thread: on `tier` if given, else the first of
 * native, wasm and js that is there (and, for js, has the kernel).
 */
export function callSync(args: RegistryArgs, tier?: SyncTier): RegistryValue {
  const { kernel, input, a = 0, b = 0, c = 0 } = args;
  const native = tier === undefined || tier === 'native' ? host().native() : null;
  if (native) {
    try {
      return native.kernelCallSync(nativeKernelIndex(kernel), input ?? NO_INPUT, a, b, c);
    } catch (err) {
      throw fromNative(err);
    }
  }
  if (tier === 'native') throw makeError('ERR_BACKEND_UNAVAILABLE', `${kernel} needs the native addon here`);
  const w = tier === 'js' ? null : wasmKernels();
  if (w) return w.call(kernel, input, a, b, c);
  if (tier === 'wasm') {
    throw makeError('ERR_BACKEND_UNAVAILABLE', `${kernel} needs offthread.wasm here: ${host().wasmError()}`);
  }
  const out = jsKernel(kernel)(args, { md5Hex: host().md5Hex, stop: never });
  return out as RegistryValue; // never null: nothing stops a sync call
}

/** Runs a registry kernel on the call's pool (`{ pool, signal, timeout }`, checked by the caller). */
export function callAsync(call: CallOptions, args: RegistryArgs): Promise<RegistryValue> {
  return runOn(call, 'registry', args);
}
