// Experiment `schema-table6` (issue 33 item 6; the Karmem paper's Table 6, seed 003):
// TemperatureBatch read + analysed (count, average, min, max of `value`) *inside
// WebAssembly*, by our generated Rust reader and by the `flatbuffers` crate over flatc's
// Rust, one wasm32 module (bench/wasm-table6), at 10 and 10,000 readings; beside the JS
// readers of the `schema` experiment on the same bytes, and the paper's figures.
//   node bench/run.mjs schema-table6 [--quick] [--no-chromium]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium, startServer } from '../../scripts/browser-server.mjs';
import { runInChild } from '../lib/measure.mjs';
import { buildModule, inputs, inWasm, READERS } from './schema-table6-child.mjs';

const child = fileURLToPath(new URL('./schema-table6-child.mjs', import.meta.url));
const SIZES = [10, 10_000];
/** paper (seed 003, Table 6): TinyGo modules on wazero, a Go host; ns per read. */
const PAPER = { 10: { ours: 316.4, fb: 5787 }, 10000: { ours: 68_150, fb: 1_325_570 } };

/** The module's readers in headless Chromium, the same `inWasm` on the same bytes. */
async function inChromium(wasmPath, minTimeMs, say) {
  const dir = mkdtempSync(join(tmpdir(), 'offthread-table6-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>table6</title>');
  // Cross-origin isolated: performance.now() at 5 µs, not 100 µs.
  const server = await startServer({ isolated: true, mounts: [['/', dir]] });
  const browser = await launchChromium();
  try {
    const page = await browser.context.newPage();
    await page.goto(server.url);
    const b64 = (b) => Buffer.from(b).toString('base64');
    const data = Object.fromEntries(
      SIZES.map((n) => [n, Object.fromEntries(Object.entries(inputs(n)).map(([k, v]) => [k, b64(v)]))]),
    );
    say('schema-table6: wasm readers in Chromium');
    const result = await page.evaluate(inWasm, {
      wasm: b64(readFileSync(wasmPath)),
      data,
      readers: READERS,
      minTimeMs,
    });
    return { ...result, version: browser.version };
  } finally {
    await browser.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const built = buildModule(ctx.progress);
  if ('skip' in built) throw new Error(`schema-table6 needs ${built.skip}`);
  const minTimeMs = ctx.quick ? 200 : 1000;
  const { value: node } = await runInChild(child, 'measure', [{ sizes: SIZES, minTimeMs, wasmPath: built.path }], {
    progress: ctx.progress,
  });
  let chromium = null;
  if (!ctx.argv.includes('--no-chromium')) chromium = await inChromium(built.path, minTimeMs, ctx.progress);
  return report({ node, chromium, quick: ctx.quick });
}

/**
 * The report from the runs' raw results (the JSON's `raw`), so a report can be drawn
 * again from a committed JSON without timing anything.
 * @param {{ node: any, chromium: any, quick: boolean }} raw
 */
export function report({ node, chromium, quick }) {
  // Every reader, in every runtime, agreed with the JS readers before it was timed.
  const expected = (n) => node.js.find((r) => r.items === n && r.impl === 'offthread TS reader').result;
  for (const { checks, where } of [
    { checks: node.wasm.checks, where: 'node' },
    ...(chromium ? [{ checks: chromium.checks, where: 'chromium' }] : []),
  ]) {
    for (const c of checks) {
      const want = expected(c.items);
      for (const k of ['count', 'average', 'min', 'max']) {
        if (c.result[k] !== want[k])
          throw new Error(`${where} ${c.reader} ×${c.items}: ${k} ${c.result[k]} ≠ ${want[k]}`);
      }
    }
  }

  // A figure of 0 is a sample too short for the clock, not a free read.
  for (const r of [...node.wasm.rows, ...(chromium?.rows ?? [])]) {
    if (!(r.loopNs > 0 && r.callNs > 0))
      throw new Error(`${r.reader} ×${r.items}: timed at ${r.loopNs} / ${r.callNs} ns`);
  }

  const impl = Object.fromEntries(READERS.map((r) => [r.name, r.impl]));
  const short = Object.fromEntries(READERS.map((r) => [r.impl, r.short]));
  const wasmRows = (runtime, result) =>
    result.rows.map((r) => ({
      runtime,
      where: 'wasm',
      impl: impl[r.reader],
      items: r.items,
      loopNs: r.loopNs,
      callNs: r.callNs,
      netCallNs: r.netCallNs,
      loopMedianNs: r.loopMedianNs,
      callMedianNs: r.callMedianNs,
      bytes: r.bytes,
    }));
  // The JS readers read the bytes the wasm readers of the same input read: their length
  // is on those rows, not worth encoding the inputs again for.
  const input = Object.fromEntries(READERS.map((r) => [r.name, r.input]));
  const inputBytes = (key, n) => node.wasm.rows.find((r) => r.items === n && input[r.reader] === key).bytes;
  const rows = [
    ...wasmRows('node', node.wasm),
    ...(chromium ? wasmRows('chromium', chromium) : []),
    ...node.js.map((r) => ({
      runtime: 'node',
      where: 'JS',
      impl: r.impl,
      items: r.items,
      callNs: r.minNs,
      callMedianNs: r.medianNs,
      bytes: inputBytes(r.impl.startsWith('flatbuffers') ? 'fbStruct' : 'ours', r.items),
    })),
    ...SIZES.flatMap((n) => [
      {
        runtime: 'paper (seed 003, Table 6): TinyGo on wazero',
        where: 'wasm',
        impl: 'Karmem',
        items: n,
        callNs: PAPER[n].ours,
      },
      {
        runtime: 'paper (seed 003, Table 6): TinyGo on wazero',
        where: 'wasm',
        impl: 'FlatBuffers (tables)',
        items: n,
        callNs: PAPER[n].fb,
      },
    ]),
  ];

  const get = (runtime, name, n) => rows.find((r) => r.runtime === runtime && r.impl === name && r.items === n);
  const ratio = (label, runtime, fb, n, field = 'loopNs') => ({
    label,
    value: get(runtime, impl[fb], n)[field] / get(runtime, impl.ours, n)[field],
  });
  /** Each FlatBuffers reader against ours, inside wasm: its reader and its label, in order. */
  const AGAINST_OURS = [
    ['fb_table_unchecked', "FlatBuffers tables, unchecked (the paper's case)"],
    ['fb_table', 'FlatBuffers tables, verified'],
    ['fb_struct_unchecked', 'FlatBuffers struct vector, unchecked'],
    ['fb_struct', 'FlatBuffers struct vector, verified'],
  ];
  const ratios = [];
  for (const runtime of ['node', ...(chromium ? ['chromium'] : [])]) {
    for (const n of SIZES) {
      const at = n.toLocaleString('en-US');
      for (const [fb, label] of AGAINST_OURS)
        ratios.push(ratio(`${runtime}: ${label} / ours, inside wasm, at ${at}`, runtime, fb, n));
    }
  }
  for (const n of SIZES) {
    const at = n.toLocaleString('en-US');
    ratios.push(
      { label: `paper (seed 003, Table 6): FlatBuffers / Karmem at ${at}`, value: PAPER[n].fb / PAPER[n].ours },
      // One call per read from JS, the call included on both sides: what a JS host pays.
      {
        label: `node: TS reader in JS / ours in wasm, per call from JS, at ${at}`,
        value: get('node', 'offthread TS reader', n).callNs / get('node', impl.ours, n).callNs,
      },
      {
        label: `node: flatbuffers npm in JS / FlatBuffers crate in wasm (struct vector, unchecked, as npm), per call from JS, at ${at}`,
        value:
          get('node', 'flatbuffers (npm), struct vector', n).callNs / get('node', impl.fb_struct_unchecked, n).callNs,
      },
    );
  }

  // The note's "about": the mean, over the runtimes, of those three readers' ns per
  // reading at 10,000 inside wasm.
  const alike = new Set([impl.ours, impl.fb_struct, impl.fb_struct_unchecked]);
  const perReadingNs = rows
    .filter((r) => r.where === 'wasm' && r.items === 10_000 && alike.has(r.impl))
    .map((r) => r.loopNs / r.items);
  const perReading = perReadingNs.reduce((a, b) => a + b, 0) / perReadingNs.length;

  return {
    title: "schema-table6: TemperatureBatch read + analysed inside WebAssembly (the Karmem paper's Table 6)",
    params: { sizes: SIZES, quick, chromium: chromium?.version ?? 'not run' },
    notes: [
      "One wasm32 module (bench/wasm-table6: Rust, release, LTO, opt-level 3, built by this experiment with cargo) holds every wasm reader: ours is the repo's generated Rust reader (offthread-schema-rt `generated::temperature`, the one stats.temperature uses); FlatBuffers is the `flatbuffers` crate 2.1.2 over the Rust that flatc 2.0.8 (apt flatbuffers-compiler) generates from bench/wasm-table6/schemas/table6.fbs.",
      "Each reader does what the schema bench's JS readers do: count, f64 sum, min and max of `value`, leaving [count, average, min, max] in memory. Before anything is timed, every wasm reader in every runtime must return exactly (===) what the TS reader returns for the same data.",
      "The data is the schema bench's (`source(n)`), written by the JS writers: ours by TemperatureBatchWriter.fill (64-byte aligned in wasm memory), FlatBuffers as the schema bench's struct vector (16 B per reading, the bytes its JS flatbuffers row reads) and as a table per reading (the paper's Figure 31 layout).",
      '"verified" runs the crate\'s verifier (`flatbuffers::root`, what flatc\'s root_as_… calls) before reading; "unchecked" is `root_unchecked`, which checks no offset, as the Go and JS FlatBuffers runtimes. Ours checks every offset, count and column bound on every read.',
      'in wasm, per read: `<reader>_loop(ptr, len, iters)` runs iters reads inside one export call (std::hint::black_box on the input each time round, the averages summed, so no read is hoisted or merged), timed from the host around the call, divided by iters. This is the "inside WebAssembly" figure.',
      "Timing: after 100 ms of warm-up per export (V8 swaps in optimised wasm code compiled in the background), 3 rounds over every case, samples of ≥ 1 ms for 1 s per case and round (0.2 s with --quick). The figure is the fastest sample: on this shared machine (see the load above) most samples also carry time the thread spent descheduled, so the medians (beside it) measure the load as much as the reader. The JS rows are the same: the fastest of timeFn's batches, its median beside it.",
      "per call from JS: one `<reader>_read(ptr, len)` export call per read from a JS loop (what a JS host pays per read, the column to set beside the JS rows, which are the schema bench's readers timed by timeFn, one call per read); minus the same loop calling an export that does nothing (`empty`, its cost in the second table): the read's own cost seen from the host.",
      `At 10,000 ours and both struct-vector readers run at about ${perReading.toFixed(2)} ns a reading. Our reading of it (not measured apart): each reader carries one f64 sum from reading to reading (the JS readers' fold, kept so that every result is identical), and that chain of dependent adds sets the pace, not the layout; the layouts part at 10 (fixed costs: the checks) and with a table per reading (one more indirection per reading and, verified, a check of every table).`,
      'paper (seed 003, Table 6): TinyGo 0.30 modules on wazero 1.6 from a Go host, another machine; its processing is average/min/max as here (Figures 31–32), FlatBuffers with every reading a table. Karmem 316.4 ns vs FlatBuffers 5,787.0 ns at 10; 68.15 µs vs 1,325.57 µs at 10,000.',
    ],
    tables: [
      {
        title: 'read + analyse: ns per read (fastest sample; medians beside)',
        columns: [
          { key: 'runtime', label: 'runtime' },
          { key: 'where', label: 'reader runs in' },
          { key: 'impl', label: 'implementation' },
          { key: 'items', label: 'readings', format: 'int' },
          { key: 'loopNs', label: 'in wasm, per read', format: 'ns' },
          { key: 'callNs', label: 'per call from JS (paper rows: per read)', format: 'ns' },
          { key: 'netCallNs', label: 'per call minus an empty call', format: 'ns' },
          { key: 'loopMedianNs', label: 'in wasm, median', format: 'ns' },
          { key: 'callMedianNs', label: 'per call, median', format: 'ns' },
          { key: 'bytes', label: 'encoded bytes', format: 'int' },
        ],
        rows,
      },
      {
        title: 'cost of one empty export call from the host',
        columns: [
          { key: 'runtime', label: 'runtime' },
          { key: 'emptyNs', label: 'empty call', format: 'ns' },
          { key: 'emptyMedianNs', label: 'median', format: 'ns' },
        ],
        rows: [
          { runtime: 'node', emptyNs: node.wasm.emptyNs, emptyMedianNs: node.wasm.emptyMedianNs },
          ...(chromium
            ? [{ runtime: 'chromium', emptyNs: chromium.emptyNs, emptyMedianNs: chromium.emptyMedianNs }]
            : []),
        ],
      },
    ],
    charts: [
      {
        title: 'schema-table6: ns per read inside wasm (log), ours vs FlatBuffers, with the paper',
        kind: 'bar',
        x: { field: 'group', label: 'readings · runtime' },
        y: { field: 'ns', label: 'ns per read', log: true },
        series: 'impl',
        subtitle: 'FB = the flatbuffers crate; ✓ = through its verifier; paper: TinyGo on wazero, another machine',
        seriesLabel: 'reader',
        data: rows
          .filter((r) => r.where === 'wasm')
          .sort((a, b) => a.items - b.items)
          .map((r) => {
            const paper = r.runtime.startsWith('paper');
            return {
              group: `${r.items.toLocaleString('en-US')} · ${paper ? 'paper' : r.runtime}`,
              ns: r.loopNs ?? r.callNs,
              impl: paper ? `${r.impl === 'Karmem' ? 'Karmem' : 'FB'} (paper)` : short[r.impl],
            };
          }),
      },
    ],
    ratios,
    raw: { node, chromium },
  };
}
