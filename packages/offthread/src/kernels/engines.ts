/**
 * The kernels feature's engines, registered into the pool (pool/pool.ts) best first:
 * 'native' (the addon's Rust pool), 'wasm' (workers running offthread.wasm) and 'js'
 * (the same workers running the pure-JS tier). A pool made without `engine` takes the
 * first that is available here.
 */

import { host, type NativeBinding } from '../host.js';
import { registerEngine } from '../pool/pool.js';
import { WorkerEngine } from '../pool/workers.js';
import { NativeEngine } from './engine-native.js';

const unbounded = (maxQueue: number) => (maxQueue === 0 ? Number.POSITIVE_INFINITY : maxQueue);

registerEngine('native', {
  unavailable: () => (host().native() ? null : String(host().nativeError())),
  make: (threads, maxQueue, nice) => new NativeEngine(host().native() as NativeBinding, threads, maxQueue, nice),
});
registerEngine('wasm', {
  unavailable: () => (host().wasmModule() ? null : String(host().wasmError())),
  make: (threads, maxQueue) => new WorkerEngine(host().wasmModule(), threads, unbounded(maxQueue)),
});
registerEngine('js', {
  unavailable: () => null,
  make: (threads, maxQueue) => new WorkerEngine(null, threads, unbounded(maxQueue)),
});
