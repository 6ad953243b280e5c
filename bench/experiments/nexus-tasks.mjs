// The Nexus shapes with the user's own JS on the workers (issue 34, item 2):
//  - Emitter with 4 CPU-bound JS listeners: task exports on a 2-worker pool vs the same
//    functions as listeners on the loop (target ≥ 1.8×, loop-delay p99 ≤ 5 ms meanwhile);
//  - a JS stream filter doing a copy's work: filters.task(work.copy) vs the same async
//    generator on the loop (Duplex.from), throughput (target ≥ 0.9×, loop p99 ≤ 5 ms);
//  - the same with a transform that computes on its bytes (work.checksum: Adler-32 of
//    each chunk in JS, the chunk passed on), where the hand-off is small beside the work.
// Everything in one process, one run; the loop-delay monitor samples every 1 ms.
//
//   node bench/run.mjs nexus-tasks [--quick] [--only emitter|filter|checksum]

import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { Duplex, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { GCProfiler } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { Emitter, filters, Pool, tasks } from 'offthread';
import { startLoopDelay } from '../lib/loop-delay.mjs';
import { burn, checksum, copy } from './_nexus-work.mjs';

const MODULE = new URL('./_nexus-work.mjs', import.meta.url);
/**
 * Repetitions of each variant, interleaved; a row is the median one. Five: with three, one
 * quiet run's reps of the same variant spread 1.1-1.4 s (Emitter) and 220-463 ms (filter).
 */
const REPS = 5;
/**
 * Workers at the default nice 10 (below the loop: the loop keeps its core) and at nice
 * 0 (as the loop): on a machine shared with other work, niced workers lose their cores
 * to it, so both are measured in the same run.
 */
const NICE = [10, 0];
const LOOP = 'same generator on the loop (Duplex.from)';

/**
 * The machine's ceiling for the Emitter rows: the same listeners split over two plain
 * worker_threads (no pool), an emit posting each its half. On this shared VM two busy
 * threads each run the same function 5-18% slower than one does alone, so 2x is not
 * what two threads give here; this row says what they do give, in the same run.
 */
function plainWorkers(listeners) {
  const workers = [0, 1].map(() => new Worker(new URL('./_nexus-plain-worker.mjs', import.meta.url)));
  const run = async (worker, n) => {
    const reply = once(worker, 'message'); // rejects on the worker's 'error'
    worker.postMessage({ n, k: listeners / 2 });
    return (await reply)[0];
  };
  return {
    async emit(_event, n) {
      return (await Promise.all(workers.map((w) => run(w, n)))).flat();
    },
    close: () => Promise.all(workers.map((w) => w.terminate())),
  };
}

/**
 * The loop's delay while a plain worker_thread (no offthread, no messages) copies 64 KiB
 * buffers in its own isolate and the loop itself does nothing: what another isolate's
 * garbage collection of ArrayBuffers alone does to the loop. On Node 24 and 26 it starts
 * a full mark every ~64 MB, on V8's helper threads shared with the loop's isolate.
 */
async function loopWhileAWorkerCopies(ms) {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     const chunk = Buffer.alloc(65536, 1);
     let sum = 0;
     parentPort.postMessage('copying');
     for (;;) sum += new Uint8Array(chunk)[sum & 0xffff];`,
    { eval: true },
  );
  await once(worker, 'message');
  try {
    return await timed(() => new Promise((resolve) => setTimeout(resolve, ms)));
  } finally {
    await worker.terminate();
  }
}

/** The run of median wall time (its loop delay with it). */
const median = (runs) => [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)];

/**
 * CPU time of the calling thread in ns (Linux: /proc/thread-self/schedstat), else NaN:
 * what the main thread itself spends, whatever the neighbours take of the cores.
 */
function threadCpuNs() {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}

/**
 * ms of `fn()`, with the loop delay recorded meanwhile, the loop's busy time (event
 * loop utilization: the ms it spent running JS and callbacks rather than waiting), the
 * main thread's own CPU time and its isolate's garbage collections (v8.GCProfiler: the
 * full ones counted, every pause summed).
 */
async function timed(fn) {
  const gc = new GCProfiler();
  gc.start();
  const loop = startLoopDelay({ resolutionMs: 1 });
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = threadCpuNs();
  const faults0 = process.resourceUsage().minorPageFault;
  const t0 = performance.now();
  const value = await fn();
  const ms = performance.now() - t0;
  const cpuMs = (threadCpuNs() - cpu0) / 1e6;
  const faults = process.resourceUsage().minorPageFault - faults0;
  const elu = performance.eventLoopUtilization(elu0);
  const gcs = gc.stop().statistics;
  const fullGcs = gcs.filter((s) => s.gcType === 'MarkSweepCompact').length;
  const gcMs = gcs.reduce((sum, s) => sum + s.cost, 0) / 1000;
  return { ms, loop: loop.stop(), busyMs: elu.active, busy: elu.utilization, cpuMs, faults, fullGcs, gcMs, value };
}

/** `count` chunks of `size` bytes (a fresh buffer each, as a file stream gives). */
function source(size, count) {
  let i = 0;
  return new Readable({
    highWaterMark: 4,
    objectMode: false,
    read() {
      if (i++ === count) this.push(null);
      else this.push(Buffer.alloc(size, i & 0xff));
    },
  });
}

function counter() {
  let bytes = 0;
  const sink = new Writable({
    write(chunk, _enc, cb) {
      bytes += chunk.length;
      cb();
    },
  });
  return { sink, bytes: () => bytes };
}

/** The columns of a filter's table (filterRuns' rows). */
const FILTER_COLUMNS = [
  { key: 'variant', label: 'Variant' },
  { key: 'chunkKiB', label: 'chunk KiB', format: 'int' },
  { key: 'MiB', label: 'MiB', format: 'int' },
  { key: 'wallMs', label: 'wall', format: 'ms' },
  { key: 'MiBPerSec', label: 'MiB/s', format: 'sig3' },
  { key: 'loopP99Ms', label: 'loop delay p99', format: 'ms' },
  { key: 'loopMaxMs', label: 'loop delay max', format: 'ms' },
  { key: 'loopBusyMsPerMiB', label: 'loop busy per MiB', format: 'ms' },
  { key: 'mainCpuMsPerMiB', label: 'main thread CPU per MiB', format: 'ms' },
  { key: 'faultsPerMiB', label: 'page faults per MiB', format: 'sig3' },
  { key: 'fullGcs', label: 'main-thread full GCs', format: 'int' },
  { key: 'gcMs', label: 'main-thread GC pauses', format: 'ms' },
  { key: 'repsWallMs', label: 'each rep, ms' },
];

/**
 * The rows of one JS filter, `gen` on the loop (Duplex.from) and as filters.task on one
 * worker of each pool, each chunk copied in and moved (`transfer`), every chunk size,
 * each variant REPS times interleaved; a row is the median rep.
 */
async function filterRuns(ctx, name, gen, works, pools, sizes, totalBytes) {
  const out = [];
  for (const size of sizes) {
    const count = Math.round(totalBytes / size);
    const mib = (size * count) / 2 ** 20;
    const variants = [[LOOP, () => Duplex.from(gen)]];
    for (const [i, pool] of pools.entries()) {
      variants.push([`filters.task(work.${name}), nice ${NICE[i]}`, () => filters.task(works[i][name], { pool })]);
      variants.push([
        `filters.task(work.${name}, { transfer: true }), nice ${NICE[i]}`,
        () => filters.task(works[i][name], { pool, transfer: true }),
      ]);
    }
    // Warm each once (JIT, the workers' module).
    for (const [, make] of variants) await pipeline(source(size, 8), make(), counter().sink);
    const runs = {};
    for (let rep = 0; rep < REPS; rep++) {
      for (const [variant, make] of variants) {
        ctx.progress(`nexus-tasks: ${name} filter, ${variant}, ${size / 1024} KiB chunks (${rep + 1}/${REPS})`);
        const c = counter();
        const r = await timed(() => pipeline(source(size, count), make(), c.sink));
        if (c.bytes() !== size * count) throw new Error(`${variant}: ${c.bytes()} bytes out of ${size * count}`);
        runs[variant] = [...(runs[variant] ?? []), r];
      }
    }
    const rows = [];
    const ratios = [];
    const mbps = {};
    for (const [variant] of variants) {
      const r = median(runs[variant]);
      mbps[variant] = mib / (r.ms / 1000);
      rows.push({
        variant,
        chunkKiB: size / 1024,
        MiB: mib,
        wallMs: r.ms,
        MiBPerSec: mbps[variant],
        loopP99Ms: r.loop.p99Ms,
        loopMaxMs: r.loop.maxMs,
        loopBusyMsPerMiB: r.busyMs / mib,
        mainCpuMsPerMiB: r.cpuMs / mib,
        faultsPerMiB: r.faults / mib,
        fullGcs: r.fullGcs,
        gcMs: r.gcMs,
        repsWallMs: runs[variant].map((x) => Math.round(x.ms)).join(' / '),
      });
      if (variant === LOOP) continue;
      ratios.push(
        {
          label: `${name} filter: ${variant} / on the loop, ${size / 1024} KiB chunks`,
          value: mbps[variant] / mbps[LOOP],
          target: 0.9,
        },
        {
          label: `${name} filter loop-delay p99, ${variant}, ${size / 1024} KiB chunks`,
          value: r.loop.p99Ms,
          target: 5,
          op: '<=',
          unit: 'ms',
        },
      );
    }
    out.push({ rows, ratios });
  }
  return out;
}

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const { values } = parseArgs({ args: ctx.argv, strict: false, options: { only: { type: 'string' } } });
  const only = values.only;
  if (only !== undefined && !['emitter', 'filter', 'checksum'].includes(only))
    throw new Error('--only takes emitter, filter or checksum');
  const runs = (section) => only === undefined || only === section;
  const loadAtStart = loadavg()[0];
  const pools = NICE.map((nice) => new Pool({ threads: 2, nice, idleTimeout: Number.POSITIVE_INFINITY }));
  const works = pools.map((pool) => tasks(MODULE, { pool }));
  const listeners = 4;
  const rounds = ctx.quick ? 2 : 4;
  const burnN = ctx.quick ? 1_500_000 : 3_000_000;

  // The machine's own noise floor: the loop delay while this process does nothing.
  ctx.progress('nexus-tasks: idle baseline');
  const idle = await timed(() => new Promise((resolve) => setTimeout(resolve, 1000)));
  ctx.progress('nexus-tasks: the loop while a plain worker copies buffers');
  const besideCopier =
    runs('filter') || runs('checksum') ? await loopWhileAWorkerCopies(ctx.quick ? 1000 : 3000) : undefined;

  // --- Emitter ---
  const onLoop = new Emitter();
  for (let i = 0; i < listeners; i++) onLoop.on('work', (n) => burn(n));
  const emitters = [['listeners on the loop', onLoop]];
  for (const [i, pool] of pools.entries()) {
    const emitter = new Emitter({ pool });
    for (let j = 0; j < listeners; j++) emitter.on('work', works[i].burn);
    await emitter.emit('work', 1000); // the workers load the module
    emitters.push([`task-export listeners, 2 workers at nice ${NICE[i]}`, emitter]);
  }
  const plain = plainWorkers(listeners);
  await plain.emit('work', 1000); // as the pools: the workers load the module
  const CEILING = 'the same functions on 2 plain worker_threads (the ceiling)';
  emitters.push([CEILING, plain]);
  const expected = burn(burnN);
  // Each variant REPS times, interleaved, so the shared machine's swings fall on all of
  // them alike; each row is the median rep (by wall time).
  const runsOf = {};
  for (let rep = 0; rep < (runs('emitter') ? REPS : 0); rep++) {
    for (const [variant, emitter] of emitters) {
      ctx.progress(`nexus-tasks: Emitter, ${variant} (${rep + 1}/${REPS})`);
      const r = await timed(async () => {
        for (let i = 0; i < rounds; i++) {
          const out = await emitter.emit('work', burnN);
          if (out.length !== listeners || out.some((x) => x !== expected)) throw new Error('wrong results');
        }
      });
      runsOf[variant] = [...(runsOf[variant] ?? []), r];
    }
  }
  // The ceiling's two threads go before the filter rows, which have no use for them.
  await plain.close();
  const emitRows = [];
  const emitRuns = {};
  for (const [variant] of runs('emitter') ? emitters : []) {
    const r = median(runsOf[variant]);
    emitRuns[variant] = r;
    emitRows.push({
      variant,
      emits: rounds,
      listeners,
      wallMs: r.ms,
      emitsPerSec: (rounds * 1000) / r.ms,
      loopP99Ms: r.loop.p99Ms,
      loopMaxMs: r.loop.maxMs,
      loopBusyMs: r.busyMs,
      repsWallMs: runsOf[variant].map((x) => Math.round(x.ms)).join(' / '),
    });
  }
  const emitRatios = [];
  for (const [variant] of runs('emitter') ? emitters.slice(1) : []) {
    if (variant === CEILING) {
      emitRatios.push({
        label: `Emitter: ${variant} / on the loop`,
        value: emitRuns['listeners on the loop'].ms / emitRuns[variant].ms,
      });
      continue;
    }
    emitRatios.push(
      {
        label: `Emitter: ${variant} / on the loop`,
        value: emitRuns['listeners on the loop'].ms / emitRuns[variant].ms,
        target: 1.8,
      },
      {
        label: `Emitter loop-delay p99, ${variant}`,
        value: emitRuns[variant].loop.p99Ms,
        target: 5,
        op: '<=',
        unit: 'ms',
      },
    );
  }

  // --- JS filters: a copy's work, then real work (a checksum) per chunk ---
  const sizes = [64 * 1024, 1024 * 1024];
  const totalBytes = ctx.quick ? 128 * 2 ** 20 : 512 * 2 ** 20;
  const copyRuns = runs('filter') ? await filterRuns(ctx, 'copy', copy, works, pools, sizes, totalBytes) : [];
  // A transform that computes on its bytes: 256 MiB, 64 KiB chunks.
  const sumBytes = ctx.quick ? 64 * 2 ** 20 : 256 * 2 ** 20;
  const sumRuns = runs('checksum')
    ? await filterRuns(ctx, 'checksum', checksum, works, pools, [64 * 1024], sumBytes)
    : [];
  const filterRows = copyRuns.flatMap((r) => r.rows);
  const sumRows = sumRuns.flatMap((r) => r.rows);
  const filterRatios = [...copyRuns, ...sumRuns].flatMap((r) => r.ratios);
  await Promise.all(pools.map((pool) => pool.close()));

  return {
    title: 'Your JS in the Nexus shapes: Emitter listeners and a stream filter on the workers',
    params: {
      listeners,
      rounds,
      burnN,
      threads: 2,
      nice: NICE,
      chunkSizes: sizes,
      totalBytes,
      checksumBytes: sumBytes,
    },
    notes: [
      `One process, one run; 2 cores shared with other sessions, so ratios are of this run only. Each variant ran ${REPS} times, interleaved with the others; a row is its median rep (its loop delay with it), and lists every rep's wall time.`,
      `Emitter: ${listeners} listeners, each \`burn(${burnN})\` (float math), ${rounds} emits a rep; the loop variant runs the same function as a plain listener. The ceiling row runs the same function on two plain worker_threads (no offthread, nice 0), half the listeners each per emit: what two busy threads of this machine give.`,
      'Filter: the same async generator (`copy`: each chunk into a new buffer) as Duplex.from on the loop and as filters.task on one pool worker; chunks are fresh Buffers from a Readable, bytes counted by a Writable.',
      'Checksum: the async generator `checksum` (Adler-32 of each chunk in plain JS, the chunk itself passed on) the same ways, 64 KiB chunks: a transform whose work per chunk is larger than a hand-off to a worker.',
      'The task filter copies each chunk once on the loop (the writer may reuse it) and moves it to the worker; with `transfer: true` it moves the chunk itself (each is a fresh Buffer here). The worker moves its output back.',
      "Main thread CPU: the main thread's own CPU time (/proc/thread-self/schedstat) during the run, per MiB — what the loop pays per chunk, whatever the neighbours take of the cores.",
      "Page faults: the process's minor page faults during the run (process.resourceUsage()), per MiB: memory the allocator gave back to the kernel and touched again (a 4 KiB page each, 256 in a MiB; docs/task-filter-costs.md).",
      "Main-thread GCs: v8.GCProfiler over the run, the main isolate's mark-compacts counted and every GC pause (incremental steps included) summed. On Node 24 and 26 every ~64 MB of ArrayBuffers an isolate takes on starts a full mark (V8's external-memory limit), where Node 20 and 22 mostly scavenge: the workers' isolates do the same, out of this column (docs/task-filter-costs.md).",
      "Loop busy: the event loop's active time (performance.eventLoopUtilization) during the run — the work left on the loop, less sensitive to the neighbours than wall time.",
      'Loop delay: perf_hooks.monitorEventLoopDelay at 1 ms resolution during each timed run; – where the loop never ran the monitor (blocked throughout).',
      'Workers at nice 10 (the default: below the loop, which keeps its core) and at nice 0 (as the loop), one pool each, in the same run: with other processes on the cores, niced workers get less of them; un-niced ones take them from the loop too.',
      `Idle baseline: loop-delay p99 ${idle.loop.p99Ms.toFixed(1)} ms (max ${idle.loop.maxMs.toFixed(1)} ms) over 1 s with nothing running in this process — what the shared machine alone does to the loop.`,
      ...(besideCopier
        ? [
            `Beside a copier: loop-delay p99 ${besideCopier.loop.p99Ms.toFixed(1)} ms (max ${besideCopier.loop.maxMs.toFixed(1)} ms) over ${ctx.quick ? 1 : 3} s with the loop idle while one plain worker_thread (no offthread, no messages) copies 64 KiB buffers in its own isolate — what another isolate's garbage collection alone does to the loop: the floor under every filter row's p99.`,
          ]
        : []),
      `Load average at the start: ${loadAtStart.toFixed(1)} on ${availableParallelism()} cores.`,
    ],
    // --only leaves the other half's table and chart out.
    tables: [
      {
        title: 'Emitter with 4 CPU-bound JS listeners',
        columns: [
          { key: 'variant', label: 'Variant' },
          { key: 'emits', label: 'emits', format: 'int' },
          { key: 'wallMs', label: 'wall', format: 'ms' },
          { key: 'emitsPerSec', label: 'emits/s', format: 'sig3' },
          { key: 'loopP99Ms', label: 'loop delay p99', format: 'ms' },
          { key: 'loopMaxMs', label: 'loop delay max', format: 'ms' },
          { key: 'loopBusyMs', label: 'loop busy', format: 'ms' },
          { key: 'repsWallMs', label: 'each rep, ms' },
        ],
        rows: emitRows,
      },
      {
        title: 'A JS filter doing a copy',
        columns: FILTER_COLUMNS,
        rows: filterRows,
      },
      {
        title: 'A JS filter doing real work: Adler-32 of each chunk',
        columns: FILTER_COLUMNS,
        rows: sumRows,
      },
    ].filter((table) => table.rows.length > 0),
    charts: [
      {
        kind: 'bar',
        title: 'Emitter: 4 CPU-bound JS listeners',
        subtitle: 'emits per second; higher is better',
        x: { field: 'variant', label: '' },
        y: { field: 'emitsPerSec', label: 'emits/s' },
        series: 'variant',
        data: emitRows,
      },
      {
        kind: 'bar',
        suffix: 'filter',
        title: 'A JS filter doing a copy: throughput',
        subtitle: 'MiB/s by chunk size; higher is better',
        x: { field: 'chunkKiB', label: 'chunk size (KiB)' },
        y: { field: 'MiBPerSec', label: 'MiB/s' },
        series: 'variant',
        data: filterRows,
      },
      {
        kind: 'bar',
        suffix: 'checksum',
        title: 'A JS filter doing real work (Adler-32 per chunk): throughput',
        subtitle: 'MiB/s, 64 KiB chunks; higher is better',
        x: { field: 'variant', label: '' },
        y: { field: 'MiBPerSec', label: 'MiB/s' },
        series: 'variant',
        data: sumRows,
      },
    ].filter((chart) => chart.data.length > 0),
    ratios: [
      ...emitRatios,
      ...(besideCopier
        ? [
            {
              label: 'loop-delay p99 of an idle loop beside a plain worker copying buffers (no offthread: the floor)',
              value: besideCopier.loop.p99Ms,
              unit: 'ms',
            },
          ]
        : []),
      ...filterRatios,
    ],
    raw: {
      emitRows,
      filterRows,
      checksumRows: sumRows,
      idleLoopDelay: idle.loop,
      besideCopierLoopDelay: besideCopier?.loop,
      loadAtStart,
    },
  };
}
