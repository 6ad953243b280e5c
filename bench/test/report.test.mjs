import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { machineInfo } from '../lib/machine.mjs';
import { chartFileNames, judgeRatio, markdownTable, opsRatio, ratioLine, toJson, writeReport } from '../lib/report.mjs';

const variants = ['js', 'native', 'parallel'];
const rows = variants.flatMap((variant, k) =>
  [10, 1000, 100000].map((samples) => ({ variant, samples, opsPerSec: 1e8 / (samples * (k + 1)), cores: k + 1 })),
);
/** @type {import('../lib/report.mjs').Result} */
const result = {
  title: 'Test report',
  params: { sizes: [10, 1000, 100000], quick: true },
  notes: ['a note'],
  tables: [
    {
      title: 'Throughput',
      columns: [
        { key: 'variant', label: 'Variant' },
        { key: 'samples', label: 'Samples', format: 'pow10' },
        { key: 'opsPerSec', label: 'ops/s', format: 'ops' },
        { key: 'cores', label: 'cores', format: (v) => `${v} core(s)` },
      ],
      rows,
    },
  ],
  charts: [
    {
      title: 'ops/s vs samples',
      x: { field: 'samples', label: 'samples', log: true },
      y: { field: 'opsPerSec', label: 'ops/s', log: true },
      series: 'variant',
      data: [...rows, { variant: 'js', samples: 0, opsPerSec: 5 }],
    },
    {
      suffix: 'cores',
      title: 'cores used',
      x: { field: 'samples', label: 'samples', log: true },
      y: { field: 'cores', label: 'cores' },
      series: 'variant',
      data: rows,
    },
  ],
  ratios: [
    { label: 'native / js', value: 12.34, target: 10 },
    { label: 'loop p99', value: 2.5, target: 2, op: '<=', unit: 'ms' },
    { label: 'informational', value: 3 },
  ],
  raw: { samples: new Float64Array([1.5, 2.5]), big: 2n ** 60n, nested: [{ a: 1 }] },
};

let dir = '';
/** @type {{ json: string, md: string, svg: string[] }} */
let paths;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'offthread-report-'));
  paths = await writeReport('t', result, dir, {
    machine: machineInfo(),
    command: 'node bench/run.mjs t',
    durationMs: 1234,
  });
});
after(() => rm(dir, { recursive: true, force: true }));

test('writes <name>.json, <name>.md, <name>.svg and <name>-<suffix>.svg', async () => {
  assert.deepEqual((await readdir(dir)).sort(), ['t-cores.svg', 't.json', 't.md', 't.svg']);
  assert.deepEqual(paths, {
    json: path.join(dir, 't.json'),
    md: path.join(dir, 't.md'),
    svg: [path.join(dir, 't.svg'), path.join(dir, 't-cores.svg')],
  });
});

test('the JSON round-trips: machine, params, rows, ratios with pass, raw samples', async () => {
  const json = JSON.parse(await readFile(paths.json, 'utf8'));
  assert.equal(json.name, 't');
  assert.equal(json.title, 'Test report');
  assert.equal(json.command, 'node bench/run.mjs t');
  assert.equal(json.durationMs, 1234);
  assert.equal(typeof json.machine.cpuModel, 'string');
  assert.equal(json.machine.cores > 0, true);
  assert.deepEqual(json.params, result.params);
  assert.deepEqual(json.tables[0].rows, rows);
  assert.deepEqual(Object.getOwnPropertySymbols(rows[0]), [], 'rendering must not tag the caller’s rows');
  assert.deepEqual(
    json.tables[0].columns.map((/** @type {any} */ c) => c.format ?? null),
    [null, 'pow10', 'ops', null], // named formats are kept, functions cannot be
  );
  assert.deepEqual(
    json.ratios.map((/** @type {any} */ r) => r.pass),
    [true, false, undefined],
  );
  assert.deepEqual(json.raw, { samples: [1.5, 2.5], big: String(2n ** 60n), nested: [{ a: 1 }] });
  assert.deepEqual(
    json.charts.map((/** @type {any} */ c) => c.file),
    ['t.svg', 't-cores.svg'],
  );
});

test('the markdown has a title, machine line, the table with every row and column, ratios, notes', async () => {
  const md = await readFile(paths.md, 'utf8');
  const lines = md.split('\n');
  assert.equal(lines[0], '# Test report');
  assert.match(lines[2], /cores/);
  assert.match(md, /Command: `node bench\/run.mjs t` · took 1\.23 s/);
  const table = lines.filter((l) => l.startsWith('|'));
  assert.equal(table.length, rows.length + 2, 'header + separator + one line per row');
  assert.equal(table[0], '| Variant | Samples | ops/s | cores |');
  assert.equal(table[1], '| :--- | ---: | ---: | ---: |');
  assert.equal(table[2], '| js | 10¹ | 10,000,000 | 1 core(s) |');
  for (const line of table) assert.equal(line.split(' | ').length, 4, line);
  assert.match(md, /- native \/ js: \*\*12\.3×\*\* \(target ≥ 10×\) — pass ✅/);
  assert.match(md, /- loop p99: \*\*2\.50 ms\*\* \(target ≤ 2 ms\) — FAIL ❌/);
  assert.match(md, /- informational: \*\*3\.00×\*\*$/m);
  assert.match(md, /!\[ops\/s vs samples\]\(t\.svg\)/);
  assert.match(md, /- a note/);
  assert.match(md, /1 point\(s\) left out/, 'the zero on a log axis is reported, not silently dropped');
});

test('the SVG is a real chart: white background, one line per series, title, axis titles, legend', async () => {
  const svg = await readFile(paths.svg[0], 'utf8');
  assert.ok(svg.startsWith('<svg'));
  assert.match(svg, /<rect width="\d+" height="\d+" fill="white"\/>/);
  const lineGroups = svg.split('class="mark-line role-mark').slice(1);
  assert.equal(lineGroups.length, variants.length, 'one line mark per series');
  for (const g of lineGroups)
    assert.match(g.slice(0, 2000), /<path [^>]*d="M[^"]+L/, 'each line has a path with segments');
  for (const text of ['ops/s vs samples', '>samples<', '>ops/s<', '>variant<', ...variants.map((v) => `>${v}<`)]) {
    assert.ok(svg.includes(text), `SVG mentions ${text}`);
  }
  const legend = svg.split('role-legend-symbol')[1];
  assert.ok(legend, 'has a legend');
});

test('a log axis labels powers of ten with SI prefixes, not "100m"', async () => {
  const svg = await readFile(paths.svg[0], 'utf8');
  for (const label of ['>10<', '>1k<', '>100k<', '>1M<']) assert.ok(svg.includes(label), label);
  assert.ok(!/>\d+m</.test(svg));
});

test('markdownTable escapes pipes and right-aligns only numeric columns', () => {
  const md = markdownTable({
    title: 'x',
    columns: [
      { key: 'a', label: 'A|B' },
      { key: 'n', label: 'N' },
    ],
    rows: [
      { a: 'x|y', n: 1 },
      { a: 'z', n: null },
    ],
  });
  assert.equal(md, '| A\\|B | N |\n| :--- | ---: |\n| x\\|y | 1 |\n| z | – |');
});

test('ratios: pass computed from target and op unless given', () => {
  assert.equal(judgeRatio({ label: 'a', value: 2, target: 1 }).pass, true);
  assert.equal(judgeRatio({ label: 'a', value: 2, target: 1, op: '<=' }).pass, false);
  assert.equal(judgeRatio({ label: 'a', value: 2, target: 1, pass: false }).pass, false);
  assert.equal(judgeRatio({ label: 'a', value: 2 }).pass, undefined);
  assert.equal(ratioLine({ label: 'a', value: Number.NaN, target: 1 }), '- a: **–×** (target ≥ 1×) — FAIL ❌');
});

test('ratios: a failed ratio never prints as its target', () => {
  assert.equal(ratioLine({ label: 'a', value: 0.8996, target: 0.9 }), '- a: **0.8996×** (target ≥ 0.9×) — FAIL ❌');
  assert.equal(ratioLine({ label: 'a', value: 1.7985, target: 1.8 }), '- a: **1.798×** (target ≥ 1.8×) — FAIL ❌');
  assert.equal(
    ratioLine({ label: 'p', value: 5.004, target: 5, op: '<=', unit: 'ms' }),
    '- p: **5.004 ms** (target ≤ 5 ms) — FAIL ❌',
  );
  // Passing and clearly failing ratios keep 3 digits.
  assert.equal(ratioLine({ label: 'a', value: 0.90049, target: 0.9 }), '- a: **0.900×** (target ≥ 0.9×) — pass ✅');
  assert.equal(ratioLine({ label: 'a', value: 0.8512, target: 0.9 }), '- a: **0.851×** (target ≥ 0.9×) — FAIL ❌');
});

test('opsRatio: num over den in ops/s, null when a row is missing', () => {
  assert.deepEqual(opsRatio('x', { opsPerSec: 30 }, { opsPerSec: 10 }, 2), { label: 'x', value: 3, target: 2 });
  assert.equal(judgeRatio(/** @type {any} */ (opsRatio('x', { opsPerSec: 1 }, { opsPerSec: 10 }, 2))).pass, false);
  assert.equal(opsRatio('x', undefined, { opsPerSec: 10 }), null);
});

test('chart file names: first bare, then suffixes; duplicates rejected', () => {
  const c = { title: '', x: { field: 'x', label: '' }, y: { field: 'y', label: '' }, series: 's', data: [] };
  assert.deepEqual(chartFileNames('pi', [c, { ...c, suffix: 'cores' }, c]), [
    'pi.svg',
    'pi-cores.svg',
    'pi-chart3.svg',
  ]);
  assert.throws(() => chartFileNames('pi', [c, { ...c, suffix: 'a' }, { ...c, suffix: 'a' }]), /pi-a\.svg/);
});

test('writeReport rejects a result without a title and a bad name', async () => {
  await assert.rejects(writeReport('x', /** @type {any} */ ({}), dir), /title/);
  await assert.rejects(writeReport('../x', result, dir), /bad report name/);
});

test('toJson: numeric arrays on one line, strings untouched, round-trips', () => {
  const value = {
    samples: [1.5, -2, 3e-7, 1e21],
    note: 'keep [1, 2] as written',
    rows: [{ a: [1, 2] }, { b: 'x' }],
    empty: [],
  };
  const text = toJson(value);
  assert.match(text, /"samples": \[1\.5,-2,3e-7,1e\+21\]/);
  assert.match(text, /"a": \[1,2\]/);
  assert.ok(text.includes('"keep [1, 2] as written"'));
  assert.deepEqual(JSON.parse(text), value);
});
