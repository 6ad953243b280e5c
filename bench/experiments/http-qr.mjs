// Experiment `http-qr` (docs/experiments.md): the "Rusting NodeJS" QR service. The service
// (services/http) in its own process, blocking (npm qrcode in the handler) vs offload
// (offthread qr.toDataURL on the pool); the load generator in another process.
//  1. 356 req/s for 30 s (--quick 10 s): constant arrivals (open loop, like artillery's
//     arrivalRate) and autocannon's overallRate; latency, errors, server loop delay.
//  2. The highest rate each mode sustains with p99 ≤ 50 ms (a ladder of rates).
//  3. Per call, in-process: offthread qr.toDataURLSync vs npm qrcode.toDataURL.
//  4. The blog's full-length artillery run (--full: 140 s, 50,050 requests; otherwise a
//     15 s version at the same rates, --quick 5 s): warm-up, ramp, sustained arrivals,
//     open loop; min/median/p95/p99/max HTTP latency and server loop delay, two bar charts.
import { runInChild, timeFn } from '../lib/measure.mjs';
import { startServer } from './http-server.mjs';

const LOAD = new URL('./http-load.mjs', import.meta.url);
const TEXT = 'https://example.com/offthread?id=1234567890';
const RATE = 356;
const MODES = /** @type {const} */ (['blocking', 'offload']);
const LADDER = [200, 280, 356, 500, 700, 1000, 1400, 2000, 2800, 4000, 5600, 8000, 11_000, 16_000]; // steps of ≈√2
const BISECT_RATIO = 1.06; // bisection stops when the last pass and the first fail are this close
const P99_LIMIT_MS = 50;
const ATTEMPTS = 2;
/**
 * The artillery scenario (--full): 140 s, 50,050 requests — the blog's ≈50k in ≈140 s,
 * whose mean (357 req/s) is the 356 req/s above. Warm-up at a low rate, a linear ramp,
 * then the sustained phase a little above the mean.
 * @type {import('./http-load.mjs').Phase[]}
 */
const SCENARIO = [
  { name: 'warm-up', duration: 10, arrivalRate: 50 },
  { name: 'ramp-up', duration: 30, arrivalRate: 50, rampTo: 420 },
  { name: 'sustained', duration: 100, arrivalRate: 425 },
];
/** The default (15 s) and --quick (5 s) versions: the same rates, shorter phases. */
const SHORT = { default: [2, 3, 10], quick: [1, 1, 3] };

/** Per-call times in this process (a child of the runner). */
export async function kernelTimes(/** @type {{ minTime: number }} */ timing) {
  const { default: offthread } = await import('offthread');
  const { default: QRCode } = await import('qrcode');
  const { qrBlocking, QR_DEFAULTS } = await import('../../services/http/src/kernels.mjs');
  if (typeof offthread.qr?.toDataURLSync !== 'function') throw new Error('offthread has no qr kernel: merge main');
  const rows = [];
  const cases = [
    ['offthread qr.toDataURLSync (128 px, ECC M)', () => offthread.qr.toDataURLSync(TEXT, QR_DEFAULTS)],
    ['npm qrcode.toDataURL(text) (defaults, as in the blog)', () => QRCode.toDataURL(TEXT)],
    ['npm qrcode, the service blocking path (128 px, ECC M)', () => qrBlocking(TEXT, QR_DEFAULTS)],
  ];
  for (const [name, fn] of cases) {
    const t = await timeFn(/** @type {() => unknown} */ (fn), timing);
    rows.push({ impl: name, medianUs: t.median / 1000, p99Us: t.p99 / 1000, opsPerSec: t.opsPerSec, calls: t.calls });
  }
  return rows;
}

/**
 * One load run against a running server: resets its loop monitor first, reads it after.
 * @param {import('./http-server.mjs').ServerHandle} server
 * @param {'openLoopLoad' | 'autocannonLoad'} generator
 * @param {Record<string, unknown>} opts
 */
async function measure(server, generator, opts) {
  const url = `${server.url}/qr?text=${encodeURIComponent(TEXT)}`;
  if (generator === 'autocannonLoad') {
    // warm up (connections, JIT) before the measured run
    await runInChild(LOAD, generator, [{ url, connections: 50, overallRate: opts.rate, duration: 1 }]);
  }
  await server.resetLoop();
  server.resetCpu();
  const args =
    generator === 'openLoopLoad'
      ? { url, rate: opts.rate, duration: opts.duration, warmup: opts.warmup ?? 1 }
      : { url, connections: 50, overallRate: opts.rate, duration: opts.duration };
  const child = await runInChild(LOAD, generator, [args], { timeoutMs: 120_000 });
  const cpu = server.cpuSince();
  const loop = (await server.loop()).total;
  return { ...child.value, loop, serverCores: cpu.coresUsed, generatorCores: child.coresUsed };
}

/** The scenario for this run: full length with --full, else shorter phases at the same rates. */
export function scenario(/** @type {{ quick: boolean, full: boolean }} */ ctx) {
  if (ctx.full) return SCENARIO;
  const d = ctx.quick ? SHORT.quick : SHORT.default;
  return SCENARIO.map((p, i) => ({ ...p, duration: d[i] }));
}

/**
 * The artillery-style run against a running server (its loop monitor reset first).
 * @param {import('./http-server.mjs').ServerHandle} server
 * @param {import('./http-load.mjs').Phase[]} phases
 */
async function measureScenario(server, phases) {
  const url = `${server.url}/qr?text=${encodeURIComponent(TEXT)}`;
  await server.resetLoop();
  server.resetCpu();
  const seconds = phases.reduce((a, p) => a + p.duration, 0);
  const child = await runInChild(LOAD, 'phasedLoad', [{ url, phases }], { timeoutMs: (seconds + 120) * 1000 });
  const cpu = server.cpuSince();
  const loop = (await server.loop()).total;
  return { ...child.value, loop, serverCores: cpu.coresUsed, generatorCores: child.coresUsed };
}

/** One row of the scenario table. @param {string} mode @param {any} r */
export function scenarioRow(mode, r) {
  const sustained = r.phases.at(-1);
  return {
    mode,
    sent: r.sent,
    ok: r.ok,
    errors: r.errors + r.non2xx,
    durationS: r.durationS,
    min: r.latencyMs.min,
    median: r.latencyMs.p50,
    p95: r.latencyMs.p95,
    p99: r.latencyMs.p99,
    max: r.latencyMs.max,
    mean: r.latencyMs.mean,
    sustainedP99: sustained?.latencyMs.p99,
    loopMedian: r.loop.p50Ms,
    loopP95: r.loop.p95Ms,
    loopP99: r.loop.p99Ms,
    loopMax: r.loop.maxMs,
    loopMean: r.loop.meanMs,
    loopResolutionMs: r.loop.resolutionMs,
    serverCores: r.serverCores,
    generatorCores: r.generatorCores,
    sendLagP99: r.sendLagMs?.p99 ?? Number.NaN,
  };
}

/**
 * The blog's two bar charts from scenario rows: one bar per mode for each statistic.
 * @param {ReturnType<typeof scenarioRow>[]} rows
 * @param {string} subtitle
 * @returns {import('../lib/report.mjs').Chart[]}
 */
export function scenarioCharts(rows, subtitle) {
  /** @param {[string, string][]} stats */
  const bars = (stats) =>
    rows.flatMap((r) => stats.map(([stat, key]) => ({ stat, mode: r.mode, ms: /** @type {any} */ (r)[key] })));
  return [
    {
      kind: 'bar',
      suffix: 'scenario-http',
      title: 'HTTP latency, blocking vs offload',
      subtitle,
      x: { field: 'stat', label: 'statistic' },
      y: { field: 'ms', label: 'latency (ms, log)', log: true },
      series: 'mode',
      data: bars([
        ['min', 'min'],
        ['median', 'median'],
        ['p95', 'p95'],
        ['p99', 'p99'],
        ['max', 'max'],
      ]),
    },
    {
      kind: 'bar',
      suffix: 'scenario-loop',
      title: 'Event-loop latency (server), blocking vs offload',
      subtitle: `${subtitle}; perf_hooks, 1 ms resolution (an idle loop reads ≈ 1 ms)`,
      x: { field: 'stat', label: 'statistic' },
      y: { field: 'ms', label: 'loop delay (ms, log)', log: true },
      series: 'mode',
      data: bars([
        ['median', 'loopMedian'],
        ['mean', 'loopMean'],
        ['p95', 'loopP95'],
        ['p99', 'loopP99'],
        ['max', 'loopMax'],
      ]),
    },
  ];
}

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const duration = ctx.quick ? 10 : 30;
  const acDuration = ctx.quick ? 5 : 30;
  const stepS = ctx.quick ? 1.5 : 5;
  const timing = { minTime: ctx.quick ? 500 : 2000 };

  ctx.progress('per-call kernel times (in-process)');
  const kernel = (await runInChild(import.meta.url, 'kernelTimes', [timing])).value;

  const fixed = [];
  const ladder = [];
  const phases = scenario(ctx);
  const scenarioS = phases.reduce((a, p) => a + p.duration, 0);
  /** @type {ReturnType<typeof scenarioRow>[]} */
  const scen = [];
  /** @type {any[]} */
  const scenPhases = [];
  for (const mode of MODES) {
    const server = await startServer({ mode });
    try {
      ctx.progress(`${mode}: ${RATE} req/s constant arrivals for ${duration} s`);
      const open = await measure(server, 'openLoopLoad', { rate: RATE, duration });
      fixed.push({ mode, ...flat(open) });
      ctx.progress(`${mode}: autocannon overallRate ${RATE} for ${acDuration} s`);
      const ac = await measure(server, 'autocannonLoad', { rate: RATE, duration: acDuration });
      fixed.push({ mode, ...flat(ac) });
      ctx.progress(`${mode}: artillery-style scenario, ${scenarioS} s (${phases.map((p) => p.name).join(', ')})`);
      const sc = await measureScenario(server, phases);
      scen.push(scenarioRow(mode, sc));
      for (const p of sc.phases) scenPhases.push({ mode, phase: p.name, sent: p.sent, ok: p.ok, ...p.latencyMs });
      ctx.progress(`${mode}: scenario p99 ${sc.latencyMs.p99.toFixed(1)} ms, loop p99 ${sc.loop.p99Ms.toFixed(1)} ms`);
      /** One ladder step (a failed step is tried ATTEMPTS times): does `rate` pass? */
      const step = async (/** @type {number} */ rate, /** @type {string} */ phase) => {
        // A step that fails is tried once more: on a shared machine one stall of the
        // server or of the generator is enough to fail a short step.
        for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
          const r = await measure(server, 'openLoopLoad', { rate, duration: stepS, warmup: 0.5 });
          const kept = r.ok >= 0.99 * r.sent && r.errors === 0 && r.durationS <= stepS + 1;
          const pass = kept && r.latencyMs.p99 <= P99_LIMIT_MS;
          ladder.push({ mode, rate, phase, attempt, pass, ...flat(r) });
          ctx.progress(`${mode}: ${rate} req/s → p99 ${r.latencyMs.p99.toFixed(1)} ms ${pass ? 'ok' : 'over'}`);
          if (pass) return true;
        }
        return false;
      };
      // Up the ladder to the first failing step, then bisect (geometrically) between
      // the last pass and that step until they are within BISECT_RATIO of each other.
      let lo = 0;
      let hi = 0;
      for (const rate of LADDER) {
        if (!(await step(rate, 'ladder'))) {
          hi = rate;
          break;
        }
        lo = rate;
      }
      while (lo > 0 && hi > 0 && hi / lo > BISECT_RATIO) {
        const mid = Math.round(Math.sqrt(lo * hi) / 10) * 10;
        if (await step(mid, 'bisect')) lo = mid;
        else hi = mid;
      }
    } finally {
      await server.stop();
    }
  }

  const at = (/** @type {string} */ mode, /** @type {string} */ gen) =>
    fixed.find((r) => r.mode === mode && r.generator === gen);
  const maxRate = (/** @type {string} */ mode) =>
    Math.max(0, ...ladder.filter((r) => r.mode === mode && r.pass).map((r) => r.rate));
  const kOff = kernel[0].medianUs;
  const kNpm = kernel[1].medianUs;
  const off = at('offload', 'open loop');
  const blk = at('blocking', 'open loop');
  const ceilingHit = ladder.filter((r) => r.mode === 'offload').every((r) => r.pass);

  return {
    title: 'http-qr: the QR service, blocking (npm qrcode) vs offload (offthread pool)',
    params: {
      text: TEXT,
      rate: RATE,
      duration,
      autocannonDuration: acDuration,
      ladder: LADDER,
      stepS,
      p99LimitMs: P99_LIMIT_MS,
      timing,
      quick: ctx.quick,
      full: ctx.full,
      scenario: phases,
      scenarioRequests: scen[0]?.sent,
    },
    notes: [
      'Server: services/http/src/main.mjs in its own process (offthread pool: all cores at nice 0, the service default; fastify, no logging); load generator in another process; both on this machine, 127.0.0.1, so they share the 2 cores.',
      'The service runs its pool at nice 0 (the library default is 10): with the generator on the same cores, nice-10 workers fall behind the HTTP layer. Measured while choosing: 7,000 req/s p99 77 ms at nice 10 vs 8.8 ms at nice 0 (services/http/README.md).',
      '"open loop": request i is due at i/rate s (constant arrivals, as artillery\'s arrivalRate in the blog), sent through an undici keep-alive pool (0.44 cores at 8,000 req/s where node:http\'s client took 0.56: it matters when the generator shares the cores); latency counts from when it was due, in fractional ms; 1 s warm-up at the rate first. "send lag" is how late the generator itself sent requests (its own loop delay, included in the latency).',
      '"autocannon": overallRate over 50 connections. autocannon releases each connection\'s quota at the start of every second, so arrivals come in bursts and queue behind each other; its own percentiles are whole ms (its average is listed too). Coordinated-omission back-fill off (with a rate it assumes a 1 ms interval).',
      `Loop delay: the server's perf_hooks monitor at ${fixed[0]?.loopResolutionMs ?? 1} ms resolution, reset before each run (an idle loop reads ≈ the resolution).`,
      `Max sustained rate: ${stepS} s per step after 0.5 s warm-up; a step passes with p99 ≤ ${P99_LIMIT_MS} ms, ≥ 99% answered 2xx, no errors, finished on time; a failed step is tried ${ATTEMPTS - 1} more time(s); at the first step that still fails, the rate is bisected (geometric midpoints) between it and the last pass until the two are within ${Math.round((BISECT_RATIO - 1) * 100)}%. The maximum is the last pass.` +
        (ceilingHit ? ' Offload passed every step: its maximum is at least the last rate tried.' : ''),
      'Cores = CPU time / wall time (server: /proc of its process, all threads, including child start-up and warm-up; load generator: its process). These machines are shared: a load average above 2 at start means other work competes for both cores.',
      `Artillery-style scenario (the blog's full-length run${ctx.full ? '' : '; this run is the short version — the full one is `--full`'}): ${phases.map((p) => `${p.name} ${p.duration} s at ${p.arrivalRate}${p.rampTo ? `→${p.rampTo}` : ''} req/s`).join(', ')}; ${scen[0]?.sent ?? '?'} requests in ${scenarioS} s. Open loop (arrivals never wait for responses, as artillery's arrivalRate), our generator (http-load.mjs phasedLoad: undici keep-alive pool, up to 512 connections) rather than autocannon, whose overallRate releases each second's quota in a burst and cannot ramp. Latency counts from when each request was due. The ramp is continuous (artillery steps it once a second).`,
      "Scenario loop delay: the server's cumulative perf_hooks monitor over the whole scenario (GET /loop after POST /loop/reset). Its minimum is not reported: the service's /loop summary (offthread monitorLoopDelay) has no min field, so the loop chart shows median, mean, p95, p99 and max.",
      'Kernel per call: tinybench (bench/lib timeFn) in one process. The blog gives no per-call time, only the service under artillery load — blog (seed 001, 4-core laptop): blocking median 15 ms, p95 29.1, p99 47, loop p95 10.78 ms; Rust median 1 ms, p95 12.1, p99 22, loop p95 2.29 ms.',
    ],
    tables: [
      {
        title: `${RATE} req/s`,
        columns: [
          { key: 'mode', label: 'mode' },
          { key: 'generator', label: 'load' },
          { key: 'ok', label: '2xx', format: 'int' },
          { key: 'errors', label: 'errors', format: 'int' },
          { key: 'non2xx', label: 'non-2xx', format: 'int' },
          { key: 'reqPerSec', label: 'req/s', format: 'sig3' },
          { key: 'p50', label: 'p50 ms', format: 'sig3' },
          { key: 'p95', label: 'p95 ms', format: 'sig3' },
          { key: 'p99', label: 'p99 ms', format: 'sig3' },
          { key: 'mean', label: 'mean ms', format: 'sig3' },
          { key: 'acAverage', label: 'autocannon avg ms', format: 'sig3' },
          { key: 'loopP95', label: 'loop p95 ms', format: 'sig3' },
          { key: 'loopP99', label: 'loop p99 ms', format: 'sig3' },
          { key: 'serverCores', label: 'server cores', format: 'sig3' },
          { key: 'sendLagP99', label: 'send lag p99 ms', format: 'sig3' },
        ],
        rows: fixed,
      },
      {
        title: `Rate ladder (open loop, ${stepS} s per step; p99 ≤ ${P99_LIMIT_MS} ms to pass)`,
        columns: [
          { key: 'mode', label: 'mode' },
          { key: 'rate', label: 'offered req/s', format: 'int' },
          { key: 'phase', label: 'phase' },
          { key: 'attempt', label: 'attempt', format: 'int' },
          { key: 'reqPerSec', label: 'answered req/s', format: 'sig3' },
          { key: 'p50', label: 'p50 ms', format: 'sig3' },
          { key: 'p99', label: 'p99 ms', format: 'sig3' },
          { key: 'loopP99', label: 'loop p99 ms', format: 'sig3' },
          { key: 'errors', label: 'errors', format: 'int' },
          { key: 'serverCores', label: 'server cores', format: 'sig3' },
          { key: 'generatorCores', label: 'load gen cores', format: 'sig3' },
          { key: 'sendLagP99', label: 'send lag p99 ms', format: 'sig3' },
          { key: 'pass', label: 'pass' },
        ],
        rows: ladder,
      },
      {
        title: `Artillery-style scenario: ${scenarioS} s, ${scen[0]?.sent ?? '?'} requests, open loop`,
        columns: [
          { key: 'mode', label: 'mode' },
          { key: 'sent', label: 'sent', format: 'int' },
          { key: 'ok', label: '2xx', format: 'int' },
          { key: 'errors', label: 'errors + non-2xx', format: 'int' },
          { key: 'min', label: 'min ms', format: 'sig3' },
          { key: 'median', label: 'median ms', format: 'sig3' },
          { key: 'p95', label: 'p95 ms', format: 'sig3' },
          { key: 'p99', label: 'p99 ms', format: 'sig3' },
          { key: 'max', label: 'max ms', format: 'sig3' },
          { key: 'loopMedian', label: 'loop median ms', format: 'sig3' },
          { key: 'loopP95', label: 'loop p95 ms', format: 'sig3' },
          { key: 'loopP99', label: 'loop p99 ms', format: 'sig3' },
          { key: 'loopMax', label: 'loop max ms', format: 'sig3' },
          { key: 'serverCores', label: 'server cores', format: 'sig3' },
          { key: 'sendLagP99', label: 'send lag p99 ms', format: 'sig3' },
        ],
        rows: scen,
      },
      {
        title: 'Artillery-style scenario, per phase (HTTP latency)',
        columns: [
          { key: 'mode', label: 'mode' },
          { key: 'phase', label: 'phase' },
          { key: 'sent', label: 'sent', format: 'int' },
          { key: 'ok', label: '2xx', format: 'int' },
          { key: 'min', label: 'min ms', format: 'sig3' },
          { key: 'p50', label: 'median ms', format: 'sig3' },
          { key: 'p95', label: 'p95 ms', format: 'sig3' },
          { key: 'p99', label: 'p99 ms', format: 'sig3' },
          { key: 'max', label: 'max ms', format: 'sig3' },
        ],
        rows: scenPhases,
      },
      {
        title: 'Per call, in-process',
        columns: [
          { key: 'impl', label: 'implementation' },
          { key: 'medianUs', label: 'median µs', format: 'sig3' },
          { key: 'p99Us', label: 'p99 µs', format: 'sig3' },
          { key: 'opsPerSec', label: 'calls/s', format: 'ops' },
        ],
        rows: kernel,
      },
    ],
    charts: [
      {
        title: 'p99 latency vs offered rate',
        subtitle: `open loop, ${stepS} s per step; ladder to the first step over ${P99_LIMIT_MS} ms, then bisection`,
        x: { field: 'rate', label: 'offered req/s', log: true },
        y: { field: 'p99', label: 'p99 latency (ms)', log: true },
        series: 'mode',
        data: ladder.filter((r) => r.pass || !ladder.some((o) => o.mode === r.mode && o.rate === r.rate && o.pass)),
      },
      ...scenarioCharts(scen, `artillery-style scenario, ${scenarioS} s, ${scen[0]?.sent ?? '?'} requests, open loop`),
    ],
    ratios: [
      {
        label: `offload p99 at ${RATE} req/s, constant arrivals (ms)`,
        value: off?.p99,
        target: 5,
        op: '<=',
        unit: 'ms',
      },
      {
        label: `offload server loop-delay p99 at ${RATE} req/s (ms, 1 ms resolution)`,
        value: off?.loopP99,
        target: 2,
        op: '<=',
        unit: 'ms',
      },
      { label: `blocking p99 at ${RATE} req/s, constant arrivals (ms)`, value: blk?.p99, unit: 'ms' },
      {
        label: `offload p99 at ${RATE} req/s, autocannon overallRate (ms)`,
        value: at('offload', 'autocannon')?.p99,
        unit: 'ms',
      },
      {
        label: `max sustained rate (p99 ≤ ${P99_LIMIT_MS} ms): offload / blocking${ceilingHit ? ' (offload hit the top of the ladder: a lower bound)' : ''}${maxRate('blocking') === 0 ? ` (blocking failed even ${LADDER[0]} req/s, the lowest step: offload / ${LADDER[0]}, a lower bound)` : ''}`,
        // blocking passing no step: its maximum is below the lowest step (not 0, which made this Infinity)
        value: maxRate('offload') / (maxRate('blocking') || LADDER[0]),
        target: 10,
      },
      { label: 'max sustained rate, offload (req/s)', value: maxRate('offload'), unit: 'req/s' },
      { label: 'max sustained rate, blocking (req/s)', value: maxRate('blocking'), unit: 'req/s' },
      {
        label: `offload p99, artillery-style scenario ${scenarioS} s (ms)`,
        value: scen.find((r) => r.mode === 'offload')?.p99 ?? Number.NaN,
        unit: 'ms',
      },
      {
        label: `blocking p99, artillery-style scenario ${scenarioS} s (ms)`,
        value: scen.find((r) => r.mode === 'blocking')?.p99 ?? Number.NaN,
        unit: 'ms',
      },
      {
        label: `server loop p99 in the scenario: blocking / offload`,
        value:
          (scen.find((r) => r.mode === 'blocking')?.loopP99 ?? Number.NaN) /
          (scen.find((r) => r.mode === 'offload')?.loopP99 ?? Number.NaN),
      },
      { label: 'kernel per call: npm qrcode.toDataURL / offthread qr.toDataURLSync', value: kNpm / kOff, target: 15 },
    ],
    raw: { kernel, fixed, ladder, scenario: scen, scenarioPhases: scenPhases },
  };
}

/** Flattens a load result into table columns. @param {any} r */
function flat(r) {
  return {
    generator: r.generator,
    sent: r.sent,
    ok: r.ok,
    non2xx: r.non2xx,
    errors: r.errors,
    reqPerSec: r.reqPerSec,
    durationS: r.durationS,
    p50: r.latencyMs.p50,
    p95: r.latencyMs.p95,
    p99: r.latencyMs.p99,
    mean: r.latencyMs.mean,
    max: r.latencyMs.max,
    acAverage: r.autocannon?.average ?? Number.NaN,
    acP99: r.autocannon?.p99 ?? Number.NaN,
    loopP95: r.loop.p95Ms,
    loopP99: r.loop.p99Ms,
    loopResolutionMs: r.loop.resolutionMs,
    serverCores: r.serverCores,
    generatorCores: r.generatorCores,
    sendLagP99: r.sendLagMs?.p99 ?? Number.NaN,
  };
}
