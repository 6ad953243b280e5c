// A burst of tiny calls larger than BullMQ's event stream (≈ 10,000 events; each job
// writes several): every call made in one tick, 4 `offthread worker` processes, one
// producer. The producer's reader falls behind and events it never read are trimmed; it
// must notice at once and read those outcomes from the jobs, not wait for the per-job net
// (30 s). Reports the wall time, the longest stretch in which no call settled (a stall
// shows here), and the event-stream entries added against the stream's cap.
//
//   node bench/run.mjs queue-burst [--quick] [--out DIR]
import { Redis } from 'ioredis';
import { createQueue } from 'offthread/queue';
import { startRedis } from '../../scripts/redis-server.mjs';
import { startWorker } from './queue.mjs';

async function burst(redis, calls, workers) {
  const name = `burst-${calls}`;
  const procs = [];
  for (let i = 0; i < workers; i++) procs.push(await startWorker('offthread', redis, name));
  const queue = createQueue({ url: redis.url, name });
  const db = new Redis(redis.url);
  try {
    // A fresh producer (a service that just started), as the workers are: the burst is the
    // first thing its event reader sees.
    await queue.ready();
    let last = 0;
    let first = 0;
    let longestQuiet = 0;
    let failed = 0;
    const settled = () => {
      const now = performance.now();
      if (first === 0) first = now;
      else longestQuiet = Math.max(longestQuiet, now - last);
      last = now;
    };
    const t0 = performance.now();
    const all = [];
    for (let i = 0; i < calls; i++) {
      all.push(
        queue.pi.estimate(1, { seed: i + 1 }).then(settled, () => {
          failed++;
          settled();
        }),
      );
    }
    await Promise.all(all);
    const seconds = (performance.now() - t0) / 1000;
    const info = await db.xinfo('STREAM', `bull:${name}:events`);
    const at = (k) => info[info.indexOf(k) + 1];
    return {
      calls,
      workers,
      seconds,
      callsPerSec: calls / seconds,
      firstMs: first - t0,
      longestQuietMs: longestQuiet,
      failed,
      eventsAdded: at('entries-added'),
      eventsKept: at('length'),
    };
  } finally {
    db.disconnect();
    await queue.close();
    for (const p of procs) await p.stop();
  }
}

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const sizes = ctx.quick ? [4_000] : [4_000, 16_000, 32_000];
  const redis = await startRedis();
  const rows = [];
  try {
    for (const calls of sizes) {
      ctx.progress(`queue-burst: ${calls} tiny calls in one tick, 4 workers`);
      rows.push(await burst(redis, calls, 4));
    }
  } finally {
    await redis.stop();
  }
  return {
    title: 'A burst of tiny queued calls past the event stream’s cap',
    params: { sizes, workers: 4 },
    notes: [
      '4 `offthread worker --threads 1 --concurrency 2` processes and the producer on one redis-server of our own; every call `queue.pi.estimate(1)` made in one tick.',
      'first result: from the burst to the first call settled (the adds and their events come first). longest quiet: after that, the longest stretch in which no call settled. Events lost to BullMQ’s trim (added far above kept) must not show as a stall: before the exact gap check the last calls of a 16,000 burst waited for the 30 s per-job net.',
    ],
    tables: [
      {
        title: 'Bursts',
        columns: [
          { key: 'calls', label: 'calls', format: 'int' },
          { key: 'workers', label: 'workers', format: 'int' },
          { key: 'seconds', label: 'wall s', format: 'sig3' },
          { key: 'callsPerSec', label: 'calls/s', format: 'sig3' },
          { key: 'firstMs', label: 'first result ms', format: 'sig3' },
          { key: 'longestQuietMs', label: 'longest quiet ms', format: 'sig3' },
          { key: 'failed', label: 'failed', format: 'int' },
          { key: 'eventsAdded', label: 'events added', format: 'int' },
          { key: 'eventsKept', label: 'events kept', format: 'int' },
        ],
        rows,
      },
    ],
    ratios: [],
    raw: { rows },
  };
}
