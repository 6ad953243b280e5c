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
  checkLocal(o.url);
  const { origin, pathname, search } = new URL(o.url);
  const timeoutMs = o.timeoutMs ?? 10_000;
  const pool = new Pool(origin, {
    connections: o.maxSockets ?? 512,
    pipelining: 1,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  try {
    const path = pathname + search;
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
  /** @type {number[]} */
  const lat = [];
  /** @type {number[]} how late the generator sent each request (its own loop's delay) */
  const lag = [];
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let sent = 0;
  /** @type {Promise<void>[]} */
  const inflight = [];
  const fire = async (/** @type {number} */ due) => {
    try {
      const { statusCode, body } = await pool.request({ path, method: 'GET' });
      await body.dump();
      if (statusCode >= 200 && statusCode < 300) {
        ok++;
        lat.push(performance.now() - due);
      } else non2xx++;
    } catch {
      errors++;
    }
  };
  const t0 = performance.now();
  while (sent < total) {
    const now = performance.now();
    while (sent < total && t0 + sent * interval <= now) {
      lag.push(now - (t0 + sent * interval));
      inflight.push(fire(t0 + sent * interval));
      sent++;
    }
    if (sent < total) await new Promise((r) => setTimeout(r, Math.max(0, t0 + sent * interval - performance.now())));
  }
  await Promise.all(inflight);
  const durationS = (performance.now() - t0) / 1000;
  return {
    generator: 'open loop',
    durationS,
    sent,
    ok,
    non2xx,
    errors,
    reqPerSec: ok / Math.max(duration, durationS),
    latencyMs: latencyStats(lat),
    sendLagMs: summarize(lag),
  };
}

/** Not an experiment: the runner lists every file here, so say so if it is run. */
export async function run() {
  throw new Error('http-load.mjs is a helper of the http-* experiments; run http-qr, http-md5 or http-static');
}
