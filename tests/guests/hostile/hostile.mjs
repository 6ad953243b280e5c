// The hostile guest (docs/guest-abi.md) for packages/offthread/test/guest-fuzz.test.mjs,
// assembled at test time rather than built from Rust like tests/guests/basic: what it
// says at load (ABI version, init counts, descriptors, exports, import types) must vary
// per fuzz case, which one compiled module cannot do, and a byte-level assembler needs no
// toolchain, no setup step and no new dependency (wabt would be a 4 MB devDependency for
// ~150 lines of bytes).
//
// Its `offthread_call` runs a program from its input: 9-byte instructions (op, a: u32,
// b: u32, little-endian), op taken mod OPS.length, until one ends the call or the input
// runs out (then an empty result).
import { I32, I64, section, sleb, str, uleb, vec } from '../wasm-encode.mjs';

const enc = new TextEncoder();

export const OPS = [
  'ret', // return pack(a, b): any buffer, in memory or not
  'retIn', // return pack(input + a, b): a slice of the input
  'fail', // offthread.fail(a, b); return -1
  'failOn', // offthread.fail(a, b), then go on (the call may still succeed)
  'grow', // memory.grow(a & 255)
  'trap', // unreachable
  'scribble', // fill the input with byte a, if (a >> 8 & 1) is this module's id
  'store', // i32.store at address a: value b (out of bounds traps)
  'oom', // offthread.oom(a)
  'neg', // return -1 without a message
  'spin', // a & 0x3ffff empty loop rounds
  'invoke', // r = offthread.invoke("h", fn a, this input); return r unless -1
  'reentries', // return pack(0, n): n = times offthread_call was entered while running
];
const OP = Object.fromEntries(OPS.map((n, i) => [n, i]));

/** Where things live in the guest's first page; offthread_alloc answers INPUT. */
export const INPUT = 16_384;
const NAME_AT = 256;
const EXPORT_TABLE = 512;
const IMPORT_TABLE = 640;
const DESCRIPTORS = 1024;
const TABLE_SIZE = 16;

export const pack = (ptr, len) => BigInt.asIntN(64, (BigInt(len >>> 0) << 32n) | BigInt(ptr >>> 0));

/** One program instruction. */
export function instr(op, a = 0, b = 0) {
  const out = new Uint8Array(9);
  const v = new DataView(out.buffer);
  v.setUint8(0, typeof op === 'string' ? OP[op] : op);
  v.setUint32(1, a >>> 0, true);
  v.setUint32(5, b >>> 0, true);
  return out;
}

const TYPES = [
  [[], [I32]], // 0: abi, init
  [[I32], [I64]], // 1: export, import
  [[I32], [I32]], // 2: alloc
  [[I32, I32, I32, I32], [I64]], // 3: call
  [[I32, I32], []], // 4: offthread.fail
  [[I32], []], // 5: offthread.oom
  [[I32, I32, I32, I32, I32], [I64]], // 6: offthread.invoke
  [[I32, I32], [I64]], // 7: the interpreter
  [[I64], [I32]], // 8: a wrong type for any import
];
export const ABI_EXPORTS = [
  'offthread_abi',
  'offthread_init',
  'offthread_export',
  'offthread_import',
  'offthread_alloc',
  'offthread_call',
];

/** The interpreter's locals: params ptr 0, len 1; then pc 2, end 3, op 4, a 5, b 6 (i32), r 7 (i64). */
const [PTR, LEN, PC, END, OPL, A, B, R] = [0, 1, 2, 3, 4, 5, 6, 7];
const get = (l) => [0x20, l];
const set = (l) => [0x21, l];
const i32 = (v) => [0x41, ...sleb(v)];
const packAB = (ptrCode) => [...ptrCode, 0xad, ...get(B), 0xad, 0x42, 32, 0x86, 0x84, 0x0f]; // extend_u, shl, or, return

/**
 * Calls of import `k` (0 fail, 1 oom, 2 invoke) with `args`: as the ABI types them, or,
 * for an import declared with the wrong type 8 ((i64) -> i32), as that type says
 * (still valid WebAssembly: the host's JS functions accept any call).
 */
function callImport(k, args, wrong) {
  if (!wrong) return [...args.flat(), 0x10, k];
  const widen = k === 2 ? [0xac] : [0x1a]; // invoke: i64.extend_i32_s; else drop
  return [...args[0], 0xad, 0x10, k, ...widen];
}

function interpreter(id, importTypes) {
  const wrong = importTypes.map((t, k) => t !== [4, 5, 6][k]);
  const body = {
    ret: packAB(get(A)),
    retIn: packAB([...get(PTR), ...get(A), 0x6a]),
    fail: [...callImport(0, [get(A), get(B)], wrong[0]), 0x42, 0x7f, 0x0f],
    failOn: callImport(0, [get(A), get(B)], wrong[0]),
    grow: [...get(A), ...i32(255), 0x71, 0x40, 0, 0x1a],
    trap: [0x00],
    scribble: [
      ...get(A),
      ...i32(8),
      0x76, // shr_u
      ...i32(1),
      0x71,
      ...i32(id),
      0x46, // eq
      0x04,
      0x40,
      ...get(PTR),
      ...get(A),
      ...get(LEN),
      0xfc,
      0x0b,
      0, // memory.fill
      0x0b,
    ],
    store: [...get(A), ...get(B), 0x36, 0, 0],
    oom: callImport(1, [get(A)], wrong[1]),
    neg: [0x42, 0x7f, 0x0f],
    spin: [
      ...get(A),
      ...i32(0x3ffff),
      0x71,
      ...set(A),
      0x02,
      0x40,
      0x03,
      0x40,
      ...get(A),
      0x45,
      0x0d,
      1,
      ...get(A),
      ...i32(1),
      0x6b,
      ...set(A),
      0x0c,
      0,
      0x0b,
      0x0b,
    ],
    invoke: [
      ...callImport(2, [i32(NAME_AT), i32(1), get(A), get(PTR), get(LEN)], wrong[2]),
      0x22,
      R,
      0x42,
      0x7f,
      0x52, // i64.ne
      0x04,
      0x40,
      ...get(R),
      0x0f,
      0x0b,
    ],
    reentries: [...i32(0), 0xad, 0x23, 1, 0xad, 0x42, 32, 0x86, 0x84, 0x0f],
  };
  const dispatch = OPS.flatMap((name, k) => [...get(OPL), ...i32(k), 0x46, 0x04, 0x40, ...body[name], 0x0b]);
  return [
    ...get(PTR),
    ...set(PC),
    ...get(PTR),
    ...get(LEN),
    0x6a,
    ...set(END),
    0x02,
    0x40, // block $done
    0x03,
    0x40, // loop $next
    ...get(PC),
    ...i32(9),
    0x6a,
    ...get(END),
    0x4b, // gt_u
    0x0d,
    1, // br_if $done
    ...get(PC),
    0x2d,
    0,
    0, // i32.load8_u
    ...i32(OPS.length),
    0x70, // rem_u
    ...set(OPL),
    ...get(PC),
    0x28,
    0,
    1, // i32.load offset=1
    ...set(A),
    ...get(PC),
    0x28,
    0,
    5, // i32.load offset=5
    ...set(B),
    ...get(PC),
    ...i32(9),
    0x6a,
    ...set(PC),
    ...dispatch,
    0x0c,
    0, // br $next
    0x0b,
    0x0b,
    0x42,
    0, // ran off the end: an empty result
  ];
}

/** Descriptor JSON of the interfaces every hostile guest exports: `h` (direct) and `hf` (fanout). */
export function descriptor(name, pattern = 'direct') {
  const fanout = pattern === 'fanout';
  return JSON.stringify({
    name,
    pattern,
    fingerprint: fanout ? 'f0f0f0f0f0f0f0f0' : '0f0f0f0f0f0f0f0f',
    memories: fanout
      ? [
          { name: 'input', import: 'write', export: 'read', pages: 1 },
          { name: 'out', import: 'read', export: 'write', pages: 1 },
        ]
      : [],
    functions: [
      {
        name: 'run',
        input: fanout ? { memory: 'input' } : { memory: null },
        output: fanout ? { memory: 'out' } : { memory: null },
      },
    ],
  });
}
export const H = descriptor('h');
export const HF = descriptor('hf', 'fanout');

/**
 * A hostile guest. Everything it tells the host at load can lie: `abi`, `init` (counts),
 * `exports` / `imports` (descriptor texts, or raw packed i64 answers such as buffers
 * outside memory), `omit` (ABI exports left out), `extra` (more exports), `importTypes`
 * (the type of offthread.fail / oom / invoke; 8 is wrong for all three). `id` (0 or 1)
 * tells `scribble` which module it is.
 */
export function hostile({
  abi = 1,
  exports = [H, HF],
  imports = [],
  init = (imports.length << 16) | exports.length,
  omit = [],
  extra = false,
  importTypes = [4, 5, 6],
  id = 0,
} = {}) {
  const types = section(1, vec(TYPES.map(([p, r]) => [0x60, ...vec(p.map((t) => [t])), ...vec(r.map((t) => [t]))])));
  const importSec = section(
    2,
    vec([
      [...str('env'), ...str('memory'), 0x02, 0x00, ...uleb(1)],
      [...str('offthread'), ...str('fail'), 0x00, ...uleb(importTypes[0])],
      [...str('offthread'), ...str('oom'), 0x00, ...uleb(importTypes[1])],
      [...str('offthread'), ...str('invoke'), 0x00, ...uleb(importTypes[2])],
    ]),
  );
  // Functions 3..9 (0..2 are the imports): the six ABI exports, then the interpreter.
  const funcs = section(3, vec([0, 0, 1, 1, 2, 3, 7].map((t) => uleb(t))));
  const globals = section(
    6,
    vec([
      [I32, 1, ...i32(0), 0x0b], // busy: inside offthread_call
      [I32, 1, ...i32(0), 0x0b], // re-entries seen
    ]),
  );
  const names = [...ABI_EXPORTS.filter((n) => !omit.includes(n))];
  const exportList = names.map((n) => [...str(n), 0x00, ...uleb(3 + ABI_EXPORTS.indexOf(n))]);
  if (extra) exportList.push([...str('interpret'), 0x00, ...uleb(9)], [...str('busy'), 0x03, ...uleb(0)]);
  const exportSec = section(7, vec(exportList));
  const table = (at) => [
    ...get(0),
    ...i32(TABLE_SIZE),
    0x49, // lt_u
    0x04,
    I64,
    ...get(0),
    ...i32(3),
    0x74, // shl
    0x29,
    3,
    ...uleb(at), // i64.load offset=at
    0x05,
    0x42,
    0x7f,
    0x0b,
  ];
  const alloc = [
    // > 40,000 bytes: a scrambled pointer (mostly outside memory); > 30,000: 0 (no room).
    ...get(0),
    ...i32(40_000),
    0x4b,
    0x04,
    I32,
    ...get(0),
    ...i32(-1640531535), // 2654435761 as i32
    0x6c, // mul
    0x05,
    ...get(0),
    ...i32(30_000),
    0x4b,
    0x04,
    I32,
    ...i32(0),
    0x05,
    ...i32(INPUT),
    0x0b,
    0x0b,
  ];
  const call = [
    0x23,
    0,
    0x04,
    0x40,
    0x23,
    1,
    ...i32(1),
    0x6a,
    0x24,
    1,
    0x0b, // if busy: re-entries += 1
    ...i32(1),
    0x24,
    0,
    ...get(2),
    ...get(3),
    0x10,
    9,
    ...i32(0),
    0x24,
    0,
  ];
  const bodies = [
    [0x00, ...i32(abi)],
    [0x00, ...i32(init)],
    [0x00, ...table(EXPORT_TABLE)],
    [0x00, ...table(IMPORT_TABLE)],
    [0x00, ...alloc],
    [0x00, ...call],
    [0x02, 5, I32, 1, I64, ...interpreter(id, importTypes)],
  ].map((b) => [...uleb(b.length + 1), ...b, 0x0b]);
  const code = section(10, vec(bodies));

  // Data: the interface name for invoke, both descriptor tables, the descriptor texts.
  const segments = [[0x00, ...i32(NAME_AT), 0x0b, ...str('h')]];
  let at = DESCRIPTORS;
  for (const [base, list] of [
    [EXPORT_TABLE, exports],
    [IMPORT_TABLE, imports],
  ]) {
    const entries = new Uint8Array(8 * TABLE_SIZE);
    const view = new DataView(entries.buffer);
    list.slice(0, TABLE_SIZE).forEach((d, i) => {
      if (typeof d === 'bigint') view.setBigInt64(8 * i, d, true);
      else {
        const bytes = enc.encode(d);
        view.setBigInt64(8 * i, pack(at, bytes.length), true);
        segments.push([0x00, ...i32(at), 0x0b, ...uleb(bytes.length), ...bytes]);
        at += bytes.length;
      }
    });
    segments.push([0x00, ...i32(base), 0x0b, ...uleb(entries.length), ...entries]);
  }
  if (at > INPUT) throw new Error('hostile: descriptors too long');
  const data = section(11, vec(segments));
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...types,
    ...importSec,
    ...funcs,
    ...globals,
    ...exportSec,
    ...code,
    ...data,
  ]);
}
