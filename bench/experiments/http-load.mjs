// Helper of the http-* experiments (not an experiment itself): the load generators. Each
// export runs in its own process (runInChild), never in the server's, and only ever
// targets 127.0.0.1. Latencies are measured per response in fractional ms (autocannon's
// own histogram is whole ms), and summarised with bench/lib's summarize().
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { summarize } from '../lib/measure.mjs';

/** @param {string} url */
function checkLocal(url) {
  const { hostname } = new URL(url);
  if (hostname !== '127.0.0.1' && hostname !== 'localhost')
    throw new Error(`load only goes to 127.0.0.1, not ${hostname}`);
}

/**
 * @typedef {object} LoadResult
 * @property {string} generator
 * @property {number} durationS   wall time of the run
 * @property {number} sent
 * @property {number} ok          2xx responses
 * @property {number} non2xx
 * @property {number} errors      connection errors and timeouts
 * @property {number} reqPerSec   2xx responses per second
 * @property {{ count: number, min: number, p50: number, p95: number, p99: number, max: number, mean: number, stddev: number }} latencyMs
 * @property {Record<string, number>} [autocannon]  autocannon's own figures (whole ms)
 * @property {{ p50: number, p99: number, max: number }} [sendLagMs]  open loop: how late requests left the generator
 */

/** @param {number[]} lat */
function latencyStats(lat) {
  const s = summarize(lat);
  let sq = 0;
  for (const v of lat) sq += (v - s.mean) ** 2;
  return { ...s, stddev: lat.length > 1 ? Math.sqrt(sq / (lat.length - 1)) : 0 };
}

/**
 * autocannon, programmatic. `overallRate` (req/s over all connections) or closed loop;
 * `duration` (s) or `amount` (requests). Coordinated-omission correction is off: with a
 * rate, autocannon would back-fill at a 1 ms expected interval, not the real one.
 * @param {{ url: string, connections: number, duration?: number, amount?: number, overallRate?: number, timeout?: number }} o
 * @returns {Promise<LoadResult>}
 */
export async function autocannonLoad(o) {
  checkLocal(o.url);
  /** @type {number[]} */
  const lat = [];
  const t0 = performance.now();
  /** @type {Record<string, unknown>} */
  const opts = { url: o.url, connections: o.connections, timeout: o.timeout ?? 30 };
  if (o.amount !== undefined) opts.amount = o.amount;
  else opts.duration = o.duration ?? 10;
  if (o.overallRate !== undefined) {
    opts.overallRate = o.overallRate;
    opts.ignoreCoordinatedOmission = true;
  }
  const instance = autocannon(opts);
  let lastResponse = t0;
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    lastResponse = performance.now();
    if (statusCode >= 200 && statusCode < 300) lat.push(responseTime);
  });
  const r = await instance;
  const durationS = (performance.now() - t0) / 1000;
  // autocannon's own `duration` has a floor of about a second (its sampling tick): a
  // 10,000-request run that takes 0.4 s would read as 1 s. Count from start to the last
  // response instead.
  const activeS = Math.max((lastResponse - t0) / 1000, 1e-3);
  const ok = r['2xx'];
  return {
    generator: 'autocannon',
    durationS,
    sent: r.requests.sent,
    ok,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    reqPerSec: ok / activeS,
    activeS,
    latencyMs: latencyStats(lat),
    autocannon: {
      average: r.latency.average,
      p50: r.latency.p50,
      p90: r.latency.p90,
      p99: r.latency.p99,
      max: r.latency.max,
      reqPerSecAverage: r.requests.average,
      duration: r.duration,
    },
  };
}

/**
 * The keep-alive pool and request path of an open-loop run against a loopback `url`.
 * @param {{ url: string, maxSockets?: number, timeoutMs?: number }} o
 */
function openLoopPool(o) {
  checkLocal(o.url);
  const { origin, pathname, search } = new URL(o.url);
  const timeoutMs = o.timeoutMs ?? 10_000;
  const pool = new Pool(origin, {
    connections: o.maxSockets ?? 512,
    pipelining: 1,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  return { pool, path: pathname + search };
}

/**
 * Open-loop load at a constant arrival rate: request i is due at i/rate s; each
 * response's latency counts from when it was due (no coordinated omission), over a
 * keep-alive undici pool that opens connections as needed (up to maxSockets).
 * undici, not node:http's client: about a fifth less CPU per request (0.44 vs 0.56 cores
 * at 8,000 req/s), and the generator shares this machine's two cores with the server.
 * `warmup` seconds at the same rate first (connections opened, JIT warm), not counted.
 * @param {{ url: string, rate: number, duration: number, warmup?: number, maxSockets?: number, timeoutMs?: number }} o
 * @returns {Promise<LoadResult>}
 */
export async function openLoopLoad(o) {
  const { pool, path } = openLoopPool(o);
  try {
    if (o.warmup) await openLoop(pool, path, o.rate, o.warmup);
    return await openLoop(pool, path, o.rate, o.duration);
  } finally {
    await pool.destroy();
  }
}

/**
 * @param {Pool} pool
 * @param {string} path
 * @param {number} rate
 * @param {number} duration
 * @returns {Promise<LoadResult>}
 */
async function openLoop(pool, path, rate, duration) {
  const total = Math.round(rate * duration);
  const interval = 1000 / rate;
  const due = Float64Array.from({ length: total }, (_, i) => i * interval);
  const r = await scheduledLoop(pool, path, due);
  return { ...r.result, reqPerSec: r.result.ok / Math.max(duration, r.result.durationS) };
}

/**
 * Sends request i at `dueMs[i]` ms after the start (ascending), whether or not earlier ones
 * have been answered; latency counts from when it was due.
 * @param {Pool} pool
 * @param {string} path
 * @param {Float64Array} dueMs
 * @returns {Promise<{ result: LoadResult, latByIndex: Float64Array }>} latByIndex: NaN
 *   for requests that did not end in a 2xx
 */
async function scheduledLoop(pool, path, dueMs) {
  const total = dueMs.length;
  /** @type {number[]} */
  const lat = [];
  const latByIndex = new Float64Array(total).fill(Number.NaN);
  /** @type {number[]} how late the generator sent each request (its own loop's delay) */
  const lag = [];
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let sent = 0;
  /** @type {Promise<void>[]} */
  const inflight = [];
  const fire = async (/** @type {number} */ due, /** @type {number} */ i) => {
    try {
      const { statusCode, body } = await pool.request({ path, method: 'GET' });
      await body.dump();
      if (statusCode >= 200 && statusCode < 300) {
        ok++;
        const ms = performance.now() - due;
        lat.push(ms);
        latByIndex[i] = ms;
      } else non2xx++;
    } catch {
      errors++;
    }
  };
  const t0 = performance.now();
  while (sent < total) {
    const now = performance.now();
    while (sent < total && t0 + dueMs[sent] <= now) {
      lag.push(now - (t0 + dueMs[sent]));
      inflight.push(fire(t0 + dueMs[sent], sent));
      sent++;
    }
    if (sent < total) await new Promise((r) => setTimeout(r, Math.max(0, t0 + dueMs[sent] - performance.now())));
  }
  await Promise.all(inflight);
  const durationS = (performance.now() - t0) / 1000;
  const result = {
    generator: 'open loop',
    durationS,
    sent,
    ok,
    non2xx,
    errors,
    reqPerSec: ok / durationS,
    latencyMs: latencyStats(lat),
    sendLagMs: summarize(lag),
  };
  return { result, latByIndex };
}

/**
 * @typedef {object} Phase  one phase of an arrival scenario, as artillery's config.phases
 * @property {string} name
 * @property {number} duration     s
 * @property {number} arrivalRate  req/s at the start of the phase
 * @property {number} [rampTo]     req/s at its end (linear in between); default arrivalRate
 */

/**
 * When each request of a phased scenario is due, in ms from the start: within a phase the
 * rate goes linearly from arrivalRate to rampTo, so arrival i comes when the expected
 * count r0·t + (r1 − r0)·t²/2d reaches i (artillery steps the rate once a second; a
 * continuous ramp is the same load without the steps). Each phase sends
 * round(mean rate × duration) requests.
 * @param {Phase[]} phases
 * @returns {{ dueMs: Float64Array, phaseOf: Uint8Array, counts: number[] }}
 */
export function arrivalSchedule(phases) {
  for (const p of phases) {
    const r1 = p.rampTo ?? p.arrivalRate;
    if (!(p.duration > 0 && p.arrivalRate >= 0 && r1 >= 0 && p.arrivalRate + r1 > 0))
      throw new RangeError(`arrivalSchedule: phase '${p.name}' needs duration > 0 and a rate > 0`);
  }
  const counts = phases.map((p) => Math.round(((p.arrivalRate + (p.rampTo ?? p.arrivalRate)) / 2) * p.duration));
  const total = counts.reduce((a, b) => a + b, 0);
  const dueMs = new Float64Array(total);
  const phaseOf = new Uint8Array(total);
  let k = 0;
  let startS = 0;
  for (const [j, p] of phases.entries()) {
    const r0 = p.arrivalRate;
    const r1 = p.rampTo ?? r0;
    const a = (r1 - r0) / (2 * p.duration); // count(t) = r0·t + a·t²
    for (let i = 0; i < counts[j]; i++) {
      const t = a === 0 ? i / r0 : (-r0 + Math.sqrt(r0 * r0 + 4 * a * i)) / (2 * a);
      dueMs[k] = (startS + t) * 1000;
      phaseOf[k++] = j;
    }
    startS += p.duration;
  }
  return { dueMs, phaseOf, counts };
}

/**
 * Open-loop load following a phased arrival scenario (artillery's phases: warm-up, ramp,
 * sustained). Returns the whole run's figures and each phase's latency.
 * @param {{ url: string, phases: Phase[], maxSockets?: number, timeoutMs?: number }} o
 * @returns {Promise<LoadResult & { phases: { name: string, sent: number, ok: number, latencyMs: ReturnType<typeof latencyStats> }[] }>}
 */
export async function phasedLoad(o) {
  const { dueMs, phaseOf, counts } = arrivalSchedule(o.phases);
  const { pool, path } = openLoopPool(o);
  try {
    const { result, latByIndex } = await scheduledLoop(pool, path, dueMs);
    const phases = o.phases.map((p, j) => {
      const lat = [];
      for (let i = 0; i < latByIndex.length; i++)
        if (phaseOf[i] === j && !Number.isNaN(latByIndex[i])) lat.push(latByIndex[i]);
      return { name: p.name, sent: counts[j], ok: lat.length, latencyMs: latencyStats(lat) };
    });
    return { ...result, generator: 'open loop, phased', phases };
  } finally {
    await pool.destroy();
  }
}

/**
 * Closed loop with a record of every request: `users` concurrent users (one keep-alive
 * connection each) each send `perUser` requests one after another. For timeline charts.
 * @param {{ url: string, users: number, perUser: number, timeoutMs?: number }} o
 * @returns {Promise<{ user: number, seq: number, startMs: number, endMs: number, status: number }[]>}
 *   times in ms since the first request; seq: order of starting, over all users
 */
export async function closedLoopTimeline(o) {
  checkLocal(o.url);
  const { origin, pathname, search } = new URL(o.url);
  const timeoutMs = o.timeoutMs ?? 120_000;
  const pool = new Pool(origin, {
    connections: o.users,
    pipelining: 1,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  /** @type {{ user: number, seq: number, startMs: number, endMs: number, status: number }[]} */
  const rows = [];
  let seq = 0;
  try {
    const t0 = performance.now();
    const user = async (/** @type {number} */ u) => {
      for (let k = 0; k < o.perUser; k++) {
        const row = { user: u + 1, seq: seq++, startMs: performance.now() - t0, endMs: Number.NaN, status: 0 };
        const { statusCode, body } = await pool.request({ path: pathname + search, method: 'GET' });
        await body.dump();
        row.endMs = performance.now() - t0;
        row.status = statusCode;
        rows.push(row);
      }
    };
    await Promise.all(Array.from({ length: o.users }, (_, u) => user(u)));
  } finally {
    await pool.destroy();
  }
  return rows.sort((a, b) => a.seq - b.seq);
}

/** Not an experiment: the runner lists every file here, so say so if it is run. */
export async function run() {
  throw new Error('http-load.mjs is a helper of the http-* experiments; run http-qr, http-md5 or http-static');
}
