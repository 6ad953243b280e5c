// Prometheus metrics (prom-client), one registry per server instance: requests by
// route and status, request durations, event-loop delay, and the offthread pool.
import client from 'prom-client';

const LOOP_BUCKETS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5];
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const POOL_COUNTS = ['threads', 'queued', 'running', 'pending', 'completed', 'failed', 'cancelled'];

/**
 * @param {{ pool?: () => { stats(): Record<string, any> } | undefined, loopSampleMs?: number, defaultMetrics?: boolean }} opts
 */
export function createMetrics({ pool, loopSampleMs = 10, defaultMetrics = true }) {
  const register = new client.Registry();
  if (defaultMetrics) client.collectDefaultMetrics({ register, eventLoopMonitoringPrecision: 10 });

  const requests = new client.Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route and status code.',
    labelNames: ['method', 'route', 'status_code'],
    registers: [register],
  });
  const duration = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to sending its response, by method, route and status code.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: DURATION_BUCKETS,
    registers: [register],
  });
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
      const labels = { method, route, status_code: String(status) };
      requests.inc(labels);
      duration.observe(labels, ms / 1000);
    },
    inFlight,
    stop() {
      clearInterval(sampler);
      register.clear();
    },
  };
}
