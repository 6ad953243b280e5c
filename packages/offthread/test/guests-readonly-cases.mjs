// Hand-made guests that import the `input` memory of a fanout interface `scan`
// (memory 1) and read or write it, for guests-readonly.test.mjs and the browser suite.
// Each `offthread_call` body (function #5) is raw instructions; `refused` is the
// message a refusal must match, or null for a guest that must load.
import { sleb } from '../../../tests/guests/wasm-encode.mjs';
import { assemble, pack } from './guests-wasm.mjs';

/** `scan` with one memory `input` (4 pages) the importer writes and the exporter accesses as `exporter`. */
export const scanDescriptor = (exporter) =>
  JSON.stringify({
    name: 'scan',
    pattern: 'fanout',
    fingerprint: '0123456789abcdef',
    memories: [{ name: 'input', import: 'write', export: exporter, pages: 4 }],
    functions: [{ name: 'checksum', fingerprint: 'fedcba9876543210', input: { memory: 'input' }, output: null }],
  });

const INPUT = [{ name: 'scan.input', min: 1, max: 4 }];
const I64_0 = [0x42, 0x00];
const zeros = (n) => Array(n).fill(0);
const mem1 = [0x42, 0x01, 0x00]; // memarg: align 2 with bit 6 set, memory 1, offset 0

/** An exporter of `scan` (access `exporter` to input) whose offthread_call runs `call`. */
const guest = (call, { exporter = 'read', memories = INPUT, ...more } = {}) =>
  assemble({ descriptor: scanDescriptor(exporter), memories, body: { offthread_call: [...call, ...I64_0] }, ...more });

/** An importer of `scan` (offthread_init: 1 import, 0 exports) whose offthread_call runs `call`. */
const importer = (call) => {
  const descriptor = scanDescriptor('read');
  const length = new TextEncoder().encode(descriptor).length;
  return assemble({
    descriptor,
    memories: INPUT,
    body: {
      offthread_init: [0x41, ...sleb(1 << 16)],
      offthread_import: [0x42, ...sleb(pack(1024, length))],
      offthread_call: [...call, ...I64_0],
    },
  });
};

const STORE_1 = [0x41, 0x00, 0x41, 0x07, 0x36, ...mem1];

// Every kind of immediate the reader must step over, then a store to memory 1.
const EVERYTHING = [
  ...[0x02, 0x40, 0x41, 0x00, 0x0e, 0x02, 0x00, 0x00, 0x00, 0x0b], // block; br_table
  ...[0x03, 0x7f, 0x41, 0x05, 0x0b, 0x1a], // loop (result i32)
  ...[0x44, ...zeros(8), 0x1a, 0x43, ...zeros(4), 0x1a], // f64.const, f32.const
  ...[0x42, 0x80, 0x80, 0x80, 0x80, 0x10, 0x1a], // i64.const, five bytes
  ...[0x41, 0x01, 0x41, 0x02, 0x41, 0x01, 0x1c, 0x01, 0x7f, 0x1a], // select (result i32)
  ...[0x41, 0x00, 0xc0, 0x1a], // i32.extend8_s
  ...[0xfd, 0x0c, ...zeros(16), 0xfd, 0x0c, ...zeros(16), 0xfd, 0x0d, ...zeros(16)], // v128.const ×2, shuffle
  ...[0xfd, 0x15, 0x03, 0x1a], // i8x16.extract_lane_s 3
  ...[0x41, 0x00, 0xfd, 0x00, 0x04, 0x00, 0x1a], // v128.load
  ...[0x41, 0x00, 0xfd, 0x0c, ...zeros(16), 0xfd, 0x54, 0x00, 0x00, 0x01, 0x1a], // v128.load8_lane 1
  ...[0x41, 0x00, 0xfe, 0x10, 0x02, 0x00, 0x1a], // i32.atomic.load
  ...[0x41, 0x00, 0x41, 0x00, 0x41, 0x00, 0xfc, 0x0b, 0x00], // memory.fill 0
  ...[0x43, ...zeros(4), 0xfc, 0x00, 0x1a], // i32.trunc_sat_f32_s
  ...[0x3f, 0x00, 0x1a, 0x3f, 0x01, 0x1a], // memory.size 0, 1
  ...[0xd0, 0x70, 0xd1, 0x1a], // ref.null func; ref.is_null
  ...[0x41, 0x00, 0x04, 0x40, 0x01, 0x05, 0x01, 0x0b], // if else end
  ...[0x41, 0x00, 0x28, 0x42, 0x01, 0x80, 0x01, 0x1a], // i32.load memory 1 offset 128: a read
];

function indexOf(hay, needle) {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

export const READONLY_CASES = [
  { name: 'loads from memory 1', bytes: () => guest([0x41, 0x00, 0x28, ...mem1, 0x1a]), refused: null },
  { name: 'i32.store to memory 0', bytes: () => guest([0x41, 0x00, 0x41, 0x07, 0x36, 0x02, 0x00]), refused: null },
  {
    name: 'i32.store to memory 1',
    bytes: () => guest(STORE_1),
    refused: /function #5 writes memory offthread\.memory\.scan\.input \(memory 1\) with i32\.store at byte \d+/,
  },
  {
    name: 'v128.store8_lane to memory 1',
    bytes: () => guest([0x41, 0x00, 0xfd, 0x0c, ...zeros(16), 0xfd, 0x58, 0x40, 0x01, 0x00, 0x00]),
    refused: /with v128\.store8_lane at byte/,
  },
  {
    name: 'memory.copy into memory 1',
    bytes: () => guest([0x41, 0x00, 0x41, 0x00, 0x41, 0x00, 0xfc, 0x0a, 0x01, 0x00]),
    refused: /with memory\.copy at byte/,
  },
  {
    name: 'memory.copy out of memory 1 into memory 0',
    bytes: () => guest([0x41, 0x00, 0x41, 0x00, 0x41, 0x00, 0xfc, 0x0a, 0x00, 0x01]),
    refused: null,
  },
  {
    name: 'memory.fill of memory 1',
    bytes: () => guest([0x41, 0x00, 0x41, 0x00, 0x41, 0x00, 0xfc, 0x0b, 0x01]),
    refused: /with memory\.fill/,
  },
  { name: 'memory.grow of memory 1', bytes: () => guest([0x41, 0x01, 0x40, 0x01, 0x1a]), refused: /with memory\.grow/ },
  {
    name: 'i32.atomic.store to memory 1',
    bytes: () => guest([0x41, 0x00, 0x41, 0x00, 0xfe, 0x17, ...mem1]),
    refused: /with atomic store/,
  },
  {
    name: 'an active data segment in memory 1',
    bytes: () => guest([], { data: [{ offset: 0, bytes: [1, 2, 3], memory: 1 }] }),
    refused: /data segment #1 writes memory offthread\.memory\.scan\.input/,
  },
  {
    name: 'every immediate, then a store to memory 1',
    bytes: () => guest([...EVERYTHING, ...STORE_1]),
    storeAt: (b) => indexOf(b, [...EVERYTHING, ...STORE_1]) + EVERYTHING.length + 4,
    refused: /with i32\.store at byte/,
  },
  {
    // Memory indices follow the imports' order: here the interface memory is memory 0,
    // and a store without a memory index writes it.
    name: 'imported before env.memory: a plain i32.store writes memory 0, the read-only one',
    bytes: () => guest([0x41, 0x00, 0x41, 0x07, 0x36, 0x02, 0x00], { memoriesFirst: true }),
    refused: /writes memory offthread\.memory\.scan\.input \(memory 0\) with i32\.store/,
  },
  {
    name: 'imported before env.memory: a store to memory 1 (env.memory) loads',
    bytes: () => guest(STORE_1, { memoriesFirst: true }),
    refused: null,
  },
  {
    name: 'an exporter given readwrite may store',
    bytes: () => guest(STORE_1, { exporter: 'readwrite' }),
    refused: null,
  },
  { name: 'an importer (access write) may store', bytes: () => importer(STORE_1), refused: null },
  {
    name: 'an exporter given no access may not import it',
    bytes: () => guest([], { exporter: 'none' }),
    refused: /gives its exporters no access/,
  },
  {
    name: 'a memory of an interface it does not declare',
    bytes: () => guest([], { memories: [{ name: 'other.input' }] }),
    refused: /imports memory offthread\.memory\.other\.input, not a memory of an interface it exports or imports/,
  },
  {
    name: 'a memory its interface does not have',
    bytes: () => guest([], { memories: [{ name: 'scan.output' }] }),
    refused: /interface scan has no memory output/,
  },
  {
    name: 'a memory the host does not offer',
    bytes: () => guest([], { memories: [{ module: 'env', name: 'other' }] }),
    refused: /imports memory env\.other, which the host does not offer/,
  },
  {
    name: 'more pages at start than declared',
    bytes: () => guest([], { memories: [{ name: 'scan.input', min: 5 }] }),
    refused: /with 5 pages at start, over the 4 declared/,
  },
  {
    name: 'an interface memory imported as a function',
    bytes: () =>
      guest([], { memories: [], imports: [{ module: 'offthread.memory', name: 'scan.input', type: [[], []] }] }),
    refused: /imports offthread\.memory scan\.input as a function: it can only be a memory/,
  },
  {
    name: 'an opcode the reader does not know (GC ref.i31) is refused, not guessed',
    bytes: () => guest([0x41, 0x00, 0xfb, 0x1c, 0x1a]),
    refused: /opcode 0xfb at byte \d+, which the read-only memory check does not know/,
  },
];
