/**
 * Every kernel the pools run, described once: how the native pool starts it, how a
 * worker (WASM, or the pure-JS tier) computes it, and how a native result becomes the
 * value JS sees. The engines and the worker loop are generic over this table; the
 * facades (pi.ts, md5.ts, qr.ts, stats.ts) validate arguments and pick the kernel.
 */
import type { NativeFilter, NativePool } from '../native/binding';
import { makeError } from './errors.js';
import { host } from './host.js';
import { countInsideJs, countInsideJsBitwise, stateAt } from './js/pi.js';
import {
  type Ecc,
  PI_CHECK_SAMPLES,
  type QrFormat,
  type RegistryValue,
  type Stop,
  type TemperatureSummary,
  type WasmKernels,
} from './wasm-client.js';

/** What a worker computes with: its own WASM instance, or the JS tier's helpers. */
export interface WorkerEnv {
  wasm: WasmKernels | null;
  md5Hex: ((data: string | Uint8Array) => string) | null;
  /** True once the running task was cancelled (checked between chunks). */
  stop: Stop;
}

interface Kernel<Args, Result> {
  /** Starts job `id` on the native pool (its completion arrives through drain/take). */
  native(pool: NativePool, id: number, args: Args, cancellable: boolean): void;
  /** Computes in a worker; null means it stopped because `env.stop()` said so. */
  worker(env: WorkerEnv, args: Args): Result | null;
  /** A native completion (number, string, Buffer) as JS sees it; default: as is. */
  fromNative?(raw: unknown): Result;
}

export interface PiArgs {
  /** First sample of the range (jump-ahead); the native pool takes whole calls only (first 0). */
  first: number;
  count: number;
  seed: number;
  /** Worker pools only: run this sync variant's kernel (default: wasm, else jsBitwise). */
  impl?: 'js' | 'jsBitwise' | 'wasm' | undefined;
}
export interface Md5IterateArgs {
  text: string;
  rounds: number;
  start: string;
}
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
  input: string | Uint8Array;
  /** Up to three numbers, in the kernel's documented order (unused: 0). */
  a?: number;
  b?: number;
  c?: number;
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

const QR_FORMAT_INDEX: Record<QrFormat, number> = { dataURL: 0, png: 1, svg: 2 };

function needsWasm(env: WorkerEnv, what: string): WasmKernels {
  if (env.wasm) return env.wasm;
  throw makeError(
    'ERR_BACKEND_UNAVAILABLE',
    `${what} needs the native addon or offthread.wasm (the pure-JS tier covers π and MD5 only)`,
  );
}

function jsMd5(env: WorkerEnv): (data: string | Uint8Array) => string {
  if (env.md5Hex) return env.md5Hex;
  throw makeError('ERR_BACKEND_UNAVAILABLE', 'MD5 needs the native addon or offthread.wasm on this platform');
}

/** π over a range in JS (`js` or `jsBitwise`), checking `stop` between chunks. */
function piRangeJs(args: PiArgs, stop: Stop, count = countInsideJsBitwise): number | null {
  let inside = 0;
  for (let done = 0; done < args.count; ) {
    if (stop()) return null;
    const n = Math.min(PI_CHECK_SAMPLES, args.count - done);
    inside += count(stateAt(args.seed, args.first + done), n);
    done += n;
  }
  return inside;
}

/** The MD5 loop in JS (one digest per round), checking `stop` every 4,096 rounds. */
function md5IterateJs(md5: (data: string) => string, a: Md5IterateArgs, stop: Stop): string | null {
  let digest = a.start;
  for (let i = 0; i < a.rounds; i++) {
    if ((i & 4095) === 0 && stop()) return null;
    digest = md5(a.text + digest);
  }
  return digest;
}

const pi: Kernel<PiArgs, number> = {
  native: (pool, id, a, cancellable) => pool.submitPi(id, a.count, a.seed, cancellable),
  worker: (env, a) => {
    if (a.impl === 'js') return piRangeJs(a, env.stop, countInsideJs);
    if (a.impl === 'jsBitwise' || (!a.impl && !env.wasm)) return piRangeJs(a, env.stop);
    return needsWasm(env, 'the wasm π variant').piCountChecked(a.first, a.count, a.seed, env.stop);
  },
};

const md5Iterate: Kernel<Md5IterateArgs, string> = {
  native: (pool, id, a, cancellable) => pool.submitMd5Iterate(id, a.text, a.rounds, a.start, cancellable),
  worker: (env, a) =>
    env.wasm ? env.wasm.md5Iterate(a.text, a.rounds, a.start, env.stop) : md5IterateJs(jsMd5(env), a, env.stop),
};

const md5Hex: Kernel<{ text: string }, string> = {
  native: (pool, id, a) => pool.submitMd5Hex(id, a.text),
  worker: (env, a) => (env.wasm ? env.wasm.md5Hex(a.text) : jsMd5(env)(a.text)),
};

const qr: Kernel<QrArgs, string | Uint8Array> = {
  native: (pool, id, a) => pool.submitQr(id, a.text, a.ecc, a.size, a.margin, QR_FORMAT_INDEX[a.format]),
  worker: (env, a) => needsWasm(env, 'QR').qr(a.format, a.text, a.ecc, a.size, a.margin),
};

const statsTemperature: Kernel<{ buf: Uint8Array }, TemperatureSummary> = {
  native: (pool, id, a) => pool.submitStatsTemperature(id, a.buf),
  worker: (env, a) => needsWasm(env, 'stats.temperature').statsTemperature(a.buf),
  fromNative: (raw) => {
    const b = raw as Uint8Array;
    const [count, average, min, max] = new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + 32));
    return { count, average, min, max } as TemperatureSummary;
  },
};

/** Every kernel of the Rust registry, through the one generic entry of each binding. */
const registry: Kernel<RegistryArgs, RegistryValue> = {
  native: (pool, id, a, cancellable) =>
    pool.submitKernel(id, nativeKernelIndex(a.kernel), a.input, a.a ?? 0, a.b ?? 0, a.c ?? 0, cancellable),
  worker: (env, a) => needsWasm(env, a.kernel).call(a.kernel, a.input, a.a, a.b, a.c),
};

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
 * filter's state lives in one NativeFilter, and worker engines run filters inline (core.ts). */
const filter: Kernel<{ filter: NativeFilter; chunk: Uint8Array | null }, Uint8Array> = {
  native: (pool, id, a) =>
    a.chunk ? pool.submitFilterPush(id, a.filter, a.chunk) : pool.submitFilterFinish(id, a.filter),
  worker: () => {
    throw makeError('ERR_BACKEND_UNAVAILABLE', 'stream filters run on the native pool, or inline on offthread.wasm');
  },
};

export const kernels = { pi, md5Iterate, md5Hex, qr, statsTemperature, registry, echo, testSpin, testPanic, filter };
export type KernelName = keyof typeof kernels;
export type ArgsOf<K extends KernelName> = Parameters<(typeof kernels)[K]['worker']>[1];
export type ResultOf<K extends KernelName> = NonNullable<ReturnType<(typeof kernels)[K]['worker']>>;
