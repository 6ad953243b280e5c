// What one queued job costs Redis, offthread/queue vs BullMQ (its sandboxed processor),
// the inputs of docs/scale-out.md: commands per job (INFO commandstats deltas, by
// command), Redis main-thread CPU per job (INFO cpu), network bytes per job (INFO stats),
// memory a finished job keeps (MEMORY USAGE), around a run of N jobs through one worker;
// what an idle worker costs per second; and what they extrapolate to: jobs/s with one
// Redis core at 100 %.
//
//   node bench/run.mjs queue-redis-cost [--quick] [--out DIR]
import { Redis } from 'ioredis';
import { startRedis } from '../../scripts/redis-server.mjs';
import { JOBS, kernelMs, measureRow, openProducer, redisCost, redisInfo, startWorker } from './queue.mjs';

const sig = (v) => (Number.isFinite(v) ? Number(v.toPrecision(3)).toLocaleString('en-US') : '–');

/**
 * What an idle worker (and its producer) costs Redis per second with no jobs: lock and
 * stalled-job checks, blocking reads timing out. The per-host term of the scale-out sum.
 */
async function idleCost(redis, kind, seconds) {
  const name = `idle-${kind}`;
  // 'none': Redis alone (its own timers), the baseline of the other rows.
  const worker = kind === 'none' ? null : await startWorker(kind, redis, name);
  const producer = kind === 'none' ? null : await openProducer(kind, redis, name);
  const db = new Redis(redis.url);
  try {
    await producer?.run(2, 1);
    const before = await redisInfo(db);
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const c = redisCost(before, await redisInfo(db), seconds); // "per job" here: per second
    return {
      kind,
      seconds,
      commandsPerSec: c.commandsPerJob,
      redisCpuUsPerSec: c.redisCpuUsPerJob,
      byCommand: c.byCommand,
    };
  } finally {
    db.disconnect();
    await producer?.close();
    await worker?.stop();
  }
}

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const q = ctx.quick;
  const plan = [
    { job: 'tiny', count: { offthread: q ? 1000 : 5000, bullmq: q ? 500 : 3000 } },
    { job: '10 ms', count: { offthread: q ? 50 : 300, bullmq: q ? 5 : 20 } },
  ];
  const redis = await startRedis();
  const rows = [];
  const idle = [];
  try {
    for (const { job: label, count } of plan) {
      const job = JOBS.find((j) => j.label === label);
      for (const kind of ['offthread', 'bullmq']) {
        ctx.progress(`queue-redis-cost: ${kind}, ${count[kind]} ${label} jobs through 1 worker`);
        const row = await measureRow(redis, kind, job, 1, count[kind]);
        ctx.progress(
          `queue-redis-cost:   ${sig(row.commandsPerJob)} commands (${sig(row.scriptsPerJob)} scripts), ` +
            `Redis CPU ${sig(row.redisCpuUsPerJob)} µs, ${sig(row.netInPerJob)} B in / ${sig(row.netOutPerJob)} B out, ` +
            `${sig(row.keptBytesPerJob)} B kept a finished job: ${sig(row.jobsPerSecAtOneRedisCore)} jobs/s at one Redis core`,
        );
        rows.push(row);
      }
    }
    for (const kind of ['none', 'offthread', 'bullmq']) {
      ctx.progress(`queue-redis-cost: ${kind === 'none' ? 'Redis alone' : `${kind}, 1 idle worker and its producer`}`);
      const row = await idleCost(redis, kind, q ? 5 : 30);
      ctx.progress(
        `queue-redis-cost:   ${sig(row.commandsPerSec)} commands/s, Redis CPU ${sig(row.redisCpuUsPerSec)} µs/s`,
      );
      idle.push(row);
    }
  } finally {
    await redis.stop();
  }
  const ten = JOBS.find((j) => j.label === '10 ms');
  const ms = await kernelMs(ten.samples, q ? 5 : 15);
  ctx.progress(
    `queue-redis-cost: the 10 ms job here: ${sig(ms.nativeCpu)} ms CPU (native, 1 thread; wall p50 ${sig(ms.nativeP50)} ms)`,
  );
  const names = [...new Set(rows.flatMap((r) => Object.keys(r.byCommand)))].sort();
  const breakdown = names.map((command) => {
    const r = { command };
    for (const row of rows) r[`${row.kind} ${row.job}`] = row.byCommand[command] ?? 0;
    return r;
  });
  const tiny = (kind) => rows.find((r) => r.kind === kind && r.job === 'tiny');
  return {
    title: 'Redis cost per queued job: offthread/queue vs BullMQ',
    params: {
      quick: q,
      jobs: plan.map((p) => ({ job: p.job, ...p.count })),
      tenMsJob: { samples: ten.samples, ...ms },
    },
    notes: [
      'One redis-server of our own, one worker process (offthread: `offthread worker --threads 1 --concurrency 2`; BullMQ: a sandboxed processor at concurrency 1), the producer in this process. Deltas of INFO around the timed jobs (after a warm-up), divided by the jobs.',
      'Commands: commandstats counts the commands Lua scripts call as well as the EVALSHAs that run them; scripts: the EVALSHAs (a BullMQ step each: add, move to active, move to finished …). Redis CPU: used_cpu_user_main_thread + used_cpu_sys_main_thread (the thread that saturates). Finished job kept: MEMORY USAGE of the last 20 completed jobs’ hashes (offthread keeps 10,000 for 10 min, BullMQ by default all; the event stream keeps ≈ 10,000 events besides).',
      'jobs/s at one Redis core = 10⁶ / (Redis CPU µs per job): where one Redis saturates, if nothing else does first.',
    ],
    tables: [
      {
        title: 'Per job',
        columns: [
          { key: 'kind', label: 'queue' },
          { key: 'job', label: 'job' },
          { key: 'jobs', label: 'jobs', format: 'int' },
          { key: 'jobsPerSec', label: 'jobs/s', format: 'sig3' },
          { key: 'commandsPerJob', label: 'Redis commands', format: 'sig3' },
          { key: 'scriptsPerJob', label: 'of them scripts', format: 'sig3' },
          { key: 'redisCpuUsPerJob', label: 'Redis CPU µs', format: 'sig3' },
          { key: 'netInPerJob', label: 'bytes in', format: 'int' },
          { key: 'netOutPerJob', label: 'bytes out', format: 'int' },
          { key: 'keptBytesPerJob', label: 'finished job kept B', format: 'int' },
          { key: 'jobsPerSecAtOneRedisCore', label: 'jobs/s at 1 Redis core', format: 'sig3' },
        ],
        rows,
      },
      {
        title: 'An idle worker and its producer, per second (none: Redis alone)',
        columns: [
          { key: 'kind', label: 'queue' },
          { key: 'seconds', label: 'seconds', format: 'int' },
          { key: 'commandsPerSec', label: 'Redis commands / s', format: 'sig3' },
          { key: 'redisCpuUsPerSec', label: 'Redis CPU µs / s', format: 'sig3' },
        ],
        rows: idle,
      },
      {
        title: 'Commands per job, by command (commandstats)',
        columns: [
          { key: 'command', label: 'command' },
          ...rows.map((r) => ({ key: `${r.kind} ${r.job}`, label: `${r.kind} ${r.job}`, format: 'sig3' })),
        ],
        rows: breakdown,
      },
    ],
    ratios: [
      {
        label: 'tiny jobs: Redis CPU per job, offthread / BullMQ',
        value: tiny('offthread').redisCpuUsPerJob / tiny('bullmq').redisCpuUsPerJob,
      },
    ],
    raw: { rows, idle, tenMsJob: ms },
  };
}
