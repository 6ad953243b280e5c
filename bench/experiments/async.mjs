// Experiment `async` (docs/experiments.md): the cost of going off the loop. A trivial task
// submitted with 1, 100 and 10,000 in flight through the offthread pool, a napi
// AsyncTask on libuv, piscina 5 and raw worker_threads; each row in its own process.
// Then the event-loop delay while the pool is saturated with heavy π jobs. Then the task
// section (_async-tasks.mjs): the user's own JS on offthread's tasks() beside piscina,
// tinypool, workerpool, poolifier and raw worker_threads.
// Flags: --only kernels | --only tasks runs one section.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runInChild } from '../lib/measure.mjs';
import { runTaskRows } from './_async-tasks.mjs';

const child = fileURLToPath(new URL('./async-child.mjs', import.meta.url));
const ROWS = [
  'offthread',
  'offthreadPi',
  'facadePi',
  'facadeMd5',
  'facadePiAuto',
  'offthreadWasm',
  'asyncTask',
  'piscina',
  'workerThreads',
];
// 1,000: the level of issue 35's facade figures (745k tasks/s at 7f8f87a).
const IN_FLIGHT = [1, 100, 1_000, 10_000];

export async function run(ctx) {
  const { values } = parseArgs({ args: ctx.argv, strict: false, options: { only: { type: 'string' } } });
  const kernels = values.only === 'tasks' ? null : await runKernelRows(ctx);
  const tasks = values.only === 'kernels' ? null : await runTaskRows(ctx);
  const parts = [kernels, tasks].filter(Boolean);
  return {
    title: 'async: the cost of going off the event loop',
    params: Object.assign({}, ...parts.map((p) => p.params)),
    notes: parts.flatMap((p) => p.notes),
    tables: parts.flatMap((p) => p.tables),
    charts: parts.flatMap((p) => p.charts),
    ratios: parts.flatMap((p) => p.ratios),
    raw: Object.assign({}, ...parts.map((p) => p.raw)),
  };
}

async function runKernelRows(ctx) {
  const results = [];
  for (const row of ROWS) {
    ctx.progress(`row ${row}`);
    const { value } = await runInChild(child, 'measureRow', [{ row, inFlight: IN_FLIGHT, quick: ctx.quick }], {
      progress: ctx.progress,
    });
    results.push(...value);
  }
  ctx.progress('loop delay while saturated');
  const { value: loop } = await runInChild(child, 'measureLoopDelay', [{ quick: ctx.quick }], {
    progress: ctx.progress,
  });

  const get = (row, k) => results.find((r) => r.row === row && r.inFlight === k);
  const best = (row) => Math.max(...IN_FLIGHT.map((k) => get(row, k).tasksPerSec));
  const ratios = [
    { label: 'offthread tasks/s (best in-flight level)', value: best('offthread'), target: 500_000, unit: 'tasks/s' },
    // The facade path (issue 35): a kernel call through its function on the default pool.
    {
      label: 'facade π (parallelAsync, default pool) tasks/s (best in-flight level)',
      value: best('facadePi'),
      target: 800_000,
      unit: 'tasks/s',
    },
    { label: 'facade π / pool.echo tasks/s (best of each)', value: best('facadePi') / best('offthread') },
    {
      label: 'facade md5.iterate (1 round, default pool) tasks/s (best in-flight level)',
      value: best('facadeMd5'),
      unit: 'tasks/s',
    },
    {
      label: 'offthread / piscina tasks/s (best in-flight level of each)',
      value: best('offthread') / best('piscina'),
      target: 10,
    },
    {
      label: 'offthread wasm engine (worker threads) / piscina tasks/s (best of each)',
      value: best('offthreadWasm') / best('piscina'),
    },
    {
      label: 'offthread round trip p50 at 1 in flight',
      value: get('offthread', 1).p50Us,
      target: 10,
      op: '<=',
      unit: 'µs',
    },
    {
      label: 'loop delay p99 while saturated (1 ms resolution)',
      value: loop.saturated.p99Ms,
      target: 2,
      op: '<=',
      unit: 'ms',
    },
    { label: 'loop delay p99 idle, same resolution', value: loop.idle.p99Ms, unit: 'ms' },
    { label: 'cores used while saturated', value: loop.coresUsed, unit: 'cores' },
  ];
  return {
    params: {
      rows: ROWS,
      inFlight: IN_FLIGHT,
      quick: ctx.quick,
      task: 'π with 1 sample (offthread: a no-op echo kernel)',
    },
    notes: [
      'offthread: `pool.echo(i)` (no-op kernel); offthreadPi: `piVariants.estimate(1, "parallelAsync")` (offthread/internal) through the facade.',
      'facadePi: `piVariants.estimate(1, "parallelAsync")` on the default pool; facadeMd5: public `md5.iterate("", 1)` (a registry kernel, always on the pool); facadePiAuto: public `pi.estimate(1)` (auto runs 1 sample inline: checks + a promise, no pool).',
      'asyncTask: napi AsyncTask on libuv (4 threads); piscina 5 and workerThreads run the same 1-sample π in JS.',
      'Round trip = submit → promise settled, per task, measured on the main thread.',
      `Loop delay: perf_hooks.monitorEventLoopDelay at 1 ms resolution (idle reads ≈ the resolution); ${loop.heavyJobsCompleted} heavy π jobs (2·10^8 samples each) completed meanwhile.`,
    ],
    tables: [
      {
        title: 'tasks/s and round trip',
        columns: [
          { key: 'row', label: 'row' },
          { key: 'inFlight', label: 'in flight' },
          { key: 'tasksPerSec', label: 'tasks/s', format: 'ops' },
          { key: 'p50Us', label: 'p50 µs', format: 'sig3' },
          { key: 'p99Us', label: 'p99 µs', format: 'sig3' },
          { key: 'tasks', label: 'tasks' },
        ],
        rows: results,
      },
    ],
    charts: [
      {
        title: 'tasks/s by tasks in flight',
        x: { field: 'inFlight', label: 'tasks in flight', log: true },
        y: { field: 'tasksPerSec', label: 'tasks/s', log: true },
        series: 'row',
        data: results,
      },
    ],
    ratios,
    raw: { results, loop },
  };
}
