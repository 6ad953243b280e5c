// Prometheus metrics (prom-client), one registry per server instance: requests by
// route and status, request durations, event-loop delay, and the offthread pool.
import client from 'prom-client';

const LOOP_BUCKETS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5];
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const POOL_COUNTS = ['threads', 'queued', 'running', 'pending', 'completed', 'failed', 'cancelled'];

/**
 * @param {{ pool?: () => { stats(): Record<string, any> } | undefined, loopSampleMs?: number, defaultMetrics?: boolean }} opts
 */
export function createMetrics({ pool, loopSampleMs = 10, defaultMetrics = true }) {
  const register = new client.Registry();
  if (defaultMetrics) client.collectDefaultMetrics({ register, eventLoopMonitoringPrecision: 10 });

  const requests = requestSeries(register);
  const inFlight = new client.Gauge({
    name: 'http_requests_in_flight',
    help: 'Requests received and not yet answered.',
    registers: [register],
  });

  // Loop delay: a timer every loopSampleMs; each tick observes how late it fired.
  const loopDelay = new client.Histogram({
    name: 'offthread_http_event_loop_delay_seconds',
    help: `How late a ${loopSampleMs} ms timer fires on the event loop (one sample per tick).`,
    buckets: LOOP_BUCKETS,
    registers: [register],
  });
  let expected = performance.now() + loopSampleMs;
  const sampler = setInterval(() => {
    const now = performance.now();
    loopDelay.observe(Math.max(0, now - expected) / 1000);
    expected = now + loopSampleMs;
  }, loopSampleMs);
  sampler.unref();

  for (const key of POOL_COUNTS) {
    const cumulative = ['completed', 'failed', 'cancelled'].includes(key);
    new client.Gauge({
      name: `offthread_pool_${key}`,
      help: cumulative ? `Pool jobs ${key} since the pool started.` : `Pool ${key} right now.`,
      registers: [register],
      collect() {
        const s = pool?.()?.stats();
        if (s && typeof s[key] === 'number') this.set(s[key]);
      },
    });
  }
  for (const key of ['waitTime', 'runTime']) {
    const snake = key === 'waitTime' ? 'wait' : 'run';
    new client.Gauge({
      name: `offthread_pool_${snake}_time_seconds`,
      help: `Pool job ${snake === 'wait' ? 'queue wait' : 'run'} time (p50, p99, max), when the pool reports it.`,
      labelNames: ['stat'],
      // Several processes (cluster.mjs): the worst of them, not a sum of percentiles.
      aggregator: 'max',
      registers: [register],
      collect() {
        const t = pool?.()?.stats()?.[key];
        if (!t || typeof t !== 'object') return;
        for (const stat of ['p50', 'p99', 'max']) {
          if (typeof t[stat] === 'number') this.set({ stat }, t[stat] / 1000);
        }
      },
    });
  }

  return {
    register,
    /**
     * @param {string} method
     * @param {string} route
     * @param {number} status
     * @param {number} ms
     */
    record(method, route, status, ms) {
      requests.record(method, route, status, ms / 1000);
    },
    inFlight,
    stop() {
      clearInterval(sampler);
      register.clear();
    },
  };
}

/**
 * @typedef {object} Series one method, route and status code
 * @property {{ method: string, route: string, status_code: string }} labels
 * @property {number} count
 * @property {number} sum      seconds
 * @property {Float64Array} buckets  requests per bucket (not cumulative), by DURATION_BUCKETS
 */

/**
 * http_requests_total and http_request_duration_seconds, kept by hand and registered as
 * two metrics the registry formats at scrape time, exactly as a prom-client Counter and
 * Histogram over the same labels would (metrics.test.mjs compares them). Why: those two
 * hash a label object on every call — ≈ 4.5 µs of event-loop CPU a request in a CPU
 * profile under `ab` without keep-alive, the service's largest cost of its own there —
 * where a request here is three Map lookups and a few additions.
 * @param {import('prom-client').Registry} register
 */
export function requestSeries(register) {
  /** @type {Map<string, Map<string, Map<number, Series>>>} route → method → status */
  const byRoute = new Map();
  /** @type {Series[]} in first-seen order, as prom-client lists its series */
  const all = [];
  const duration = 'http_request_duration_seconds';
  /** One `_bucket` line: `value` requests took at most `le` seconds. @param {Series['labels']} labels @param {string | number} le @param {number} value */
  const bucket = (labels, le, value) => ({
    value,
    metricName: `${duration}_bucket`,
    exemplar: null,
    labels: { le, ...labels },
  });
  /**
   * A metric the registry takes: what it formats (`get`) and what resetMetrics calls.
   * @param {string} name @param {string} help @param {'counter' | 'histogram'} type @param {() => object[]} values
   * @returns {any}
   */
  const handKept = (name, help, type, values) => ({
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
    reset: clear,
  });
  register.registerMetric(
    handKept('http_requests_total', 'HTTP requests answered, by method, route and status code.', 'counter', () =>
      all.map((s) => ({ value: s.count, labels: s.labels })),
    ),
  );
  register.registerMetric(
    handKept(
      duration,
      'Time from receiving a request to sending its response, by method, route and status code.',
      'histogram',
      () =>
        all.flatMap((s) => {
          // prom-client prints buckets cumulative: each counts every request up to its bound.
          const buckets = [];
          let below = 0;
          for (let i = 0; i < DURATION_BUCKETS.length; i++) {
            below += s.buckets[i];
            buckets.push(bucket(s.labels, DURATION_BUCKETS[i], below));
          }
          return [
            ...buckets,
            bucket(s.labels, '+Inf', s.count),
            { value: s.sum, metricName: `${duration}_sum`, labels: s.labels },
            { value: s.count, metricName: `${duration}_count`, labels: s.labels },
          ];
        }),
    ),
  );
  function clear() {
    byRoute.clear();
    all.length = 0;
  }
  return {
    /**
     * @param {string} method @param {string} route @param {number} status @param {number} seconds
     */
    record(method, route, status, seconds) {
      let byMethod = byRoute.get(route);
      if (byMethod === undefined) {
        byMethod = new Map();
        byRoute.set(route, byMethod);
      }
      let byStatus = byMethod.get(method);
      if (byStatus === undefined) {
        byStatus = new Map();
        byMethod.set(method, byStatus);
      }
      let s = byStatus.get(status);
      if (s === undefined) {
        const labels = { method, route, status_code: String(status) };
        s = { labels, count: 0, sum: 0, buckets: new Float64Array(DURATION_BUCKETS.length) };
        byStatus.set(status, s);
        all.push(s);
      }
      s.count++;
      s.sum += seconds;
      // The first bucket that holds it (le: less than or equal); past the last, only +Inf.
      for (let i = 0; i < DURATION_BUCKETS.length; i++) {
        if (seconds <= DURATION_BUCKETS[i]) {
          s.buckets[i]++;
          break;
        }
      }
    },
  };
}
