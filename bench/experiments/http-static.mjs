// Experiment `http-static` (docs/experiments.md): the Nexus.js benchmark. The service
// (services/http, its own process) serves public/bench.html (8,673 bytes) from memory
// (its default) and from disk (@fastify/static); autocannon in another process: 100 connections, 10,000 requests
// (ab-style `amount`), after a 2,000-request warm-up; three runs, the median reported.
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runInChild } from '../lib/measure.mjs';
import { startServer } from './http-server.mjs';

const LOAD = new URL('./http-load.mjs', import.meta.url);
const FILE = fileURLToPath(new URL('../../services/http/public/bench.html', import.meta.url));
const CONNECTIONS = 100;
const AMOUNT = 10_000;
const RUNS = 3;
/** The service's default (public/ read once, served from memory), then @fastify/static from disk. */
const SERVING = /** @type {const} */ ([
  ['memory (default)', { STATIC_CACHE: '1' }],
  ['disk (@fastify/static)', { STATIC_CACHE: '0' }],
]);

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const bytes = statSync(FILE).size;
  if (bytes !== 8673)
    throw new Error(`bench.html is ${bytes} bytes, not 8,673: node services/http/scripts/make-bench-html.mjs`);
  const runs = [];
  for (const [serving, env] of SERVING) {
    const server = await startServer({ mode: 'offload', env });
    const url = `${server.url}/static/bench.html`;
    try {
      ctx.progress(`${serving}: warm-up, 2,000 requests`);
      await runInChild(LOAD, 'autocannonLoad', [{ url, connections: CONNECTIONS, amount: 2_000 }]);
      for (let i = 1; i <= RUNS; i++) {
        server.resetCpu();
        const { value: r, coresUsed } = await runInChild(LOAD, 'autocannonLoad', [
          { url, connections: CONNECTIONS, amount: AMOUNT },
        ]);
        const row = {
          serving,
          run: i,
          requests: r.ok,
          errors: r.errors + r.non2xx,
          reqPerSec: r.reqPerSec,
          p50: r.latencyMs.p50,
          p99: r.latencyMs.p99,
          max: r.latencyMs.max,
          mean: r.latencyMs.mean,
          acP99: r.autocannon?.p99,
          acAverage: r.autocannon?.average,
          serverCores: server.cpuSince().coresUsed,
          generatorCores: coresUsed,
        };
        runs.push(row);
        ctx.progress(`${serving} run ${i}: ${Math.round(row.reqPerSec)} req/s, p99 ${row.p99.toFixed(1)} ms`);
      }
    } finally {
      await server.stop();
    }
  }
  const medianOf = (/** @type {string} */ serving) => {
    const rs = runs.filter((r) => r.serving === serving).sort((a, b) => a.reqPerSec - b.reqPerSec);
    return rs[Math.floor(rs.length / 2)];
  };
  const median = medianOf(SERVING[0][0]);
  const disk = medianOf(SERVING[1][0]);
  return {
    title: 'http-static: an 8,673-byte HTML file, 100 connections, 10,000 requests',
    params: {
      bytes,
      connections: CONNECTIONS,
      amount: AMOUNT,
      runs: RUNS,
      route: '/static/bench.html',
      quick: ctx.quick,
    },
    notes: [
      'Serving: "memory" is the service default (the files of public/ read once at start, sent as a Buffer with an ETag); "disk" is @fastify/static streaming the file on every request (STATIC_CACHE=0).',
      'Server: services/http/src/main.mjs (fastify 5, with its metrics hooks) in its own process; autocannon 9 in another process, both on this 2-core machine (the load generator competes for the same cores).',
      'Latency percentiles from every response in fractional ms; autocannon reports whole ms (its p99 and average are listed too).',
      'Nexus.js (4-core i7): 1,000 req/s, median 84 ms, p99 238 ms. Measured here before the service existed: raw node:http ≈27k req/s, fastify ≈22k, express 5 ≈5.8k.',
      '--quick runs the same load (it takes seconds).',
    ],
    tables: [
      {
        title: 'Runs (the median run by req/s of the default serving is the one the ratios use)',
        columns: [
          { key: 'serving', label: 'serving' },
          { key: 'run', label: 'run', format: 'int' },
          { key: 'requests', label: '2xx', format: 'int' },
          { key: 'errors', label: 'errors', format: 'int' },
          { key: 'reqPerSec', label: 'req/s', format: 'sig3' },
          { key: 'p50', label: 'p50 ms', format: 'sig3' },
          { key: 'p99', label: 'p99 ms', format: 'sig3' },
          { key: 'max', label: 'max ms', format: 'sig3' },
          { key: 'acAverage', label: 'autocannon avg ms', format: 'sig3' },
          { key: 'acP99', label: 'autocannon p99 ms', format: 'sig3' },
          { key: 'serverCores', label: 'server cores', format: 'sig3' },
          { key: 'generatorCores', label: 'load gen cores', format: 'sig3' },
        ],
        rows: runs,
      },
    ],
    charts: [
      {
        title: 'req/s per run',
        x: { field: 'run', label: 'run' },
        y: { field: 'reqPerSec', label: 'requests/s' },
        series: 'serving',
        data: runs,
      },
    ],
    ratios: [
      { label: 'req/s (median run, memory)', value: median.reqPerSec, target: 15_000, unit: 'req/s' },
      { label: 'p99 latency (median run, memory, ms)', value: median.p99, target: 15, op: '<=', unit: 'ms' },
      { label: 'req/s, memory / disk (median runs)', value: median.reqPerSec / disk.reqPerSec },
      {
        label: 'errors + non-2xx (all runs)',
        value: runs.reduce((a, r) => a + r.errors, 0),
        target: 0,
        op: '<=',
        unit: '',
      },
    ],
    raw: runs,
  };
}
