// Types of offthread/browser (hand-written: this folder is plain ESM, outside the tsc build).

export type ErrorCode =
  | 'ERR_INVALID_ARG'
  | 'ERR_INVALID_SAMPLES'
  | 'ERR_INVALID_SEED'
  | 'ERR_INVALID_VARIANT'
  | 'ERR_INVALID_TEXT'
  | 'ERR_TEXT_TOO_LONG'
  | 'ERR_INVALID_ROUNDS'
  | 'ERR_INVALID_QR_OPTIONS'
  | 'ERR_INVALID_POOL_OPTIONS'
  | 'ERR_BACKEND_UNAVAILABLE'
  | 'ERR_ABORTED'
  | 'ERR_TIMEOUT'
  | 'ERR_QUEUE_FULL'
  | 'ERR_POOL_CLOSED'
  | 'ERR_KERNEL_PANIC';

export declare const errorCodes: readonly ErrorCode[];

export declare class OffthreadError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown });
}
export declare class OffthreadTypeError extends TypeError {
  readonly code: ErrorCode;
}
export declare class OffthreadRangeError extends RangeError {
  readonly code: ErrorCode;
}
/** Rejection of an aborted call: `name` 'AbortError', `code` ERR_ABORTED, `cause` the signal's reason. */
export declare class AbortError extends OffthreadError {}

export interface PoolOptions {
  /** Workers; default navigator.hardwareConcurrency. Integer 1…1024. */
  threads?: number;
  /** Most tasks waiting for a worker; past it calls reject with ERR_QUEUE_FULL. Default unbounded. */
  maxQueue?: number;
  /**
   * 'shared': SharedArrayBuffer + Atomics (needs a cross-origin isolated page);
   * 'message': postMessage + transferables; 'auto' (default): shared when available.
   */
  transport?: 'auto' | 'shared' | 'message';
  /** offthread.wasm as a URL or compiled module; default the package's copy (../wasm/offthread.wasm). */
  wasm?: string | URL | WebAssembly.Module | Promise<WebAssembly.Module>;
}

export interface PoolStats {
  threads: number;
  transport: 'shared' | 'message';
  /** Workers started and ready. */
  workers: number;
  queued: number;
  running: number;
  pending: number;
  completed: number;
  failed: number;
  cancelled: number;
  /** Workers that crashed (each was replaced). */
  crashed: number;
  /** Workers replaced (after a crash, or to stop a running task without shared memory). */
  replaced: number;
}

/** A pool of Web Workers, each with its own instance of offthread.wasm. Workers start on first use. */
export declare class Pool {
  constructor(options?: PoolOptions);
  readonly threads: number;
  readonly transport: 'shared' | 'message';
  stats(): PoolStats;
  /** Finishes accepted calls, refuses new ones (ERR_POOL_CLOSED), then ends the workers. */
  close(): Promise<void>;
  /** Rejects every queued and running call with ERR_POOL_CLOSED and ends the workers. */
  destroy(): Promise<void>;
  /** Test hook: the next task sent to a worker crashes it; its call rejects with ERR_KERNEL_PANIC. */
  crashNextTask(): void;
}

export interface CallOptions {
  /** Run on this pool instead of the default one. */
  pool?: Pool;
  /** Abort: queued work is dropped at once, running work stops at its next check (or its worker is replaced). */
  signal?: AbortSignal;
  /** Milliseconds until the call rejects with ERR_TIMEOUT (and its work is cancelled). */
  timeout?: number;
}

export type PiSyncVariant = 'js' | 'jsBitwise' | 'wasm';
export type PiVariant = 'auto' | PiSyncVariant | 'wasmWorkers';

export interface PiOptions {
  /** Any safe integer (number or bigint); default 1. */
  seed?: number | bigint;
  /** Default 'auto'. */
  variant?: PiVariant;
}

export interface PiAsyncOptions extends PiOptions, CallOptions {
  /** `wasmWorkers` only: number of jump-ahead chunks, 1…65536 (default ≈ 4 per worker). */
  chunks?: number;
}

export interface PiResult {
  /** 4·inside/samples; NaN when samples is 0. */
  estimate: number;
  /** Samples with x² + y² ≤ 1: identical to Node's for every variant. */
  inside: number;
  samples: number;
  seed: number;
  variant: Exclude<PiVariant, 'auto'>;
}

export declare const pi: {
  /** On a worker (`js`, `jsBitwise`, `wasm`) or on every worker (`wasmWorkers`); `auto` runs ≤ 2^16 samples inline. */
  estimate(samples: number | bigint, options?: PiAsyncOptions): Promise<PiResult>;
  /** On the calling thread; `auto` = `wasm` (or `jsBitwise` if the wasm build did not load). */
  estimateSync(samples: number | bigint, options?: PiOptions & { variant?: 'auto' | PiSyncVariant }): PiResult;
  readonly variants: readonly PiVariant[];
  readonly syncVariants: readonly PiSyncVariant[];
  readonly asyncVariants: readonly ['wasmWorkers'];
};

export interface IterateOptions {
  /** Continue from d_k (a 32-character digest) instead of d₀ = "". */
  start?: string;
}

export declare const md5: {
  readonly MAX_ROUNDS: number;
  /** MD5 of a string (UTF-8) or bytes, lowercase hex, on the calling thread. */
  hex(data: string | Uint8Array): string;
  hexAsync(data: string | Uint8Array, options?: CallOptions): Promise<string>;
  /** d_N of dᵢ = hex(MD5(text ‖ dᵢ₋₁)), d₀ = "", on the calling thread. */
  iterateSync(text: string, rounds: number, options?: IterateOptions): string;
  /** d_N on a worker. */
  iterate(text: string, rounds: number, options?: IterateOptions & CallOptions): Promise<string>;
};

export interface QrOptions {
  /** Largest image side in pixels, 1…4096 (default 128). */
  size?: number;
  /** Error-correction level (default 'M'). */
  ecc?: 'L' | 'M' | 'Q' | 'H';
  /** Quiet zone in modules, 0…64 (default 4). */
  margin?: number;
}

export declare const qr: {
  toDataURL(text: string, options?: QrOptions & CallOptions): Promise<string>;
  toPNG(text: string, options?: QrOptions & CallOptions): Promise<Uint8Array>;
  toSVG(text: string, options?: QrOptions & CallOptions): Promise<string>;
  toDataURLSync(text: string, options?: QrOptions): string;
  toPNGSync(text: string, options?: QrOptions): Uint8Array;
  toSVGSync(text: string, options?: QrOptions): string;
};

export interface BackendInfo {
  runtime: 'browser';
  /** 'wasm', or 'js' when offthread.wasm did not load (π falls back to jsBitwise; MD5/QR throw). */
  backend: 'wasm' | 'js';
  wasmUrl: string | null;
  wasmError: string | null;
  crossOriginIsolated: boolean;
  transport: 'shared' | 'message';
  threads: number;
}

export declare function backendInfo(): BackendInfo;
/** The pool async calls use unless given `{ pool }`. */
export declare function defaultPool(): Pool;
/** Loads offthread.wasm from elsewhere (the entry loads ../wasm/offthread.wasm by itself on import). */
export declare function init(options?: { wasm?: string | URL | WebAssembly.Module }): Promise<BackendInfo>;
/** The [first, count] jump-ahead chunks `wasmWorkers` uses for `samples` on `threads` workers. */
export declare function piChunks(samples: number, threads: number, chunks?: number): Array<[number, number]>;

declare const _default: {
  pi: typeof pi;
  md5: typeof md5;
  qr: typeof qr;
  Pool: typeof Pool;
  defaultPool: typeof defaultPool;
  backendInfo: typeof backendInfo;
  init: typeof init;
};
export default _default;
