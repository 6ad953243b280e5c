// Pools dropped without close() (issue 31, item 6): each engine, N pools made one after
// another, one call each, never closed. Before pools had an idle timeout, their threads
// stayed until a garbage collection that may never come (1,000 `js` pools: 1,009 threads,
// 7 GB). Now a pool's threads stop after `idleTimeout` (default 10 s) without work.
// Reported per engine: threads and RSS at the start, at the peak, and once the threads
// are back (or after the wait runs out), and how long that took after the last call.
// The `bare` row is the control: the same lifecycle with no offthread code — pairs of
// plain `new Worker()`, each given a 1 MiB SharedArrayBuffer (a task pool's shared
// memory) and one message, terminated 10 s after it (the idle timeout). What `bare`
// keeps is Node's, V8's and glibc's, not a pool's.
//
//   node bench/run.mjs dropped-pools [--quick] [--pools N] [--engines wasm,bare]

import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { progress, runInChild } from '../lib/measure.mjs';

const ENGINES = ['native', 'wasm', 'js', 'tasks'];
/** The control: plain workers, no offthread code (see barePair). */
const BARE = 'bare';
const TASK_MODULE = new URL('../../packages/offthread/test-fixtures/tasks/work.mjs', import.meta.url).href;

const threads = () => Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
const rssMiB = () => process.memoryUsage().rss / 2 ** 20;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until the process runs no more than `most` threads or `within` ms pass. */
async function threadsBack(most, within) {
  const end = performance.now() + within;
  while (threads() > most && performance.now() < end) await sleep(20);
}

/** The names of the process's threads (/proc/self/task/N/comm), counted. */
function threadNames() {
  const names = {};
  for (const t of readdirSync('/proc/self/task')) {
    try {
      const name = readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim();
      names[name] = (names[name] ?? 0) + 1;
    } catch {
      // the thread exited meanwhile
    }
  }
  return names;
}

/**
 * RSS once a full GC has run and what it freed could be trimmed: a pool the GC collects
 * trims 1 s later (pool.ts, TRIM_AFTER_MS), so 1.5 s. Then one more `malloc_trim(0)` by
 * hand: what stays after it is live memory or pages pinned by live allocations; what it
 * takes back was only kept by the allocator.
 */
async function afterGc(trim) {
  globalThis.gc?.();
  await sleep(1500);
  const gcRss = rssMiB();
  trim?.();
  await sleep(1000); // the trim runs on a thread of its own
  return { gcRss, trimRss: rssMiB() };
}

/** The bare control's worker: answers one message (touching the buffer), then idles. */
const BARE_WORKER = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (m) => { new Int32Array(m)[0] = 1; parentPort.postMessage(0); });`;

/** A "pool" of the bare control: two plain workers, one message each, stopped 10 s later. */
async function barePair() {
  const workers = [0, 1].map(() => new Worker(BARE_WORKER, { eval: true }));
  const shared = new SharedArrayBuffer(2 ** 20);
  await Promise.all(
    workers.map(
      (w) =>
        new Promise((resolve) => {
          w.once('message', resolve);
          w.postMessage(shared);
        }),
    ),
  );
  for (const w of workers) w.unref();
  setTimeout(() => {
    for (const w of workers) void w.terminate();
  }, 10_000).unref();
}

/** The pool engine a row runs on: `tasks` is tasks on a js pool (bare warms up one too). */
const poolEngine = (engine) => (engine === 'tasks' || engine === BARE ? 'js' : engine);

/** The one call a row's pool gets: a task for `tasks`, md5.hexAsync otherwise. */
async function callFor(engine) {
  const { md5, tasks } = await import('offthread');
  return engine === 'tasks'
    ? (pool) => tasks(TASK_MODULE, { pool }).add(2, 3)
    : (pool) => md5.hexAsync('abc', { pool });
}

/**
 * Watches every worker the pools start (worker_threads' Worker, as offthread's Node host
 * reaches it at each spawn): when a row's threads are late, whether its workers were
 * never told to stop (the pool's side) or were told and have not exited (Node's side).
 * Installed before offthread is loaded; a no-op for the native row, which has no workers.
 */
function watchWorkers() {
  const wt = createRequire(import.meta.url)('node:worker_threads');
  // Up now: never told to stop (`running`), and told but not yet exited (`stopping`).
  const up = { running: 0, stopping: 0 };
  const Base = wt.Worker;
  wt.Worker = class extends Base {
    #state = 'running';
    constructor(...args) {
      super(...args);
      up.running++;
      this.once('exit', () => {
        up[this.#state]--;
        this.#state = 'exited';
      });
    }
    terminate() {
      if (this.#state === 'running') {
        up.running--;
        up.stopping++;
        this.#state = 'stopping';
      }
      return super.terminate();
    }
  };
  return () => ({ ...up });
}

/** Runs in a child process: `pools` pools of `engine` made, used once, dropped. */
export async function dropPools(engine, pools, waitMs) {
  const workersUp = watchWorkers();
  const { Pool } = await import('offthread');
  const { nativeBinding } = await import('offthread/internal');
  const trim = () => nativeBinding()?.trimMemory();
  const call = await callFor(engine);
  const make = engine === BARE ? () => barePair() : () => call(new Pool({ engine: poolEngine(engine), threads: 2 }));
  // One pool made and closed first: the addon, offthread.wasm and the task runner loaded.
  const warm = new Pool({ engine: poolEngine(engine), threads: 1 });
  await call(warm);
  await warm.close();
  await sleep(200);
  const start = { threads: threads(), rss: rssMiB() };
  let peak = { ...start };
  const t0 = performance.now();
  for (let i = 0; i < pools; i++) {
    await make();
    if (threads() > peak.threads) peak = { threads: threads(), rss: Math.max(peak.rss, rssMiB()) };
    peak.rss = Math.max(peak.rss, rssMiB());
    if ((i + 1) % 100 === 0) progress(`dropped-pools: ${engine} ${i + 1} pools, ${threads()} threads`);
  }
  const madeMs = performance.now() - t0;
  const lastCall = performance.now();
  // Every second of the wait: threads, and the workers still running or stopping. The
  // state at the end alone hides a late spell that ended before it (a run's wasm row was
  // late for the whole wait and ended with no worker up, the one extra thread a trim).
  const trace = [];
  for (let tick = 0; threads() > start.threads && performance.now() - lastCall < waitMs; tick++) {
    if (tick % 10 === 0) {
      const w = workersUp();
      trace.push(`${Math.round((performance.now() - lastCall) / 1000)} s: ${threads()} (${w.running}/${w.stopping})`);
    }
    await sleep(100);
  }
  const backMs = threads() <= start.threads ? performance.now() - lastCall : null;
  await sleep(1000); // RSS settles after the last threads' stacks are unmapped
  // The last stop asks for a heap trim 1 s after it (pool.ts, TRIM_AFTER_MS), on a thread
  // of its own: read 1 s after the threads were back, the count caught that trim in
  // flight (both earlier runs' wasm rows: "12 against 11", blanked as never back, though
  // the threads were back in 10 s). The count at the end is read once it has run.
  await threadsBack(start.threads, 3000);
  const endThreads = threads();
  return {
    engine,
    pools,
    madeMs,
    startThreads: start.threads,
    peakThreads: peak.threads,
    endThreads,
    backMs,
    // Which threads are left over, if any (Node 20 names its own threads "node", workers
    // included): by name, and the workers among them by state.
    endNames: endThreads > start.threads ? JSON.stringify({ ...threadNames(), workers: workersUp() }) : '',
    trace,
    startRss: start.rss,
    peakRss: peak.rss,
    endRss: rssMiB(),
    ...(await afterGc(trim)),
  };
}

/**
 * Runs in a child process: `pools` pools made one at a time with `idleTimeout: 0` (each
 * one's threads stop right after its call, so few are up at once), a GC after every
 * 100th. RSS that grew with the number of pools would be a leak; RSS that stays flat
 * says the main table's leftover is the allocator keeping its peak.
 */
export async function oneAtATime(engine, pools) {
  const { Pool } = await import('offthread');
  const call = await callFor(engine);
  const rss = [];
  for (let i = 0; i < pools; i++) {
    await call(new Pool({ engine: poolEngine(engine), threads: 1, idleTimeout: 0 }));
    await sleep(20);
    if ((i + 1) % 100 === 0) {
      globalThis.gc?.();
      rss.push(rssMiB());
    }
  }
  return { engine, pools, rssAt100: rss[0], rssAtEnd: rss[rss.length - 1], threadsAtEnd: threads() };
}

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const { values } = parseArgs({
    args: ctx.argv,
    options: { pools: { type: 'string' }, engines: { type: 'string' } },
    strict: false,
  });
  const pools = Number(values.pools ?? (ctx.quick ? 100 : 1000));
  // A subset of the rows (e.g. `--engines wasm,bare`): one row re-run in a fifth of the time.
  const only = values.engines?.split(',');
  const rowsOf = (list) => (only ? list.filter((e) => only.includes(e)) : list);
  const waitMs = 60_000;
  const rows = [];
  for (const engine of rowsOf([...ENGINES, BARE])) {
    ctx.progress(`dropped-pools: ${engine}, ${pools} pools`);
    const child = await runInChild(import.meta.url, 'dropPools', [engine, pools, waitMs], {
      timeoutMs: 900_000,
      execArgv: ['--expose-gc'], // only for the last column: the run itself never collects by hand
    });
    rows.push(child.value);
  }
  const sequential = [];
  const onePools = ctx.quick ? 200 : 500;
  for (const engine of rowsOf(ENGINES)) {
    ctx.progress(`dropped-pools: ${engine}, ${onePools} pools one at a time`);
    const child = await runInChild(import.meta.url, 'oneAtATime', [engine, onePools], {
      timeoutMs: 900_000,
      execArgv: ['--expose-gc'],
    });
    sequential.push(child.value);
  }
  const late = rows
    .filter((r) => r.backMs === null)
    .map((r) => `${r.engine} (${r.endThreads} against ${r.startThreads}: ${r.endNames})`);
  // A late row's wait, second by second: threads (workers never told to stop/told, not exited).
  const traces = rows
    .filter((r) => r.backMs === null)
    .map((r) => `${r.engine} row, threads during the wait (workers running/stopping): ${r.trace.join(', ')}.`);
  const back = rows.filter((r) => r.backMs !== null);
  const slowest = Math.max(...back.map((r) => r.backMs));
  return {
    title: `${pools} pools dropped without close(), each engine`,
    params: { pools, threadsPerPool: 2, idleTimeout: 'default (10 s)', waitMs },
    notes: [
      'Each pool: `new Pool({ engine, threads: 2 })`, one call (md5.hexAsync; tasks: one task on a js pool), then dropped. bare: two plain `new Worker()` given a 1 MiB SharedArrayBuffer and one message, terminated 10 s later; no offthread code.',
      'Threads from /proc/self/status. "back" is the time from the last call until the process runs no more threads than at the start (blank: not within the wait). "threads at end" is read once the heap trim the last stop asks for (1 s after it, on a thread of its own) has run, within 3 s.',
      // Only when some row came back: Math.max() of none is -Infinity (the table's blank
      // "back after" cells say which rows were late).
      ...(back.length > 0
        ? [
            `Threads were back within ${(slowest / 1000).toFixed(1)} s of the last call${late.length > 0 ? ` except ${late.join('; ')}` : ' on every row'}: the idle timeout (10 s), not a garbage collection, stops them.`,
          ]
        : []),
      ...traces,
      '"RSS at end" still holds the dropped pools\' objects until a GC collects them (that GC is V8\'s to schedule); "RSS after a GC" is 1.5 s after one forced GC at the very end (the trim a collected pool asks for has run); "after a trim" after one more `malloc_trim(0)` by hand. What stays above the start then is live or pinned by live allocations; compare the bare row.',
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
          { key: 'gcRss', label: 'RSS after a GC', format: 'mib' },
          { key: 'trimRss', label: 'after a trim', format: 'mib' },
        ],
        rows,
      },
      {
        title: 'One pool at a time (idleTimeout 0), RSS after a GC every 100 pools',
        columns: [
          { key: 'engine', label: 'Engine' },
          { key: 'pools', label: 'pools', format: 'int' },
          { key: 'rssAt100', label: 'RSS after 100', format: 'mib' },
          { key: 'rssAtEnd', label: 'RSS after all', format: 'mib' },
          { key: 'threadsAtEnd', label: 'threads at end', format: 'int' },
        ],
        rows: sequential,
      },
    ],
    charts: [],
  };
}
