/**
 * What differs between Node and browsers, behind one small interface. Everything else
 * in src/ is host-neutral and compiled into both builds: the Node entry (index.ts)
 * installs node/host.ts, the browser entry (browser.ts) installs web/host.ts.
 */
import type * as Binding from '../native/binding';

export type NativeBinding = typeof Binding;

// The DOM's names for WebAssembly and transferables, spelled so that the declarations
// need no lib: a Node app checks them without "DOM" in `lib` (and @types/node has no
// WebAssembly). Where the app has the globals these are the very same types; where it
// has not, a structural stand-in. Files whose declarations ship import these instead.
type Global = typeof globalThis;
type Wasm = Global extends { WebAssembly: infer W } ? W : object;
type Proto<T, K extends string> = T extends Record<K, { prototype: infer P }> ? P : never;
export declare namespace WebAssembly {
  type Module = [Proto<Wasm, 'Module'>] extends [never] ? object : Proto<Wasm, 'Module'>;
  type Instance = [Proto<Wasm, 'Instance'>] extends [never] ? { readonly exports: object } : Proto<Wasm, 'Instance'>;
  type Memory = [Proto<Wasm, 'Memory'>] extends [never] ? { readonly buffer: ArrayBuffer } : Proto<Wasm, 'Memory'>;
  type Imports = Wasm extends { Instance: new (m: never, imports: infer I) => unknown } ? NonNullable<I> : object;
}
type Listed<O> = [O] extends [never] // (a lib without that global: nothing, not `unknown`)
  ? never
  : NonNullable<O> extends { transfer?: readonly (infer T)[] | undefined }
    ? T
    : never;
type CloneOptions = Global extends { structuredClone(value: never, options?: infer O): unknown } ? O : never;
type PostOptions = Global extends { postMessage(message: never, options?: infer O): void } ? O : never;
/** What a postMessage moves instead of copying: what the host's lib lists (Node's, the DOM's), or ArrayBuffers. */
export type Transferable = ArrayBuffer | Listed<CloneOptions> | Listed<PostOptions>;
export type BackendName = 'native' | 'wasm' | 'js';

/** One side of a worker (worker_threads in Node, a module Web Worker in browsers). */
export interface WorkerPort {
  post(message: unknown, transfer?: Transferable[]): void;
  onMessage(listener: (message: unknown) => void): void;
  /** An uncaught error in the worker, or a worker that could not start. */
  onError(listener: (message: string) => void): void;
  terminate(): void;
  /** Whether a live worker keeps the process running (Node); a no-op in browsers. */
  ref(on: boolean): void;
}

export interface SpawnOptions {
  script?: string | undefined;
  /** Node's worker resource limits (MB); browsers have none. */
  resourceLimits?:
    | {
        maxOldGenerationSizeMb?: number;
        maxYoungGenerationSizeMb?: number;
        codeRangeSizeMb?: number;
        stackSizeMb?: number;
      }
    | undefined;
}

export interface Host {
  readonly name: 'node' | 'browser';
  /** Backend forced by the user (OFFTHREAD_BACKEND in Node), or null. */
  readonly forced: BackendName | null;
  /** A load in progress that decides the default engine (browsers before `ready`), or null. */
  loading(): Promise<unknown> | null;
  /** The native addon (loaded on first use), or null; `nativeError()` says why. */
  native(): NativeBinding | null;
  nativeError(): string | null;
  readonly nativePath: string | null;
  /** offthread.wasm compiled (Node: on first use; browsers: once `init()` settled). */
  wasmModule(): WebAssembly.Module | null;
  /** This thread's instance of it (browsers instantiate asynchronously in `init()`). */
  wasmInstance(): WebAssembly.Instance | null;
  wasmError(): string | null;
  /** Where offthread.wasm is loaded from. */
  wasmLocation(): string;
  /** The schema compiler (offthread-schema.wasm), compiled; throws a typed error when unavailable. */
  schemaCompiler(): WebAssembly.Module;
  /**
   * Starts a worker running the pool's worker loop (pool/worker-loop.ts), or with `options.script` another worker
   * entry of the package ('tasks': a job-pool worker running task modules).
   */
  spawnWorker(name: string, options?: SpawnOptions): WorkerPort;
  /**
   * Threads were told to stop: soon after they are gone, ask the allocator to give back
   * what they freed (a no-op where there is nothing to ask). A worker's own exit asks too.
   */
  releaseMemorySoon(): void;
  defaultThreads(): number;
  /** MD5 without the addon or wasm (node:crypto); null where the host has none. */
  readonly md5Hex: ((data: string | Uint8Array) => string) | null;
  warn(message: string, code: string): void;
  /** Bytes as the host's users expect them: a Buffer (no copy) in Node, as is in browsers. */
  binary(bytes: Uint8Array): Uint8Array;
  /** The `ffi` π variant (koffi calling the addon's C ABI), where the host has it. */
  readonly ffiPiCount?: (() => (samples: number, seed: number, fast: number) => number) | undefined;
  /** Can workers share memory with this thread (SharedArrayBuffer + Atomics)? */
  sharedMemory(): boolean;
}

let current: Host | undefined;

export function installHost(host: Host): void {
  current = host;
}

export function host(): Host {
  if (!current) throw new Error('offthread: no host installed (import the package entry, not its internals)');
  return current;
}

/** Which backend sync calls and new pools use: the first of native → wasm → js that loads. */
export function activeBackend(): BackendName {
  const h = host();
  if (h.native()) return 'native';
  if (h.wasmModule()) return 'wasm';
  return 'js';
}

/** What `backendInfo()` / `offthread doctor` report. */
export interface BackendInfo {
  /** The backend new pools and `auto` calls use: native → wasm → js, the first that loads. */
  active: BackendName;
  runtime: 'node' | 'browser';
  /** Set when OFFTHREAD_BACKEND (Node) disabled the tiers above it. */
  forced: BackendName | null;
  native: { loaded: boolean; path: string | null; error: string | null };
  wasm: { loaded: boolean; path: string; error: string | null };
  /** Whether workers share memory with this thread (cancel flags, zero-copy inputs). */
  sharedMemory: boolean;
}

export function backendInfo(): BackendInfo {
  const h = host();
  const native = h.native();
  const wasm = h.wasmModule();
  return {
    active: activeBackend(),
    runtime: h.name,
    forced: h.forced,
    native: { loaded: native !== null, path: h.nativePath, error: h.nativeError() },
    wasm: { loaded: wasm !== null, path: h.wasmLocation(), error: h.wasmError() },
    sharedMemory: h.sharedMemory(),
  };
}

let warned = false;

/** One warning the first time a fallback tier is used (never when native loads). */
export function warnFallbackOnce(): void {
  const h = host();
  if (warned || h.native()) return;
  warned = true;
  const using = h.wasmModule() ? 'WebAssembly on worker threads' : 'pure JS on worker threads (π and MD5 only)';
  h.warn(`offthread: native addon unavailable (${h.nativeError()}); using ${using}.`, 'OFFTHREAD_FALLBACK');
}
