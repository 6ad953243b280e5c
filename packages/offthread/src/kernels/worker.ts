/**
 * The kernels' part of a pool worker (pool/worker-loop.ts): at init it instantiates
 * offthread.wasm (or, for the pure-JS tier, nothing), and it runs each 'task' job by
 * the `worker` form of its kernel in kernels.ts.
 */
import type { WorkerJobs } from '../pool/worker-loop.js';
import { type KernelName, kernels, type WorkerEnv } from './kernels.js';
import { WasmKernels } from './wasm-client.js';

/** `md5Hex`: the host's MD5 for the JS tier (null in browsers). */
export function kernelJobs(md5Hex: WorkerEnv['md5Hex']): WorkerJobs {
  const env: WorkerEnv = { wasm: null, md5Hex, stop: () => false };
  return {
    init(msg, stop) {
      env.stop = stop;
      env.wasm = msg.module ? WasmKernels.fromModule(msg.module, stop) : null;
    },
    task(kernel, args) {
      const k = kernels[kernel as KernelName] as { worker(env: WorkerEnv, args: unknown): unknown };
      return k.worker(env, args);
    },
  };
}
