/**
 * The guest ABI as the host sees it (docs/guest-abi.md): the exports a guest must
 * have, the JSON descriptor of each interface it exports or imports, how an i64
 * carries a buffer, and the one thing read from the module's bytes — its memory import.
 * Host-neutral: used on the main thread (load) and in workers (runtime.ts).
 */
import { makeError } from '../errors.js';

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
  if (!/^[0-9a-f]{16}$/.test(str('fingerprint'))) throw bad(where, `interface ${str('name')}: bad fingerprint`);
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
    return {
      name: f.name as string,
      input: place(f.input, memories, where),
      output: place(f.output, memories, where),
    };
  });
  return {
    name: str('name'),
    pattern: str('pattern') as Pattern,
    fingerprint: str('fingerprint'),
    memories,
    functions,
  };
}

/** The limits of the module's memory import (`env.memory`), read from its bytes. */
export interface MemoryImport {
  initial: number;
  maximum: number | null;
  shared: boolean;
}

/**
 * Reads the import section for the memory import; null when the module imports no
 * memory. Throws ERR_GUEST_MODULE for bytes that are not a wasm module.
 */
export function memoryImport(bytes: Uint8Array, where: string): MemoryImport | null {
  let at = 0;
  const byte = () => {
    if (at >= bytes.length) throw bad(where, 'truncated WebAssembly module');
    return bytes[at++] as number;
  };
  const leb = () => {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
      if (shift > 35) throw bad(where, 'malformed LEB128 in the module');
    }
  };
  const magic = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  if (bytes.length < 8 || magic.some((b, i) => bytes[i] !== b)) {
    throw bad(where, 'not a WebAssembly module (bad magic or version)');
  }
  at = 8;
  while (at < bytes.length) {
    const id = byte();
    const size = leb();
    const end = at + size;
    if (end > bytes.length) throw bad(where, 'truncated WebAssembly module');
    if (id !== 2) {
      at = end;
      continue;
    }
    const count = leb();
    for (let i = 0; i < count; i++) {
      for (let name = 0; name < 2; name++) {
        const len = leb(); // module name, then field name
        at += len;
      }
      const kind = byte();
      if (kind === 0) leb();
      else if (kind === 1) {
        byte();
        const flags = byte();
        leb();
        if (flags & 1) leb();
      } else if (kind === 2) {
        const flags = byte();
        const initial = leb();
        const maximum = flags & 1 ? leb() : null;
        return { initial, maximum, shared: (flags & 2) !== 0 };
      } else if (kind === 3) {
        byte();
        byte();
      } else throw bad(where, `unknown import kind ${kind}`);
    }
    return null;
  }
  return null;
}
