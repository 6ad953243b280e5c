// The `schema-table6` experiment's measurements (the Karmem paper's Table 6, seed 003):
// the schema bench's TemperatureBatch read inside WebAssembly by our generated Rust
// reader and by the `flatbuffers` crate, one module (bench/wasm-table6), beside the JS
// readers of the `schema` experiment on the same bytes. `inWasm` is self-contained (web
// APIs only) so that Chromium runs the very same function through page.evaluate.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as flatbuffers from 'flatbuffers';
import { schema } from 'offthread';
import { progress, timeFn } from '../lib/measure.mjs';
import { ensureApt } from '../lib/tools.mjs';
import { flatbuffersAnalyse, flatbuffersWrite, offthreadAnalyse, offthreadWrite, source } from './schema-child.mjs';

const CRATE = fileURLToPath(new URL('../wasm-table6/', import.meta.url));
const TARGET = fileURLToPath(new URL('../../target/wasm-table6/', import.meta.url));
export const WASM_PATH = `${TARGET}wasm32-unknown-unknown/release/table6_wasm.wasm`;

/** The module's readers: export prefix, row label, which bytes it reads. */
export const READERS = [
  { name: 'ours', impl: 'offthread generated Rust reader', short: 'ours', input: 'ours' },
  {
    name: 'fb_struct',
    impl: 'FlatBuffers crate, struct vector, verified',
    short: 'FB struct ✓',
    input: 'fbStruct',
  },
  {
    name: 'fb_struct_unchecked',
    impl: 'FlatBuffers crate, struct vector, unchecked',
    short: 'FB struct',
    input: 'fbStruct',
  },
  {
    name: 'fb_table',
    impl: 'FlatBuffers crate, table per reading, verified',
    short: 'FB tables ✓',
    input: 'fbTable',
  },
  {
    name: 'fb_table_unchecked',
    impl: 'FlatBuffers crate, table per reading, unchecked',
    short: 'FB tables',
    input: 'fbTable',
  },
];

/**
 * Builds bench/wasm-table6 (wasm32, release) with flatc from apt. Returns the module's
 * path, or `{ skip }` naming what is missing when it cannot be built here.
 * @returns {{ path: string } | { skip: string }}
 */
export function buildModule(say = progress) {
  if (!ensureApt('flatc', 'flatbuffers-compiler', say)) return { skip: 'no flatc (apt flatbuffers-compiler)' };
  say('schema-table6: cargo build bench/wasm-table6 (wasm32, release)');
  const r = spawnSync('cargo', ['build', '--release', '--target', 'wasm32-unknown-unknown'], {
    cwd: CRATE,
    env: { ...process.env, CARGO_TARGET_DIR: TARGET },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`bench/wasm-table6 build failed:\n${r.stderr}`);
  return { path: WASM_PATH };
}

/**
 * FlatBuffers with a table per reading, as flatc's TS would write `table6.fbs`'s
 * TableBatch (the paper's §5.2 layout; the schema bench writes the struct vector).
 * @param {flatbuffers.Builder} builder
 * @param {{ timestamp: number, value: number }[]} readings
 */
export function flatbuffersTablesWrite(builder, readings) {
  builder.clear();
  const tables = readings.map((r) => {
    builder.startObject(2);
    builder.addFieldInt64(0, BigInt(r.timestamp), 0n);
    builder.addFieldFloat32(1, r.value, 0);
    return builder.endObject();
  });
  builder.startVector(4, tables.length, 4);
  for (let i = tables.length - 1; i >= 0; i--) builder.addOffset(tables[i]);
  const vector = builder.endVector();
  builder.startObject(1);
  builder.addFieldOffset(0, vector, 0);
  builder.finish(builder.endObject());
  return builder.asUint8Array();
}

/**
 * The schema bench's data at `n` readings, in each encoding the module reads.
 * @param {number} n
 */
export function inputs(n) {
  const readings = source(n);
  return {
    ours: offthreadWrite(new schema.rt.Builder(1024 + n * 16), readings).slice(),
    fbStruct: flatbuffersWrite(new flatbuffers.Builder(64 + n * 16), readings).slice(),
    fbTable: flatbuffersTablesWrite(new flatbuffers.Builder(64 + n * 32), readings).slice(),
  };
}

/**
 * Instantiates the module, checks every reader on every size, and (unless `minTimeMs`
 * is 0) times each one two ways:
 * - `loopNs`: `<reader>_loop(ptr, len, iters)`, many reads in one call, timed from the
 *   host around the call and divided by `iters` (the call's own cost, spread over ≥ 1 ms
 *   of reads, is left in: under 0.1 %);
 * - `callNs`: one `<reader>_read` export call per read, in a host loop, minus the same
 *   loop calling `empty` (`emptyNs`, reported too).
 * Each: samples of ≥ 1 ms over `minTimeMs`, after a warm-up, in 3 rounds over every
 * case; the fastest sample is the figure (on a shared machine the others carry time
 * the thread spent descheduled), the median is returned beside it.
 * Self-contained: Chromium gets it as source through page.evaluate.
 * @param {{ wasm: Uint8Array | string, data: Record<string, Record<string, Uint8Array | string>>,
 *           readers: { name: string, input: string }[], minTimeMs: number }} arg
 *   `wasm` and each input may be base64 (what page.evaluate carries)
 */
export async function inWasm({ wasm, data, readers, minTimeMs }) {
  const bytesOf = (b) => (typeof b === 'string' ? Uint8Array.from(atob(b), (c) => c.charCodeAt(0)) : b);
  const { instance } = await WebAssembly.instantiate(bytesOf(wasm), {});
  const x = instance.exports;
  const least = (xs) => xs.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  // Samples of ≥ 1 ms each (5 µs timers in an isolated page: ≤ 0.5 %) for minTimeMs, at
  // least 15: ns per unit of each sample.
  const sampleMs = 1;
  const sampleUnits = (once, units) => {
    const out = [];
    const t0 = performance.now();
    while (out.length < 15 || performance.now() - t0 < minTimeMs) {
      const s = performance.now();
      once();
      out.push(((performance.now() - s) * 1e6) / units);
    }
    return out;
  };
  // How many units make one sample of ≥ sampleMs, doubling from 1. A size counts only
  // when the fastest of 5 runs of it lasts sampleMs: one run descheduled midway would
  // otherwise end the doubling early (at 1 unit, even), and samples of that size would
  // be too short for the timer (Chromium's 5 µs clock read one as 0 ns).
  const calibrate = (run) => {
    for (let units = 1; ; units *= 2) {
      let fastest = Number.POSITIVE_INFINITY;
      for (let i = 0; i < 5 && fastest >= sampleMs; i++) {
        const s = performance.now();
        run(units);
        fastest = Math.min(fastest, performance.now() - s);
      }
      if (fastest >= sampleMs || units >= 2 ** 30) return units;
    }
  };
  // A host loop of k export calls. Each loop is its own function (new Function), so its
  // call site sees one export only: a shared loop would go megamorphic across the
  // exports and time V8's generic call path instead of the call a reader's host makes.
  const callLoop = (fn, ptr, len) =>
    new Function('fn', 'ptr', 'len', 'return (k) => { for (let i = 0; i < k; i++) fn(ptr, len); };')(fn, ptr, len);
  // Place every message, and check every reader, before anything is timed.
  const cases = [];
  const checks = [];
  for (const [n, encodings] of Object.entries(data)) {
    const placed = {};
    for (const [key, b] of Object.entries(encodings)) {
      const bytes = bytesOf(b);
      const ptr = x.alloc(bytes.length);
      new Uint8Array(x.memory.buffer, ptr, bytes.length).set(bytes);
      placed[key] = { ptr, len: bytes.length };
    }
    for (const r of readers) {
      const { ptr, len } = placed[r.input];
      const count = x[`${r.name}_read`](ptr, len);
      const [c, average, min, max] = new Float64Array(x.memory.buffer, x.result(), 4);
      checks.push({ reader: r.name, items: Number(n), count, result: { count: c, average, min, max } });
      if (count !== Number(n)) throw new Error(`${r.name} read ${count} of ${n} readings`);
      const read = x[`${r.name}_read`];
      const loop = x[`${r.name}_loop`];
      cases.push({
        reader: r.name,
        items: Number(n),
        bytes: len,
        loop: (k) => loop(ptr, len, k),
        call: callLoop(read, ptr, len),
      });
    }
  }
  if (!minTimeMs) return { rows: [], checks, emptyNs: Number.NaN };
  const empty = callLoop(x.empty, 0, 0);
  // Warm-up: V8 runs a wasm function in its baseline tier (Liftoff) until it has run
  // enough, then swaps in optimised code compiled in the background; on a loaded machine
  // that takes a while. Every export and host loop runs 100 ms before the first sample.
  for (const run of [empty, ...cases.flatMap((c) => [c.loop, c.call])]) {
    const t0 = performance.now();
    for (let k = 1; performance.now() - t0 < 100; k = Math.min(k * 2, 2 ** 20)) run(k);
  }
  // Rounds over every case in turn, so that a burst of other work on the shared machine
  // falls on some of each case's samples, not on all of one case's.
  const rounds = 3;
  const timed = cases.map(() => ({ loop: [], call: [] }));
  const emptySamples = [];
  for (let round = 0; round < rounds; round++) {
    const k = calibrate(empty);
    emptySamples.push(...sampleUnits(() => empty(k), k));
    cases.forEach((c, i) => {
      const iters = calibrate(c.loop);
      timed[i].loop.push(...sampleUnits(() => c.loop(iters), iters));
      const calls = calibrate(c.call);
      timed[i].call.push(...sampleUnits(() => c.call(calls), calls));
    });
  }
  const emptyNs = least(emptySamples);
  const rows = cases.map((c, i) => {
    const { loop, call } = timed[i];
    return {
      reader: c.reader,
      items: c.items,
      bytes: c.bytes,
      loopNs: least(loop),
      callNs: least(call),
      netCallNs: least(call) - emptyNs,
      loopMedianNs: median(loop),
      callMedianNs: median(call),
      samples: loop.length + call.length,
    };
  });
  return { rows, checks, emptyNs, emptyMedianNs: median(emptySamples) };
}

/**
 * Node's rows: the module's readers through `inWasm`, and the schema bench's JS readers
 * (the TS reader, the flatbuffers npm runtime) timed by timeFn on the same bytes.
 * @param {{ sizes: number[], minTimeMs: number, wasmPath?: string }} options
 */
export async function measure({ sizes, minTimeMs, wasmPath = WASM_PATH }) {
  const data = Object.fromEntries(sizes.map((n) => [n, inputs(n)]));
  progress('schema-table6: wasm readers in Node');
  const wasm = await inWasm({ wasm: readFileSync(wasmPath), data, readers: READERS, minTimeMs });
  const js = [];
  for (const n of sizes) {
    for (const [impl, fn] of [
      ['offthread TS reader', () => offthreadAnalyse(data[n].ours)],
      ['flatbuffers (npm), struct vector', () => flatbuffersAnalyse(data[n].fbStruct)],
    ]) {
      const t = await timeFn(fn, { minTime: minTimeMs, minIterations: 10 });
      // The fastest batch, as for the wasm rows (the median beside it).
      js.push({ impl, items: n, minNs: t.min, medianNs: t.median, result: fn() });
      progress(`js ${impl} ×${n}: ${t.min.toFixed(0)} ns (median ${t.median.toFixed(0)})`);
    }
  }
  return { wasm, js };
}
