/**
 * MD5: one-shot digests and the DESIGN.md loop dᵢ = hex(MD5(text ‖ dᵢ₋₁)), d₀ = "".
 * Native (RustCrypto md-5) on the calling thread or on the pool; node:crypto when the
 * native addon is missing.
 */
import { createHash } from 'node:crypto';
import { warnFallbackOnce } from './backends/index';
import { native } from './backends/native';
import { wasm, wasmCheck, withBytes } from './backends/wasm';
import { fromNative, makeError } from './errors';
import { type CallOptions, checkCallOptions, defaultPool } from './pool';
import { toOptions } from './validate';

/** Largest `rounds` accepted (10^9: minutes of work on one core). */
export const MAX_ROUNDS = 1_000_000_000;

export interface IterateOptions {
  /** Continue from d_k (a 32-character digest) instead of d₀ = "". */
  start?: string;
}

function checkData(data: unknown, name = 'data'): string | Uint8Array {
  if (typeof data === 'string' || data instanceof Uint8Array) return data;
  throw makeError(
    'ERR_INVALID_ARG',
    `${name} must be a string or Uint8Array, got ${data === null ? 'null' : typeof data}`,
  );
}

function checkText(text: unknown): string {
  if (typeof text !== 'string') throw makeError('ERR_INVALID_ARG', `text must be a string, got ${typeof text}`);
  return text;
}

function checkRounds(rounds: unknown): number {
  if (typeof rounds !== 'number') throw makeError('ERR_INVALID_ARG', `rounds must be a number, got ${typeof rounds}`);
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

/** MD5 of a string (UTF-8) or bytes, lowercase hex. */
export function hex(data: string | Uint8Array): string {
  const value = checkData(data);
  if (!native) return createHash('md5').update(value).digest('hex');
  return typeof value === 'string' ? native.md5HexString(value) : native.md5HexBytes(value);
}

/** MD5 of a string as one pool job (one off-loop call). */
export async function hexAsync(data: string, options?: CallOptions): Promise<string> {
  const text = checkText(data);
  const call = checkCallOptions(toOptions<CallOptions>(options));
  if (!native) return hex(text);
  return (call.pool ?? defaultPool()).submitMd5Hex(text, call);
}

/** The loop JS-side with node:crypto: the fallback, and the oracle of the tests. */
export function iterateReference(text: string, rounds: number, start = ''): string {
  let digest = start;
  for (let i = 0; i < rounds; i++)
    digest = createHash('md5')
      .update(text + digest)
      .digest('hex');
  return digest;
}

/** The loop in the WASM build: the fallback when the native addon is missing. */
function iterateWasm(text: string, rounds: number, start: string): string {
  const w = wasm() as NonNullable<ReturnType<typeof wasm>>;
  const bytes = Buffer.from(text, 'utf8');
  return withBytes(w, bytes, 32, (ptr) => {
    const io = ptr + bytes.length;
    new Uint8Array(w.memory.buffer, io, 32).set(Buffer.from(start.padEnd(32, '0'), 'latin1'));
    const n = start
      ? wasmCheck(w, w.md5_iterate_from(ptr, bytes.length, rounds, io))
      : wasmCheck(w, w.md5_iterate(ptr, bytes.length, rounds, io));
    return Buffer.from(w.memory.buffer, io, n).toString('latin1');
  });
}

/** d_N on the calling thread. */
export function iterateSync(text: string, rounds: number, options?: IterateOptions): string {
  const t = checkText(text);
  const n = checkRounds(rounds);
  const start = checkStart(toOptions<IterateOptions>(options).start);
  if (!native) {
    warnFallbackOnce();
    const w = wasm();
    return w ? iterateWasm(t, n, start) : iterateReference(t, n, start);
  }
  try {
    return native.md5IterateSync(t, n, start);
  } catch (err) {
    throw fromNative(err);
  }
}

/** d_N on the pool; honours `{ pool, signal, timeout }` (checked between chunks of rounds). */
export async function iterate(text: string, rounds: number, options?: IterateOptions & CallOptions): Promise<string> {
  const opts = toOptions<IterateOptions & CallOptions>(options);
  const t = checkText(text);
  const n = checkRounds(rounds);
  const start = checkStart(opts.start);
  const call = checkCallOptions(opts);
  if (!native) return iterateSync(t, n, { start });
  return (call.pool ?? defaultPool()).submitMd5Iterate(t, n, start, call);
}
