/**
 * The guest ABI as the host sees it (docs/guest-abi.md): the exports a guest must
 * have, the JSON descriptor of each interface it exports or imports, how an i64
 * carries a buffer, and the one thing read from the module's bytes — its memory import.
 * Host-neutral: used on the main thread (load) and in workers (runtime.ts).
 */
import { makeError } from '../errors.js';
import { WasmCursor } from './wasm-bytes.js';

export const ABI_VERSION = 1;
export const WASM_PAGE = 65_536;

/** Every guest exports these (offthread-guest's `export_guest!` writes them). */
export const REQUIRED_EXPORTS = [
  'offthread_abi',
  'offthread_init',
  'offthread_export',
  'offthread_import',
  'offthread_alloc',
  'offthread_call',
] as const;

export type Pattern = 'direct' | 'fanout' | 'singleton' | 'pool';
export type Access = 'none' | 'read' | 'write' | 'readwrite';

export interface MemoryDecl {
  name: string;
  import: Access;
  export: Access;
  /** Maximum size in 64 KiB pages. */
  pages: number;
}

export interface FunctionDecl {
  name: string;
  /**
   * FNV-1a 64 of its signature (docs/guest-abi.md, "Evolving interfaces"), or null in a
   * descriptor written before interfaces could evolve (then the whole interface must match).
   */
  fingerprint: string | null;
  /** Where the input travels: a named memory, null for the callee's own; null: no input. */
  input: { memory: string | null } | null;
  output: { memory: string | null } | null;
}

export interface InterfaceDecl {
  name: string;
  pattern: Pattern;
  fingerprint: string;
  memories: MemoryDecl[];
  functions: FunctionDecl[];
}

/** `ptr | len << 32` → [ptr, len]. */
export function unpack(v: bigint): [number, number] {
  const u = BigInt.asUintN(64, v);
  return [Number(u & 0xffff_ffffn), Number(u >> 32n)];
}

export function pack(ptr: number, len: number): bigint {
  return BigInt.asIntN(64, (BigInt(len >>> 0) << 32n) | BigInt(ptr >>> 0));
}

const PATTERNS: readonly string[] = ['direct', 'fanout', 'singleton', 'pool'];
const ACCESS: readonly string[] = ['none', 'read', 'write', 'readwrite'];
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const FINGERPRINT = /^[0-9a-f]{16}$/;

function bad(where: string, why: string): Error {
  return makeError('ERR_GUEST_MODULE', `${where}: ${why}`);
}

function place(v: unknown, mems: MemoryDecl[], where: string): { memory: string | null } | null {
  if (v === null) return null;
  const m = (v as { memory?: unknown } | undefined)?.memory;
  if (m === null) return { memory: null };
  if (typeof m === 'string' && mems.some((x) => x.name === m)) return { memory: m };
  throw bad(where, `a function names an unknown memory ${JSON.stringify(m)}`);
}

/** Checks a descriptor a guest returned; anything off is ERR_GUEST_MODULE. */
export function parseDescriptor(text: string, where: string): InterfaceDecl {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw bad(where, 'an interface descriptor is not JSON');
  }
  const d = raw as Record<string, unknown>;
  const str = (k: string) => (typeof d?.[k] === 'string' ? (d[k] as string) : '');
  if (!NAME.test(str('name'))) throw bad(where, 'an interface descriptor has no valid name');
  if (!PATTERNS.includes(str('pattern'))) throw bad(where, `interface ${str('name')}: unknown pattern`);
  if (!FINGERPRINT.test(str('fingerprint'))) throw bad(where, `interface ${str('name')}: bad fingerprint`);
  if (!Array.isArray(d.memories) || !Array.isArray(d.functions)) {
    throw bad(where, `interface ${str('name')}: memories and functions must be arrays`);
  }
  // Names are tested as strings: String(undefined) would pass NAME.
  const named = (v: unknown): v is string => typeof v === 'string' && NAME.test(v);
  const memories: MemoryDecl[] = d.memories.map((m: Record<string, unknown>) => {
    const ok =
      named(m?.name) &&
      ACCESS.includes(String(m?.import)) &&
      ACCESS.includes(String(m?.export)) &&
      Number.isInteger(m?.pages) &&
      (m.pages as number) >= 1 &&
      (m.pages as number) <= 65_536;
    if (!ok) throw bad(where, `interface ${str('name')}: a malformed memory`);
    return { name: m.name, import: m.import, export: m.export, pages: m.pages } as MemoryDecl;
  });
  const functions: FunctionDecl[] = d.functions.map((f: Record<string, unknown>) => {
    if (!named(f?.name)) throw bad(where, `interface ${str('name')}: a malformed function`);
    const fp = f.fingerprint;
    if (fp !== undefined && !(typeof fp === 'string' && FINGERPRINT.test(fp))) {
      throw bad(where, `interface ${str('name')}: function ${f.name} has a bad fingerprint`);
    }
    return {
      name: f.name as string,
      fingerprint: (fp as string | undefined) ?? null,
      input: place(f.input, memories, where),
      output: place(f.output, memories, where),
    };
  });
  const fingerprinted = functions.filter((f) => f.fingerprint !== null).length;
  if (fingerprinted !== 0 && fingerprinted !== functions.length) {
    throw bad(where, `interface ${str('name')}: some functions have a fingerprint and some do not`);
  }
  return {
    name: str('name'),
    pattern: str('pattern') as Pattern,
    fingerprint: str('fingerprint'),
    memories,
    functions,
  };
}

const sameMemory = (a: MemoryDecl, b: MemoryDecl) =>
  a.name === b.name && a.import === b.import && a.export === b.export && a.pages === b.pages;

/**
 * Two modules' declarations of one interface, as one — what both are prefixes of — or
 * a reason they cannot be loaded together (docs/guest-abi.md, "Evolving interfaces").
 * Equal fingerprints are one version. Otherwise the same pattern, and where both have a
 * memory or a function at an index, the same one (functions by their fingerprints):
 * appending keeps the function index a caller sends the same function. The relation is
 * checked against this merge, so any subset of compatible modules is compatible too.
 */
export function mergeVersions(a: InterfaceDecl, b: InterfaceDecl): InterfaceDecl | string {
  // One version: keep the declaration that carries function fingerprints, if one does.
  if (a.fingerprint === b.fingerprint) return a.functions.some((f) => f.fingerprint === null) ? b : a;
  if (a.pattern !== b.pattern) return `its pattern is ${a.pattern} in one and ${b.pattern} in the other`;
  const legacy = [...a.functions, ...b.functions].some((f) => f.fingerprint === null);
  if (legacy) return 'a module was built before interfaces could evolve: rebuild it with this schema compiler';
  const m = a.memories.findIndex((x, k) => k < b.memories.length && !sameMemory(x, b.memories[k] as MemoryDecl));
  if (m >= 0) return `memory #${m} (${(a.memories[m] as MemoryDecl).name}) differs`;
  const f = a.functions.findIndex((x, k) => k < b.functions.length && x.fingerprint !== b.functions[k]?.fingerprint);
  if (f >= 0) return `function #${f} (${(a.functions[f] as FunctionDecl).name}) differs`;
  const more = a.functions.length >= b.functions.length ? a : b;
  return {
    ...more,
    memories: a.memories.length >= b.memories.length ? a.memories : b.memories,
  };
}

/** The limits of the module's memory import (`env.memory`), read from its bytes. */
export interface MemoryImport {
  initial: number;
  maximum: number | null;
  shared: boolean;
}

/** A function type as docs/guest-abi.md writes it: value types by name. */
export interface Signature {
  params: string[];
  results: string[];
}

const sig = (params: string[], results: string[]): Signature => ({ params, results });
const I32 = 'i32';
const I64 = 'i64';

/** What each ABI export must be (docs/guest-abi.md, "What a guest exports"). */
export const EXPORT_SIGNATURES: Readonly<Record<(typeof REQUIRED_EXPORTS)[number], Signature>> = {
  offthread_abi: sig([], [I32]),
  offthread_init: sig([], [I32]),
  offthread_export: sig([I32], [I64]),
  offthread_import: sig([I32], [I64]),
  offthread_alloc: sig([I32], [I32]),
  offthread_call: sig([I32, I32, I32, I32], [I64]),
};

/**
 * What each `offthread.*` import must be ("What a guest imports"). The host's imports
 * are JS functions, which link whatever type the guest declares: without this check a
 * mistyped import would only misbehave at run time.
 */
export const IMPORT_SIGNATURES: Readonly<Record<string, Signature>> = {
  fail: sig([I32, I32], []),
  oom: sig([I32], []),
  invoke: sig([I32, I32, I32, I32, I32], [I64]),
  module_index: sig([], [I32]),
  invoke_at: sig([I32, I32, I32, I32, I32, I32], [I64]),
  exporters: sig([I32, I32], [I32]),
  exporter_index: sig([I32, I32, I32, I32], [I32]),
};

/** The import module of the input accessors. */
export const INPUT_MODULE = 'offthread.input';

/**
 * The input accessors (`offthread.input`, docs/guest-abi.md "Reading the input in
 * place"): little-endian loads at a byte address of the input memory, and `copy(dst,
 * src, len)` from it into the guest's own memory. Where the engine has multi-memory
 * `guests.load` rewrites their calls into the loads themselves (wasm-rewrite.ts).
 */
export const INPUT_SIGNATURES: Readonly<Record<string, Signature>> = {
  load_u8: sig([I32], [I32]),
  load_u16: sig([I32], [I32]),
  load_u32: sig([I32], [I32]),
  load_u64: sig([I32], [I64]),
  load_f32: sig([I32], ['f32']),
  load_f64: sig([I32], ['f64']),
  copy: sig([I32, I32, I32], []),
};

/**
 * Bit 31 of `offthread_call`'s `export`: this call's input is in place, at (ptr, len)
 * of the input memory the accessors read, not in the guest's own memory.
 */
export const IN_PLACE = 0x8000_0000;

/** `(i32, i32) -> i64`; `()` for no results, as the docs write it. */
export function formatSignature(s: Signature): string {
  const results = s.results.length === 1 ? (s.results[0] as string) : `(${s.results.join(', ')})`;
  return `(${s.params.join(', ')}) -> ${results}`;
}

const sameSignature = (a: Signature, b: Signature) =>
  a.params.join() === b.params.join() && a.results.join() === b.results.join();

const EXTERN_KINDS = ['a function', 'a table', 'a memory', 'a global', 'a tag'];

/** What the guest ABI reads from a module's bytes: its memory import and function types. */
export interface ModuleShape {
  memory: MemoryImport | null;
  /** Function imports: module, field and type (null: a type this reader does not know). */
  functionImports: { module: string; name: string; type: Signature | null }[];
  /** Exports by name: kind (0 function … 4 tag) and, for functions, the type. */
  exports: Map<string, { kind: number; type: Signature | null }>;
}

/**
 * Reads the type, import, function and export sections (a module WebAssembly.compile
 * accepted). Throws ERR_GUEST_MODULE for bytes that are not a wasm module.
 */
export function readModule(bytes: Uint8Array, where: string): ModuleShape {
  const c = new WasmCursor(bytes, (why) => bad(where, why));
  const byte = () => c.byte();
  const leb = () => c.uleb();
  const name = () => c.name();
  /** A value type's name; null for one this reader does not know (a GC type, say). */
  const valtype = (): string | null => {
    const t = byte();
    const simple = VALTYPES[t];
    if (simple) return simple;
    if (t === 0x63 || t === 0x64) {
      leb(); // a typed reference's heap type
      return t === 0x63 ? 'ref null' : 'ref';
    }
    return null;
  };
  const limits = () => {
    const { initial, maximum, shared } = c.limits();
    return { initial, maximum, shared };
  };
  const magic = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  if (bytes.length < 8 || magic.some((b, i) => bytes[i] !== b)) {
    throw bad(where, 'not a WebAssembly module (bad magic or version)');
  }
  const types: (Signature | null)[] = [];
  const functionTypes: number[] = []; // the function index space: imports, then own
  const shape: ModuleShape = { memory: null, functionImports: [], exports: new Map() };
  const exports: { name: string; kind: number; index: number }[] = [];
  for (const { id, start } of c.sections()) {
    c.at = start;
    if (id === 1) {
      for (let n = leb(), i = 0; i < n; i++) {
        // Only plain function types (0x60); anything else (GC's rec groups) ends the
        // reading of types: the functions typed by them are reported as unknown.
        if (bytes[c.at] !== 0x60) break;
        c.at++;
        const params = Array.from({ length: leb() }, valtype);
        const results = Array.from({ length: leb() }, valtype);
        const known = [...params, ...results].every((t) => t !== null);
        types.push(known ? sig(params as string[], results as string[]) : null);
      }
    } else if (id === 2) {
      for (let n = leb(), i = 0; i < n; i++) {
        const module = name();
        const field = name();
        const kind = byte();
        if (kind === 0) {
          const type = leb();
          functionTypes.push(type);
          shape.functionImports.push({ module, name: field, type: types[type] ?? null });
        } else if (kind === 1) {
          valtype();
          limits();
        } else if (kind === 2) {
          const mem = limits();
          // `env.memory` is the guest's own memory; others are interface memories
          // (`offthread.memory`, wasm-scan.ts), possible where the engine has multi-memory.
          if (module === 'env' && field === 'memory') shape.memory ??= mem;
        } else if (kind === 3) {
          valtype();
          byte();
        } else if (kind === 4) {
          byte();
          leb();
        } else throw bad(where, `unknown import kind ${kind}`);
      }
    } else if (id === 3) {
      for (let n = leb(), i = 0; i < n; i++) functionTypes.push(leb());
    } else if (id === 7) {
      for (let n = leb(), i = 0; i < n; i++) exports.push({ name: name(), kind: byte(), index: leb() });
    }
  }
  for (const e of exports) {
    const type = e.kind === 0 ? (types[functionTypes[e.index] ?? -1] ?? null) : null;
    shape.exports.set(e.name, { kind: e.kind, type });
  }
  return shape;
}

const VALTYPES: Record<number, string> = {
  127: 'i32',
  126: 'i64',
  125: 'f32',
  124: 'f64',
  123: 'v128',
  112: 'funcref',
  111: 'externref',
};

/**
 * Every ABI export present with its documented type, every `offthread.*` import with
 * its own: ERR_GUEST_MODULE naming each one that is off. A guest that loaded with a
 * mistyped export would fail every call (an i64 where the host expects an i32 arrives
 * as a BigInt), so it is refused here instead.
 */
export function checkAbi(shape: ModuleShape, where: string): void {
  const missing = REQUIRED_EXPORTS.filter((e) => !shape.exports.has(e));
  if (missing.length > 0) {
    throw bad(where, `missing guest ABI exports ${missing.join(', ')} (docs/guest-abi.md)`);
  }
  const wrong: string[] = [];
  const compare = (what: string, found: { kind: number; type: Signature | null }, want: Signature) => {
    const needs = `the guest ABI needs ${formatSignature(want)}`;
    if (found.kind !== 0) wrong.push(`${what} is ${EXTERN_KINDS[found.kind] ?? 'not a function'}, ${needs}`);
    else if (!found.type) wrong.push(`${what} has a type this host cannot read, ${needs}`);
    else if (!sameSignature(found.type, want)) wrong.push(`${what} is ${formatSignature(found.type)}, ${needs}`);
  };
  for (const e of REQUIRED_EXPORTS)
    compare(`export ${e}`, shape.exports.get(e) as { kind: number; type: null }, EXPORT_SIGNATURES[e]);
  for (const i of shape.functionImports) {
    const want =
      i.module === 'offthread' && Object.hasOwn(IMPORT_SIGNATURES, i.name) ? IMPORT_SIGNATURES[i.name] : undefined;
    if (want) compare(`import offthread.${i.name}`, { kind: 0, type: i.type }, want);
    if (i.module !== INPUT_MODULE) continue;
    const accessor = Object.hasOwn(INPUT_SIGNATURES, i.name) ? INPUT_SIGNATURES[i.name] : undefined;
    if (accessor) compare(`import offthread.input.${i.name}`, { kind: 0, type: i.type }, accessor);
    else wrong.push(`import offthread.input.${i.name} is not an input accessor the host offers`);
  }
  if (wrong.length > 0) throw bad(where, `${wrong.join('; ')} (docs/guest-abi.md)`);
}
