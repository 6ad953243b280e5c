/**
 * The guests on one worker (host-neutral: worker_threads and Web Workers alike). Each
 * loaded module gets one instance here, over a memory the host creates with the
 * module's limit as its maximum, so `memory.grow` past it fails while the guest runs.
 * A call copies its input into the callee's memory (offthread_alloc), runs
 * offthread_call and copies the result out after checking it lies in that memory.
 * A trap fails the call and restarts that instance; the worker goes on.
 */
import { errorRegistry, makeError } from '../errors.js';
import {
  ABI_VERSION,
  IN_PLACE,
  INPUT_MODULE,
  INPUT_SIGNATURES,
  type InterfaceDecl,
  pack,
  parseDescriptor,
  unpack,
  WASM_PAGE,
} from './abi.js';
import type { Region } from './shared-input.js';
import { type InterfaceMemoryImport, MEMORY_MODULE } from './wasm-scan.js';

export interface GuestModuleSpec {
  name: string;
  /** Its position in the list given to `guests.load` (what `offthread.module_index` returns). */
  index: number;
  module: WebAssembly.Module;
  initialPages: number;
  maxPages: number;
  /** Interface memories it imports (`offthread.memory`), checked at load against their permissions. */
  memories: InterfaceMemoryImport[];
  /**
   * The interface memory its `offthread.input` accessors read in place (`module` is the
   * rewritten one, importing it shared), or null: its inputs are copied in.
   */
  input: string | null;
  exports: InterfaceDecl[];
  imports: InterfaceDecl[];
}

export interface GuestSetupMessage {
  type: 'guest-setup';
  modules: GuestModuleSpec[];
}

export interface GuestAddMessage {
  type: 'guest-add';
  module: GuestModuleSpec;
}

export interface GuestRemoveMessage {
  type: 'guest-remove';
  index: number;
}

/** An input written once into shared memory, read by every worker in place. */
export interface SharedInput {
  shared: SharedArrayBuffer;
  length: number;
}

export type GuestCall =
  | {
      kind: 'describe';
      name: string;
      index: number;
      module: WebAssembly.Module;
      initialPages: number;
      maxPages: number;
      memories: InterfaceMemoryImport[];
    }
  | {
      kind: 'call';
      module: number;
      export: number;
      function: number;
      /** A copy to make (bytes, or shared bytes every worker reads), or a region of an input memory read in place. */
      input: Uint8Array | SharedInput | Region | null;
      /** Bytes the result may take (its memory's pages), or null: no limit but the guest's memory. */
      outputLimit: number | null;
    };

export type GuestOutcome =
  | { ok: true; value: unknown; transfer: Transferable[] }
  | { ok: false; error: { code: string; message: string } };

/** An outcome whose result is still a view into the guest's memory (valid until its next call). */
export type GuestViewOutcome =
  | { ok: true; view: Uint8Array; description?: undefined }
  | { ok: true; view?: undefined; description: Description }
  | { ok: false; error: { code: string; message: string } };

export interface Description {
  exports: InterfaceDecl[];
  imports: InterfaceDecl[];
}

const decoder = new TextDecoder('utf-8', { fatal: false });

/** A typed error carried to the caller (any other throw is a trap or a bug). */
function guestError(
  code: 'ERR_GUEST_ABI' | 'ERR_GUEST_MEMORY_LIMIT' | 'ERR_GUEST_FAILED' | 'ERR_GUEST_MODULE',
  message: string,
) {
  return makeError(code, message);
}

/** What a guest asks of the host about other guests (`offthread.invoke` and kin). */
interface GuestLinks {
  /** Calls function `fn` of interface `name` on exporter `which` (null: the first able to), or −1. */
  invoke(caller: Instance, name: string | null, which: number | null, fn: number, ptr: number, len: number): bigint;
  /** The exporters of interface `name` present on this worker, or −1 when the caller does not import it. */
  exporters(caller: Instance, name: string | null): number;
  /** The position of module `module` among the exporters of `name`, or −1. */
  exporterIndex(caller: Instance, name: string | null, module: string | null): number;
}

/** Outside a host (describing a module at load): no other guest to reach. */
const NO_LINKS: GuestLinks = { invoke: () => -1n, exporters: () => -1, exporterIndex: () => -1 };

const ACCESSORS = Object.keys(INPUT_SIGNATURES);

/**
 * The `offthread.input` accessors as JS functions. For a rewritten module (`rewritten`)
 * the calls became loads: these are only reachable indirectly (through a table), which
 * the rewrite cannot follow, so they trap. Otherwise (no multi-memory, or sharedInput:
 * false) the input is copied into the guest's memory and they read it there: correct,
 * and about 30× slower than a load (docs/guests.md); the Rust crate reads a copied input
 * directly and never calls them.
 */
function accessors(memory: WebAssembly.Memory, rewritten: boolean): Record<string, (...args: number[]) => unknown> {
  if (rewritten) {
    const stub = () => {
      throw new Error(`an ${INPUT_MODULE} accessor was reached indirectly; only direct calls read in place`);
    };
    return Object.fromEntries(ACCESSORS.map((name) => [name, stub]));
  }
  const view = () => new DataView(memory.buffer);
  return {
    load_u8: (a) => view().getUint8(a >>> 0),
    load_u16: (a) => view().getUint16(a >>> 0, true),
    load_u32: (a) => view().getUint32(a >>> 0, true),
    load_u64: (a) => view().getBigUint64(a >>> 0, true),
    load_f32: (a) => view().getFloat32(a >>> 0, true),
    load_f64: (a) => view().getFloat64(a >>> 0, true),
    copy: (dst, src, len) => {
      const bytes = new Uint8Array(memory.buffer);
      const [d, s, n] = [dst >>> 0, src >>> 0, len >>> 0];
      if (d + n > bytes.length || s + n > bytes.length) throw new RangeError('offthread.input.copy out of bounds');
      bytes.copyWithin(d, s, s + n);
    },
  };
}

/** One instance of a guest module with its own limited memory. */
class Instance {
  readonly memory: WebAssembly.Memory;
  readonly exports: Record<string, (...args: number[]) => unknown>;
  failure: string | null = null;
  /** Bytes an allocation asked for when memory ran out (offthread.oom), during this call. */
  oom: number | null = null;

  constructor(
    readonly spec: Pick<GuestModuleSpec, 'name' | 'index' | 'module' | 'initialPages' | 'maxPages' | 'memories'> & {
      input?: string | null;
    },
    links: GuestLinks,
    /** The host's shared memory its accessors read in place (when `spec.input`). */
    inputMemory: WebAssembly.Memory | null = null,
  ) {
    this.memory = new WebAssembly.Memory({ initial: spec.initialPages, maximum: spec.maxPages });
    const self = this;
    // Interface memories: a memory of the declared size per import, zero-filled, but for
    // the input memory a rewritten guest reads in place; load.ts has refused any guest
    // that writes one its interface declares read-only for it.
    const shared: Record<string, WebAssembly.Memory> = Object.fromEntries(
      spec.memories.map((m) => [m.name, new WebAssembly.Memory({ initial: m.initial, maximum: m.maximum })]),
    );
    // Read in place: the one memory the host writes each fanout's input into, on every worker.
    if (spec.input) {
      if (!inputMemory) throw guestError('ERR_GUEST_ABI', `${spec.name}: no input memory ${spec.input} on this worker`);
      shared[spec.input] = inputMemory;
    }
    const imports = {
      env: { memory: this.memory },
      [MEMORY_MODULE]: shared,
      [INPUT_MODULE]: accessors(this.memory, Boolean(spec.input)),
      offthread: {
        fail(ptr: number, len: number) {
          self.failure = self.text(ptr, len, 1024) ?? 'an error message outside the guest memory';
        },
        oom(size: number) {
          self.oom = size >>> 0;
        },
        invoke(name: number, nameLen: number, fn: number, ptr: number, len: number): bigint {
          return links.invoke(self, self.text(name, nameLen, 128), null, fn >>> 0, ptr >>> 0, len >>> 0);
        },
        // Optional: the importer picks the exporter (docs/guest-abi.md, "Guests calling guests").
        invoke_at(name: number, nameLen: number, which: number, fn: number, ptr: number, len: number): bigint {
          const text = self.text(name, nameLen, 128);
          return links.invoke(self, text, which >>> 0, fn >>> 0, ptr >>> 0, len >>> 0);
        },
        exporters(name: number, nameLen: number): number {
          return links.exporters(self, self.text(name, nameLen, 128));
        },
        exporter_index(name: number, nameLen: number, module: number, moduleLen: number): number {
          return links.exporterIndex(self, self.text(name, nameLen, 128), self.text(module, moduleLen, 128));
        },
        // Optional (docs/guest-abi.md): lets N copies of one module tell themselves apart,
        // e.g. the players of a fanout that all receive the same input.
        module_index(): number {
          return spec.index;
        },
      },
    };
    const instance = new WebAssembly.Instance(spec.module, imports as unknown as WebAssembly.Imports);
    this.exports = instance.exports as typeof this.exports;
    const abi = this.exports.offthread_abi?.();
    if (abi !== ABI_VERSION) {
      throw guestError(
        'ERR_GUEST_MODULE',
        `${spec.name}: guest ABI version ${String(abi)}, this host speaks ${ABI_VERSION}`,
      );
    }
  }

  /** `len` bytes at `ptr` as text (at most `max`), or null when outside the memory. */
  text(ptr: number, len: number, max: number): string | null {
    const p = ptr >>> 0;
    const n = len >>> 0;
    if (p + n > this.memory.buffer.byteLength) return null;
    return decoder.decode(new Uint8Array(this.memory.buffer, p, Math.min(n, max)));
  }

  /** A view of a buffer the guest returned, checked against its memory. */
  view(ptr: number, len: number, what: string): Uint8Array {
    const buf = this.memory.buffer;
    if (ptr + len > buf.byteLength) {
      throw guestError(
        'ERR_GUEST_ABI',
        `${this.spec.name} returned ${what} at ${ptr}..${ptr + len}, outside its ${buf.byteLength}-byte memory`,
      );
    }
    return new Uint8Array(buf, ptr, len);
  }

  init(): Description {
    const counts = Number(this.exports.offthread_init?.());
    if (!Number.isInteger(counts) || counts < 0) {
      throw guestError('ERR_GUEST_MODULE', `${this.spec.name}: offthread_init returned ${counts}`);
    }
    const list = (fn: string, n: number) =>
      Array.from({ length: n }, (_, i) => {
        const [p, l] = unpack(this.exports[fn]?.(i) as bigint);
        const text = this.text(p, l, 1 << 20);
        if (text === null) throw guestError('ERR_GUEST_MODULE', `${this.spec.name}: ${fn}(${i}) points outside memory`);
        return parseDescriptor(text, this.spec.name);
      });
    return { exports: list('offthread_export', counts & 0xffff), imports: list('offthread_import', counts >>> 16) };
  }

  /**
   * Runs one call; the result is a view into this instance's memory (valid until its
   * next call). `place`: the input is read in place there (bit 31 of `export` says so).
   */
  run(exportIndex: number, fn: number, input: Uint8Array | null, place: Region | null = null): Uint8Array {
    this.failure = null;
    this.oom = null;
    if (place) {
      if (place.memory !== this.spec.input) {
        throw guestError('ERR_GUEST_ABI', `${this.spec.name} does not read ${place.memory} in place`);
      }
      return this.#finish(this.exports.offthread_call?.(exportIndex | IN_PLACE, fn, place.at, place.length) as bigint);
    }
    const len = input?.length ?? 0;
    let ptr = 0;
    if (input && len > 0) {
      ptr = Number(this.exports.offthread_alloc?.(len)) >>> 0;
      if (ptr === 0) {
        throw guestError(
          'ERR_GUEST_MEMORY_LIMIT',
          `${this.spec.name}: no room for a ${len}-byte input (memory limit ${this.spec.maxPages} pages)`,
        );
      }
      this.view(ptr, len, 'an input buffer').set(input);
    }
    return this.#finish(this.exports.offthread_call?.(exportIndex, fn, ptr, len) as bigint);
  }

  #finish(r: bigint): Uint8Array {
    if (r === -1n) {
      throw guestError('ERR_GUEST_FAILED', `${this.spec.name}: ${this.failure ?? 'the call failed without a message'}`);
    }
    const [p, l] = unpack(r);
    return this.view(p, l, 'a result');
  }
}

/**
 * What a trap means: after a failed allocation the guest reported (offthread.oom), or
 * with its memory at the limit, ERR_GUEST_MEMORY_LIMIT; anything else ERR_GUEST_TRAP.
 */
function trapError(instance: Instance | undefined, name: string, err: unknown): Error {
  const what = (err as Error)?.message ?? String(err);
  if (instance?.oom != null) {
    return makeError(
      'ERR_GUEST_MEMORY_LIMIT',
      `${name} could not allocate ${instance.oom} bytes: its memory is capped at ${instance.spec.maxPages} pages (memory.grow refused)`,
    );
  }
  if (instance && instance.memory.buffer.byteLength >= instance.spec.maxPages * WASM_PAGE) {
    return makeError(
      'ERR_GUEST_MEMORY_LIMIT',
      `${name} trapped with its memory at its limit (${instance.spec.maxPages} pages; memory.grow refused): ${what}`,
    );
  }
  return makeError('ERR_GUEST_TRAP', `${name} trapped: ${what}`);
}

function isTyped(err: unknown): err is Error & { code: string } {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && code in errorRegistry;
}

export class GuestRuntime {
  /** By module index; undefined once removed (host.remove). */
  readonly #specs: (GuestModuleSpec | undefined)[];
  readonly #instances: (Instance | undefined)[] = [];
  /** Modules inside a call on this worker: never entered again until it returns. */
  readonly #active = new Set<number>();
  #depth = 0;

  /** The host's input memories by name ('guest-memory' messages, posted before the modules that read them). */
  readonly #memories: ReadonlyMap<string, WebAssembly.Memory>;

  constructor(msg: GuestSetupMessage, memories: ReadonlyMap<string, WebAssembly.Memory>) {
    this.#specs = [...msg.modules];
    this.#memories = memories;
  }

  /** host.add: a module joins; its instance is made on its first call. */
  add(spec: GuestModuleSpec): void {
    this.#specs[spec.index] = spec;
  }

  /** host.remove (after its calls settled): the module and its instance are dropped. */
  remove(index: number): void {
    this.#specs[index] = undefined;
    this.#instances[index] = undefined;
  }

  #instance(i: number): Instance {
    let inst = this.#instances[i];
    if (!inst) {
      const spec = this.#specs[i];
      if (!spec) throw guestError('ERR_GUEST_ABI', `no guest module #${i}`);
      inst = new Instance(spec, this.#links(i), spec.input ? (this.#memories.get(spec.input) ?? null) : null);
      inst.init();
      this.#instances[i] = inst;
    }
    return inst;
  }

  /** Runs a call on module `i`; a trap drops the instance (the next call gets a fresh one). */
  run(i: number, exportIndex: number, fn: number, input: Uint8Array | null, place: Region | null = null): Uint8Array {
    this.#active.add(i); // before #instance: its offthread_init may invoke too
    try {
      const inst = this.#instance(i);
      try {
        return inst.run(exportIndex, fn, input, place);
      } catch (err) {
        if (isTyped(err)) throw err;
        this.#instances[i] = undefined;
        throw trapError(inst, this.#specs[i]?.name ?? `#${i}`, err);
      }
    } finally {
      this.#active.delete(i);
    }
  }

  /** The exporters of `name` present on this worker, in load order. */
  #exportersOf(name: string): number[] {
    const out: number[] = [];
    this.#specs.forEach((s, k) => {
      if (s?.exports.some((d) => d.name === name)) out.push(k);
    });
    return out;
  }

  /** Whether module `from` declares that it imports `name` (only then may it call it). */
  #imports(from: number, name: string | null): name is string {
    return name !== null && this.#specs[from]?.imports.some((d) => d.name === name) === true;
  }

  /** `offthread.*` of guest `from`: calls of other guests, served in this worker. */
  #links(from: number): GuestLinks {
    return {
      invoke: (caller, name, which, fn, ptr, len) => this.#invoke(from, caller, name, which, fn, ptr, len),
      exporters: (_caller, name) => (this.#imports(from, name) ? this.#exportersOf(name).length : -1),
      exporterIndex: (_caller, name, module) =>
        this.#imports(from, name) ? this.#exportersOf(name).findIndex((k) => this.#specs[k]?.name === module) : -1,
    };
  }

  /**
   * `offthread.invoke` / `invoke_at` of guest `from`: exporter `which` of the named
   * interface (null: the first that can take the call), in this worker.
   */
  #invoke(
    from: number,
    caller: Instance,
    name: string | null,
    which: number | null,
    fn: number,
    inPtr: number,
    inLen: number,
  ): bigint {
    try {
      if (this.#depth >= 8) return -1n; // guests calling guests in a cycle
      if (!this.#imports(from, name)) return -1n;
      // Not the caller, nor any module up the chain (A → B → A): a guest's state is
      // borrowed for its whole call (offthread-guest's Cell), so re-entering it is unsound.
      // And one whose version of the interface has function `fn` (an older one lacks
      // the functions appended since: docs/guest-abi.md, "Evolving interfaces").
      const has = (d: InterfaceDecl) => d.name === name && d.functions.length > fn;
      const able = (k: number) => !this.#active.has(k) && this.#specs[k]?.exports.some(has) === true;
      const all = this.#exportersOf(name);
      const target = which === null ? all.find(able) : all[which];
      if (target === undefined || !able(target)) return -1n;
      const exportIndex = (this.#specs[target] as GuestModuleSpec).exports.findIndex(has);
      const input = caller.view(inPtr, inLen, 'an input');
      this.#depth++;
      let out: Uint8Array;
      try {
        out = this.run(target, exportIndex, fn, input);
      } finally {
        this.#depth--;
      }
      if (out.length === 0) return 0n;
      const p = Number(caller.exports.offthread_alloc?.(out.length)) >>> 0;
      if (p === 0) return -1n;
      caller.view(p, out.length, 'an answer buffer').set(out);
      return pack(p, out.length);
    } catch {
      return -1n;
    }
  }

  /** Instantiates a module once to read its interfaces (load time, on a worker). */
  static describe(call: Extract<GuestCall, { kind: 'describe' }>): Description {
    const inst = new Instance(call, NO_LINKS);
    return inst.init();
  }
}

/** One 'guest' message → its outcome; typed errors and traps become error replies. */
export function runGuestCall(runtime: GuestRuntime | null, call: unknown): GuestOutcome {
  const out = runGuestCallView(runtime, call);
  if (!out.ok) return out;
  if (out.description) return { ok: true, value: out.description, transfer: [] };
  const value = (out.view as Uint8Array).slice();
  return { ok: true, value, transfer: [value.buffer] };
}

/** runGuestCall without the copy of the result: the mailbox copies it once, into shared memory. */
export function runGuestCallView(runtime: GuestRuntime | null, call: unknown): GuestViewOutcome {
  const c = call as GuestCall;
  try {
    if (c.kind === 'describe') return { ok: true, description: GuestRuntime.describe(c) };
    if (!runtime) throw guestError('ERR_GUEST_ABI', 'no guests are loaded on this worker');
    let input: Uint8Array | null = null;
    let place: Region | null = null;
    if (c.input instanceof Uint8Array) input = c.input;
    else if (c.input && 'shared' in c.input) input = new Uint8Array(c.input.shared, 0, c.input.length);
    else if (c.input) place = c.input;
    const view = runtime.run(c.module, c.export, c.function, input, place);
    if (c.outputLimit !== null && view.length > c.outputLimit) {
      throw guestError(
        'ERR_GUEST_MEMORY_LIMIT',
        `the result (${view.length} bytes) does not fit its memory (${c.outputLimit} bytes)`,
      );
    }
    return { ok: true, view };
  } catch (err) {
    if (isTyped(err)) return { ok: false, error: { code: err.code, message: err.message } };
    const name = c.kind === 'describe' ? c.name : `guest #${c.module}`;
    const e = trapError(undefined, name, err);
    return { ok: false, error: { code: (e as Error & { code: string }).code, message: e.message } };
  }
}
