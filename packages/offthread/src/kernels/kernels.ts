/**
 * What the pools run: a kernel of the Rust registry by name (`registry`: the native
 * pool's `submitKernel`, a worker's offthread.wasm `kernel_call` or the pure-JS tier),
 * plus the pool's own jobs (echo, test hooks, stream filters). The engines and the
 * worker loop are generic over this table; the facades (pi.ts, md5.ts, qr.ts,
 * stats.ts, sha256.ts) validate arguments and name the registry kernel.
 */
import type { NativeFilter, NativePool } from '../../native/binding';
import { makeError } from '../errors.js';
import { host } from '../host.js';
import { type JsEnv, jsKernel } from './js/registry.js';
import type { RegistryValue, WasmKernels } from './wasm-client.js';
import { WasmFilter } from './wasm-filter.js';

/** What a worker computes with: its own WASM instance, or the JS tier (host MD5, stop check). */
export interface WorkerEnv extends JsEnv {
  wasm: WasmKernels | null;
  /** The stream filters this worker holds, by key (`workerFilter`); made on first use. */
  filters?: Map<number, WasmFilter>;
}

interface Kernel<Args, Result> {
  /** Starts job `id` on the native pool (its completion arrives through drain/take). */
  native(pool: NativePool, id: number, args: Args, cancellable: boolean): void;
  /** Computes in a worker; null means it stopped because `env.stop()` said so. */
  worker(env: WorkerEnv, args: Args): Result | null;
  /**
   * A native completion (number, string, Buffer) as JS sees it, given the job's args;
   * default: as is. Built in the drain, so the call's promise resolves to it directly
   * (a `.then` on the pool's promise would cost a promise and a microtask per call).
   */
  fromNative?(raw: unknown, args: Args): Result;
  /** True when the Rust pool shares this job out over all its threads (the run budget weighs it so). */
  nativeShared?(args: Args): boolean;
}

/**
 * Samples past which a π range is shared by every thread of the Rust pool (a rayon
 * par_iter: MIN_SHARED_CHUNK in crates/offthread-kernels/src/pi/call.rs).
 */
const SHARED_PI = 1 << 16;

export interface PiArgs {
  /** First sample of the range (jump-ahead: any range runs on any pool, native included). */
  first: number;
  count: number;
  seed: number;
  /** Worker pools only: run this sync variant's kernel (default: wasm, else jsBitwise). */
  impl?: 'js' | 'jsBitwise' | 'wasm' | undefined;
  /** 'plain': the definition's kernel (`pi.rangeReference`) instead of the bitwise one. */
  kernel?: PiKernel | undefined;
}
/** π's Rust kernels: 'bitwise' (`pi.range`, division-free) or 'plain' (`pi.rangeReference`). */
export type PiKernel = 'plain' | 'bitwise';
export interface Md5IterateArgs {
  text: string;
  rounds: number;
  start: string;
}
export type QrFormat = 'dataURL' | 'png' | 'svg';
export type Ecc = 'L' | 'M' | 'Q' | 'H';
export interface QrArgs {
  text: string;
  ecc: Ecc;
  size: number;
  margin: number;
  format: QrFormat;
}

/** A call of a kernel of the Rust registry (`offthread_kernels::KERNELS`), by name. */
export interface RegistryArgs {
  kernel: string;
  /** A string (its UTF-8) or bytes; none: empty. */
  input?: string | Uint8Array | undefined;
  /** Up to three numbers, in the kernel's documented order (unused: 0). */
  a?: number | undefined;
  b?: number | undefined;
  c?: number | undefined;
  /** On a worker: 'wasm', or 'js' for the pure-JS tier (π, MD5); default wasm if loaded, else js. */
  tier?: 'wasm' | 'js' | undefined;
}

/** The input of a call that takes none (an empty view: no string to convert). */
export const NO_INPUT = new Uint8Array(0);

/** π's registry kernel for `a` (see piCall). */
function piKernel(a: PiArgs): 'pi.range' | 'pi.rangeReference' {
  return a.impl === 'js' || a.kernel === 'plain' ? 'pi.rangeReference' : 'pi.range';
}

/**
 * π over a range: `pi.range` (the fast kernel), or the definition (`pi.rangeReference`)
 * for `kernel: 'plain'` and for `impl: 'js'` (on the JS tier; `jsBitwise` is `pi.range`
 * on the JS tier).
 */
export function piCall(a: PiArgs): RegistryArgs {
  const kernel = piKernel(a);
  const tier = a.impl === 'wasm' ? 'wasm' : a.impl ? 'js' : undefined;
  return { kernel, input: NO_INPUT, a: a.first, b: a.count, c: a.seed, tier };
}

/** `md5.iterate`'s call: its two inputs in one, the start digest first (registry.rs). */
export function md5IterateCall(a: Md5IterateArgs): RegistryArgs {
  return { kernel: 'md5.iterate', input: a.start + a.text, a: a.rounds, b: a.start.length };
}

const ECC_INDEX: Record<Ecc, number> = { L: 0, M: 1, Q: 2, H: 3 };

/** A QR code's call: kernel `qr.<format>`, numbers [ecc 0–3, size, margin]. */
export function qrCall(a: QrArgs): RegistryArgs {
  return { kernel: `qr.${a.format}`, input: a.text, a: ECC_INDEX[a.ecc], b: a.size, c: a.margin };
}

let nativeIndex: Map<string, number> | undefined;

/** The addon's number for registry kernel `name` (its index in `kernelNames()`). */
export function nativeKernelIndex(name: string): number {
  if (!nativeIndex)
    nativeIndex = new Map(
      host()
        .native()
        ?.kernelNames()
        .map((k, i) => [k, i]),
    );
  const index = nativeIndex.get(name);
  if (index === undefined) throw makeError('ERR_BACKEND_UNAVAILABLE', `the native addon has no kernel ${name}`);
  return index;
}

function needsWasm(env: WorkerEnv, what: string): WasmKernels {
  if (env.wasm) return env.wasm;
  throw makeError(
    'ERR_BACKEND_UNAVAILABLE',
    `${what} needs the native addon or offthread.wasm (the pure-JS tier covers π and MD5 only)`,
  );
}

/** Every kernel of the Rust registry, through the one generic entry of each binding. */
const registry: Kernel<RegistryArgs, RegistryValue> = {
  native: (pool, id, a, cancellable) =>
    pool.submitKernel(id, nativeKernelIndex(a.kernel), a.input ?? NO_INPUT, a.a ?? 0, a.b ?? 0, a.c ?? 0, cancellable),
  nativeShared: (a) => a.kernel.startsWith('pi.range') && (a.b ?? 0) > SHARED_PI,
  worker: (env, a) => {
    try {
      if (a.tier === 'js' || (!a.tier && !env.wasm)) return jsKernel(a.kernel)(a, env);
      return needsWasm(env, a.kernel).call(a.kernel, a.input, a.a, a.b, a.c);
    } catch (err) {
      // The kernel saw this worker's cancel flag: the pool has settled the call already.
      if ((err as { code?: unknown })?.code === 'ERR_ABORTED' && env.stop()) return null;
      throw err;
    }
  },
};

/** A kernel by another argument shape, run as the registry call `toCall` makes of it. */
function viaRegistry<A, R extends RegistryValue>(toCall: (a: A) => RegistryArgs): Kernel<A, R> {
  return {
    native: (pool, id, a, cancellable) => registry.native(pool, id, toCall(a), cancellable),
    worker: (env, a) => registry.worker(env, toCall(a)) as R | null,
    nativeShared: (a) => registry.nativeShared?.(toCall(a)) ?? false,
  };
}

/** The addon's numbers of π's two kernels, looked up on the first native π job. */
let piIndex: Record<'pi.range' | 'pi.rangeReference', number> | undefined;

/**
 * π over a range by its arguments (pi.ts and src/queue run it by this name). Its native
 * forms are `registry`'s over `piCall` written out, without building the RegistryArgs
 * (twice a job: weight and submit) or looking the kernel up by name — the facade's hot
 * path, where a 1-sample π at 1,000 in flight is all overhead.
 */
const pi: Kernel<PiArgs, number> = {
  native: (pool, id, a, cancellable) => {
    piIndex ??= {
      'pi.range': nativeKernelIndex('pi.range'),
      'pi.rangeReference': nativeKernelIndex('pi.rangeReference'),
    };
    pool.submitKernel(id, piIndex[piKernel(a)], NO_INPUT, a.first, a.count, a.seed, cancellable);
  },
  worker: (env, a) => registry.worker(env, piCall(a)) as number | null,
  nativeShared: (a) => a.count > SHARED_PI,
};

/** A π estimate, as the facade returns it (`PiResult` in pi-variants.ts narrows `variant`). */
export interface PiEstimate<V extends string = string> {
  /** 4·inside/samples; NaN when samples is 0. */
  estimate: number;
  /** Samples with x² + y² ≤ 1: identical for every variant. */
  inside: number;
  samples: number;
  seed: number;
  /** The variant that computed it (for `auto`, the one it picked). */
  variant: V;
}

/** A `pi` job that resolves to the facade's result (pi-variants.ts), for `variant`. */
export interface PiEstimateArgs extends PiArgs {
  variant: string;
}

/** π's result for `inside` of `samples` (every variant builds it here). */
export function piResult<V extends string>(samples: number, seed: number, inside: number, variant: V): PiEstimate<V> {
  return { estimate: (4 * inside) / samples, inside, samples, seed, variant };
}

/**
 * π over [0, count) resolving to its `PiResult`: the native drain builds the object
 * (`fromNative`), so the facade returns the pool's own promise with no `.then` after it.
 */
const piEstimate: Kernel<PiEstimateArgs, PiEstimate> = {
  native: pi.native,
  nativeShared: pi.nativeShared,
  fromNative: (raw, a) => piResult(a.count, a.seed, raw as number, a.variant),
  worker: (env, a) => {
    const inside = pi.worker(env, a);
    return inside === null ? null : piResult(a.count, a.seed, inside, a.variant);
  },
};

/** The MD5 loop by its arguments (src/queue runs it by this name). */
const md5Iterate = viaRegistry<Md5IterateArgs, string>(md5IterateCall);
/** A QR code by its options (src/queue runs it by this name). */
const qr = viaRegistry<QrArgs, string | Uint8Array>(qrCall);

const echo: Kernel<{ value: number }, number> = {
  native: (pool, id, a) => pool.submitNoop(id, a.value),
  worker: (_env, a) => a.value,
};

/**
 * Test hooks: a job that spins until cancelled, and one that crashes its thread. Their
 * native forms exist only in the test build of the addon (cargo feature `test-hooks`,
 * loaded by `offthread/internal`); the product addon refuses them with a typed error.
 */
interface TestHooks {
  submitSpin(id: number): void;
  submitPanic(id: number): void;
}
function testHooks(pool: NativePool): TestHooks {
  const hooks = pool as unknown as Partial<TestHooks>;
  if (hooks.submitSpin && hooks.submitPanic) return hooks as TestHooks;
  throw makeError(
    'ERR_BACKEND_UNAVAILABLE',
    'test hooks need the test build of the addon (npm run setup builds it; import offthread/internal before the first call)',
  );
}
const testSpin: Kernel<Record<string, never>, never> = {
  native: (pool, id) => testHooks(pool).submitSpin(id),
  worker: (env) => {
    while (!env.stop()) {
      // busy until cancelled
    }
    return null;
  },
};
const testPanic: Kernel<Record<string, never>, never> = {
  native: (pool, id) => testHooks(pool).submitPanic(id),
  worker: () => {
    throw new Error('offthread test hook: this kernel panics on purpose');
  },
};

/** The next chunk of a stream filter (src/filters; null: the end). Native pool only: a
 * filter's state lives in one NativeFilter (worker engines: `workerFilter` below).
 * The result: the output bytes, or 0 where the chunk produced none. */
const filter: Kernel<{ filter: NativeFilter; chunk: Uint8Array | null }, Uint8Array | number> = {
  native: (pool, id, a) =>
    a.chunk ? pool.submitFilterPush(id, a.filter, a.chunk) : pool.submitFilterFinish(id, a.filter),
  worker: () => {
    throw makeError('ERR_BACKEND_UNAVAILABLE', 'worker pools run stream filters through workerFilter');
  },
};

/** One step of a stream filter held by a worker (worker engines: `Pool.runOn` sends every
 * step of a stream to the worker that opened it, since the filter's state lives there). */
export interface WorkerFilterArgs {
  op: 'open' | 'push' | 'finish' | 'close';
  /** The stream's filter, unique per pool. */
  key: number;
  /** open: the spec's JSON. */
  spec?: string | undefined;
  /** push: the chunk (a copy of its own, transferred). */
  chunk?: Uint8Array | undefined;
}
const workerFilter: Kernel<WorkerFilterArgs, Uint8Array | number> = {
  native: () => {
    throw makeError('ERR_BACKEND_UNAVAILABLE', 'the native pool runs stream filters through NativeFilter');
  },
  worker: (env, a) => {
    env.filters ??= new Map();
    if (a.op === 'open') {
      const wasm = needsWasm(env, 'a stream filter');
      env.filters.set(a.key, new WasmFilter(wasm.instance, a.spec ?? ''));
      return 0;
    }
    const held = env.filters.get(a.key);
    if (!held) {
      if (a.op === 'close') return 0;
      // A new worker in the old one's place (a crash, or a cancelled call's worker
      // replaced): the stream's state went with the old one.
      throw makeError(
        'ERR_FILTER_CLOSED',
        "the worker holding this stream's filter was replaced; the stream cannot go on",
      );
    }
    if (a.op === 'push') return held.push(a.chunk ?? new Uint8Array(0));
    env.filters.delete(a.key);
    if (a.op === 'finish') return held.finish();
    held.free();
    return 0;
  },
};

export const kernels = { pi, piEstimate, md5Iterate, qr, registry, echo, testSpin, testPanic, filter, workerFilter };
export type KernelName = keyof typeof kernels;
export type ArgsOf<K extends KernelName> = Parameters<(typeof kernels)[K]['worker']>[1];
export type ResultOf<K extends KernelName> = NonNullable<ReturnType<(typeof kernels)[K]['worker']>>;

/** The kernel jobs, as the pool types them (pool/engine.ts `JobKinds`). */
type KernelJobs = { [K in KernelName]: { args: ArgsOf<K>; result: ResultOf<K> } };
declare module '../pool/engine.js' {
  interface JobKinds extends KernelJobs {}
}
