// Turn an experiment's result into bench/results/<name>.{json,md,svg}: the raw data with
// the machine it ran on, a markdown table for humans, and charts rendered headlessly
// with vega-lite → vega → SVG (no browser, no canvas).

import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as vega from 'vega';
import { compile } from 'vega-lite';
import { kindSpec } from './chart-kinds.mjs';
import { formatSig, formatters } from './format.mjs';
import { machineInfo, machineLine } from './machine.mjs';

export * from './format.mjs';

/** bench/results, wherever the process was started from. */
export const DEFAULT_OUT_DIR = fileURLToPath(new URL('../results/', import.meta.url));

/**
 * @typedef {object} Column
 * @property {string} key      property of each row
 * @property {string} label    header text (put the unit here: "ops/s", "p99")
 * @property {string | ((v: any, row: any) => string)} [format]  a name from `formatters`
 *   ('int', 'sig3', 'ops', 'ns', 'ms', 'ratio', 'percent', 'mib', 'pow10', 'msEach',
 *   'auto') or a function; default 'auto'
 */

/**
 * @typedef {object} Table
 * @property {string} title
 * @property {Column[]} columns
 * @property {Record<string, unknown>[]} rows   raw values; formatting happens in the .md only
 */

/**
 * @typedef {object} Axis
 * @property {string} field   property of each data row
 * @property {string} label   axis title (with unit)
 * @property {boolean} [log]  log scale (rows with a value ≤ 0 are left out of the chart)
 */

/**
 * @typedef {object} Chart
 * @property {string} [suffix]  file name suffix: <name>-<suffix>.svg; the first chart may
 *   omit it and becomes <name>.svg
 * @property {string} title
 * @property {string} [subtitle]
 * @property {Axis} x
 * @property {Axis} y
 * @property {string} series    property naming the line a row belongs to, e.g. 'variant'
 * @property {string} [seriesLabel]  legend title (default: the series field)
 * @property {Record<string, unknown>[]} data  one row per point
 * @property {'line' | 'bar' | 'timeline'} [kind]  default 'line'; the others are drawn by
 *   chart-kinds.mjs (bar: x names the category, series the bar in it; timeline: x → x2
 *   per row on lane y, optional facet { row, column })
 * @property {{ field: string }} [x2]  timeline: where each bar ends
 * @property {{ row?: string, column?: string }} [facet]  timeline: panels
 */

/**
 * @typedef {object} Ratio
 * @property {string} label    e.g. "nativeBitwise / jsBitwise at 10⁶"
 * @property {number} value
 * @property {number} [target] the figure to beat
 * @property {'>=' | '<='} [op='>=']  how value compares with target to pass
 * @property {string} [unit='×']  '×' prints as a ratio; anything else prints after the number
 * @property {boolean} [pass]  computed from target/op when omitted
 */

/**
 * What an experiment's run(ctx) returns.
 * @typedef {object} Result
 * @property {string} title
 * @property {Record<string, unknown>} [params]   sizes, iterations, modes: what a re-run needs
 * @property {string[]} [notes]
 * @property {Table[]} [tables]
 * @property {Chart[]} [charts]
 * @property {Ratio[]} [ratios]
 * @property {unknown} [raw]  every sample (goes to the .json only)
 */

/**
 * @typedef {object} ReportMeta
 * @property {import('./machine.mjs').MachineInfo} [machine]  default: machineInfo() now
 * @property {string} [command]     how the run was started, shown in the .md
 * @property {number} [durationMs]  how long the experiment took
 */

/**
 * Fill in `pass` from target/op where the experiment did not decide it.
 * @param {Ratio} r
 * @returns {Ratio}
 */
export function judgeRatio(r) {
  if (r.pass !== undefined || r.target === undefined) return r;
  const op = r.op ?? '>=';
  return { ...r, pass: op === '>=' ? r.value >= r.target : r.value <= r.target };
}

/**
 * `num` over `den` in ops/s (rows of one run), or null when either row is missing (a
 * size skipped in --quick). `pass` is left to judgeRatio.
 * @param {string} label
 * @param {{ opsPerSec: number } | undefined} num
 * @param {{ opsPerSec: number } | undefined} den
 * @param {number} [target]
 * @returns {Ratio | null}
 */
export function opsRatio(label, num, den, target) {
  if (!num || !den) return null;
  return { label, value: num.opsPerSec / den.opsPerSec, target };
}

/**
 * @param {number} v
 * @param {string} unit
 * @param {boolean} [round]  targets are round numbers: "10×", not "10.0×"
 */
const withUnit = (v, unit, round = false, digits = 3) => {
  const text = round
    ? formatSig(v)
        .replace(/(\.\d*?)0+$/, '$1')
        .replace(/\.$/, '')
    : formatSig(v, digits);
  return unit === '×' ? `${text}×` : `${text}${unit ? ` ${unit}` : ''}`;
};

/**
 * Significant digits enough that a failed ratio never reads as meeting its target
 * (0.8996 against ≥ 0.9 is "0.8996×", not "0.900×"); 3 otherwise.
 * @param {Ratio} r  judged
 */
function digitsFor(r) {
  let digits = 3;
  if (r.pass !== false || r.target === undefined || !Number.isFinite(r.value)) return digits;
  const meets = (x) => (r.op === '<=' ? x <= r.target : x >= r.target);
  while (digits < 12 && meets(Number(r.value.toPrecision(digits)))) digits++;
  return digits;
}

/**
 * One markdown line for a ratio.
 * @param {Ratio} ratio
 */
export function ratioLine(ratio) {
  const r = judgeRatio(ratio);
  const unit = r.unit ?? '×';
  let line = `- ${r.label}: **${withUnit(r.value, unit, false, digitsFor(r))}**`;
  if (r.target !== undefined) line += ` (target ${r.op === '<=' ? '≤' : '≥'} ${withUnit(r.target, unit, true)})`;
  if (r.pass !== undefined) line += r.pass ? ' — pass ✅' : ' — FAIL ❌';
  return line;
}

/** @param {string} s */
const cell = (s) => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

/**
 * A markdown table. Columns whose values are all numbers are right-aligned.
 * @param {Table} table
 */
export function markdownTable({ columns, rows }) {
  /** @type {((v: any, row: any) => string)[]} */
  const fmt = columns.map((c) => {
    if (typeof c.format === 'function') return c.format;
    const named = formatters[c.format ?? 'auto'];
    if (!named) throw new Error(`unknown format '${c.format}' for column '${c.key}'`);
    return (v) => named(v); // named formatters take the value only
  });
  const numeric = columns.map((c) =>
    rows.every((r) => r[c.key] === undefined || r[c.key] === null || ['number', 'bigint'].includes(typeof r[c.key])),
  );
  const lines = [
    `| ${columns.map((c) => cell(c.label)).join(' | ')} |`,
    `|${numeric.map((n) => (n ? ' ---: ' : ' :--- ')).join('|')}|`,
    ...rows.map((r) => `| ${columns.map((c, i) => cell(fmt[i](r[c.key], r))).join(' | ')} |`),
  ];
  return lines.join('\n');
}

/** @param {unknown} v */
const paramText = (v) => (typeof v === 'string' ? v : JSON.stringify(v, jsonReplacer));

/**
 * The whole markdown report.
 * @param {string} name
 * @param {Result} result
 * @param {Required<Pick<ReportMeta, 'machine'>> & ReportMeta} meta
 * @param {string[]} svgFiles  file names of the charts, relative to the .md
 */
export function markdownReport(name, result, meta, svgFiles = []) {
  const out = [`# ${result.title}`, '', machineLine(meta.machine), ''];
  const run = [];
  if (meta.command) run.push(`Command: \`${meta.command}\``);
  if (meta.durationMs !== undefined) run.push(`took ${formatSig(meta.durationMs / 1000)} s`);
  if (run.length) out.push(run.join(' · '), '');
  const params = Object.entries(result.params ?? {});
  if (params.length) out.push('Parameters:', '', ...params.map(([k, v]) => `- ${k}: ${paramText(v)}`), '');
  for (const t of result.tables ?? []) out.push(`## ${t.title}`, '', markdownTable(t), '');
  if (result.ratios?.length) out.push('## Ratios', '', ...result.ratios.map(ratioLine), '');
  if (svgFiles.length) {
    out.push('## Charts', '');
    for (const [i, c] of (result.charts ?? []).entries()) out.push(`![${c.title}](${svgFiles[i]})`, '');
  }
  if (result.notes?.length) out.push('## Notes', '', ...result.notes.map((n) => `- ${n}`), '');
  out.push(`Raw samples: \`${name}.json\`.`, '');
  return out.join('\n');
}

/**
 * JSON.stringify replacer: BigInt → decimal string, typed arrays → arrays.
 * @param {string} _key
 * @param {unknown} v
 */
export function jsonReplacer(_key, v) {
  if (typeof v === 'bigint') return v.toString();
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(/** @type {any} */ (v));
  if (v instanceof Map) return Object.fromEntries(v);
  if (v instanceof Set) return [...v];
  return v;
}

/**
 * Indented JSON with arrays of plain numbers on one line: a report holds thousands of
 * samples, one per line would be most of the file. (JSON strings never hold a raw
 * newline, so only real arrays match.)
 * @param {unknown} value
 */
export function toJson(value) {
  return JSON.stringify(value, jsonReplacer, 2).replace(
    /\[\n\s*(-?\d[\d.eE+-]*(?:,\n\s*-?\d[\d.eE+-]*)*)\n\s*\]/g,
    (_, nums) => `[${nums.replace(/\s+/g, '')}]`,
  );
}

const SERIES_SHAPES = [
  'circle',
  'square',
  'triangle-up',
  'diamond',
  'cross',
  'triangle-down',
  'triangle-right',
  'triangle-left',
];

/**
 * The vega-lite spec of a chart: one coloured line with points per series (colour and
 * point shape both identify it), log axes where asked, legend, axis titles, title,
 * white background.
 * @param {Chart} chart
 * @returns {{ spec: object, dropped: number }} dropped: rows left out (≤ 0 on a log axis,
 *   or not a number)
 */
export function chartSpec(chart) {
  if (chart.kind !== undefined && chart.kind !== 'line') return kindSpec(chart);
  const { x, y, series } = chart;
  const ok = (/** @type {Axis} */ a, /** @type {unknown} */ v) =>
    typeof v === 'number' && Number.isFinite(v) && (!a.log || v > 0);
  // Fresh rows with just the three fields: vega tags the objects it is given (a symbol
  // id), and the caller's rows also go to the tables and the JSON.
  const data = chart.data
    .filter((r) => ok(x, r[x.field]) && ok(y, r[y.field]))
    .map((r) => ({ [x.field]: r[x.field], [y.field]: r[y.field], [series]: String(r[series]) }));
  const domain = [...new Set(data.map((r) => r[series]))];
  const decade = 'abs(log(datum.value) / LN10 - round(log(datum.value) / LN10)) < 1e-6';
  // SI prefixes from 1,000 up (1k, 1M, 1G); plain decimals below, never "100m".
  const label = "abs(datum.value) >= 1000 ? format(datum.value, '~s') : format(datum.value, '~g')";
  /** @param {Axis} a */
  const axisEnc = (a) => {
    const values = /** @type {number[]} */ (data.map((r) => r[a.field]));
    const decades = values.length ? Math.log10(Math.max(...values) / Math.min(...values)) : 0;
    // Over two decades or more a log axis labels only the powers of ten.
    const decadesOnly = a.log && decades >= 2;
    return {
      field: a.field,
      type: 'quantitative',
      title: a.label,
      scale: a.log ? { type: 'log' } : { zero: true, nice: true },
      axis: {
        labelExpr: decadesOnly ? `${decade} ? ${label} : ''` : label,
        grid: true,
        // On a log axis, strong grid lines at powers of ten, faint ones in between.
        gridColor: a.log ? { condition: { test: decade, value: '#cfcfcf' }, value: '#f0f0f0' } : '#e3e3e3',
        labelFlush: false,
      },
    };
  };
  const seriesEnc = {
    field: series,
    type: 'nominal',
    title: chart.seriesLabel ?? series,
    sort: domain,
  };
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: chart.title,
      ...(chart.subtitle ? { subtitle: chart.subtitle } : {}),
      anchor: 'start',
      fontSize: 16,
    },
    background: 'white',
    padding: 16,
    width: 640,
    height: 400,
    data: { values: data },
    encoding: {
      x: axisEnc(x),
      y: axisEnc(y),
      color: {
        ...seriesEnc,
        scale: { domain, scheme: domain.length > 10 ? 'tableau20' : 'tableau10' },
      },
    },
    layer: [
      { mark: { type: 'line', strokeWidth: 2 } },
      {
        mark: { type: 'point', filled: true, size: 55, opacity: 1 },
        encoding: { shape: { ...seriesEnc, scale: { domain, range: SERIES_SHAPES } } },
      },
    ],
    config: {
      font: 'DejaVu Sans, Helvetica, Arial, sans-serif',
      view: { stroke: '#bbb' },
      axis: { labelFontSize: 11, titleFontSize: 13, titlePadding: 10 },
      legend: { labelFontSize: 12, titleFontSize: 12, symbolSize: 90, orient: 'right' },
    },
  };
  return { spec, dropped: chart.data.length - data.length };
}

/**
 * Render a chart to an SVG string, headlessly.
 * @param {Chart} chart
 * @returns {Promise<string>}
 */
export function renderChartSvg(chart) {
  return renderSpecSvg(chartSpec(chart).spec);
}

/** @param {object} spec  a vega-lite spec */
async function renderSpecSvg(spec) {
  const view = new vega.View(vega.parse(compile(/** @type {any} */ (spec)).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * File names of a result's charts: the first without a suffix is <name>.svg, the others
 * <name>-<suffix>.svg (or <name>-chart<i>.svg). Throws on a duplicate.
 * @param {string} name
 * @param {Chart[]} charts
 */
export function chartFileNames(name, charts) {
  const names = charts.map((c, i) =>
    c.suffix ? `${name}-${c.suffix}.svg` : i === 0 ? `${name}.svg` : `${name}-chart${i + 1}.svg`,
  );
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new Error(`writeReport: two charts would both be written to ${dup}`);
  return names;
}

/**
 * The fields of `row` that chart `c` draws. The JSON keeps the rest once, in `raw`: rows
 * with their samples, copied into every chart, had made pi.json 2.3 MB.
 * @param {Chart} c
 * @param {Record<string, unknown>} row
 */
function drawnFields(c, row) {
  const keys = [c.x.field, c.y.field, c.series, c.x2?.field, c.facet?.row, c.facet?.column];
  return Object.fromEntries(keys.filter((k) => k !== undefined && k in row).map((k) => [k, row[k]]));
}

/**
 * Write `<name>.json` (machine, params, everything in `result` incl. raw samples),
 * `<name>.md` and one SVG per chart into `outDir` (created if missing).
 * @param {string} name   file name stem, usually the experiment's name
 * @param {Result} result
 * @param {string} [outDir]  default bench/results (relative paths resolve from the cwd)
 * @param {ReportMeta} [meta]
 * @returns {Promise<{ json: string, md: string, svg: string[] }>} absolute paths written
 */
export async function writeReport(name, result, outDir = DEFAULT_OUT_DIR, meta = {}) {
  if (!/^[\w.-]+$/.test(name)) throw new Error(`writeReport: bad report name '${name}'`);
  if (!result || typeof result.title !== 'string') throw new Error('writeReport: result.title (string) is required');
  const dir = path.resolve(outDir);
  await mkdir(dir, { recursive: true });
  const machine = meta.machine ?? machineInfo();
  const charts = result.charts ?? [];
  const svgNames = chartFileNames(name, charts);
  const ratios = (result.ratios ?? []).map(judgeRatio);

  const specs = charts.map(chartSpec);
  const notes = [...(result.notes ?? [])];
  specs.forEach(({ dropped }, i) => {
    if (dropped)
      notes.push(`Chart "${charts[i].title}": ${dropped} point(s) left out (not a number, or ≤ 0 on a log axis).`);
  });

  const json = {
    name,
    title: result.title,
    machine,
    command: meta.command ?? null,
    durationMs: meta.durationMs ?? null,
    params: result.params ?? {},
    notes,
    ratios,
    tables: (result.tables ?? []).map((t) => ({
      ...t,
      columns: t.columns.map((c) => ({ ...c, format: typeof c.format === 'string' ? c.format : undefined })),
    })),
    charts: charts.map((c, i) => ({ ...c, data: c.data.map((row) => drawnFields(c, row)), file: svgNames[i] })),
    raw: result.raw ?? null,
  };

  const paths = {
    json: path.join(dir, `${name}.json`),
    md: path.join(dir, `${name}.md`),
    svg: svgNames.map((f) => path.join(dir, f)),
  };
  const svgs = await Promise.all(specs.map(({ spec }) => renderSpecSvg(spec)));
  await Promise.all([
    writeFile(paths.json, `${toJson(json)}\n`),
    writeFile(paths.md, markdownReport(name, { ...result, notes, ratios }, { ...meta, machine }, svgNames)),
    ...svgs.map((svg, i) => writeFile(paths.svg[i], svg)),
  ]);
  return paths;
}
