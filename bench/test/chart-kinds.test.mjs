// Bar and timeline charts (bench/lib/chart-kinds.mjs) through report.mjs: the spec keeps
// the data and order asked for, and writeReport renders each to an SVG.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { barSpec, kindSpec, timelineSpec } from '../lib/chart-kinds.mjs';
import { chartSpec, writeReport } from '../lib/report.mjs';

const bars = {
  kind: /** @type {const} */ ('bar'),
  title: 'HTTP latency',
  x: { field: 'stat', label: 'statistic' },
  y: { field: 'ms', label: 'ms', log: true },
  series: 'mode',
  data: [
    { stat: 'p99', mode: 'blocking', ms: 40 },
    { stat: 'p99', mode: 'offload', ms: 4 },
    { stat: 'min', mode: 'blocking', ms: 1 },
    { stat: 'min', mode: 'offload', ms: 0 },
  ],
};
const timeline = {
  kind: /** @type {const} */ ('timeline'),
  title: 'Requests',
  x: { field: 'startMs', label: 'ms' },
  x2: { field: 'endMs' },
  y: { field: 'seq', label: 'request' },
  series: 'user',
  facet: { row: 'impl', column: 'users' },
  data: [
    { impl: 'sync', users: '2 users', user: 1, seq: 0, startMs: 0, endMs: 50 },
    { impl: 'sync', users: '2 users', user: 2, seq: 1, startMs: 0, endMs: 100 },
    { impl: 'async', users: '2 users', user: 1, seq: 0, startMs: 0, endMs: 50 },
    { impl: 'async', users: '2 users', user: 2, seq: 1, startMs: 1, endMs: Number.NaN },
  ],
};

test('barSpec: categories in first-seen order, one bar per series, ≤ 0 left out on a log axis', () => {
  const { spec, dropped } = /** @type {any} */ (barSpec(bars));
  assert.equal(dropped, 1);
  assert.deepEqual(spec.encoding.x.sort, ['p99', 'min']);
  assert.equal(spec.encoding.xOffset.field, 'mode');
  assert.deepEqual(spec.encoding.color.scale.domain, ['blocking', 'offload']);
  assert.equal(spec.encoding.y.scale.type, 'log');
  assert.equal(spec.layer[0].mark.type, 'bar');
  assert.deepEqual(chartSpec(bars), barSpec(bars), "report.mjs hands kind 'bar' to chart-kinds.mjs");
});

test('timelineSpec: a bar from x to x2 per row, faceted, rows without an end left out', () => {
  const { spec, dropped } = /** @type {any} */ (timelineSpec(timeline));
  assert.equal(dropped, 1);
  assert.equal(spec.data.values.length, 3);
  assert.deepEqual(spec.facet.row.sort, ['sync', 'async']);
  assert.equal(spec.facet.column.field, 'users');
  assert.equal(spec.spec.encoding.x2.field, 'endMs');
  assert.equal(spec.spec.mark.type, 'bar');
  assert.equal(typeof spec.data.values[0].user, 'string', 'the series is nominal');
  assert.throws(() => kindSpec({ ...bars, kind: 'pie' }), /unknown chart kind 'pie'/);
});

test('writeReport renders line, bar and timeline charts to SVG files', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'offthread-kinds-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const line = {
    title: 'line',
    x: { field: 'n', label: 'n' },
    y: { field: 'v', label: 'v' },
    series: 's',
    data: [
      { n: 1, v: 2, s: 'a' },
      { n: 2, v: 3, s: 'a' },
    ],
  };
  await writeReport(
    'k',
    { title: 'kinds', charts: [line, { ...bars, suffix: 'bars' }, { ...timeline, suffix: 'timeline' }] },
    dir,
  );
  assert.deepEqual((await readdir(dir)).sort(), ['k-bars.svg', 'k-timeline.svg', 'k.json', 'k.md', 'k.svg']);
  const barSvg = await readFile(path.join(dir, 'k-bars.svg'), 'utf8');
  assert.match(barSvg, /^<svg/);
  assert.match(barSvg, /HTTP latency/);
  assert.match(barSvg, /offload/);
  const tl = await readFile(path.join(dir, 'k-timeline.svg'), 'utf8');
  assert.match(tl, /2 users/);
  assert.match(tl, /async/);
  const md = await readFile(path.join(dir, 'k.md'), 'utf8');
  assert.match(md, /!\[Requests\]\(k-timeline\.svg\)/);
});
