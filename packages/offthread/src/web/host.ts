/**
 * The browser's side of the host interface: offthread.wasm fetched and compiled
 * asynchronously (`init()`), module Web Workers for the worker engine, no native addon.
 * Both files are located with `new URL('./…', import.meta.url)` — the form Vite,
 * webpack and Rollup rewrite when they bundle — or given to `init()` explicitly.
 */
import { makeError } from '../errors.js';
import { type BackendInfo, backendInfo, type Host, type SpawnOptions, type WorkerPort } from '../host.js';
import { wasmImports } from '../kernels/wasm-client.js';

export interface InitOptions {
  /** Where offthread.wasm is (default: beside this module), or the compiled module. */
  wasmUrl?: string | URL | undefined;
  wasm?: WebAssembly.Module | undefined;
  /** Where offthread-worker.js is (default: beside this module). */
  workerUrl?: string | URL | undefined;
  /** Where offthread-task-worker.js is, the worker that runs `tasks()` modules (default: beside this module). */
  taskWorkerUrl?: string | URL | undefined;
  /**
   * The schema compiler for `schema.compile` (`offthread/schema-compiler.wasm`): a URL or
   * the compiled module. Not loaded unless asked for (263 kB).
   */
  schemaCompiler?: string | URL | WebAssembly.Module | undefined;
}

let wasmUrl: string | null = null;
let workerUrl: string | URL | null = null;
let taskWorkerUrl: string | URL | null = null;
let compiled: WebAssembly.Module | null = null;
let instance: WebAssembly.Instance | null = null;
let wasmError: string | null = 'offthread.wasm is still loading (await `ready` or `init()` first)';
let schemaCompiler: WebAssembly.Module | null = null;
let pending: Promise<unknown> | null = null;

function defaultWasmUrl(): string {
  return new URL('./offthread.wasm', import.meta.url).href;
}

/** Compiles with streaming when the server sends application/wasm, from bytes otherwise. */
async function compile(url: string): Promise<WebAssembly.Module> {
  let res: Response;
  try {
    res = await fetch(url);
  } catch (err) {
    throw new Error(`cannot fetch ${url}: ${(err as Error).message}`);
  }
  if (!res.ok) {
    throw new Error(
      `cannot fetch ${url}: HTTP ${res.status}. Serve offthread.wasm beside the bundle, or pass init({ wasmUrl })`,
    );
  }
  const type = res.headers.get('content-type') ?? '';
  if (type.startsWith('application/wasm')) return WebAssembly.compileStreaming(res);
  return WebAssembly.compile(await res.arrayBuffer());
}

/**
 * Loads offthread.wasm (and remembers where the worker script is) for sync calls and
 * for pools made afterwards. The entry calls it once with the defaults on import
 * (`ready`); call it yourself to load the files from elsewhere.
 */
export function init(options: InitOptions = {}): Promise<BackendInfo> {
  const loading = load(options);
  pending = loading;
  return loading.finally(() => {
    if (pending === loading) pending = null;
  });
}

async function load(options: InitOptions): Promise<BackendInfo> {
  if (options.workerUrl !== undefined) workerUrl = options.workerUrl;
  if (options.taskWorkerUrl !== undefined) taskWorkerUrl = options.taskWorkerUrl;
  const sc = options.schemaCompiler;
  if (sc !== undefined) schemaCompiler = sc instanceof WebAssembly.Module ? sc : await compile(String(sc));
  wasmUrl = options.wasm ? null : String(options.wasmUrl ?? defaultWasmUrl());
  try {
    compiled = options.wasm ?? (await compile(wasmUrl as string));
    instance = await WebAssembly.instantiate(compiled, wasmImports());
    wasmError = null;
  } catch (err) {
    compiled = null;
    instance = null;
    wasmError = String((err as Error)?.message ?? err);
    console.warn(`offthread: ${wasmError}; π runs in JS, MD5 and QR are unavailable`);
  }
  return backendInfo();
}

/** A module Web Worker of the package: the kernel worker, or with `script` another entry ('tasks'). */
function startWorker(name: string, script: string | undefined): Worker {
  // The literal `new Worker(new URL(…, import.meta.url))` is what bundlers look for.
  if (script === 'tasks') {
    return taskWorkerUrl
      ? new Worker(taskWorkerUrl, { type: 'module', name })
      : new Worker(new URL('./offthread-task-worker.js', import.meta.url), { type: 'module', name });
  }
  if (script !== undefined) throw makeError('ERR_BACKEND_UNAVAILABLE', `no worker script named ${script}`);
  return workerUrl
    ? new Worker(workerUrl, { type: 'module', name })
    : new Worker(new URL('./offthread-worker.js', import.meta.url), { type: 'module', name });
}

function spawnWorker(name: string, options?: SpawnOptions): WorkerPort {
  const worker = startWorker(name, options?.script);
  return {
    post: (message, transfer) => worker.postMessage(message, transfer ?? []),
    onMessage: (listener) => {
      worker.onmessage = (e) => listener(e.data);
    },
    onError: (listener) => {
      worker.onerror = (e) => {
        e.preventDefault();
        listener(e.message || 'the worker failed to load (a 404, or a wrong MIME type for .js)');
      };
      worker.onmessageerror = () => listener('a message from the worker could not be deserialised');
    },
    terminate: () => worker.terminate(),
    ref: () => {},
  };
}

export const webHost: Host = {
  name: 'browser',
  forced: null,
  loading: () => pending,
  native: () => null,
  nativeError: () => 'browsers have no native addon',
  nativePath: null,
  wasmModule: () => compiled,
  wasmInstance: () => instance,
  wasmError: () => wasmError,
  wasmLocation: () => wasmUrl ?? (compiled ? '(a module passed to init)' : defaultWasmUrl()),
  schemaCompiler: () => {
    if (schemaCompiler) return schemaCompiler;
    throw makeError(
      'ERR_BACKEND_UNAVAILABLE',
      "the schema compiler is not loaded: await init({ schemaCompiler: new URL('offthread/schema-compiler.wasm', …) }) first",
    );
  },
  spawnWorker,
  releaseMemorySoon: () => {}, // a browser's allocator is its own business
  defaultThreads: () => {
    const n = globalThis.navigator?.hardwareConcurrency;
    return Number.isInteger(n) && n > 0 ? Math.min(n, 1024) : 1;
  },
  md5Hex: null,
  warn: () => {}, // init() already said why, once
  binary: (bytes) => bytes,
  sharedMemory: () => globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function',
};
