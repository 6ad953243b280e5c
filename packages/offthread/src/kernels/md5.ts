/**
 * MD5: one-shot digests and the loop dᵢ = hex(MD5(text ‖ dᵢ₋₁)), d₀ = "". Native
 * (RustCrypto md-5), else offthread.wasm, else the host's own MD5 (node:crypto: the
 * pure-JS tier) — on the calling thread or on the pool's threads. Registry kernels
 * `md5.hex` and `md5.iterate`: this file checks the arguments and names them.
 */
import { describe, makeError } from '../errors.js';
import { host, warnFallbackOnce } from '../host.js';
import { type CallOptions, checkCallOptions } from '../pool/pool.js';
import { CALL_KEYS, toOptions } from '../validate.js';
import { checkHashData, hexAsync as digestHexAsync } from './digest.js';
import { md5IterateCall } from './kernels.js';
import { callAsync, callSync } from './registry.js';

/** Largest `rounds` accepted (10^9: minutes of work on one core). */
export const MAX_ROUNDS = 1_000_000_000;
const ITERATE_KEYS = ['start', ...CALL_KEYS] as const;

export interface IterateOptions {
  /** Continue from d_k (a 32-character digest) instead of d₀ = "". */
  start?: string;
}

function checkText(text: unknown): string {
  if (typeof text !== 'string') throw makeError('ERR_INVALID_ARG', `text must be a string, got ${describe(text)}`);
  return text;
}

function checkRounds(rounds: unknown): number {
  if (typeof rounds !== 'number') {
    throw makeError('ERR_INVALID_ARG', `rounds must be a number, got ${describe(rounds)}`);
  }
  if (!Number.isInteger(rounds) || rounds < 0 || rounds > MAX_ROUNDS) {
    throw makeError('ERR_INVALID_ROUNDS', `rounds must be an integer from 0 to ${MAX_ROUNDS}, got ${rounds}`);
  }
  return rounds;
}

function checkStart(start: unknown): string {
  if (start === undefined) return '';
  if (typeof start !== 'string' || !(start.length === 0 || /^[0-9a-f]{32}$/.test(start))) {
    throw makeError('ERR_INVALID_ARG', 'start must be "" or a 32-character lowercase hex digest');
  }
  return start;
}

/** The host's MD5 (node:crypto), or a typed error where it has none. */
function hostMd5(): (data: string | Uint8Array) => string {
  const md5 = host().md5Hex;
  if (!md5) throw makeError('ERR_BACKEND_UNAVAILABLE', `MD5 needs offthread.wasm here: ${host().wasmError()}`);
  return md5;
}

/** MD5 of a string (UTF-8) or bytes, lowercase hex, on the calling thread. */
export function hex(data: string | Uint8Array): string {
  return callSync({ kernel: 'md5.hex', input: checkHashData(data) }) as string;
}

/**
 * As `hex`, on the pool; takes what `hex` takes. Honours `{ pool, signal, timeout }`.
 * Up to 1 MiB is one job owning a copy (a SharedArrayBuffer view: read in place); more
 * goes in 1 MiB pieces with the event loop free between them (kernels/digest.ts). Until
 * the promise settles, do not write to the bytes (the digest would mix old and new
 * bytes) nor transfer or shrink their buffer (the call rejects with ERR_INVALID_ARG).
 */
export function hexAsync(data: string | Uint8Array, options?: CallOptions): Promise<string> {
  return digestHexAsync('md5', data, options);
}

/** The loop with the host's MD5, one digest per round: the oracle of the tests. */
export function iterateReference(text: string, rounds: number, start = ''): string {
  const t = checkText(text);
  const n = checkRounds(rounds);
  const md5 = hostMd5();
  let digest = checkStart(start);
  for (let i = 0; i < n; i++) digest = md5(t + digest);
  return digest;
}

/** d_N on the calling thread. */
export function iterateSync(text: string, rounds: number, options?: IterateOptions): string {
  const t = checkText(text);
  const n = checkRounds(rounds);
  const start = checkStart(toOptions<IterateOptions>(options, ['start']).start);
  if (!host().native()) warnFallbackOnce();
  return callSync(md5IterateCall({ text: t, rounds: n, start })) as string;
}

/** d_N on the pool; honours `{ pool, signal, timeout }` (checked every 4,096 rounds). */
export function iterate(text: string, rounds: number, options?: IterateOptions & CallOptions): Promise<string> {
  // Not async: the call is the pool's own promise (no extra promise and tick per call).
  try {
    const opts = toOptions<IterateOptions & CallOptions>(options, ITERATE_KEYS);
    const t = checkText(text);
    const n = checkRounds(rounds);
    const start = checkStart(opts.start);
    const call = checkCallOptions(opts);
    return callAsync(call, md5IterateCall({ text: t, rounds: n, start })) as Promise<string>;
  } catch (err) {
    return Promise.reject(err);
  }
}
