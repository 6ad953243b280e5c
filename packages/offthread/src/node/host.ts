/**
 * Node's side of the host interface: the native addon (a prebuilt per-platform package,
 * or a local build), offthread.wasm read from the package, worker_threads for the
 * worker engine, node:crypto for the JS tier's MD5.
 */
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { fromNative, makeError } from '../errors.js';
import type { BackendName, Host, NativeBinding, SpawnOptions, WorkerPort } from '../host.js';
import { wasmImports } from '../kernels/wasm-client.js';
import { ffiPiCount } from './ffi.js';

/** Package root (this file is dist/node/host.js). */
const root = join(__dirname, '..', '..');
// The browser bundle's copy: one offthread.wasm in the package for both hosts.
const wasmPath = join(root, 'dist', 'browser', 'offthread.wasm');
const workerPath = join(__dirname, 'worker.js');
const schemaCompilerPath = join(root, 'wasm', 'offthread-schema.wasm');
let schemaCompiler: WebAssembly.Module | undefined;

/**
 * The C library in use on Linux ('gnu' or 'musl'); null elsewhere. musl's `ldd` is a
 * script that names it, glibc's does not (napi-rs's loaders read it too): 0.1–0.5 ms,
 * where `process.report.getReport()` took 2–5 ms of every process's start (Node 24 · 20).
 * Without an `ldd` (slim images), Node's report says which.
 */
export function libc(): 'gnu' | 'musl' | null {
  if (process.platform !== 'linux') return null;
  try {
    return readFileSync('/usr/bin/ldd', 'latin1').includes('musl') ? 'musl' : 'gnu';
  } catch {
    const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
    return report?.header?.glibcVersionRuntime ? 'gnu' : 'musl';
  }
}

/** napi-rs platform suffix, e.g. `linux-x64-gnu`. */
export function platformSuffix(): string {
  const c = libc();
  return `${process.platform}-${process.arch}${c ? `-${c}` : ''}`;
}

function forcedBackend(): BackendName | null {
  const value = process.env.OFFTHREAD_BACKEND;
  if (value === undefined || value === '') return null;
  if (value === 'native' || value === 'wasm' || value === 'js') return value;
  throw makeError('ERR_INVALID_ARG', `OFFTHREAD_BACKEND must be native, wasm or js, got ${JSON.stringify(value)}`);
}

const forced = forcedBackend();

let native: NativeBinding | null | undefined;
let testBuild = false;

/**
 * Load the repo's test build of the addon (native/test/: the bench and test hooks
 * compiled in) instead of the product one, when it exists. For `offthread/internal`;
 * no effect once the addon is loaded.
 */
export function preferTestBuild(): void {
  testBuild = true;
}
let nativePath: string | null = null;
let nativeError: string | null = null;

/** A local build (packages/offthread/native, the repo's) first, then the prebuilt package. */
function loadNative(): NativeBinding | null {
  if (forced && forced !== 'native') {
    nativeError = `disabled by OFFTHREAD_BACKEND=${forced}`;
    return null;
  }
  const suffix = platformSuffix();
  const file = `offthread.${suffix}.node`;
  const test = join(root, 'native', 'test', file);
  const local = testBuild && existsSync(test) ? test : join(root, 'native', file);
  const pkg = `offthread-${suffix}`;
  try {
    if (existsSync(local)) {
      nativePath = local;
      return coded(require(local) as NativeBinding);
    }
    nativePath = require.resolve(`${pkg}/offthread.${suffix}.node`);
    return coded(require(nativePath) as NativeBinding);
  } catch (err) {
    const reason = (err as Error).message.split('\n')[0];
    nativePath = null;
    nativeError =
      `no native addon for ${suffix} (package ${pkg}; libc: ${libc() ?? 'n/a'}): ${reason}. ` +
      `offthread runs on WebAssembly instead. To get the native engine, install with optional dependencies ` +
      `(npm install without --omit=optional / --no-optional), or build from source.`;
    return null;
  }
}

/**
 * The binding with each export's throws and rejections re-typed by `fromNative`: the addon
 * throws plain Errors carrying a registry code (napi-rs cannot make our classes), and this
 * is the one place every native call passes, so no caller can forget it. Instances the
 * classes make (NativePool, NativeFilter) are left bare: their failures come back through
 * the pool's completions, which build offthread errors already. Functions get a plain
 * wrapper, not a Proxy: sync kernels are called per item, and a Proxy's apply costs more.
 */
function coded(binding: NativeBinding): NativeBinding {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(binding)) {
    if (typeof value !== 'function') out[name] = value;
    else if (/^[A-Z]/.test(name)) out[name] = new Proxy(value as new (...args: unknown[]) => object, CONSTRUCT);
    else out[name] = codedFunction(value as (...args: unknown[]) => unknown);
  }
  return out as NativeBinding;
}

const retype = (err: unknown): never => {
  throw fromNative(err);
};

function codedFunction(fn: (...args: unknown[]) => unknown): (...args: unknown[]) => unknown {
  return (...args) => {
    let result: unknown;
    try {
      result = fn(...args);
    } catch (err) {
      retype(err);
    }
    return result instanceof Promise ? result.catch(retype) : result;
  };
}

/** A class of the addon: `new` re-types what its constructor throws (a bad filter spec). */
const CONSTRUCT: ProxyHandler<new (...args: unknown[]) => object> = {
  construct(target, args, newTarget) {
    try {
      return Reflect.construct(target, args, newTarget);
    } catch (err) {
      return retype(err);
    }
  },
};

let compiled: WebAssembly.Module | null | undefined;
let instance: WebAssembly.Instance | null = null;
let wasmError: string | null = null;

function loadWasm(): WebAssembly.Module | null {
  if (forced === 'js') {
    wasmError = 'disabled by OFFTHREAD_BACKEND=js';
    return null;
  }
  try {
    return new WebAssembly.Module(readFileSync(wasmPath));
  } catch (err) {
    wasmError = `cannot load ${wasmPath}: ${(err as Error).message}`;
    return null;
  }
}

/** The package's worker entries besides the kernel worker. */
const scripts: Record<string, string> = { tasks: join(__dirname, 'task-worker.js') };

/** worker_threads behind the host's WorkerPort. */
/** How long after the last request the heap is trimmed: stopped native threads exit within it. */
const TRIM_AFTER_MS = 1_000;
let trimTimer: ReturnType<typeof setTimeout> | undefined;

/**
 * Stopped threads' memory goes back to the allocator's arenas, which keep it (1,000
 * dropped pools: 250–370 MiB left after their threads were gone): once the threads have
 * exited, ask for it back. One trim for a burst: each request moves it later. Workers ask
 * on their own exit, not only when told to stop: terminated by a collected pool's
 * finalizer, 1,000 wasm pools' workers were still tearing down when a trim timed from the
 * stop ran, and 320 MiB stayed until a trim by hand.
 */
function releaseMemorySoon(): void {
  if (trimTimer !== undefined) clearTimeout(trimTimer);
  trimTimer = setTimeout(() => {
    trimTimer = undefined;
    nodeHost.native()?.trimMemory();
  }, TRIM_AFTER_MS);
  trimTimer.unref();
}

function spawnWorker(name: string, options?: SpawnOptions): WorkerPort {
  const path = options?.script === undefined ? workerPath : scripts[options.script];
  if (!path) throw makeError('ERR_BACKEND_UNAVAILABLE', `no worker script named ${options?.script}`);
  const worker = new Worker(path, { name, resourceLimits: options?.resourceLimits ?? {} });
  worker.once('exit', releaseMemorySoon);
  let terminated = false;
  return {
    post: (message, transfer) => worker.postMessage(message, transfer as never),
    onMessage: (listener) => worker.on('message', listener),
    onError: (listener) => {
      worker.on('error', (err) => listener(err.message));
      worker.on('exit', (code) => {
        if (!terminated) listener(`the worker exited with code ${code}`);
      });
    },
    terminate: () => {
      terminated = true;
      void worker.terminate();
    },
    ref: (on) => (on ? worker.ref() : worker.unref()),
  };
}

export const nodeHost: Host = {
  name: 'node',
  forced,
  loading: () => null,
  native() {
    if (native === undefined) native = loadNative();
    return native;
  },
  nativeError() {
    this.native();
    return nativeError;
  },
  get nativePath() {
    nodeHost.native();
    return nativePath;
  },
  wasmModule() {
    if (compiled === undefined) compiled = loadWasm();
    return compiled;
  },
  wasmInstance() {
    const m = this.wasmModule();
    if (m && !instance) instance = new WebAssembly.Instance(m, wasmImports());
    return instance;
  },
  wasmError() {
    this.wasmModule();
    return wasmError;
  },
  wasmLocation: () => wasmPath,
  schemaCompiler() {
    if (schemaCompiler === undefined) {
      let bytes: Buffer<ArrayBuffer>;
      try {
        bytes = readFileSync(schemaCompilerPath) as Buffer<ArrayBuffer>;
      } catch (err) {
        throw makeError('ERR_BACKEND_UNAVAILABLE', `schema compiler not found at ${schemaCompilerPath}`, err);
      }
      schemaCompiler = new WebAssembly.Module(bytes);
    }
    return schemaCompiler;
  },
  spawnWorker,
  releaseMemorySoon,
  defaultThreads: () => Math.min(availableParallelism(), 1024),
  // node:crypto is ~7 ms of the import (15%) and only the JS tier's MD5 needs it.
  md5Hex: (data) => process.getBuiltinModule('node:crypto').createHash('md5').update(data).digest('hex'),
  warn: (message, code) => process.emitWarning(message, { code }),
  binary: (bytes) => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)),
  sharedMemory: () => true,
  ffiPiCount: () => ffiPiCount(nodeHost.native() ? nativePath : null),
};
