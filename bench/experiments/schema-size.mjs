// Experiment `schema-size` (Silva et al. 2024 §5.2.2): what the paper reports besides
// speed. (1) Generated code lines for the paper's TemperatureBatch: offthread-schema (TS,
// Rust) vs flatc (TS, Rust; apt flatbuffers-compiler) vs JSON (serde derive: none).
// (2) WASM module sizes: the same write + read over TemperatureBatch built three ways
// (bench/wasm-size: generated Rust, FlatBuffers, serde_json), wasm32, release, LTO,
// stripped. (3) "Adding fields costs nothing": a v1 reader on v1 data vs on v2 data.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { schema } from 'offthread';
import { runInChild } from '../lib/measure.mjs';
import { ensureApt } from '../lib/tools.mjs';

const child = fileURLToPath(new URL('./schema-size-child.mjs', import.meta.url));
const SIZE_DIR = fileURLToPath(new URL('../wasm-size/', import.meta.url));
const TARGET = fileURLToPath(new URL('../../target/wasm-size/', import.meta.url));
const FBS = join(SIZE_DIR, 'schemas', 'temperature.fbs');
/** The paper's TemperatureBatch (Figure 32), as a .km schema: the two structs only. */
const KM = `struct temperature_reading (dynamic) {
    timestamp: i64;
    value: f32;
}

struct temperature_batch (dynamic) {
    readings: []temperature_reading #soa;
}
`;

const lines = (text) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
const walk = (dir) =>
  readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));

function codeLines(ctx) {
  ctx.progress('schema-size: generated code lines');
  const ours = schema.compile(KM, { fileName: 'temperature.km' });
  if (ours.diagnostics.length) throw new Error(ours.rendered);
  const rows = ours.files.map((f) => ({
    generator: 'offthread-schema',
    lang: f.lang === 'ts' ? 'TS' : 'Rust',
    files: 1,
    lines: lines(f.contents),
    runtime: f.lang === 'ts' ? 'offthread/schema (runtime.ts)' : 'offthread-schema-rt',
  }));
  ensureApt('flatc', 'flatbuffers-compiler');
  const flatc = spawnSync('flatc', ['--version'], { encoding: 'utf8' });
  if (flatc.status === 0) {
    for (const [lang, flag] of [
      ['TS', '--ts'],
      ['Rust', '--rust'],
    ]) {
      const out = mkdtempSync(join(tmpdir(), 'flatc-'));
      const r = spawnSync('flatc', [flag, '-o', out, FBS], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`flatc ${flag}: ${r.stderr}`);
      const files = walk(out);
      rows.push({
        generator: flatc.stdout.trim(),
        lang,
        files: files.length,
        lines: files.reduce((a, f) => a + lines(readFileSync(f, 'utf8')), 0),
        runtime: lang === 'TS' ? 'flatbuffers (npm)' : 'flatbuffers (crate)',
      });
    }
  }
  rows.push({ generator: 'serde_json (derive)', lang: 'Rust', files: 0, lines: 0, runtime: 'serde + serde_json' });
  return rows;
}

function wasmSizes(ctx) {
  ctx.progress('schema-size: cargo build bench/wasm-size (wasm32, release)');
  const r = spawnSync('cargo', ['build', '--release', '--target', 'wasm32-unknown-unknown'], {
    cwd: SIZE_DIR,
    env: { ...process.env, CARGO_TARGET_DIR: TARGET },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`bench/wasm-size build failed:\n${r.stderr}`);
  const dir = join(TARGET, 'wasm32-unknown-unknown', 'release');
  return [
    ['offthread-schema (generated Rust)', 'size_offthread.wasm'],
    ['FlatBuffers (flatc Rust)', 'size_flatbuffers.wasm'],
    ['JSON (serde_json)', 'size_json.wasm'],
  ].map(([format, file]) => ({ format, file, bytes: statSync(join(dir, file)).size }));
}

/** Checks each module: write 1,000 readings, read them back, the same sum everywhere. */
async function checkModules(sizes) {
  const dir = join(TARGET, 'wasm32-unknown-unknown', 'release');
  const sums = [];
  for (const s of sizes) {
    const { instance } = await WebAssembly.instantiate(readFileSync(join(dir, s.file)));
    const len = instance.exports.write(1000);
    sums.push(instance.exports.read());
    s.messageBytes = len;
  }
  if (new Set(sums).size !== 1) throw new Error(`modules disagree: ${sums}`);
}

export async function run(ctx) {
  const code = codeLines(ctx);
  const sizes = wasmSizes(ctx);
  await checkModules(sizes);
  const n = 10_000;
  const { value: timing } = await runInChild(child, 'measure', [{ n, minTime: ctx.quick ? 200 : 1000 }], {
    progress: ctx.progress,
  });
  const best = (op, data) => Math.min(...timing.filter((r) => r.op === op && r.data === data).map((r) => r.medianNs));
  const evolution = [...new Set(timing.map((r) => r.op))].map((op) => ({
    op,
    n,
    v1Ns: best(op, 'v1'),
    v2Ns: best(op, 'v2'),
    costPct: (best(op, 'v2') / best(op, 'v1') - 1) * 100,
    v1Bytes: timing.find((r) => r.op === op && r.data === 'v1').bytes,
    v2Bytes: timing.find((r) => r.op === op && r.data === 'v2').bytes,
  }));
  const kb = (b) => b / 1000;
  const size = (f) => sizes.find((s) => s.format.startsWith(f)).bytes;
  return {
    title: 'schema-size: generated code, WASM module size, and the cost of added fields',
    params: { evolutionReadings: n, quick: ctx.quick },
    notes: [
      'paper (seed 003, §5.2.2; Go/TinyGo): Karmem generates 1,286 lines, FlatBuffers 254 (plus its library); modules: Karmem 8.7 KB, FlatBuffers 9.1 KB, JSON 262 KB.',
      "Lines: the paper's two structs (temperature_reading, temperature_batch) — every line of the generated files (ours: one file per language; flatc --ts writes one file per table plus an index). Neither counts its runtime library.",
      'WASM modules (bench/wasm-size): each exports write(n) (builds n readings, encodes them) and read() (sums the values of the message it wrote); Rust release, LTO, one codegen unit, panic=abort, stripped. Each was run once (1,000 readings, same sum) before its size was taken.',
      'Added fields: v1 of the evolution fixture reads only the fields it knows; v2 readings have two more fields (u16, f64: 24 bytes instead of 8 per AoS item, two more SoA columns) and the batch two more (a string, a u64). The SoA read walks the `value` column (a typed-array view): the added columns are never touched. The AoS read walks the items, whose stride the v2 writer made 3× larger, so it touches 3× the memory: that, not the reader code, is what added fields cost in an AoS array (the reason the paper prefers SoA). Decode builds plain objects from both arrays. Best of three interleaved runs each; the same process.',
    ],
    tables: [
      {
        title: 'generated code for TemperatureBatch',
        columns: [
          { key: 'generator', label: 'generator' },
          { key: 'lang', label: 'language' },
          { key: 'files', label: 'files', format: 'int' },
          { key: 'lines', label: 'lines', format: 'int' },
          { key: 'runtime', label: 'needs at run time' },
        ],
        rows: code,
      },
      {
        title: 'WASM module size (write + read of TemperatureBatch)',
        columns: [
          { key: 'format', label: 'format' },
          { key: 'bytes', label: 'module', format: (v) => `${kb(v).toFixed(1)} KB` },
          { key: 'messageBytes', label: 'message for 1,000 readings', format: 'int' },
        ],
        rows: sizes,
      },
      {
        title: `a v1 reader on v1 and v2 data (${n.toLocaleString('en-US')} readings)`,
        columns: [
          { key: 'op', label: 'operation' },
          { key: 'v1Ns', label: 'v1 data', format: 'ns' },
          { key: 'v2Ns', label: 'v2 data', format: 'ns' },
          { key: 'costPct', label: 'v2 vs v1', format: (v) => `${v >= 0 ? '+' : ''}${v.toFixed(1)}%` },
          { key: 'v1Bytes', label: 'v1 bytes', format: 'int' },
          { key: 'v2Bytes', label: 'v2 bytes', format: 'int' },
        ],
        rows: evolution,
      },
    ],
    ratios: [
      { label: 'WASM module: FlatBuffers / offthread-schema', value: size('FlatBuffers') / size('offthread') },
      { label: 'WASM module: JSON / offthread-schema', value: size('JSON') / size('offthread') },
      ...evolution.map((e) => ({
        label: `${e.op}: time on v2 data / on v1 data`,
        value: e.v2Ns / e.v1Ns,
        target: 1.15,
        op: '<=',
      })),
    ],
    raw: { code, sizes, timing },
  };
}
