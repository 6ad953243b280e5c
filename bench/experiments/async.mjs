// Experiment `async` (EXPERIMENTS.md): the cost of going off the loop. A trivial task
// submitted with 1, 100 and 10,000 in flight through the offthread pool, a napi
// AsyncTask on libuv, piscina 5 and raw worker_threads; each row in its own process.
// Then the event-loop delay while the pool is saturated with heavy π jobs.
import { fileURLToPath } from 'node:url';
import { runInChild } from '../lib/measure.mjs';

const child = fileURLToPath(new URL('./async-child.mjs', import.meta.url));
const ROWS = ['offthread', 'offthreadPi', 'asyncTask', 'piscina', 'workerThreads'];
const IN_FLIGHT = [1, 100, 10_000];

export async function run(ctx) {
  const results = [];
  for (const row of ROWS) {
    ctx.progress(`row ${row}`);
    results.push(...(await runInChild(child, 'measureRow', [{ row, inFlight: IN_FLIGHT, quick: ctx.quick }])));
  }
  ctx.progress('loop delay while saturated');
  const loop = await runInChild(child, 'measureLoopDelay', [{ quick: ctx.quick }]);

  const get = (row, k) => results.find((r) => r.row === row && r.inFlight === k);
  const best = (row) => Math.max(...IN_FLIGHT.map((k) => get(row, k).tasksPerSec));
  const ratios = [
    { label: 'offthread tasks/s (best of 100 / 10,000 in flight)', value: best('offthread'), target: 500_000, pass: best('offthread') >= 500_000 },
    {
      label: 'offthread / piscina tasks/s (best in-flight level of each)',
      value: best('offthread') / best('piscina'),
      target: 10,
      pass: best('offthread') / best('piscina') >= 10,
    },
    { label: 'offthread round trip p50 at 1 in flight (µs)', value: get('offthread', 1).p50Us, target: '≤ 10', pass: get('offthread', 1).p50Us <= 10 },
    { label: 'loop delay p99 while saturated (ms, 1 ms resolution)', value: loop.saturated.p99Ms, target: '≤ 2', pass: loop.saturated.p99Ms <= 2 },
    { label: 'loop delay p99 idle, same resolution (ms)', value: loop.idle.p99Ms },
    { label: 'cores used while saturated', value: loop.coresUsed },
  ];
  return {
    title: 'async: the cost of going off the event loop',
    params: { rows: ROWS, inFlight: IN_FLIGHT, quick: ctx.quick, task: 'π with 1 sample (offthread: a no-op echo kernel)' },
    notes: [
      'offthread: `pool.echo(i)` (no-op kernel); offthreadPi: `pi.estimate(1, { variant: "parallelAsync" })` through the facade.',
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
          { key: 'p50Us', label: 'p50 µs', format: 'num' },
          { key: 'p99Us', label: 'p99 µs', format: 'num' },
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
