/**
 * The load-time rewrite that lets a guest read its fanout input in place
 * (docs/guest-abi.md, "Reading the input in place"). No toolchain here can emit a load
 * from a second memory (LLVM has no address space for one), so guests read the input
 * through imported accessors (`offthread.input` `load_u64(addr)`, …) and, where the
 * engine has multi-memory, every `call` of one becomes the load it stands for, with the
 * memory index of the imported interface memory. The imports stay, so no function index
 * moves; the host links them to stubs that trap if reached some other way (a table).
 * Host-neutral.
 */
import { makeError } from '../errors.js';
import { INPUT_MODULE } from './abi.js';
import { WasmCursor } from './wasm-bytes.js';
import { MEMORY_MODULE, readMemories } from './wasm-scan.js';

/** Each load accessor and its instruction's opcode (little-endian, any alignment). */
const LOADS: Readonly<Record<string, number>> = {
  load_u8: 0x2d, // i32.load8_u
  load_u16: 0x2f, // i32.load16_u
  load_u32: 0x28, // i32.load
  load_u64: 0x29, // i64.load
  load_f32: 0x2a, // f32.load
  load_f64: 0x2b, // f64.load
};

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

type Bytes = Uint8Array | number[];

function concat(parts: Bytes[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** What the rewrite did: for tests and stats. */
export interface Rewritten {
  bytes: Uint8Array;
  /** Accessor calls turned into loads (or `memory.copy`). */
  calls: number;
  /** The interface memory's index in the rewritten module. */
  memoryIndex: number;
}

/**
 * Rewrites `bytes` (a module the engine validated) so that its `offthread.input`
 * accessors read `offthread.memory` `<memory>` in place: the memory is imported (added
 * after the others when the module does not import it) as shared, `pages` at start and
 * at most, so one `WebAssembly.Memory({ shared: true })` links on every worker; every
 * `call`/`return_call` of an accessor becomes a load from it, `copy` a `memory.copy`
 * into `env.memory`. ERR_GUEST_MODULE when the module cannot be rewritten.
 */
export function rewriteInputAccessors(bytes: Uint8Array, memory: string, pages: number, where: string): Rewritten {
  const fail = (why: string) => makeError('ERR_GUEST_MODULE', `${where}: ${why} (docs/guest-abi.md)`);
  const c = new WasmCursor(bytes, fail);
  const sections = c.sections();
  const importSection = sections.find((s) => s.id === 2);
  const codeSection = sections.find((s) => s.id === 10);
  if (!importSection || !codeSection) throw fail('nothing to rewrite: no imports or no code');

  // The imports: accessor function indices, the memories' indices, the spans to keep.
  const accessors = new Map<number, string>();
  let functions = 0;
  let memories = 0;
  let env = -1;
  let target = -1;
  let targetLimits: [number, number] = [0, 0];
  c.at = importSection.start;
  const count = c.uleb();
  const entriesStart = c.at;
  for (let i = 0; i < count; i++) {
    const module = c.name();
    const field = c.name();
    const kind = c.byte();
    if (kind === 0) {
      c.uleb();
      if (module === INPUT_MODULE) accessors.set(functions, field);
      functions++;
    } else if (kind === 1) {
      c.valtype();
      c.limits();
    } else if (kind === 2) {
      const start = c.at;
      c.limits();
      if (module === 'env' && field === 'memory') env = memories;
      if (module === MEMORY_MODULE && field === memory) {
        target = memories;
        targetLimits = [start, c.at];
      }
      memories++;
    } else if (kind === 3) {
      c.valtype();
      c.byte();
    } else if (kind === 4) {
      c.byte();
      c.uleb();
    } else throw fail(`unknown import kind ${kind}`);
  }
  if (env < 0) throw fail('no env.memory import');
  // An added import takes the index after the imported memories: a memory the module
  // defines would move, and its code would then address the wrong one.
  if (target < 0 && sections.some((s) => s.id === 5 && bytes[s.start] !== 0)) {
    throw fail(`it defines a memory of its own, so ${MEMORY_MODULE} ${memory} cannot be added before it`);
  }
  const index = target >= 0 ? target : memories;
  const shared = [0x03, ...uleb(pages), ...uleb(pages)];
  const imports: Bytes[] = [uleb(target >= 0 ? count : count + 1)];
  if (target >= 0) {
    imports.push(bytes.subarray(entriesStart, targetLimits[0]), shared);
    imports.push(bytes.subarray(targetLimits[1], importSection.end));
  } else {
    imports.push(bytes.subarray(entriesStart, importSection.end));
    const enc = new TextEncoder();
    const name = (s: string) => [...uleb(enc.encode(s).length), ...enc.encode(s)];
    imports.push(name(MEMORY_MODULE), name(memory), [0x02], shared);
  }

  // Every call of an accessor, from the read-only check's instruction reader.
  const calls: { start: number; end: number; with: number[] }[] = [];
  readMemories(bytes, where, true, (callee, start, end, tail) => {
    const name = accessors.get(callee);
    if (name === undefined) return;
    const load = LOADS[name];
    let instr: number[];
    if (load !== undefined)
      instr = [load, 0x40, ...uleb(index), 0x00]; // align 1, memory index, offset 0
    else if (name === 'copy')
      instr = [0xfc, ...uleb(10), ...uleb(env), ...uleb(index)]; // memory.copy env ← input
    else throw fail(`imports ${INPUT_MODULE} ${name}, which the host does not offer`);
    calls.push({ start, end, with: tail ? [...instr, 0x0f] : instr }); // return_call: then return
  });

  // The code section again, each body with its calls replaced and its size re-encoded.
  const code: Bytes[] = [];
  c.at = codeSection.start;
  const bodies = c.uleb();
  code.push(uleb(bodies));
  let next = 0;
  for (let i = 0; i < bodies; i++) {
    const size = c.uleb();
    const end = c.at + size;
    const body: Bytes[] = [];
    let from = c.at;
    for (; next < calls.length && (calls[next] as { start: number }).start < end; next++) {
      const call = calls[next] as { start: number; end: number; with: number[] };
      body.push(bytes.subarray(from, call.start), call.with);
      from = call.end;
    }
    body.push(bytes.subarray(from, end));
    const joined = concat(body);
    code.push(uleb(joined.length), joined);
    c.at = end;
  }

  const parts: Bytes[] = [bytes.subarray(0, 8)];
  for (const s of sections) {
    const body = s === importSection ? concat(imports) : s === codeSection ? concat(code) : null;
    if (body) parts.push([s.id, ...uleb(body.length)], body);
    else parts.push(bytes.subarray(s.head, s.end));
  }
  const out = concat(parts);
  return { bytes: out, calls: calls.length, memoryIndex: index };
}
