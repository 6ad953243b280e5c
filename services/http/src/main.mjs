#!/usr/bin/env node
// Starts the service: PORT (default 3000, 0 = any free port), HOST (default 127.0.0.1),
// `--mode blocking|offload` or MODE (default offload), MAX_QUEUE (pool jobs waiting,
// default 10,000; beyond it requests get 503 + Retry-After), POOL_THREADS (default: all
// cores), POOL_NICE (workers' nice value 0…19, default 0), LOG_LEVEL (default warn),
// STATIC_CACHE=0 (stream public/ from disk), STATIC_FRONT=0 (fastify answers the in-memory
// files too, as before the front handler; for comparisons), `--experiments` or EXPERIMENT_ROUTES=1 (the
// /md5/:impl rows that block the event loop), HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS,
// IDLE_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS (README.md), QUEUE_URL (redis://…: /qr, /md5
// and /pi enqueue BullMQ jobs for `offthread worker` processes; queue.mjs), `--processes N`
// or PROCESSES (default 1: N copies of the service on one port, cluster.mjs). Prints the
// URL. SIGTERM/SIGINT: stop accepting, answer every accepted request, close the pool, exit 0.
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import offthread from 'offthread';
import { copySide, isClusterCopy, runPrimary } from './cluster.mjs';
import { buildServer } from './server.mjs';

const { values } = parseArgs({
  options: {
    mode: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    experiments: { type: 'boolean' },
    processes: { type: 'string' },
  },
});

const mode = values.mode ?? process.env.MODE ?? 'offload';
if (mode !== 'offload' && mode !== 'blocking') {
  console.error(`offthread-http: --mode must be offload or blocking, got ${mode}`);
  process.exit(2);
}
const port = Number(values.port ?? process.env.PORT ?? 3000);
const host = values.host ?? process.env.HOST ?? '127.0.0.1';
const maxQueue = Number(process.env.MAX_QUEUE ?? 10_000);
const threads = process.env.POOL_THREADS ? Number(process.env.POOL_THREADS) : undefined;
// Nice 0, not the library's default 10: here the workers do the requests' own work, so
// when something else wants the cores (a sidecar, a co-located load generator) starving
// them behind the HTTP layer only grows the queue. Measured with the http-qr ladder on 2
// cores: 7,000 req/s p99 77 ms at nice 10, 8.8 ms at nice 0.
const nice = Number(process.env.POOL_NICE ?? 0);
const shutdownTimeoutMs = Number(process.env.SHUTDOWN_TIMEOUT_MS ?? 30_000);
const experimentRoutes = values.experiments === true || process.env.EXPERIMENT_ROUTES === '1';
const processesRaw = values.processes ?? process.env.PROCESSES ?? '1';
if (!/^[1-9][0-9]*$/.test(processesRaw) || Number(processesRaw) > 256) {
  console.error(`offthread-http: --processes must be a whole number from 1 to 256, got ${processesRaw}`);
  process.exit(2);
}
const processes = Number(processesRaw);
if (processes > 1 && cluster.isPrimary) {
  await runPrimary({ processes, port, mode, shutdownTimeoutMs });
}

/** A timeout from the environment: a non-negative integer (ms) or the default. */
function envMs(/** @type {string} */ name) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^[0-9]+$/.test(raw)) {
    console.error(`offthread-http: ${name} must be a whole number of milliseconds, got ${raw}`);
    process.exit(2);
  }
  return Number(raw);
}
const timeouts = Object.fromEntries(
  Object.entries({
    headersMs: envMs('HEADERS_TIMEOUT_MS'),
    requestMs: envMs('REQUEST_TIMEOUT_MS'),
    idleMs: envMs('IDLE_TIMEOUT_MS'),
    keepAliveMs: envMs('KEEP_ALIVE_TIMEOUT_MS'),
  }).filter(([, v]) => v !== undefined),
);

const pool = new offthread.Pool({ maxQueue, threads, nice });
// Loaded only when asked for: bullmq and ioredis stay out of a plain service.
const queued = process.env.QUEUE_URL
  ? (await import('./queue.mjs')).createQueueKernels(process.env.QUEUE_URL)
  : undefined;
const copy = isClusterCopy ? copySide : undefined;
const app = buildServer({
  mode,
  pool,
  ...(copy ? { cluster: copy } : {}),
  ...(queued ? { kernels: queued.kernels, registerMetrics: queued.registerMetrics } : {}),
  logger: { level: process.env.LOG_LEVEL ?? 'warn' },
  loopResolutionMs: process.env.LOOP_RESOLUTION_MS ? Number(process.env.LOOP_RESOLUTION_MS) : undefined,
  staticCache: process.env.STATIC_CACHE !== '0',
  staticFront: process.env.STATIC_FRONT !== '0',
  experimentRoutes,
  timeouts,
});

let stopping = false;
/** @param {NodeJS.Signals} signal */
async function shutdown(signal) {
  if (stopping) {
    console.error(`offthread-http: ${signal} again, exiting now`);
    process.exit(1);
  }
  stopping = true;
  console.log(`offthread-http: ${signal}, finishing accepted requests`);
  const force = setTimeout(() => {
    console.error(`offthread-http: shutdown took over ${shutdownTimeoutMs} ms, exiting`);
    process.exit(1);
  }, shutdownTimeoutMs);
  force.unref();
  try {
    // Stops listening, closes connections with nothing unanswered (idle, silent, half a
    // request), answers the rest with `Connection: close`, waits for them.
    await app.close();
    await pool.close(); // every accepted job has settled by now; refuse new ones
    await queued?.close();
    console.log('offthread-http: stopped');
    process.exit(0);
  } catch (err) {
    console.error('offthread-http: shutdown failed', err);
    process.exit(1);
  }
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
// A copy under the primary (cluster.mjs): the primary's word to stop is not a second
// signal (a process manager may signal the whole group too: that must not escalate).
const side = app.clusterSide;
side?.onShutdown(() => {
  if (!stopping) void shutdown('SIGTERM');
});

try {
  const address = await app.listen({ port, host, ...side?.listen });
  if (side) side.listening(address);
  else console.log(`offthread-http (${mode}) listening on ${address}`);
} catch (err) {
  console.error(`offthread-http: cannot listen on ${host}:${port}: ${/** @type {Error} */ (err).message}`);
  process.exit(1);
}
