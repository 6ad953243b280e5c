/**
 * A user's WebAssembly guest as a stream filter: each chunk is one call of a guest
 * function on the GuestHost's workers (docs/guest-abi.md), its answer the bytes passed
 * on, in input order. A `single` interface keeps its state between chunks (one instance,
 * calls in order: a running checksum, a decoder); `pool` and `direct` ones may have
 * several chunks in flight on several workers. An optional `finish` function answers the
 * bytes held back at the end. Host-neutral: node.ts and web.ts wrap it as streams.
 */
import { describe, makeError } from '../errors.js';
import type { GuestHost } from '../guests/load.js';
import { toOptions } from '../validate.js';
import type { FilterCore } from './core.js';
import type { FilterSpec } from './spec.js';

export interface GuestFilterOptions {
  /** The interface whose function takes one chunk's message. */
  interface: string;
  /** The function called per chunk. */
  fn: string;
  /** A function of the same interface taking no input, called once at the end: its answer is the stream's last bytes. */
  finish?: string | undefined;
  /** Chunk → the function's input message (default: the chunk itself). */
  encode?: ((chunk: Uint8Array) => Uint8Array) | undefined;
  /** The function's answer → the bytes passed on (default: the answer itself). */
  decode?: ((answer: Uint8Array) => Uint8Array) | undefined;
  /** Chunks in flight at once (default: 1 for `single` (singleton), the host's workers for `pool` and `direct`). */
  inFlight?: number | undefined;
  /** For `direct` interfaces: the exporting module's name. */
  exporter?: string | undefined;
  /** Per-call timeout, ms: a chunk that takes longer fails the stream with ERR_TIMEOUT. */
  timeout?: number | undefined;
  /** Aborting fails the stream with ERR_ABORTED (and stops the running call). */
  signal?: AbortSignal | undefined;
}

const KEYS = ['interface', 'fn', 'finish', 'encode', 'decode', 'inFlight', 'exporter', 'timeout', 'signal'] as const;

/** What `FilterTransform.spec` says of a guest filter (it never reaches the Rust side). */
function guestSpec(o: GuestFilterOptions): FilterSpec {
  return { kind: 'guest', interface: o.interface, fn: o.fn, ...(o.finish ? { finish: o.finish } : {}) };
}

function optionalFn<T>(value: T | undefined, name: string): T | undefined {
  if (value !== undefined && typeof value !== 'function') {
    throw makeError('ERR_INVALID_ARG', `${name} must be a function, got ${describe(value)}`);
  }
  return value;
}

/** Checks the options against the loaded interfaces; the filter's core over `host.call`. */
export function guestFilter(host: GuestHost, options: GuestFilterOptions): [FilterSpec, FilterCore] {
  if (host === null || typeof host !== 'object' || typeof (host as GuestHost).call !== 'function') {
    throw makeError('ERR_INVALID_ARG', `host must be a GuestHost (from guests.load), got ${describe(host)}`);
  }
  if (options === undefined) throw makeError('ERR_INVALID_ARG', 'options { interface, fn } are required');
  const o = toOptions<GuestFilterOptions>(options, KEYS) as GuestFilterOptions;
  const iface = host.interfaces.find((i) => i.name === o.interface && i.exporters.length > 0);
  if (!iface) throw makeError('ERR_INVALID_ARG', `no loaded module exports interface ${describe(o.interface)}`);
  if (iface.pattern === 'fanout') {
    throw makeError('ERR_INVALID_ARG', `${iface.name} is a fanout interface: a filter calls one exporter per chunk`);
  }
  const checkFunction = (name: unknown, key: string): void => {
    if (!iface.functions.includes(name as string)) {
      throw makeError('ERR_INVALID_ARG', `interface ${iface.name} has no function ${describe(name)} (${key})`);
    }
  };
  checkFunction(o.fn, 'fn');
  if (o.finish !== undefined) checkFunction(o.finish, 'finish');
  const encode = optionalFn(o.encode, 'encode');
  const decode = optionalFn(o.decode, 'decode');
  const fallback = iface.pattern === 'singleton' ? 1 : host.threads;
  const inFlight = o.inFlight ?? fallback;
  if (!Number.isInteger(inFlight) || inFlight < 1 || inFlight > 1024) {
    throw makeError('ERR_INVALID_ARG', `inFlight must be an integer from 1 to 1024, got ${describe(o.inFlight)}`);
  }
  const call = {
    ...(o.exporter !== undefined ? { exporter: o.exporter } : {}),
    ...(o.timeout !== undefined ? { timeout: o.timeout } : {}),
    ...(o.signal !== undefined ? { signal: o.signal } : {}),
  };
  const answer = async (promise: Promise<Uint8Array>): Promise<Uint8Array> => {
    const out = await promise;
    if (!decode) return out;
    const bytes = decode(out);
    if (!(bytes instanceof Uint8Array)) {
      throw makeError('ERR_INVALID_ARG', `decode must return a Uint8Array, got ${describe(bytes)}`);
    }
    return bytes;
  };
  const core: FilterCore = {
    parallel: inFlight > 1,
    backend: 'workers',
    inFlight,
    // A throwing encode or a refused call rejects this chunk's push: the stream fails with its code.
    push: (chunk) =>
      answer(Promise.resolve().then(() => host.call(iface.name, o.fn, encode ? encode(chunk) : chunk, call))),
    finish: () =>
      o.finish === undefined ? Promise.resolve(new Uint8Array(0)) : answer(host.call(iface.name, o.finish, null, call)),
    close: () => {},
  };
  return [guestSpec(o), core];
}
