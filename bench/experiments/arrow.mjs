// Record batches → Apache Arrow (issue 32 item 3): what converting a CSV's batches to an
// apache-arrow Table (and to IPC stream bytes) costs next to parsing them.
//
//   node bench/run.mjs arrow [--quick] [--mb N]
//
// The streams experiment's mixed CSV (id u32, score f64, quoted names, bool, ts i64;
// _streams-data.mjs), parsed with `filters.csv()` (declared columns) into an array of
// batches; then, on the same batches, `toArrowTable` (numbers, validity and text wrapped,
// the bool column packed into bits: the one copy) and `toArrowIPC` (bytes: a copy by
// nature). Every Table is checked: its rows and id sum are the batches'.

import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { CHUNK } from './_streams-children.mjs';
import { CSV_COLUMNS, writeCsv } from './_streams-data.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** Wall and CPU (this process, all threads) of `fn`, in ms. */
async function timed(fn) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { value, wallMs, cpuMs: (c.user + c.system) / 1000 };
}

export async function run(ctx) {
  const { values } = parseArgs({ args: ctx.argv, strict: false, options: { mb: { type: 'string' } } });
  const mb = Number(values.mb ?? (ctx.quick ? 10 : 100));
  const rounds = ctx.quick ? 2 : 3;
  const { filters, Pool } = await import('offthread');
  const { toArrowIPC, toArrowTable } = await import('offthread/arrow');
  const dir = mkdtempSync(join(tmpdir(), 'offthread-arrow-'));
  const pool = new Pool({ nice: 0 });
  try {
    const csv = join(dir, 'data.csv');
    ctx.progress(`writing ${mb} MiB of CSV`);
    const expectedRows = await writeCsv(csv, mb);
    const bytes = statSync(csv).size;
    const columns = Object.fromEntries(CSV_COLUMNS.map((c) => [c.name, c.type]));
    const runs = [];
    for (let r = 0; r < rounds; r++) {
      const parse = await timed(async () => {
        const batches = [];
        await pipeline(
          createReadStream(csv, { highWaterMark: CHUNK }),
          filters.csv({ columns, pool }),
          new Writable({
            objectMode: true,
            write(b, _e, cb) {
              batches.push(b);
              cb();
            },
          }),
        );
        return batches;
      });
      const batches = parse.value;
      const table = await timed(() => toArrowTable(batches));
      const ipc = await timed(() => toArrowIPC(batches));
      // Checks: the Table holds every row, and its id column (a view of the batches) sums as theirs do.
      let want = 0;
      for (const b of batches) for (const id of b.numbers('id')) want += id;
      let got = 0;
      for (const id of table.value.getChild('id')) got += id;
      if (table.value.numRows !== expectedRows || got !== want)
        throw new Error(`Table: ${table.value.numRows} rows (want ${expectedRows}), id sum ${got} (want ${want})`);
      runs.push({ parse, table, ipc, batches: batches.length, ipcBytes: ipc.value.length });
      ctx.progress(
        `round ${r + 1}: parse ${parse.wallMs.toFixed(0)} ms, toArrowTable ${table.wallMs.toFixed(1)} ms, toArrowIPC ${ipc.wallMs.toFixed(0)} ms`,
      );
    }
    const mib = bytes / 2 ** 20;
    const row = (step, key) => {
      const wall = runs.map((x) => x[key].wallMs);
      const cpu = runs.map((x) => x[key].cpuMs);
      const parseWall = median(runs.map((x) => x.parse.wallMs));
      return {
        step,
        wallMs: median(wall),
        wallEach: wall,
        cpuMs: median(cpu),
        mbPerSec: mib / (median(wall) / 1000),
        ofParse: median(wall) / parseWall,
      };
    };
    const rows = [
      row('parse: filters.csv → batches', 'parse'),
      row('toArrowTable(batches)', 'table'),
      row('toArrowIPC(batches)', 'ipc'),
    ];
    return {
      title: 'Record batches → Apache Arrow: conversion vs the parse',
      params: { mb, bytes, rounds, chunk: CHUNK, rows: expectedRows, batches: runs[0].batches },
      notes: [
        `${mib.toFixed(0)} MiB mixed CSV (${expectedRows} rows, ${runs[0].batches} batches of ≤ ${CHUNK / 1024} KiB input), the streams experiment's generator; declared columns ${JSON.stringify(columns)}.`,
        'parse: the whole file through filters.csv (native pool, nice 0) into an array of batches. toArrowTable / toArrowIPC: the same batches, on the event loop (synchronous).',
        'toArrowTable wraps numbers, validity and text (no copy) and packs the bool column into bits (a copy); toArrowIPC writes every value into IPC stream bytes.',
        `IPC bytes: ${runs[0].ipcBytes}. Each row is the median of ${rounds} runs; "of parse" is its wall time / the parse's.`,
      ],
      tables: [
        {
          title: `${mib.toFixed(0)} MiB CSV`,
          columns: [
            { key: 'step', label: 'step' },
            { key: 'wallMs', label: 'wall (median)', format: 'ms' },
            { key: 'wallEach', label: 'each run, ms', format: 'msEach' },
            { key: 'cpuMs', label: 'CPU (median)', format: 'ms' },
            { key: 'mbPerSec', label: 'MiB/s of CSV', format: 'sig3' },
            { key: 'ofParse', label: 'of parse', format: 'sig3' },
          ],
          rows,
        },
      ],
      charts: [],
      ratios: [
        { label: 'toArrowTable / parse wall time', value: rows[1].ofParse },
        { label: 'toArrowIPC / parse wall time', value: rows[2].ofParse },
      ],
      raw: {
        runs: runs.map((x) =>
          Object.fromEntries(['parse', 'table', 'ipc'].map((k) => [k, { wallMs: x[k].wallMs, cpuMs: x[k].cpuMs }])),
        ),
      },
    };
  } finally {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
