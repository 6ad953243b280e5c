// Measures, on an engine with multi-memory, what a guest pays to read a 1 MiB input
// three ways (docs/guests.md, "Shared input memory"): in place from an imported second
// memory (i64.load with a memory index), copied first into its own memory (memory.copy,
// what the host's copy per exporter costs inside the guest), and through a host import
// per 8 bytes (the "accessors over a host import" option, for engines or toolchains
// without it). Not a test: `node packages/offthread/test/guests-memory-measure.mjs`.
import { I32, I64, section, str, uleb, vec } from '../../../tests/guests/wasm-encode.mjs';

const LEN = 1 << 20;
const RUNS = 30;

// (func (param $len i32) (result i64)): sum of the i64 words of [0, len) in `mem`,
// read with `load` (the instruction bytes that leave an i64 from the address on the stack).
const sumLoop = (load, before = []) => [
  ...[0x02, 0x01, I32, 0x01, I64], // locals: i32 $i (local 1), i64 $sum (local 2)
  ...before,
  ...[0x02, 0x40, 0x03, 0x40], // block loop
  ...[0x20, 0x01, 0x20, 0x00, 0x4f, 0x0d, 0x01], // i >= len → br 1
  ...[0x20, 0x02, 0x20, 0x01, ...load, 0x7c, 0x21, 0x02], // sum += load(i)
  ...[0x20, 0x01, 0x41, 0x08, 0x6a, 0x21, 0x01, 0x0c, 0x00], // i += 8; br 0
  ...[0x0b, 0x0b, 0x20, 0x02, 0x0b], // end end; sum
];

const body = (b) => [...uleb(b.length), ...b];
const module = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  ...section(1, vec([[0x60, ...vec([[I32]]), ...vec([[I64]])]])), // type 0: (i32) -> i64
  ...section(
    2,
    vec([
      [...str('host'), ...str('read64'), 0x00, 0x00], // func 0: (i32) -> i64
      [...str('env'), ...str('memory'), 0x02, 0x00, ...uleb(32)], // memory 0
      [...str('offthread.memory'), ...str('scan.input'), 0x02, 0x00, ...uleb(17)], // memory 1
    ]),
  ),
  ...section(3, vec([[0x00], [0x00], [0x00]])),
  ...section(
    7,
    vec([
      [...str('inPlace'), 0x00, 0x01],
      [...str('copied'), 0x00, 0x02],
      [...str('accessor'), 0x00, 0x03],
    ]),
  ),
  ...section(
    10,
    vec([
      body(sumLoop([0x29, 0x43, 0x01, 0x00])), // i64.load memory 1
      // memory.copy into memory 0 from memory 1, then the same loop over memory 0
      body(sumLoop([0x29, 0x03, 0x00], [0x41, 0x00, 0x41, 0x00, 0x20, 0x00, 0xfc, 0x0a, 0x00, 0x01])),
      body(sumLoop([0x10, 0x00])), // call host.read64
    ]),
  ),
]);

if (!WebAssembly.validate(module)) {
  console.log(`node ${process.version}: no multi-memory in this engine, nothing to measure`);
  process.exit(0);
}
const own = new WebAssembly.Memory({ initial: 32 });
const input = new WebAssembly.Memory({ initial: 17 });
const words = new BigInt64Array(input.buffer);
for (let i = 0; i < LEN / 8; i++) words[i] = BigInt(i);
const { exports } = new WebAssembly.Instance(new WebAssembly.Module(module), {
  host: { read64: (at) => words[at >>> 3] },
  env: { memory: own },
  'offthread.memory': { 'scan.input': input },
});

const expected = exports.inPlace(LEN);
console.log(`node ${process.version}, ${LEN} bytes, median of ${RUNS} runs`);
for (const name of ['inPlace', 'copied', 'accessor']) {
  const times = [];
  for (let r = 0; r < RUNS; r++) {
    const t = performance.now();
    const got = exports[name](LEN);
    times.push(performance.now() - t);
    if (got !== expected) throw new Error(`${name}: ${got} !== ${expected}`);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(9)} ${(times[RUNS >> 1] * 1000).toFixed(0).padStart(6)} µs (min ${(times[0] * 1000).toFixed(0)})`,
  );
}
