// /metrics: Prometheus text with the request, duration, loop-delay and pool metrics.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import client from 'prom-client';
import { DURATION_BUCKETS, requestSeries } from '../src/metrics.mjs';
import { get, startServer } from '../test-support/helpers.mjs';

/** @param {string} text @param {string} series the metric name with its labels, as printed */
function value(text, series) {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

test('metric names, and a request count that increases', async (t) => {
  const { app } = await startServer(t, { defaultMetrics: true });
  await get(app, '/pi?samples=100000');
  await new Promise((r) => setTimeout(r, 30)); // a few loop-delay samples
  const first = await get(app, '/metrics');
  assert.equal(first.status, 200);
  assert.match(String(first.headers['content-type']), /^text\/plain/);
  for (const name of [
    'http_requests_total',
    'http_request_duration_seconds_bucket',
    'http_requests_in_flight',
    'offthread_http_event_loop_delay_seconds_bucket',
    'offthread_pool_threads',
    'offthread_pool_queued',
    'offthread_pool_running',
    'offthread_pool_completed',
    'offthread_pool_failed',
    'offthread_pool_cancelled',
    'nodejs_eventloop_lag_p99_seconds',
  ]) {
    assert.match(first.body, new RegExp(`^${name}[{ ]`, 'm'), name);
  }
  const series = 'http_requests_total{method="GET",route="/pi",status_code="200"}';
  const before = value(first.body, series);
  assert.equal(before, 1);
  assert.ok(value(first.body, 'offthread_pool_completed') >= 1);
  await get(app, '/pi?samples=100000');
  await get(app, '/pi?samples=0');
  const second = (await get(app, '/metrics')).body;
  assert.equal(value(second, series), before + 1);
  assert.equal(value(second, 'http_requests_total{method="GET",route="/pi",status_code="400"}'), 1);
  assert.equal(value(second, 'http_requests_total{method="GET",route="/metrics",status_code="200"}'), 1);
});

test('the hand-kept request series print exactly as a prom-client Counter and Histogram', async () => {
  const ours = new client.Registry();
  const series = requestSeries(ours);
  const [total, duration] = await ours.getMetricsAsJSON();
  const theirs = new client.Registry();
  const counter = new client.Counter({
    name: total.name,
    help: total.help,
    labelNames: ['method', 'route', 'status_code'],
    registers: [theirs],
  });
  const histogram = new client.Histogram({
    name: duration.name,
    help: duration.help,
    labelNames: ['method', 'route', 'status_code'],
    buckets: DURATION_BUCKETS,
    registers: [theirs],
  });
  // Every bucket bound exactly, just above it, 0, past the last bound, several series
  // in an order that is not sorted; seconds with rounding in their sums.
  const samples = [0, ...DURATION_BUCKETS.flatMap((b) => [b, b * 1.001]), 11, 1e6, 0.1234567, 1 / 3];
  const routes = [
    ['GET', '/b', 200],
    ['GET', '/a', 304],
    ['HEAD', '/a', 200],
    ['GET', '(unmatched)', 404],
    ['GET', '/a', 200],
  ];
  let i = 0;
  for (const s of samples) {
    for (const [method, route, status] of routes.slice(0, 1 + (i++ % routes.length))) {
      series.record(method, route, status, s);
      const labels = { method, route, status_code: String(status) };
      counter.inc(labels);
      histogram.observe(labels, s);
    }
  }
  assert.equal(await ours.metrics(), await theirs.metrics());
  // As JSON (prom-client's label objects have no prototype; what a caller gets is the same).
  const asJson = async (/** @type {client.Registry} */ r) => JSON.parse(JSON.stringify(await r.getMetricsAsJSON()));
  assert.deepEqual(await asJson(ours), await asJson(theirs));
  ours.resetMetrics();
  theirs.resetMetrics();
  assert.equal(await ours.metrics(), await theirs.metrics());
});
