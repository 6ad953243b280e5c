/**
 * `guests.load`: users' own WebAssembly modules implementing schema-defined
 * interfaces (docs/guest-abi.md), run on a worker engine's workers. Modules are
 * compiled once here and instantiated on every worker; calls are Promises with the
 * kernels' `signal` and `timeout`. A guest cannot poll a cancel flag, so a timeout
 * or abort terminates its worker and starts another (the engine's replacement path).
 */

import { describe, makeError } from '../errors.js';
import { host } from '../host.js';
import { checkRunOptions, type RunOptions } from '../pool/call.js';
import { defaultBudget } from '../pool/pool.js';
import { WorkerEngine } from '../pool/workers.js';
import { toOptions } from '../validate.js';
import {
  checkAbi,
  type FunctionDecl,
  INPUT_MODULE,
  type InterfaceDecl,
  mergeVersions,
  type Pattern,
  readModule,
  WASM_PAGE,
} from './abi.js';
import type { Description, GuestCall, GuestModuleSpec, SharedInput } from './runtime.js';
import { type GuestMemoryMessage, InputMemory, type Region } from './shared-input.js';
import { rewriteInputAccessors } from './wasm-rewrite.js';
import { checkInterfaceMemories, interfaceSlots, type ModuleMemories, multiMemory, readMemories } from './wasm-scan.js';

/** A module's bytes, optionally with the name errors and `exporter` use. */
export type GuestSource = Uint8Array | ArrayBuffer | { name?: string | undefined; bytes: Uint8Array | ArrayBuffer };

export interface LoadOptions {
  /** Workers to run guests on (default: the host's cores). */
  threads?: number | undefined;
  /** The most 64 KiB pages any guest instance's memory may grow to (default 256 = 16 MiB). */
  memoryPages?: number | undefined;
  /** Milliseconds a module's `offthread_init` may take at load (default 5,000). */
  loadTimeout?: number | undefined;
  /**
   * Calls with small inputs go through a shared-memory mailbox per worker (default true
   * where workers can share memory); false: every call is a message each way.
   */
  mailbox?: boolean | undefined;
  /**
   * Guests that read their input through the `offthread.input` accessors read a
   * fanout's input in place, from one shared memory (default true where the engine has
   * multi-memory and workers can share memory); false: every exporter gets a copy.
   */
  sharedInput?: boolean | undefined;
}

export interface GuestCallOptions extends RunOptions {
  /** For `direct` interfaces: the exporting module's name (default: the first that exports it). */
  exporter?: string | undefined;
}

/** An interface as the loaded modules declare it (the newest version any of them has). */
export interface GuestInterface {
  name: string;
  pattern: Pattern;
  fingerprint: string;
  functions: string[];
  /** Names of the modules that export it, in load order (fanout's result order). */
  exporters: string[];
  /**
   * Per function, the names of the exporters that have it: a module built against an
   * older version of the interface lacks the functions appended since.
   */
  exportersOf: Record<string, string[]>;
}

export interface GuestStats {
  calls: number;
  /**
   * Bytes written into shared memory once per fanout call: into an input memory for
   * the exporters that read it in place, into a SharedArrayBuffer for those that copy.
   */
  sharedBytes: number;
  /** Bytes copied into guest memories (one copy per instance that received an input; none when read in place). */
  copiedIn: number;
  /** Bytes copied out of guest memories. */
  copiedOut: number;
  workers: number;
  replaced: number;
  /** Whether calls with small inputs go through the workers' shared-memory mailboxes. */
  mailbox: boolean;
  /**
   * Whether this engine has multi-memory (a guest may import interface memories, read
   * in place). Without it (Node 20, Safari) every exporter receives its own copy.
   */
  multiMemory: boolean;
  /**
   * Whether guests using the `offthread.input` accessors read fanout inputs in place
   * (multi-memory, shared memory and `sharedInput` not false); otherwise they get copies.
   */
  sharedInput: boolean;
}

interface Exporter {
  module: number;
  exportIndex: number;
  /** Functions its own version of the interface has (the first `functions` of the newest). */
  functions: number;
}

interface Entry {
  decl: InterfaceDecl;
  exporters: Exporter[];
}

function bytesOf(source: GuestSource, i: number): { name: string; bytes: Uint8Array } {
  if (source instanceof Uint8Array) return { name: `guest${i}`, bytes: source };
  if (source instanceof ArrayBuffer) return { name: `guest${i}`, bytes: new Uint8Array(source) };
  if (source && typeof source === 'object' && 'bytes' in source) {
    const { name, bytes } = source;
    if (name !== undefined && (typeof name !== 'string' || name === '')) {
      throw makeError('ERR_INVALID_ARG', `modules[${i}].name must be a non-empty string`);
    }
    if (bytes instanceof Uint8Array || bytes instanceof ArrayBuffer) {
      return { name: name ?? `guest${i}`, bytes: bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes) };
    }
  }
  throw makeError(
    'ERR_INVALID_ARG',
    `modules[${i}] must be a Uint8Array, an ArrayBuffer or { name, bytes }, got ${describe(source)}`,
  );
}

function intOption(value: unknown, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw makeError(
      'ERR_INVALID_ARG',
      `options.${name} must be an integer from ${min} to ${max}, got ${describe(value)}`,
    );
  }
  return value;
}

/** Compiles, checks and describes `modules`, then starts the workers that run them. */
export async function load(modules: readonly GuestSource[], options?: LoadOptions): Promise<GuestHost> {
  let isList: boolean;
  try {
    isList = Array.isArray(modules) && modules.length > 0;
  } catch (err) {
    throw makeError('ERR_INVALID_ARG', 'the modules cannot be read', err);
  }
  if (!isList) {
    throw makeError('ERR_INVALID_ARG', 'guests.load needs a non-empty array of modules');
  }
  const opts = toOptions<LoadOptions>(options, ['threads', 'memoryPages', 'loadTimeout', 'mailbox', 'sharedInput']);
  for (const key of ['mailbox', 'sharedInput'] as const) {
    if (opts[key] !== undefined && typeof opts[key] !== 'boolean') {
      throw makeError('ERR_INVALID_ARG', `options.${key} must be a boolean, got ${describe(opts[key])}`);
    }
  }
  const threads = intOption(opts.threads, 'threads', 1, 1024, host().defaultThreads());
  const memoryPages = intOption(opts.memoryPages, 'memoryPages', 1, 65_536, 256);
  const loadTimeout = intOption(opts.loadTimeout, 'loadTimeout', 1, 2 ** 31 - 1, 5_000);
  let sources: { name: string; bytes: Uint8Array }[];
  try {
    sources = Array.from(modules, bytesOf);
  } catch (err) {
    if ((err as { code?: unknown })?.code === 'ERR_INVALID_ARG') throw err;
    throw makeError('ERR_INVALID_ARG', 'the modules cannot be read (a throwing getter or a revoked Proxy?)', err);
  }
  const names = new Set<string>();
  for (const s of sources) {
    if (names.has(s.name)) throw makeError('ERR_INVALID_ARG', `two modules are named ${JSON.stringify(s.name)}`);
    names.add(s.name);
  }

  // Guest calls share the default pool's run budget: by default the pool's kernels, tasks
  // and every guest host together run at most the host's cores at once.
  const engine = new WorkerEngine(null, threads, Number.MAX_SAFE_INTEGER, { mailbox: opts.mailbox ?? true });
  engine.useBudget(defaultBudget());
  const inputs = new InputMemories(engine, (opts.sharedInput ?? true) && multiMemory() && host().sharedMemory());
  try {
    const described = await prepare(engine, sources, 0, memoryPages, loadTimeout, inputs);
    const table = interfaceTable(described);
    engine.addSetup({ type: 'guest-setup', modules: described });
    return new GuestHost(engine, described, table, { memoryPages, loadTimeout }, inputs);
  } catch (err) {
    engine.destroy();
    throw err;
  }
}

/** The host's input memories (shared-input.ts), made when a guest that reads one in place is loaded. */
class InputMemories {
  readonly #engine: WorkerEngine;
  readonly #byName = new Map<string, InputMemory>();

  constructor(
    engine: WorkerEngine,
    /** Whether guests read in place on this host (else their accessors read a copy). */
    readonly enabled: boolean,
  ) {
    this.#engine = engine;
  }

  /** The memory `name`, made and posted to every worker (replacements too) the first time. */
  ensure(name: string, pages: number): void {
    if (this.#byName.has(name)) return;
    const memory = new InputMemory(name, pages);
    this.#byName.set(name, memory);
    // Before the modules that import it: setup messages reach every worker in order.
    const msg: GuestMemoryMessage = { type: 'guest-memory', name, memory: memory.memory };
    this.#engine.addSetup(msg);
  }

  get(name: string): InputMemory | undefined {
    return this.#byName.get(name);
  }

  get regions(): number {
    let n = 0;
    for (const m of this.#byName.values()) n += m.regions;
    return n;
  }
}

/**
 * The interface memory a module's `offthread.input` accessors read: the one memory that
 * the functions of the interfaces it exports take their input from (and that exporters
 * may read). An accessor names no memory, so with none or several the module reads
 * nothing in place (null): its inputs are copied in, as before, and its accessors read
 * the copy.
 */
function inputMemoryOf(exports: readonly InterfaceDecl[]): { name: string; pages: number } | null {
  const found = new Map<string, number>();
  for (const d of exports) {
    for (const f of d.functions) {
      const decl = d.memories.find((m) => m.name === f.input?.memory);
      if (decl && (decl.export === 'read' || decl.export === 'readwrite'))
        found.set(`${d.name}.${decl.name}`, decl.pages);
    }
  }
  const [first] = found;
  return found.size === 1 && first ? { name: first[0], pages: first[1] } : null;
}

/** Why a module with several memories fails to compile on an engine without multi-memory, or ''. */
function withoutMultiMemory(bytes: Uint8Array): string {
  if (multiMemory()) return '';
  try {
    const n = readMemories(bytes, '', false).memories.length;
    return n > 1 ? `it has ${n} memories, and this engine has no multi-memory (guests.stats().multiMemory): ` : '';
  } catch {
    return '';
  }
}

/**
 * Compiles and checks `sources`, then describes each on a worker (its offthread_init
 * is guest code: under `loadTimeout`). Module indices start at `first`.
 */
async function prepare(
  engine: WorkerEngine,
  sources: { name: string; bytes: Uint8Array }[],
  first: number,
  memoryPages: number,
  loadTimeout: number,
  inputs: InputMemories,
): Promise<GuestModuleSpec[]> {
  const specs: Omit<GuestModuleSpec, 'exports' | 'imports' | 'input'>[] = [];
  const memories: ModuleMemories[] = [];
  /** Per module: its bytes, when it imports input accessors (rewritten once its exports are known). */
  const readers: (Uint8Array | null)[] = [];
  for (const { name, bytes } of sources) {
    // Validate first: a malformed module is ERR_GUEST_MODULE whatever its import section says.
    let module: WebAssembly.Module;
    try {
      module = await WebAssembly.compile(bytes as Uint8Array<ArrayBuffer>);
    } catch (err) {
      throw makeError('ERR_GUEST_MODULE', `${name}: ${withoutMultiMemory(bytes)}${(err as Error).message}`, err);
    }
    const shape = readModule(bytes, name);
    const mem = shape.memory;
    if (!mem) {
      throw makeError(
        'ERR_GUEST_MODULE',
        `${name}: the module does not import its memory (link it with --import-memory; docs/guest-abi.md)`,
      );
    }
    if (mem.shared) throw makeError('ERR_GUEST_MODULE', `${name}: a shared memory import is not supported`);
    if (mem.initial > memoryPages) {
      throw makeError(
        'ERR_GUEST_MEMORY_LIMIT',
        `${name}: needs ${mem.initial} pages at start, over the limit of ${memoryPages} (options.memoryPages)`,
      );
    }
    checkAbi(shape, name);
    readers.push(shape.functionImports.some((i) => i.module === INPUT_MODULE) ? bytes : null);
    // Its memory imports and, if it imports an interface memory, every write in its
    // code: checked against the permissions once the descriptors are known.
    const found = readMemories(bytes, name);
    memories.push(found);
    // Describing runs its offthread_init: its interface memories sized as it imports them.
    const describing = interfaceSlots(found, name).map(({ slot }) => ({
      name: slot.import?.name as string,
      initial: slot.initial,
      maximum: slot.maximum ?? slot.initial,
    }));
    const maxPages = Math.min(memoryPages, mem.maximum ?? memoryPages);
    specs.push({
      name,
      index: first + specs.length,
      module,
      initialPages: mem.initial,
      maxPages,
      memories: describing,
    });
  }
  const described: GuestModuleSpec[] = [];
  for (const spec of specs) {
    const call: GuestCall = { kind: 'describe', ...spec };
    let d: Description;
    try {
      d = (await engine.runGuest(call, { timeout: loadTimeout })) as Description;
    } catch (err) {
      const e = err as Error & { code?: string };
      if (e.code === 'ERR_GUEST_MEMORY_LIMIT' || e.code === 'ERR_GUEST_MODULE' || e.code === 'ERR_POOL_CLOSED') {
        throw err;
      }
      throw makeError('ERR_GUEST_MODULE', `${spec.name}: cannot start it: ${e.message}`, err);
    }
    const checked = checkInterfaceMemories(memories[described.length] as ModuleMemories, d, spec.name);
    const bytes = readers[described.length];
    let module = spec.module;
    let input: string | null = null;
    const bound = bytes && inputs.enabled ? inputMemoryOf(d.exports) : null;
    if (bytes && bound) {
      const { name, pages } = bound;
      // The accessors' calls become loads from the input memory, imported shared.
      const rewritten = rewriteInputAccessors(bytes, name, pages, spec.name);
      try {
        module = await WebAssembly.compile(rewritten.bytes as Uint8Array<ArrayBuffer>);
      } catch (err) {
        throw makeError(
          'ERR_GUEST_MODULE',
          `${spec.name}: rewritten to read ${name} in place, it does not validate: ${(err as Error).message}`,
          err,
        );
      }
      inputs.ensure(name, pages);
      input = name;
    }
    described.push({ ...spec, module, input, memories: checked, exports: d.exports, imports: d.imports });
  }
  return described;
}

/**
 * Interfaces by name, over the modules present (null: removed). Every module's
 * declaration of an interface must be a version of one line: equal, or one extending
 * the other (abi.ts `mergeVersions`); the entry holds what they all are prefixes of.
 */
function interfaceTable(specs: readonly (GuestModuleSpec | null)[]): Map<string, Entry> {
  const table = new Map<string, Entry>();
  const agree = (d: InterfaceDecl, who: string) => {
    const known = table.get(d.name);
    if (!known) {
      const entry: Entry = { decl: d, exporters: [] };
      table.set(d.name, entry);
      return entry;
    }
    const newer = mergeVersions(known.decl, d);
    if (typeof newer === 'string') {
      throw makeError(
        'ERR_GUEST_MODULE',
        `${who}: interface ${d.name} is not a version of another module's (fingerprint ${d.fingerprint} vs ${known.decl.fingerprint}): ${newer}; rebuild the guests from one schema, appending to an interface only at its end`,
      );
    }
    known.decl = newer;
    return known;
  };
  specs.forEach((s, module) => {
    if (!s) return;
    s.exports.forEach((d, exportIndex) => {
      agree(d, s.name).exporters.push({ module, exportIndex, functions: d.functions.length });
    });
    for (const d of s.imports) agree(d, s.name);
  });
  return table;
}

/**
 * The modules that import a `single` interface, directly or through the guests they
 * call: a guest reaches other guests on its own worker, so these run on worker 0, where
 * the interface's one instance serves the host too (its state shared by every caller).
 */
function pinned(specs: readonly (GuestModuleSpec | null)[], table: Map<string, Entry>): Set<number> {
  const out = new Set<number>();
  const exportersOf = (name: string) => table.get(name)?.exporters.map((e) => e.module) ?? [];
  for (let changed = true; changed; ) {
    changed = false;
    specs.forEach((s, k) => {
      if (!s || out.has(k)) return;
      const reaches = s.imports.some(
        (d) => table.get(d.name)?.decl.pattern === 'singleton' || exportersOf(d.name).some((m) => out.has(m)),
      );
      if (reaches) {
        out.add(k);
        changed = true;
      }
    });
  }
  return out;
}

/** How long `close()` waits for pending calls by default (ms), as `loadTimeout`. */
const CLOSE_TIMEOUT = 5_000;

export interface CloseOptions {
  /**
   * Milliseconds to wait for pending calls before stopping them (ERR_POOL_CLOSED) and
   * their workers (default 5,000; 0: at once, like `destroy()` but as a Promise).
   */
  timeout?: number | undefined;
}

const CALL_KEYS = ['signal', 'timeout', 'exporter'] as const;

/** The loaded guests: call their interfaces, then `close()`. */
export class GuestHost {
  readonly #engine: WorkerEngine;
  /** Every module by its index (offthread.module_index); null once removed. */
  readonly #specs: (GuestModuleSpec | null)[];
  /** The interfaces of the modules present and not being removed: what calls choose from. */
  #table: Map<string, Entry>;
  readonly #limits: { memoryPages: number; loadTimeout: number };
  /** Modules being removed: no new call picks them; removal waits for `#running` to drain. */
  readonly #leaving = new Set<number>();
  /** Calls submitted per module and not yet settled. */
  readonly #running = new Map<number, number>();
  readonly #drained = new Map<number, () => void>();
  /** Modules whose calls may reach a `single` interface: they run on worker 0, where its one instance is. */
  #pinned: Set<number>;
  /** Names an add() in progress has claimed. */
  readonly #claimed = new Set<string>();
  readonly #stats = { calls: 0, sharedBytes: 0, copiedIn: 0, copiedOut: 0 };
  /** The bound (ms) after which `close` stopped the calls still running, or null. */
  #gaveUp: number | null = null;
  readonly #inputs: InputMemories;

  /** @internal */
  constructor(
    engine: WorkerEngine,
    specs: GuestModuleSpec[],
    table: Map<string, Entry>,
    limits: { memoryPages: number; loadTimeout: number },
    inputs: InputMemories,
  ) {
    this.#engine = engine;
    this.#inputs = inputs;
    this.#specs = [...specs];
    this.#table = table;
    this.#limits = limits;
    this.#pinned = pinned(this.#specs, table);
  }

  /** @internal Tests: each worker's mailbox header (pool/mailbox.ts), or null. */
  mailboxHeaders(): (Int32Array | null)[] {
    return this.#engine.mailboxHeaders();
  }

  /** @internal Tests: regions of the input memories held by fanouts not yet settled. */
  inputRegions(): number {
    return this.#inputs.regions;
  }

  /** Workers the guests run on (`threads` of `guests.load`). */
  get threads(): number {
    return this.#engine.threads;
  }

  /** Names of the modules present (loaded or added, not removed), in load order. */
  get modules(): string[] {
    return this.#specs.flatMap((s, i) => (s && !this.#leaving.has(i) ? [s.name] : []));
  }

  #name(e: Exporter): string {
    return (this.#specs[e.module] as GuestModuleSpec).name;
  }

  /** Every interface a module present exports or imports. */
  get interfaces(): GuestInterface[] {
    return [...this.#table.values()].map(({ decl, exporters }) => ({
      name: decl.name,
      pattern: decl.pattern,
      fingerprint: decl.fingerprint,
      functions: decl.functions.map((f) => f.name),
      exporters: exporters.map((e) => this.#name(e)),
      exportersOf: Object.fromEntries(
        decl.functions.map((f, k) => [f.name, exporters.filter((e) => e.functions > k).map((e) => this.#name(e))]),
      ),
    }));
  }

  #resolve(iface: unknown, fn: unknown): { entry: Entry; index: number; f: FunctionDecl } {
    if (typeof iface !== 'string' || typeof fn !== 'string') {
      throw makeError('ERR_INVALID_ARG', 'the interface and function must be names (strings)');
    }
    const entry = this.#table.get(iface);
    if (!entry || entry.exporters.length === 0) {
      throw makeError('ERR_INVALID_ARG', `no loaded module exports interface ${JSON.stringify(iface)}`);
    }
    const index = entry.decl.functions.findIndex((f) => f.name === fn);
    if (index < 0) {
      const known = entry.decl.functions.map((f) => f.name).join(', ');
      throw makeError('ERR_INVALID_ARG', `interface ${iface} has no function ${JSON.stringify(fn)} (it has ${known})`);
    }
    return { entry, index, f: entry.decl.functions[index] as FunctionDecl };
  }

  /** The exporters that have function `index` (older versions of the interface lack the newer ones). */
  #having(entry: Entry, index: number): Exporter[] {
    const found = entry.exporters.filter((e) => e.functions > index);
    if (found.length === 0) {
      const f = (entry.decl.functions[index] as FunctionDecl).name;
      throw makeError(
        'ERR_GUEST_NO_FUNCTION',
        `no module present has ${entry.decl.name}.${f}: ${entry.exporters.map((e) => this.#name(e)).join(', ')} export an older version of ${entry.decl.name}, built before ${f} was added`,
      );
    }
    return found;
  }

  /** Runs `call` on module `module`, counted so that removing the module waits for it. */
  #run(module: number, call: GuestCall, run: RunOptions, target?: number): Promise<unknown> {
    if (this.#pinned.has(module)) target = 0;
    this.#running.set(module, (this.#running.get(module) ?? 0) + 1);
    const done = () => {
      const left = (this.#running.get(module) ?? 1) - 1;
      if (left > 0) this.#running.set(module, left);
      else {
        this.#running.delete(module);
        this.#drained.get(module)?.();
      }
    };
    const result = this.#engine.runGuest(call, run, target);
    result.then(done, done);
    return result;
  }

  #input(entry: Entry, f: FunctionDecl, input: unknown): Uint8Array | null {
    if (f.input === null) {
      if (input !== undefined && input !== null) {
        throw makeError('ERR_INVALID_ARG', `${entry.decl.name}.${f.name} takes no input`);
      }
      return null;
    }
    if (!(input instanceof Uint8Array)) {
      throw makeError(
        'ERR_INVALID_ARG',
        `the input of ${entry.decl.name}.${f.name} must be a Uint8Array (an encoded message)`,
      );
    }
    const mem = entry.decl.memories.find((m) => m.name === f.input?.memory);
    if (mem && input.length > mem.pages * WASM_PAGE) {
      throw makeError(
        'ERR_GUEST_MEMORY_LIMIT',
        `a ${input.length}-byte input does not fit memory ${mem.name} (${mem.pages} pages)`,
      );
    }
    return input;
  }

  #outputLimit(entry: Entry, f: FunctionDecl): number | null {
    const mem = entry.decl.memories.find((m) => m.name === f.output?.memory);
    return mem ? mem.pages * WASM_PAGE : null;
  }

  #count(result: Promise<unknown>, inBytes: number): Promise<Uint8Array> {
    this.#stats.calls++;
    this.#stats.copiedIn += inBytes;
    return result.then(
      (value) => {
        const bytes = value as Uint8Array;
        this.#stats.copiedOut += bytes.length;
        return host().binary(bytes);
      },
      (err) => {
        // The engine's destroy() says only "destroyed": say that close() gave up, and when.
        if (this.#gaveUp !== null && (err as { code?: unknown })?.code === 'ERR_POOL_CLOSED') {
          throw makeError(
            'ERR_POOL_CLOSED',
            `close() stopped the call: it was still running ${this.#gaveUp} ms after close (options.timeout of close)`,
            err,
          );
        }
        throw err;
      },
    );
  }

  /**
   * Calls `fn` of a `direct`, `single` or `pool` interface with an encoded message;
   * resolves to the encoded result (empty for a function without one).
   */
  call(iface: string, fn: string, input?: Uint8Array | null, options?: GuestCallOptions): Promise<Uint8Array> {
    try {
      const { entry, index, f } = this.#resolve(iface, fn);
      const opts = toOptions<GuestCallOptions>(options, CALL_KEYS);
      const run = checkRunOptions(opts);
      if (entry.decl.pattern === 'fanout') {
        throw makeError('ERR_INVALID_ARG', `${iface} is a fanout interface: use fanout()`);
      }
      const bytes = this.#input(entry, f, input);
      let exporter: Exporter;
      if (opts.exporter !== undefined) {
        const found = entry.exporters.find((e) => this.#name(e) === opts.exporter);
        if (!found) throw makeError('ERR_INVALID_ARG', `no module named ${describe(opts.exporter)} exports ${iface}`);
        if (found.functions <= index) {
          throw makeError(
            'ERR_GUEST_NO_FUNCTION',
            `${opts.exporter} exports an older version of ${iface}, without ${fn} (it has ${entry.decl.functions
              .slice(0, found.functions)
              .map((x) => x.name)
              .join(', ')})`,
          );
        }
        exporter = found;
      } else exporter = this.#having(entry, index)[0] as Exporter;
      const call: GuestCall = {
        kind: 'call',
        module: exporter.module,
        export: exporter.exportIndex,
        function: index,
        input: bytes,
        outputLimit: this.#outputLimit(entry, f),
      };
      // `single`: one instance for every caller, on the first worker; calls queue for it.
      const target = entry.decl.pattern === 'singleton' ? 0 : undefined;
      return this.#count(this.#run(exporter.module, call, run, target), bytes?.length ?? 0);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Calls `fn` on every exporter of a `fanout` interface present when it starts and
   * having `fn` (`interfaces[…].exportersOf[fn]`), all at once over the workers;
   * resolves to their results in load order. The input is written once into
   * shared memory that every worker reads (a copy per message where workers cannot
   * share memory, e.g. a page without cross-origin isolation): exporters that read it
   * in place (`offthread.input`, rewritten) get its region of the input memory, the
   * others a copy in their own memory. With no region free (fanouts in flight hold
   * the memory), this fanout copies to every exporter instead of waiting.
   */
  fanout(iface: string, fn: string, input?: Uint8Array | null, options?: RunOptions): Promise<Uint8Array[]> {
    try {
      const { entry, index, f } = this.#resolve(iface, fn);
      const run = checkRunOptions(toOptions<RunOptions>(options, ['signal', 'timeout']));
      if (entry.decl.pattern !== 'fanout') {
        throw makeError('ERR_INVALID_ARG', `${iface} is a ${entry.decl.pattern} interface: use call()`);
      }
      // The exporters present now, with this function: a module added later is not
      // reached, one being removed is waited for.
      const exporters = this.#having(entry, index);
      const bytes = this.#input(entry, f, input);
      const key = f.input?.memory ? `${iface}.${f.input.memory}` : null;
      const reads = (e: Exporter) => key !== null && (this.#specs[e.module] as GuestModuleSpec).input === key;
      const memory = key && bytes && exporters.some(reads) ? this.#inputs.get(key) : undefined;
      const region = memory?.place(bytes as Uint8Array) ?? null;
      if (region) this.#stats.sharedBytes += region.length;
      let payload: Uint8Array | SharedInput | null | undefined;
      // Today's path, for the exporters that do not read in place (made once, if any).
      const copy = (): Uint8Array | SharedInput | null => {
        if (payload !== undefined) return payload;
        payload = bytes;
        if (bytes && host().sharedMemory()) {
          const shared = new SharedArrayBuffer(bytes.length);
          new Uint8Array(shared).set(bytes);
          this.#stats.sharedBytes += bytes.length;
          payload = { shared, length: bytes.length };
        }
        return payload;
      };
      const outputLimit = this.#outputLimit(entry, f);
      const parts = exporters.map((e) => {
        const inPlace = region !== null && reads(e);
        const input: Region | Uint8Array | SharedInput | null = inPlace ? region : copy();
        const call: GuestCall = {
          kind: 'call',
          module: e.module,
          export: e.exportIndex,
          function: index,
          input,
          outputLimit,
        };
        return this.#count(this.#run(e.module, call, run), inPlace ? 0 : (bytes?.length ?? 0));
      });
      // Held until every exporter has settled, whatever the outcome: a timeout or abort
      // rejects at once and terminates its worker, whose result, whatever it still
      // reads, is never used.
      if (region) {
        Promise.allSettled(parts).then(() => memory?.free(region));
      }
      return Promise.all(parts);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Loads more modules into the running host, checked and described as `guests.load`
   * does; resolves to their names. Their interfaces must be versions of the ones
   * present (docs/guest-abi.md, "Evolving interfaces"). Calls and fanouts that start
   * after it resolves can reach them; those already running are not changed.
   */
  async add(modules: GuestSource | readonly GuestSource[]): Promise<string[]> {
    const list = Array.isArray(modules) ? (modules as readonly GuestSource[]) : [modules as GuestSource];
    if (list.length === 0) throw makeError('ERR_INVALID_ARG', 'host.add needs a module or a non-empty array of them');
    const first = this.#specs.length;
    // Indices are never reused: reserve them now, so concurrent adds do not collide.
    let sources: { name: string; bytes: Uint8Array }[];
    try {
      sources = list.map((m, i) => bytesOf(m, first + i));
    } catch (err) {
      if ((err as { code?: unknown })?.code === 'ERR_INVALID_ARG') throw err;
      throw makeError('ERR_INVALID_ARG', 'the modules cannot be read (a throwing getter or a revoked Proxy?)', err);
    }
    const taken = new Set([...this.#claimed, ...this.#specs.flatMap((s) => (s ? [s.name] : []))]);
    for (const { name } of sources) {
      if (taken.has(name)) throw makeError('ERR_INVALID_ARG', `a module named ${JSON.stringify(name)} is present`);
      taken.add(name);
    }
    for (const { name } of sources) this.#claimed.add(name);
    this.#specs.push(...sources.map(() => null));
    try {
      const { memoryPages, loadTimeout } = this.#limits;
      const described = await prepare(this.#engine, sources, first, memoryPages, loadTimeout, this.#inputs);
      // Checked against every module still on the workers, the leaving ones included:
      // a guest's call may reach them until they are gone.
      const next = [...this.#specs];
      for (const d of described) next[d.index] = d;
      interfaceTable(next);
      for (const d of described) {
        this.#specs[d.index] = d;
        // Posted before any call that names it, on every worker (and replayed to replacements).
        this.#engine.addSetup({ type: 'guest-add', module: d });
      }
      this.#retable();
      return described.map((d) => d.name);
    } finally {
      for (const { name } of sources) this.#claimed.delete(name);
    }
  }

  /**
   * Removes the module `name`: no call or fanout that starts from now on reaches it;
   * resolves once the calls already running on it have settled and the workers have
   * dropped it. A call that never ends (no `timeout`) holds it, as it holds `close`.
   */
  async remove(name: string): Promise<void> {
    if (typeof name !== 'string')
      throw makeError('ERR_INVALID_ARG', `the module name must be a string, got ${describe(name)}`);
    const index = this.#specs.findIndex((s, i) => s?.name === name && !this.#leaving.has(i));
    if (index < 0) throw makeError('ERR_INVALID_ARG', `no module named ${JSON.stringify(name)} is present`);
    this.#leaving.add(index);
    this.#retable();
    if (this.#running.has(index)) {
      await new Promise<void>((resolve) => this.#drained.set(index, resolve));
      this.#drained.delete(index);
    }
    this.#engine.addSetup({ type: 'guest-remove', index });
    this.#specs[index] = null;
    this.#leaving.delete(index);
  }

  #retable(): void {
    this.#table = interfaceTable(this.#live());
    // Over every module on the workers: a leaving one may still be called by a guest.
    this.#pinned = pinned(this.#specs, this.#table);
  }

  /** The modules calls may choose from: present and not being removed. */
  #live(): (GuestModuleSpec | null)[] {
    return this.#specs.map((s, i) => (this.#leaving.has(i) ? null : s));
  }

  stats(): GuestStats {
    const e = this.#engine.stats();
    return {
      ...this.#stats,
      workers: e.workers,
      replaced: e.replaced,
      mailbox: this.#engine.mailbox,
      multiMemory: multiMemory(),
      sharedInput: this.#inputs.enabled,
    };
  }

  /**
   * Waits for pending calls, then stops the workers. A guest cannot be interrupted
   * from inside (a call that loops without `timeout` never returns), so the wait is
   * bounded: after `timeout` ms (default 5,000) the calls still pending are rejected
   * with ERR_POOL_CLOSED, their workers terminated, and `close` resolves.
   */
  close(options?: CloseOptions): Promise<void> {
    let ms: number;
    try {
      const opts = toOptions<CloseOptions>(options, ['timeout']);
      ms = intOption(opts.timeout, 'timeout', 0, 2 ** 31 - 1, CLOSE_TIMEOUT);
    } catch (err) {
      return Promise.reject(err);
    }
    const closed = this.#engine.close();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#gaveUp = ms;
        this.#engine.destroy();
        resolve();
      }, ms);
      closed.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Rejects pending calls with ERR_POOL_CLOSED and stops the workers. */
  destroy(): void {
    this.#engine.destroy();
  }
}
