/**
 * A load-time reader of a guest's memories and of every instruction that writes one
 * (docs/guest-abi.md, "Read-only memories"). The engine has validated the module
 * before this runs, so the reader only has to know each opcode's immediates to step
 * over them; an opcode it does not know is refused rather than guessed past, since a
 * wrong guess would desynchronise the rest of the function. Host-neutral.
 */
import { makeError } from '../errors.js';
import type { Access, InterfaceDecl } from './abi.js';
import { WasmCursor } from './wasm-bytes.js';

/** One entry of the module's memory index space (imports first, then its own). */
export interface MemorySlot {
  /** `module.name` of an imported memory; null for one the module defines. */
  import: { module: string; name: string } | null;
  initial: number;
  maximum: number | null;
  shared: boolean;
  /** A 64-bit or custom-page-size memory: never one the host offers. */
  exotic: boolean;
}

/** The first instruction (or active data segment) that writes a memory. */
export interface MemoryWrite {
  /** Function index (imports counted), or -1 for an active data segment. */
  func: number;
  /** Data segment index when `func` is -1. */
  segment: number;
  /** Byte offset of the instruction in the module. */
  offset: number;
  op: string;
}

export interface ModuleMemories {
  memories: MemorySlot[];
  /** Imports under the interface-memory module that are not memories: `[name, kind]`. */
  misplaced: { name: string; kind: string }[];
  /** Per memory index, its first write (undefined: never written); only when the code was scanned. */
  writes: (MemoryWrite | undefined)[];
  /** Whether the code section was decoded. */
  scanned: boolean;
}

/** The import module an interface memory is imported from: `offthread.memory` `<interface>.<memory>`. */
export const MEMORY_MODULE = 'offthread.memory';

const KINDS = ['a function', 'a table', 'a memory', 'a global', 'a tag'];

const MEMORY_OPS: Record<number, string> = {
  54: 'i32.store',
  55: 'i64.store',
  56: 'f32.store',
  57: 'f64.store',
  58: 'i32.store8',
  59: 'i32.store16',
  60: 'i64.store8',
  61: 'i64.store16',
  62: 'i64.store32',
};

const SIMD_STORES: Record<number, string> = {
  11: 'v128.store',
  88: 'v128.store8_lane',
  89: 'v128.store16_lane',
  90: 'v128.store32_lane',
  91: 'v128.store64_lane',
};

/** A `call` (or `return_call`, `tail`) of function `callee` at bytes `start..end` of the module. */
export type CallSite = (callee: number, start: number, end: number, tail: boolean) => void;

/**
 * Reads the module's memory index space and, when `scanCode` (by default: when the
 * module imports an interface memory), the first write of each memory: stores, `memory.grow`,
 * `memory.fill`, the destination of `memory.copy`, `memory.init`, SIMD and atomic
 * stores, and active data segments. ERR_GUEST_MODULE for an opcode it does not know.
 * `onCall` sees every direct call on the way (the input rewrite, wasm-rewrite.ts).
 */
export function readMemories(bytes: Uint8Array, where: string, scanCode?: boolean, onCall?: CallSite): ModuleMemories {
  const fail = (why: string) => makeError('ERR_GUEST_MODULE', `${where}: ${why}`);
  const c = new WasmCursor(bytes, fail);
  const byte = () => c.byte();
  const uleb = () => c.uleb();
  const sleb = () => c.sleb();
  const skip = (n: number) => c.skip(n);
  const name = () => c.name();
  const valtype = () => c.valtype();
  const limits = () => c.limits();

  const out: ModuleMemories = { memories: [], misplaced: [], writes: [], scanned: false };
  let importedFunctions = 0;
  let code: { start: number; end: number } | null = null;
  let data: { start: number; end: number } | null = null;
  for (const { id, start, end } of c.sections()) {
    c.at = start;
    if (id === 2) {
      for (let n = uleb(), i = 0; i < n; i++) {
        const module = name();
        const field = name();
        const kind = byte();
        if (module === MEMORY_MODULE && kind !== 2) out.misplaced.push({ name: field, kind: KINDS[kind] ?? 'unknown' });
        if (kind === 0) {
          uleb();
          importedFunctions++;
        } else if (kind === 1) {
          valtype();
          limits();
        } else if (kind === 2) out.memories.push({ import: { module, name: field }, ...limits() });
        else if (kind === 3) {
          valtype();
          byte();
        } else if (kind === 4) {
          byte();
          uleb();
        } else throw fail(`unknown import kind ${kind}`);
      }
    } else if (id === 5) {
      for (let n = uleb(), i = 0; i < n; i++) out.memories.push({ import: null, ...limits() });
    } else if (id === 10) code = { start, end };
    else if (id === 11) data = { start, end };
  }
  // Only a module that imports an interface memory has anything to check.
  if (!(scanCode ?? out.memories.some((m) => m.import?.module === MEMORY_MODULE))) return out;
  out.scanned = true;

  let func = -1;
  let segment = -1;
  const wrote = (memory: number, offset: number, op: string) => {
    out.writes[memory] ??= { func, segment, offset, op };
  };
  /** memarg: alignment flags (bit 6: a memory index follows), [memidx], offset. */
  const memarg = () => {
    const flags = uleb();
    const memory = flags & 0x40 ? uleb() : 0;
    uleb();
    return memory;
  };

  /** One instruction at `at`; returns false at an `end` that closes the expression. */
  let depth = 0;
  const instruction = (): boolean => {
    const start = c.at;
    const op = byte();
    if (op >= 0x45 && op <= 0xc4) return true; // numeric, conversions, sign extension
    if (op >= 0x28 && op <= 0x35) {
      memarg();
      return true;
    }
    const store = MEMORY_OPS[op];
    if (store) {
      wrote(memarg(), start, store);
      return true;
    }
    switch (op) {
      case 0x00: // unreachable
      case 0x01: // nop
      case 0x0f: // return
      case 0x1a: // drop
      case 0x1b: // select
      case 0x0a: // throw_ref
      case 0x19: // catch_all
      case 0xd1: // ref.is_null
      case 0xd3: // ref.as_non_null
        return true;
      case 0x05: // else
        return true;
      case 0x0b: // end
        if (depth === 0) return false;
        depth--;
        return true;
      case 0x02: // block
      case 0x03: // loop
      case 0x04: // if
      case 0x06: {
        // try (legacy exceptions)
        const t = sleb(); // blocktype: s33 type index, or a negative value type
        if (t === -29 || t === -28) sleb();
        depth++;
        return true;
      }
      case 0x1f: {
        // try_table: blocktype, vec(catch)
        const t = sleb();
        if (t === -29 || t === -28) sleb();
        for (let n = uleb(), i = 0; i < n; i++) {
          const kind = byte();
          if (kind <= 1) uleb();
          uleb();
        }
        depth++;
        return true;
      }
      case 0x07: // catch tag
      case 0x08: // throw tag
      case 0x09: // rethrow label
      case 0x0c: // br
      case 0x0d: // br_if
      case 0x14: // call_ref
      case 0x15: // return_call_ref
      case 0xd2: // ref.func
      case 0xd4: // br_on_null
      case 0xd6: // br_on_non_null
      case 0x20: // local.get
      case 0x21: // local.set
      case 0x22: // local.tee
      case 0x23: // global.get
      case 0x24: // global.set
      case 0x25: // table.get
      case 0x26: // table.set
        uleb();
        return true;
      case 0x10: // call
      case 0x12: {
        // return_call
        const callee = uleb();
        onCall?.(callee, start, c.at, op === 0x12);
        return true;
      }
      case 0x18: // delegate label: closes a try
        uleb();
        depth--;
        return true;
      case 0x0e: // br_table
        for (let n = uleb(), i = 0; i <= n; i++) uleb();
        return true;
      case 0x11: // call_indirect type table
      case 0x13: // return_call_indirect
        uleb();
        uleb();
        return true;
      case 0x1c: // select t*
        for (let n = uleb(), i = 0; i < n; i++) valtype();
        return true;
      case 0x3f: // memory.size
        uleb();
        return true;
      case 0x40: // memory.grow
        wrote(uleb(), start, 'memory.grow');
        return true;
      case 0x41: // i32.const
      case 0x42: // i64.const
        sleb();
        return true;
      case 0x43:
        skip(4);
        return true;
      case 0x44:
        skip(8);
        return true;
      case 0xd0: // ref.null heaptype
        sleb();
        return true;
      case 0xfc:
        return bulk(start);
      case 0xfd:
        return simd(start);
      case 0xfe:
        return atomic(start);
    }
    throw fail(
      `function #${func} has opcode 0x${op.toString(16)} at byte ${start}, which the read-only memory check does not know; the module is refused rather than read past it`,
    );
  };

  const bulk = (start: number): boolean => {
    const op = uleb();
    if (op <= 7) return true; // saturating truncations
    switch (op) {
      case 8: // memory.init data mem
        uleb();
        wrote(uleb(), start, 'memory.init');
        return true;
      case 9: // data.drop
      case 13: // elem.drop
      case 15: // table.grow
      case 16: // table.size
      case 17: // table.fill
        uleb();
        return true;
      case 10: {
        // memory.copy dst src: only the destination is written
        const dst = uleb();
        uleb();
        wrote(dst, start, 'memory.copy');
        return true;
      }
      case 11: // memory.fill
        wrote(uleb(), start, 'memory.fill');
        return true;
      case 12: // table.init elem table
      case 14: // table.copy
        uleb();
        uleb();
        return true;
    }
    throw fail(`function #${func} has opcode 0xfc ${op} at byte ${start}, unknown to the read-only memory check`);
  };

  const simd = (start: number): boolean => {
    const op = uleb();
    if (op <= 10 || op === 92 || op === 93) {
      memarg(); // loads, splats, load_zero
      return true;
    }
    const store = SIMD_STORES[op];
    if (store) {
      wrote(memarg(), start, store);
      if (op !== 11) byte(); // lane
      return true;
    }
    if (op >= 84 && op <= 87) {
      memarg(); // load_lane
      byte();
      return true;
    }
    if (op === 12 || op === 13) {
      skip(16); // v128.const, i8x16.shuffle
      return true;
    }
    if (op >= 21 && op <= 34) {
      byte(); // extract_lane / replace_lane
      return true;
    }
    // Everything else up to the relaxed-SIMD range has no immediates.
    if (op <= 0x113) return true;
    throw fail(`function #${func} has opcode 0xfd ${op} at byte ${start}, unknown to the read-only memory check`);
  };

  const atomic = (start: number): boolean => {
    const op = uleb();
    if (op === 3) {
      byte(); // atomic.fence
      return true;
    }
    if (op <= 2 || (op >= 0x10 && op <= 0x16)) {
      memarg(); // notify, wait, loads
      return true;
    }
    if (op >= 0x17 && op <= 0x4e) {
      wrote(memarg(), start, op <= 0x1d ? 'atomic store' : 'atomic read-modify-write');
      return true;
    }
    throw fail(`function #${func} has opcode 0xfe ${op} at byte ${start}, unknown to the read-only memory check`);
  };

  if (code) {
    c.at = code.start;
    func = importedFunctions;
    for (let n = uleb(), i = 0; i < n; i++, func++) {
      const size = uleb();
      const end = c.at + size;
      for (let groups = uleb(), g = 0; g < groups; g++) {
        uleb();
        valtype();
      }
      depth = 0;
      while (c.at < end && instruction()) {
        // one instruction at a time to the function's final `end`
      }
      if (c.at !== end) throw fail(`function #${func}: its body did not end where its size says`);
    }
  }
  if (data) {
    c.at = data.start;
    func = -1;
    for (let n = uleb(), i = 0; i < n; i++) {
      segment = i;
      const flags = uleb();
      if (flags !== 1) {
        const memory = flags === 2 ? uleb() : 0;
        const start = c.at;
        depth = 0;
        while (instruction()) {
          // the offset expression
        }
        wrote(memory, start, 'an active data segment');
      }
      skip(uleb());
    }
  }
  return out;
}

let multi: boolean | undefined;

/**
 * Whether this engine has the multi-memory proposal: does it validate a module with
 * two memories? Node 20's V8 does not; Node ≥ 22, Chromium and Firefox do.
 */
export function multiMemory(): boolean {
  multi ??= WebAssembly.validate(
    // magic, version 1; a memory section (id 5, 5 bytes) with two memories of 0 pages
    new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x05, 0x05, 0x02, 0x00, 0x00, 0x00, 0x00]),
  );
  return multi;
}

/**
 * The module's interface-memory imports, checked for what needs no descriptor (before
 * it is instantiated, which these would otherwise fail as a bare link error): only
 * memories under `offthread.memory`, named `<interface>.<memory>`, plain 32-bit and
 * not shared; any other memory import but `env.memory` is one the host does not offer.
 */
export function interfaceSlots(found: ModuleMemories, where: string): { slot: MemorySlot; index: number }[] {
  const fail = (why: string) => makeError('ERR_GUEST_MODULE', `${where}: ${why} (docs/guest-abi.md)`);
  const misplaced = found.misplaced[0];
  if (misplaced) throw fail(`imports ${MEMORY_MODULE} ${misplaced.name} as ${misplaced.kind}: it can only be a memory`);
  const out: { slot: MemorySlot; index: number }[] = [];
  found.memories.forEach((slot, index) => {
    if (!slot.import || (slot.import.module === 'env' && slot.import.name === 'memory')) return;
    const full = `${slot.import.module}.${slot.import.name}`;
    if (slot.import.module !== MEMORY_MODULE) throw fail(`imports memory ${full}, which the host does not offer`);
    if (!/^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$/.test(slot.import.name)) {
      throw fail(`imports memory ${full}: the name must be <interface>.<memory>`);
    }
    if (slot.shared || slot.exotic) throw fail(`imports memory ${full} as shared, 64-bit or with custom pages`);
    out.push({ slot, index });
  });
  return out;
}

/** An interface memory a module imports, with the limits the host creates it with. */
export interface InterfaceMemoryImport {
  /** `<interface>.<memory>`: the import's name under `offthread.memory`. */
  name: string;
  initial: number;
  maximum: number;
}

const can = (a: Access, what: 'read' | 'write') => a === what || a === 'readwrite';

/**
 * Holds a module's memory imports to its interfaces' declarations (load time, once the
 * descriptors are known): each `offthread.memory` import is a memory of an interface
 * the module declares, which its role (importer, exporter) may access, within the
 * declared pages; and a memory its roles may only read is never written — no store,
 * grow, fill, copy into or init into it, no active data segment. ERR_GUEST_MODULE
 * naming the memory, and for a write the function and byte offset.
 */
export function checkInterfaceMemories(
  found: ModuleMemories,
  declared: { exports: InterfaceDecl[]; imports: InterfaceDecl[] },
  where: string,
): InterfaceMemoryImport[] {
  const fail = (why: string) => makeError('ERR_GUEST_MODULE', `${where}: ${why} (docs/guest-abi.md)`);
  const out: InterfaceMemoryImport[] = [];
  interfaceSlots(found, where).forEach(({ slot, index }) => {
    const full = `${MEMORY_MODULE}.${slot.import?.name}`;
    const [iface, memory] = (slot.import?.name ?? '').split('.');
    const roles = [
      ...declared.exports.filter((d) => d.name === iface).map((d) => ({ d, role: 'export' as const })),
      ...declared.imports.filter((d) => d.name === iface).map((d) => ({ d, role: 'import' as const })),
    ];
    if (roles.length === 0) {
      throw fail(`imports memory ${full}, not a memory of an interface it exports or imports`);
    }
    const decl = roles[0]?.d.memories.find((m) => m.name === memory);
    if (!decl) throw fail(`imports memory ${full}, but interface ${iface} has no memory ${memory}`);
    // A module that both exports and imports the interface has both roles' access.
    const access = roles.map(({ d, role }) => (d.memories.find((m) => m.name === memory) ?? decl)[role]);
    if (!access.some((a) => can(a, 'read') || can(a, 'write'))) {
      throw fail(`imports memory ${full}, to which interface ${iface} gives its ${roles[0]?.role}ers no access`);
    }
    if (slot.initial > decl.pages) {
      throw fail(`imports memory ${full} with ${slot.initial} pages at start, over the ${decl.pages} declared`);
    }
    const write = found.writes[index];
    if (write && !access.some((a) => can(a, 'write'))) {
      const at = write.func >= 0 ? `function #${write.func}` : `data segment #${write.segment}`;
      throw fail(
        `${at} writes memory ${full} (memory ${index}) with ${write.op} at byte ${write.offset}, but interface ${iface} declares ${memory} read-only for its ${roles.map((r) => `${r.role}ers`).join(' and ')}`,
      );
    }
    out.push({
      name: slot.import?.name as string,
      initial: slot.initial,
      maximum: Math.min(slot.maximum ?? decl.pages, decl.pages),
    });
  });
  return out;
}
