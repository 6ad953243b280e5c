// The async experiment's task rows, one pool per process: offthread's tasks() beside
// piscina, tinypool, workerpool, poolifier and raw worker_threads, every one running the
// same task module (_tasks/work.mjs) on `threads` workers.
import { Worker } from 'node:worker_threads';
import { monitorLoopDelay, Pool, tasks } from 'offthread';
import { keepInFlight, progress } from '../lib/measure.mjs';

const workUrl = new URL('./_tasks/work.mjs', import.meta.url);
const local = (name) => new URL(`./_tasks/${name}`, import.meta.url);

/** Each pool's way to run export `name` of the task module: (name, arg, transfer?) → Promise. */
const pools = {
  offthread: async (threads) => {
    const pool = new Pool({ threads });
    const work = tasks(workUrl, { pool });
    const fns = { echo: work.echo, cpu: work.cpu, size: work.size, mark: work.mark };
    return {
      run: (name, arg, transfer) => (transfer ? fns[name].with({ transfer })(arg) : fns[name](arg)),
      close: () => pool.close(),
    };
  },
  piscina: async (threads) => {
    const { Piscina } = await import('piscina');
    const pool = new Piscina({ filename: workUrl.href, minThreads: threads, maxThreads: threads });
    return {
      run: (name, arg, transfer) => pool.run(arg, { name, transferList: transfer }),
      close: () => pool.destroy(),
    };
  },
  tinypool: async (threads) => {
    const { Tinypool } = await import('tinypool');
    const pool = new Tinypool({ filename: workUrl.href, minThreads: threads, maxThreads: threads });
    return {
      run: (name, arg, transfer) => pool.run(arg, { name, transferList: transfer }),
      close: () => pool.destroy(),
    };
  },
  workerpool: async (threads) => {
    const workerpool = (await import('workerpool')).default;
    const pool = workerpool.pool(local('workerpool.mjs').pathname, {
      minWorkers: threads,
      maxWorkers: threads,
      workerType: 'thread',
    });
    return {
      run: (name, arg, transfer) => pool.exec(name, [arg], transfer ? { transfer } : undefined),
      close: () => pool.terminate(),
    };
  },
  poolifier: async (threads) => {
    const { FixedThreadPool } = await import('poolifier');
    const pool = new FixedThreadPool(threads, local('poolifier.mjs').pathname);
    return { run: (name, arg, transfer) => pool.execute(arg, name, undefined, transfer), close: () => pool.destroy() };
  },
  /** One worker per thread, postMessage round-robin: no queue, no features. */
  workerThreads: async (threads) => {
    const workers = Array.from({ length: threads }, () => new Worker(local('raw.mjs')));
    const pending = new Map();
    for (const w of workers) w.on('message', ([id, value]) => pending.get(id)(value));
    let next = 0;
    return {
      run: (name, arg, transfer) =>
        new Promise((resolve) => {
          const id = next++;
          pending.set(id, (v) => {
            pending.delete(id);
            resolve(v);
          });
          workers[id % workers.length].postMessage([id, name, arg], transfer);
        }),
      close: () => Promise.all(workers.map((w) => w.terminate())),
    };
  },
};

export const ROWS = Object.keys(pools);

/** Trivial task (`echo(i)`) at each in-flight level. */
export async function measureTrivial({ row, threads, inFlight, quick }) {
  const pool = await pools[row](threads);
  const call = (i) => pool.run('echo', i);
  const out = [];
  for (const k of inFlight) {
    await keepInFlight(call, Math.min(k, 100), 5000, 1000); // warm-up (JIT, workers started)
    const total = k === 1 ? (quick ? 20_000 : 100_000) : quick ? 200_000 : 1_000_000;
    const r = await keepInFlight(call, k, total, quick ? 1500 : 4000);
    out.push({ row, inFlight: k, ...r });
    progress(`${row} ×${k}: ${Math.round(r.tasksPerSec)} tasks/s, p50 ${r.p50Us.toFixed(1)} µs`);
  }
  await pool.close();
  return out;
}

/**
 * How many steps of the task module's own `cpu` take ≈ `ms` here: its median of 15 timed
 * calls after warm-up (the JIT has optimised it by then, as on a busy worker).
 */
export async function calibrateCpu(ms) {
  const { cpu } = await import('./_tasks/work.mjs');
  const timeOf = (n) => {
    const runs = [];
    for (let i = 0; i < 15; i++) {
      const t = performance.now();
      cpu(n);
      runs.push(performance.now() - t);
    }
    return runs.sort((a, b) => a - b)[7];
  };
  for (let i = 0; i < 50; i++) cpu(1e5); // warm-up
  const n = 1e6;
  return Math.round((n * ms) / timeOf(n));
}

/**
 * A batch of CPU-bound tasks (`cpu(n)` ≈ 5 ms each) all submitted at once, on `threads`
 * workers: wall time, and the event loop's delay meanwhile (1 ms resolution).
 */
export async function measureCpuBatch({ row, threads, n, count }) {
  const pool = await pools[row](threads);
  // Warm-up at full size: each worker's JIT reaches its steady tier before the clock starts
  // (a 1-worker row on Node 24 ran 2.4× slower than its 2-worker row without it).
  await Promise.all(Array.from({ length: threads * 4 }, () => pool.run('cpu', n)));
  const loop = monitorLoopDelay({ resolutionMs: 1 });
  const t0 = performance.now();
  await Promise.all(Array.from({ length: count }, () => pool.run('cpu', n)));
  const wallMs = performance.now() - t0;
  const delay = loop.stop();
  await pool.close();
  progress(`${row} cpu ×${count} on ${threads}: ${wallMs.toFixed(0)} ms, loop p99 ${delay.p99Ms.toFixed(2)} ms`);
  return { row, threads, count, wallMs, loopP99Ms: delay.p99Ms, loopMaxMs: delay.maxMs };
}

/**
 * A 1 MiB argument: by transfer (the caller's buffer is detached: moved, not copied),
 * by SharedArrayBuffer (the worker's write is seen here: the same memory), and by
 * structured clone — the clone's round trip beside raw worker_threads' postMessage of
 * the same bytes. Median of `rounds` calls each.
 */
export async function measureBigArgument({ row, rounds }) {
  const pool = await pools[row](1);
  const MiB = 1 << 20;
  await pool.run('size', new Uint8Array(MiB)); // warm-up
  const time = async (make, transfer) => {
    const ms = [];
    for (let i = 0; i < rounds; i++) {
      const bytes = make();
      const t = performance.now();
      await pool.run('size', bytes, transfer ? [bytes.buffer] : undefined);
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    return { median: ms[Math.floor(ms.length / 2)], min: ms[0] };
  };
  // The round trips are bimodal on this VM for every pool alike (≈0.2 or ≈0.65 ms: the
  // receiver's 1 MiB allocation faults its pages in, or reuses freed ones), so the
  // minimum is reported beside the median.
  const clone = await time(() => new Uint8Array(MiB).fill(1), false);
  const transfer = await time(() => new Uint8Array(MiB).fill(1), true);
  const cloneMs = clone.median;
  const cloneMinMs = clone.min;
  const transferMs = transfer.median;
  const moved = new Uint8Array(MiB);
  await pool.run('size', moved, [moved.buffer]);
  const shared = new Uint8Array(new SharedArrayBuffer(MiB));
  await pool.run('mark', shared);
  await pool.close();
  const out = {
    row,
    cloneMs,
    cloneMinMs,
    transferMs,
    transferDetached: moved.byteLength === 0,
    sharedSeen: shared[0] === 42,
  };
  progress(`${row} 1 MiB: clone ${cloneMs.toFixed(3)} ms, transfer ${transferMs.toFixed(3)} ms`);
  return out;
}
