// http-qr's artillery-style scenario: the phases of each run length, and the table row and
// bar charts built from a load result (no server: the figures are made up).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { arrivalSchedule } from '../experiments/http-load.mjs';
import { scenario, scenarioCharts, scenarioRow } from '../experiments/http-qr.mjs';

const seconds = (/** @type {{ duration: number }[]} */ p) => p.reduce((a, x) => a + x.duration, 0);

test('the --full scenario is the blog run: 140 s, about 50k requests, warm-up, ramp, sustained', () => {
  const full = scenario({ quick: false, full: true });
  assert.deepEqual(
    full.map((p) => p.name),
    ['warm-up', 'ramp-up', 'sustained'],
  );
  assert.equal(seconds(full), 140);
  const { dueMs, counts } = arrivalSchedule(full);
  assert.equal(dueMs.length, 50_050);
  assert.deepEqual(counts, [500, 7050, 42_500]);
  assert.ok(dueMs[dueMs.length - 1] < 140_000);
  assert.ok(full[1].rampTo > full[0].arrivalRate, 'the ramp goes up');
});

test('the default and --quick scenarios keep the rates and shorten the phases', () => {
  const full = scenario({ quick: false, full: true });
  for (const [ctx, s] of /** @type {const} */ ([
    [{ quick: false, full: false }, 15],
    [{ quick: true, full: false }, 5],
  ])) {
    const p = scenario(ctx);
    assert.equal(seconds(p), s);
    assert.deepEqual(
      p.map((x) => [x.arrivalRate, x.rampTo]),
      full.map((x) => [x.arrivalRate, x.rampTo]),
    );
  }
});

test('scenarioRow and scenarioCharts: one bar per mode and statistic', () => {
  const lat = (/** @type {number} */ k) => ({
    count: 9,
    min: k,
    p50: 2 * k,
    p95: 3 * k,
    p99: 4 * k,
    max: 5 * k,
    mean: 2 * k,
  });
  const result = (/** @type {number} */ k) => ({
    sent: 10,
    ok: 9,
    errors: 1,
    non2xx: 0,
    durationS: 15,
    latencyMs: lat(k),
    phases: [{ name: 'sustained', latencyMs: lat(k + 1) }],
    loop: { p50Ms: k, p95Ms: 2 * k, p99Ms: 3 * k, maxMs: 4 * k, meanMs: 1.5 * k, resolutionMs: 1 },
    serverCores: 1,
    generatorCores: 0.5,
  });
  const rows = [scenarioRow('blocking', result(10)), scenarioRow('offload', result(1))];
  assert.deepEqual(
    [rows[0].min, rows[0].median, rows[0].p95, rows[0].p99, rows[0].max, rows[0].sustainedP99, rows[0].errors],
    [10, 20, 30, 40, 50, 44, 1],
  );
  const [http, loop] = scenarioCharts(rows, 'sub');
  assert.equal(http.kind, 'bar');
  assert.deepEqual(
    http.data.filter((d) => d.mode === 'offload').map((d) => [d.stat, d.ms]),
    [
      ['min', 1],
      ['median', 2],
      ['p95', 3],
      ['p99', 4],
      ['max', 5],
    ],
  );
  assert.deepEqual(
    loop.data.filter((d) => d.mode === 'blocking').map((d) => [d.stat, d.ms]),
    [
      ['median', 10],
      ['mean', 15],
      ['p95', 20],
      ['p99', 30],
      ['max', 40],
    ],
  );
  assert.notEqual(http.suffix, loop.suffix);
});
