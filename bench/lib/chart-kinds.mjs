// Chart kinds beside report.mjs's line chart (the default): grouped bars (one group per
// category, one bar per series: "p99 latency, blocking vs offload") and timelines (one
// horizontal bar per request from its start to its end, in a grid of small panels).
// report.mjs's chartSpec() hands a chart with `kind: 'bar' | 'timeline'` to kindSpec().

const FONT = 'DejaVu Sans, Helvetica, Arial, sans-serif';
const CONFIG = {
  font: FONT,
  view: { stroke: '#bbb' },
  axis: { labelFontSize: 11, titleFontSize: 13, titlePadding: 10 },
  legend: { labelFontSize: 12, titleFontSize: 12, orient: 'right' },
  header: { labelFontSize: 12, titleFontSize: 13 },
};

/** @param {any} chart */
const title = (chart) => ({
  text: chart.title,
  ...(chart.subtitle ? { subtitle: chart.subtitle } : {}),
  anchor: 'start',
  fontSize: 16,
});

const isNum = (/** @type {unknown} */ v) => typeof v === 'number' && Number.isFinite(v);

/**
 * Grouped bars: `x.field` names the category (kept in first-seen order), `y.field` the
 * value, `series` the bar within a group (colour). A log y axis leaves out values ≤ 0.
 * @param {import('./report.mjs').Chart} chart
 */
export function barSpec(chart) {
  const { x, y, series } = chart;
  const data = chart.data
    .filter((r) => isNum(r[y.field]) && (!y.log || /** @type {number} */ (r[y.field]) > 0))
    .map((r) => ({ [x.field]: String(r[x.field]), [y.field]: r[y.field], [series]: String(r[series]) }));
  const categories = [...new Set(data.map((r) => r[x.field]))];
  const domain = [...new Set(data.map((r) => r[series]))];
  // On a log axis a bar cannot start at 0: it starts at the power of ten below the least value.
  const values = data.map((r) => /** @type {number} */ (r[y.field]));
  const floor = y.log && values.length ? 10 ** Math.floor(Math.log10(Math.min(...values))) : 0;
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: title(chart),
    background: 'white',
    padding: 16,
    width: 640,
    height: 400,
    data: { values: data },
    encoding: {
      x: { field: x.field, type: 'nominal', title: x.label, sort: categories, axis: { labelAngle: 0 } },
      xOffset: { field: series, type: 'nominal', sort: domain },
      y: {
        field: y.field,
        type: 'quantitative',
        title: y.label,
        scale: y.log ? { type: 'log', domainMin: floor } : { zero: true, nice: true },
        axis: { grid: true, gridColor: '#e3e3e3' },
      },
      color: {
        field: series,
        type: 'nominal',
        title: chart.seriesLabel ?? series,
        sort: domain,
        scale: { domain, scheme: 'tableau10' },
      },
    },
    layer: [
      y.log ? { mark: { type: 'bar' }, encoding: { y2: { datum: floor } } } : { mark: { type: 'bar' } },
      {
        // the value over each bar: a reader compares figures, not bar heights
        mark: { type: 'text', dy: -6, fontSize: 10, color: '#333' },
        encoding: { text: { field: y.field, type: 'quantitative', format: '.3~r' } },
      },
    ],
    config: CONFIG,
  };
  return { spec, dropped: chart.data.length - data.length };
}

/**
 * Timelines: one horizontal bar per row from `x.field` to `x2.field` (e.g. ms since the
 * run started), on lane `y.field` (e.g. the request's number), coloured by `series` (e.g.
 * the user that sent it); `facet.row` / `facet.column` split the data into panels.
 * @param {import('./report.mjs').Chart & { x2: { field: string }, facet?: { row?: string, column?: string } }} chart
 */
export function timelineSpec(chart) {
  const { x, x2, y, series, facet = {} } = chart;
  const fields = [x.field, x2.field, y.field, series, facet.row, facet.column].filter(
    (f) => /** @type {string | undefined} */ (f) !== undefined,
  );
  const data = chart.data
    .filter((r) => isNum(r[x.field]) && isNum(r[x2.field]) && isNum(r[y.field]))
    .map((r) =>
      Object.fromEntries(
        fields.map((f) => [
          f,
          f === series || f === facet.row || f === facet.column ? String(r[/** @type {string} */ (f)]) : r[f],
        ]),
      ),
    );
  const domain = [...new Set(data.map((r) => r[series]))];
  const order = (/** @type {string | undefined} */ f) => (f ? [...new Set(data.map((r) => r[f]))] : []);
  const inner = {
    width: 260,
    height: 150,
    mark: { type: 'bar', height: { band: 0.8 } },
    encoding: {
      x: { field: x.field, type: 'quantitative', title: x.label, axis: { grid: true, gridColor: '#eee' } },
      x2: { field: x2.field },
      y: { field: y.field, type: 'ordinal', title: y.label, axis: { labels: false, ticks: false } },
      color: {
        field: series,
        type: 'nominal',
        title: chart.seriesLabel ?? series,
        sort: domain,
        scale: { domain, scheme: 'tableau10' },
      },
    },
  };
  /** @type {Record<string, unknown>} */
  const facetEnc = {};
  if (facet.row)
    facetEnc.row = {
      field: facet.row,
      type: 'nominal',
      title: null,
      sort: order(facet.row),
      // above each row of panels, horizontal: row names are phrases, not single words
      header: { labelOrient: 'top', labelAngle: 0, labelAnchor: 'start', labelFontWeight: 'bold' },
    };
  if (facet.column) facetEnc.column = { field: facet.column, type: 'nominal', title: null, sort: order(facet.column) };
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: title(chart),
    background: 'white',
    padding: 16,
    data: { values: data },
    ...(facet.row || facet.column ? { facet: facetEnc, spec: inner, resolve: { scale: { y: 'independent' } } } : inner),
    config: CONFIG,
  };
  return { spec, dropped: chart.data.length - data.length };
}

/**
 * The spec of a chart of a kind other than 'line'.
 * @param {any} chart
 * @returns {{ spec: object, dropped: number }}
 */
export function kindSpec(chart) {
  if (chart.kind === 'bar') return barSpec(chart);
  if (chart.kind === 'timeline') return timelineSpec(chart);
  throw new Error(`unknown chart kind '${chart.kind}' (line, bar or timeline)`);
}
