// One row of the `async` experiment, in its own process: keep K trivial tasks in flight
// until N have completed (or the time cap), recording each task's round trip.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { md5, monitorLoopDelay, Pool, pi } from 'offthread';
import { piVariants } from 'offthread/internal';
import { keepInFlight, progress } from '../lib/measure.mjs';

const require = createRequire(import.meta.url);
const workerFile = new URL('./async-worker.mjs', import.meta.url);

/** Submitters: each returns a function i → Promise of a trivial task's result. */
const rows = {
  /** The offthread pool: a no-op kernel, batched completions. */
  offthread: () => {
    const pool = new Pool();
    return { submit: (i) => pool.echo(i), close: () => pool.close() };
  },
  /** The worker engine (no addon needed): worker_threads each running offthread.wasm. */
  offthreadWasm: () => {
    const pool = new Pool({ engine: 'wasm' });
    return { submit: (i) => pool.echo(i), close: () => pool.close() };
  },
  /** The offthread pool through the π facade (validation + 1-sample π). */
  offthreadPi: () => {
    const pool = new Pool();
    return { submit: () => piVariants.estimate(1, 'parallelAsync', { pool }), close: () => pool.close() };
  },
  /**
   * The facade path as a user calls it, on the default pool (issue 35): the research π
   * variant on the pool (the figure), a public registry kernel that always goes
   * to the pool (`md5.iterate`, 1 round), and public `pi.estimate(1)` (auto: inline,
   * since a round trip costs more than 1 sample; its argument checks and promise only).
   */
  facadePi: () => ({ submit: () => piVariants.estimate(1, 'parallelAsync'), close: async () => {} }),
  facadeMd5: () => ({ submit: () => md5.iterate('', 1), close: async () => {} }),
  facadePiAuto: () => ({ submit: () => pi.estimate(1), close: async () => {} }),
  /** napi AsyncTask on libuv's pool (UV_THREADPOOL_SIZE, default 4), 1-sample π. */
  asyncTask: () => {
    const binding = require('offthread/internal').nativeBinding();
    return { submit: () => binding.piCountRangeUv(0, 1, 1), close: async () => {} };
  },
  /** piscina 5 running the same 1-sample π in JS. */
  piscina: async () => {
    const { Piscina } = await import('piscina');
    const pool = new Piscina({ filename: new URL('./async-piscina-task.mjs', import.meta.url).href });
    return { submit: (i) => pool.run(i), close: () => pool.destroy() };
  },
  /** Raw worker_threads: one worker per core, postMessage round-robin. */
  workerThreads: () => {
    const { availableParallelism } = require('node:os');
    const workers = Array.from({ length: availableParallelism() }, () => new Worker(workerFile));
    const pending = new Map();
    for (const w of workers) w.on('message', ([id, value]) => pending.get(id)(value));
    let next = 0;
    return {
      submit: (i) =>
        new Promise((resolve) => {
          const id = next++;
          pending.set(id, (v) => {
            pending.delete(id);
            resolve(v);
          });
          workers[id % workers.length].postMessage([id, i]);
        }),
      close: () => Promise.all(workers.map((w) => w.terminate())),
    };
  },
};

export async function measureRow({ row, inFlight, quick }) {
  const { submit, close } = await rows[row]();
  const out = [];
  for (const k of inFlight) {
    await keepInFlight(submit, Math.min(k, 100), 2000, 500); // warm-up
    const total = k === 1 ? (quick ? 20_000 : 100_000) : quick ? 200_000 : 1_000_000;
    const r = await keepInFlight(submit, k, total, quick ? 1500 : 4000);
    out.push({ row, inFlight: k, ...r });
    progress(`${row} ×${k}: ${Math.round(r.tasksPerSec)} tasks/s, p50 ${r.p50Us.toFixed(1)} µs`);
  }
  await close();
  return out;
}

/** Loop delay (1 ms resolution) idle, then while the default pool runs heavy π jobs. */
export async function measureLoopDelay({ quick }) {
  const idle = monitorLoopDelay({ resolutionMs: 1 });
  await new Promise((r) => setTimeout(r, quick ? 500 : 2000));
  const idleSummary = idle.stop();
  const busy = monitorLoopDelay({ resolutionMs: 1 });
  const jobs = [];
  const until = performance.now() + (quick ? 2000 : 8000);
  let completed = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  // Keep 8 heavy jobs (each ~100 ms of 2 cores) queued the whole time.
  const feed = () => {
    if (performance.now() >= until) return;
    jobs.push(
      piVariants.estimate(2e8, 'parallelAsync').then(() => {
        completed++;
        feed();
      }),
    );
  };
  for (let i = 0; i < 8; i++) feed();
  while (performance.now() < until) await new Promise((r) => setTimeout(r, 50));
  await Promise.all(jobs);
  const busySummary = busy.stop();
  const cpu = process.cpuUsage(cpu0);
  const coresUsed = (cpu.user + cpu.system) / 1000 / (performance.now() - t0);
  progress(`loop delay p99 idle ${idleSummary.p99Ms.toFixed(2)} ms, saturated ${busySummary.p99Ms.toFixed(2)} ms`);
  return { idle: idleSummary, saturated: busySummary, heavyJobsCompleted: completed, coresUsed };
}
