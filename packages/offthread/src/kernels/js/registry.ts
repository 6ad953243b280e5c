/**
 * The pure-JS tier of the kernel registry: π and MD5 in JS, with the Rust kernels'
 * arguments and results (docs/kernels.md), for hosts with neither the addon nor
 * offthread.wasm — and for the π variants that are JS by definition (`js`,
 * `jsBitwise`). A tier, not an engine: the worker loop (kernels.ts) and the sync entry
 * (registry.ts) call it by kernel name. Arguments were checked by the facades.
 */
import { makeError } from '../../errors.js';
import { countInsideJs, countInsideJsBitwise, stateAt } from './pi.js';

/** What a JS kernel needs from its thread: the host's MD5, and the stop check. */
export interface JsEnv {
  md5Hex: ((data: string | Uint8Array) => string) | null;
  /** True once the running call should stop (checked between chunks). */
  stop: () => boolean;
}

/** A registry call's arguments (registry.ts `RegistryArgs`). */
export interface JsCall {
  input?: string | Uint8Array | undefined;
  a?: number | undefined;
  b?: number | undefined;
  c?: number | undefined;
}

/** A kernel's JS version: its result, or null when `stop()` said so. */
export type JsKernel = (call: JsCall, env: JsEnv) => number | string | null;

/** π samples between two stop checks (≈ 1.6 ms). */
export const PI_CHECK_SAMPLES = 2 ** 20;
/** MD5 rounds between two stop checks (≈ 1 ms). */
const MD5_CHECK_ROUNDS = 4096;

const decoder = new TextDecoder();
const text = (input: JsCall['input']) =>
  typeof input === 'string' ? input : decoder.decode(input ?? new Uint8Array());

/** `pi.range` / `pi.rangeReference`: numbers [first, count, seed]. */
function piRange(count: (state: number, samples: number) => number): JsKernel {
  return ({ a: first = 0, b: n = 0, c: seed = 0 }, env) => {
    let inside = 0;
    for (let done = 0; done < n; ) {
      if (env.stop()) return null;
      const k = Math.min(PI_CHECK_SAMPLES, n - done);
      inside += count(stateAt(seed, first + done), k);
      done += k;
    }
    return inside;
  };
}

function md5(env: JsEnv): (data: string | Uint8Array) => string {
  if (env.md5Hex) return env.md5Hex;
  throw makeError('ERR_BACKEND_UNAVAILABLE', 'MD5 needs the native addon or offthread.wasm on this platform');
}

/** `md5.iterate`: numbers [rounds, start length]; the input is the start digest, then the text. */
const md5Iterate: JsKernel = ({ input, a: rounds = 0, b: startLength = 0 }, env) => {
  const hex = md5(env);
  const all = text(input);
  const t = all.slice(startLength);
  let digest = all.slice(0, startLength);
  for (let i = 0; i < rounds; i++) {
    if (i % MD5_CHECK_ROUNDS === 0 && env.stop()) return null;
    digest = hex(t + digest);
  }
  return digest;
};

const kernels: Readonly<Record<string, JsKernel>> = {
  'pi.range': piRange(countInsideJsBitwise),
  'pi.rangeReference': piRange(countInsideJs),
  'md5.hex': ({ input }, env) => md5(env)(input ?? ''),
  'md5.iterate': md5Iterate,
};

/** The JS version of registry kernel `name`, or ERR_BACKEND_UNAVAILABLE. */
export function jsKernel(name: string): JsKernel {
  const k = Object.hasOwn(kernels, name) ? kernels[name] : undefined;
  if (k) return k;
  throw makeError(
    'ERR_BACKEND_UNAVAILABLE',
    `${name} needs the native addon or offthread.wasm (the pure-JS tier covers π and MD5 only)`,
  );
}
