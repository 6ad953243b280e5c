// The async experiment's task section: the user's own JS on each pool. Every row runs the
// same task module (_tasks/work.mjs) in its own process (async-tasks-child.mjs): a trivial
// task at 1, 100 and 1,000 in flight; a batch of ≈ 5 ms CPU-bound tasks on 1 and 2
// workers with the event loop's delay meanwhile; a 1 MiB argument by clone and transfer.
import { fileURLToPath } from 'node:url';
import { runInChild } from '../lib/measure.mjs';

const child = fileURLToPath(new URL('./async-tasks-child.mjs', import.meta.url));
export const TASK_ROWS = ['offthread', 'piscina', 'tinypool', 'workerpool', 'poolifier', 'workerThreads'];
const PEERS = ['piscina', 'tinypool', 'workerpool', 'poolifier'];
const IN_FLIGHT = [1, 100, 1000];
const THREADS = 2;
/** Rounds of the CPU batch (its median is the figure). */
const CPU_ROUNDS = 3;

/**
 * A peer's child once more if it ended without a result: poolifier's process on Node 24
 * exited 0 mid-row now and then (2 of 6 runs, 2026-11-29; alone it passed), which would
 * take the whole experiment down. offthread's own rows are never retried.
 */
async function inChild(ctx, row, fn, args) {
  try {
    return await runInChild(child, fn, args);
  } catch (err) {
    if (row === 'offthread') throw err;
    ctx.progress(`tasks: ${row} ${fn} failed (${err.message.split('\n')[0]}); once more`);
    ctx.retried = [...(ctx.retried ?? []), `${row} ${fn}`];
    return runInChild(child, fn, args);
  }
}

export async function runTaskRows(ctx) {
  const trivial = [];
  for (const row of TASK_ROWS) {
    ctx.progress(`tasks: ${row}, trivial`);
    const { value } = await inChild(ctx, row, 'measureTrivial', [
      { row, threads: THREADS, inFlight: IN_FLIGHT, quick: ctx.quick },
    ]);
    trivial.push(...value);
  }
  const { value: n } = await runInChild(child, 'calibrateCpu', [5]);
  const count = ctx.quick ? 200 : 1000;
  // Rounds, each visiting every row in a rotated order: on a shared machine a slow minute
  // lands on one round of every row, not on all of one row (a single pass in row order
  // read 1.01× between pools whose per-task work is the same loop). Each row's figure is
  // its median round.
  const rounds = ctx.quick ? 1 : CPU_ROUNDS;
  const samples = new Map(); // `${row}/${threads}` → results, one per round
  for (let round = 0; round < rounds; round++) {
    const order = TASK_ROWS.map((_, i) => TASK_ROWS[(i + round) % TASK_ROWS.length]);
    for (const row of order) {
      for (const threads of [1, 2]) {
        ctx.progress(`tasks: ${row}, ${count} CPU tasks on ${threads} (round ${round + 1} of ${rounds})`);
        const { value } = await inChild(ctx, row, 'measureCpuBatch', [{ row, threads, n, count }]);
        const key = `${row}/${threads}`;
        samples.set(key, [...(samples.get(key) ?? []), value]);
      }
    }
  }
  const cpu = TASK_ROWS.flatMap((row) =>
    [1, 2].map((threads) => {
      const runs = samples.get(`${row}/${threads}`).toSorted((a, b) => a.wallMs - b.wallMs);
      const mid = runs[(runs.length - 1) >> 1];
      // What one task took on a worker: on Node 24 a worker's tier for the loop is not the
      // main thread's, so the calibrated ≈ 5 ms is only the main thread's figure.
      const perTaskMs = (mid.wallMs * threads) / mid.count;
      return { ...mid, perTaskMs, rounds: runs.map((r) => Math.round(r.wallMs)).join(' / ') };
    }),
  );
  const big = [];
  for (const row of TASK_ROWS) {
    ctx.progress(`tasks: ${row}, 1 MiB argument`);
    const { value } = await inChild(ctx, row, 'measureBigArgument', [{ row, rounds: ctx.quick ? 30 : 200 }]);
    big.push(value);
  }

  const at = (row, k) => trivial.find((r) => r.row === row && r.inFlight === k);
  const best = (row) => Math.max(...IN_FLIGHT.map((k) => at(row, k).tasksPerSec));
  const bestPeer = Math.max(...PEERS.map(best));
  const bestPeerName = PEERS.find((p) => best(p) === bestPeer);
  const wall = (row, threads) => cpu.find((r) => r.row === row && r.threads === threads).wallMs;
  const fastestPeerBatch = Math.min(...PEERS.map((p) => wall(p, 2)));
  const bigOf = (row) => big.find((r) => r.row === row);
  const ratios = [
    { label: 'tasks: offthread tasks/s (best in-flight level)', value: best('offthread'), unit: 'tasks/s' },
    {
      label: 'tasks: offthread / piscina tasks/s (best level of each)',
      value: best('offthread') / best('piscina'),
      target: 10,
    },
    {
      label: `tasks: offthread / best peer tasks/s (${bestPeerName}; best level of each)`,
      value: best('offthread') / bestPeer,
      target: 3,
    },
    {
      label: 'tasks: offthread / raw worker_threads tasks/s (best level of each)',
      value: best('offthread') / best('workerThreads'),
    },
    {
      label: 'tasks: offthread round trip p50 at 1 in flight',
      value: at('offthread', 1).p50Us,
      target: 10,
      op: '<=',
      unit: 'µs',
    },
    {
      label: `tasks: ${count} × ≈5 ms CPU tasks, 2 workers / 1 worker (speed-up)`,
      value: wall('offthread', 1) / wall('offthread', 2),
      target: 1.9,
    },
    {
      label: `tasks: ${count} CPU tasks on 2 workers, offthread / fastest peer wall time`,
      value: wall('offthread', 2) / fastestPeerBatch,
      target: 1,
      op: '<=',
    },
    {
      label: 'tasks: event-loop delay p99 while CPU tasks saturate 2 workers',
      value: cpu.find((r) => r.row === 'offthread' && r.threads === 2).loopP99Ms,
      target: 2,
      op: '<=',
      unit: 'ms',
    },
    {
      label: 'tasks: 1 MiB by clone, offthread / raw postMessage round trip',
      value: bigOf('offthread').cloneMs / bigOf('workerThreads').cloneMs,
      target: 1.1,
      op: '<=',
    },
    {
      label: 'tasks: 1 MiB by clone, offthread / raw postMessage round trip, minimum of each',
      value: bigOf('offthread').cloneMinMs / bigOf('workerThreads').cloneMinMs,
    },
    {
      label: 'tasks: 1 MiB by transfer / by SharedArrayBuffer, copies (caller buffer detached / worker write seen)',
      value: (bigOf('offthread').transferDetached ? 0 : 1) + (bigOf('offthread').sharedSeen ? 0 : 1),
      target: 0,
      op: '<=',
      unit: 'copies',
    },
  ];
  return {
    params: {
      taskRows: TASK_ROWS,
      taskInFlight: IN_FLIGHT,
      taskThreads: THREADS,
      cpuTaskSteps: n,
      cpuTasks: count,
      cpuRounds: rounds,
    },
    notes: [
      `Task rows: every pool runs bench/experiments/_tasks/work.mjs on ${THREADS} worker threads (piscina, tinypool by filename + name; workerpool and poolifier through their worker-script wrappers; raw worker_threads: postMessage round-robin, no queue). offthread: \`tasks(url).echo(i)\`.`,
      `CPU-bound task: a hash loop of ${n.toLocaleString('en-US')} steps, calibrated to ≈ 5 ms on the main thread; ${count} submitted at once; ${rounds} round${rounds === 1 ? '' : 's'}, every row once a round in a rotated order, the median round reported (its loop delay too).`,
      '1 MiB argument: median round trip of `size(bytes)`; transfer moves the buffer (the caller’s is detached after the call), a SharedArrayBuffer view is shared (the worker’s write is seen by the caller).',
      ...(ctx.retried
        ? [`Peer runs that ended without a result and were run once more: ${ctx.retried.join(', ')}.`]
        : []),
    ],
    tables: [
      {
        title: 'your own JS: a trivial task (tasks/s and round trip)',
        columns: [
          { key: 'row', label: 'pool' },
          { key: 'inFlight', label: 'in flight' },
          { key: 'tasksPerSec', label: 'tasks/s', format: 'ops' },
          { key: 'p50Us', label: 'p50 µs', format: 'sig3' },
          { key: 'p99Us', label: 'p99 µs', format: 'sig3' },
          { key: 'tasks', label: 'tasks' },
        ],
        rows: trivial,
      },
      {
        title: `your own JS: ${count} CPU-bound tasks (≈ 5 ms each)`,
        columns: [
          { key: 'row', label: 'pool' },
          { key: 'threads', label: 'workers' },
          { key: 'wallMs', label: 'wall ms (median round)', format: 'sig3' },
          { key: 'perTaskMs', label: 'ms per task on a worker', format: 'sig3' },
          { key: 'rounds', label: 'wall ms, each round (fastest first)' },
          { key: 'loopP99Ms', label: 'loop delay p99 ms', format: 'sig3' },
          { key: 'loopMaxMs', label: 'loop delay max ms', format: 'sig3' },
        ],
        rows: cpu,
      },
      {
        title: 'your own JS: a 1 MiB argument',
        columns: [
          { key: 'row', label: 'pool' },
          { key: 'cloneMs', label: 'clone ms (median)', format: 'sig3' },
          { key: 'cloneMinMs', label: 'clone ms (min)', format: 'sig3' },
          { key: 'transferMs', label: 'transfer ms (median)', format: 'sig3' },
          { key: 'transferDetached', label: 'transfer: caller buffer detached' },
          { key: 'sharedSeen', label: 'SharedArrayBuffer: worker write seen' },
        ],
        rows: big,
      },
    ],
    charts: [
      {
        title: 'your own JS: tasks/s by tasks in flight (same task module on every pool)',
        x: { field: 'inFlight', label: 'tasks in flight', log: true },
        y: { field: 'tasksPerSec', label: 'tasks/s', log: true },
        series: 'row',
        data: trivial,
      },
    ],
    ratios,
    raw: { trivial, cpu, cpuRounds: Object.fromEntries(samples), big },
  };
}
