// Experiment `streams-browser`: stream filters where the addon cannot go — a page in
// headless Chromium, then in headless Firefox ESR, gzips generated text through a
// TransformStream three ways, in one page per browser, in rotating order:
//   offthread, workers   filters.gzip() on a pool of 2 Web Workers (offthread.wasm there)
//   offthread, in page   the same filter on the page's own thread (a pool on the pure-JS
//                        tier has no WASM workers, so the filter runs on this thread's
//                        offthread.wasm: what every page got before filters moved to workers)
//   CompressionStream    the browser's own gzip
// Per way: wall time, and how long the page's thread could not run a task: a setTimeout
// heartbeat's longest gap and p99 gap (an idle page reads ≈ 4 ms: nested timers are
// clamped). Every output is gunzipped in the page (DecompressionStream) and compared
// with the input.
//   npm run bench -- streams-browser [--quick]
import { launchChromium, launchFirefox, startServer } from '../../scripts/browser-server.mjs';
import { medianRun, summarize } from '../lib/measure.mjs';

const WAYS = ['offthread, workers', 'offthread, in page', 'CompressionStream'];
const BROWSERS = [
  ['Chromium', launchChromium],
  ['Firefox', launchFirefox],
];

/**
 * In the page: `mib` MiB of text (a seeded word mix, ~5 % multi-byte, compressing about
 * 3:1 like prose) gzipped in 64 KiB chunks by `way`; the figures of one run.
 */
async function inPage(o, { way, mib }) {
  const words = [];
  let seed = 12345;
  const rand = (n) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const extra = ['é', 'ü', 'ß', '€', '日本', '語', '😀', 'Ω'];
  for (let i = 0; i < 3000; i++) {
    let w = '';
    const len = 2 + rand(9);
    for (let k = 0; k < len; k++) w += String.fromCharCode(97 + rand(26));
    if (rand(20) === 0) w += extra[rand(extra.length)];
    words.push(w);
  }
  const parts = [];
  let size = 0;
  const encoder = new TextEncoder();
  while (size < mib * 2 ** 20) {
    let line = '';
    for (let i = 0; i < 200; i++) line += `${words[rand(words.length)]} `;
    const b = encoder.encode(`${line}\n`);
    parts.push(b);
    size += b.length;
  }
  const input = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    input.set(p, at);
    at += p.length;
  }
  const pool = way === 'offthread, workers' ? new o.Pool({ threads: 2 }) : new o.Pool({ threads: 1, engine: 'js' });
  await pool.echo(0); // its worker started: not part of the figures
  const stream = way === 'CompressionStream' ? new CompressionStream('gzip') : o.filters.gzip({ pool });

  // The heartbeat: gaps between timer callbacks that overlap the gzip (a filter that
  // never yields shows as one gap as long as the whole run).
  const during = [];
  let t0 = Number.POSITIVE_INFINITY;
  let end = Number.POSITIVE_INFINITY;
  let beating = true;
  let last = performance.now();
  const beat = () => {
    const t = performance.now();
    if (t > t0 && last < end) during.push(t - last);
    last = t;
    if (beating) setTimeout(beat, 0);
  };
  setTimeout(beat, 0);
  await new Promise((r) => setTimeout(r, 50)); // the heartbeat settles at its clamp

  const CHUNK = 64 * 1024;
  let next = 0;
  const out = [];
  let outBytes = 0;
  t0 = performance.now();
  const reader = new ReadableStream({
    pull(c) {
      if (next >= input.length) c.close();
      else c.enqueue(input.slice(next, next + CHUNK));
      next += CHUNK;
    },
  })
    .pipeThrough(stream)
    .getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    out.push(value);
    outBytes += value.length;
  }
  end = performance.now();
  const wallMs = end - t0;
  await new Promise((r) => setTimeout(r, 20)); // the beat after the end closes the last gap
  beating = false;
  await pool.close();

  // The output must gunzip to the input.
  const unzipped = new Uint8Array(
    await new Response(new Blob(out).stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer(),
  );
  let same = unzipped.length === input.length;
  for (let i = 0; same && i < input.length; i++) same = unzipped[i] === input[i];
  const sorted = [...during].sort((a, b) => a - b);
  return {
    way,
    mib: input.length / 2 ** 20,
    wallMs,
    mbPerSec: input.length / 2 ** 20 / (wallMs / 1000),
    ratio: outBytes / input.length,
    gunzips: same ? 'yes' : 'NO',
    stallMaxMs: sorted.at(-1) ?? 0,
    stallP99Ms: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0,
  };
}

/** The median (nearest rank) of an odd number of runs' figures. */
const median = (/** @type {number[]} */ xs) => summarize(xs).p50;

/**
 * `rounds` rounds of every way in one page of the browser `launch()` opens.
 * @param {import('../run.mjs').ExperimentContext} ctx
 * @returns {Promise<{ version: string | null, runs: Record<string, any[]> }>}
 */
async function runIn(ctx, name, launch, { url, mib, rounds }) {
  const browser = await launch();
  /** @type {Record<string, any[]>} */
  const runs = Object.fromEntries(WAYS.map((w) => [w, []]));
  try {
    const page = await browser.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForFunction(() => globalThis.benchReady === true, null, { timeout: 30_000 });
    for (let round = 0; round < rounds; round++) {
      // Each way once per round, each in another place of the order.
      for (let i = 0; i < WAYS.length; i++) {
        const way = WAYS[(i + round) % WAYS.length];
        ctx.progress(`${name}: round ${round + 1}/${rounds}: ${way}`);
        const r = await page.evaluate(
          ([src, arg]) => new Function(`return (${src})`)()(globalThis.offthread, arg),
          [inPage.toString(), { way, mib }],
        );
        runs[way]?.push(r);
      }
    }
    if (errors.length) throw new Error(`page errors in ${name}: ${errors.join('; ')}`);
    return { version: browser.version ?? null, runs };
  } finally {
    await browser.close();
  }
}

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const mib = ctx.quick ? 4 : 32;
  const rounds = ctx.quick ? 1 : 3;
  const server = await startServer({ isolated: true });
  /** @type {Record<string, string | null>} */
  const versions = {};
  const rows = [];
  try {
    for (const [name, launch] of BROWSERS) {
      const { version, runs } = await runIn(ctx, name, launch, { url: server.url, mib, rounds });
      versions[name] = version;
      for (const way of WAYS) {
        const rs = runs[way] ?? [];
        const mid = medianRun(rs);
        rows.push({
          browser: name,
          ...mid,
          wallEach: rs.map((r) => r.wallMs),
          stallMaxMs: median(rs.map((r) => r.stallMaxMs)),
          stallP99Ms: median(rs.map((r) => r.stallP99Ms)),
          gunzips: rs.every((r) => r.gunzips === 'yes') ? 'yes' : 'NO',
        });
      }
    }
  } finally {
    await server.close();
  }
  const row = (b, w) => /** @type {any} */ (rows.find((r) => r.browser === b && r.way === w));
  const perChunkMs = (b) =>
    (row(b, 'offthread, workers').wallMs - row(b, 'offthread, in page').wallMs) / Math.ceil((mib * 2 ** 20) / 65536);
  return {
    title: 'Stream filters in a browser page: gzip through a TransformStream',
    params: { mib, rounds, chunk: 65536, browsers: versions, isolated: true },
    notes: [
      `${mib} MiB of generated text (a seeded mix of 3,000 words, ~5 % with a multi-byte character) in 64 KiB chunks, gzipped in one page per browser (${Object.entries(
        versions,
      )
        .map(([b, v]) => `${b} ${v ?? 'version unknown'}`)
        .join(
          ', ',
        )}; cross-origin isolated), each way once per round in rotating order; each figure the median of ${rounds} round(s) (wall: the median run's; stalls: the median of each run's).`,
      'Stalls: gaps between the callbacks of a setTimeout(0) heartbeat on the page thread during the gzip; an idle page reads ≈ 4 ms (nested timers are clamped), so a gap above that is time the page could not run a task (input, rendering).',
      'offthread, in page: a pool on the pure-JS tier has no WASM workers, so the filter runs on the page thread’s offthread.wasm — what every page got before filters moved to the pool’s workers.',
      `One stream uses one worker (its filter's state lives there), and the pool posts a worker one task at a time: each chunk goes there and back before the next is sent, ${BROWSERS.map(([b]) => `${perChunkMs(b).toFixed(2)} ms (${b})`).join(', ')} per chunk over the in-page run here. Several streams spread over the workers.`,
      'The machine has 2 cores shared with other jobs; the workers pool has 2 workers: compare rows of this run.',
    ],
    tables: [
      {
        title: `gzip of ${mib} MiB in a page`,
        columns: [
          { key: 'browser', label: 'browser' },
          { key: 'way', label: 'way' },
          { key: 'wallMs', label: 'wall (median run)', format: 'ms' },
          { key: 'wallEach', label: 'each run, ms', format: 'msEach' },
          { key: 'mbPerSec', label: 'MiB/s (input)', format: 'sig3' },
          { key: 'ratio', label: 'size ratio', format: 'sig3' },
          { key: 'gunzips', label: 'gunzips to input' },
          { key: 'stallP99Ms', label: 'page gap p99', format: 'ms' },
          { key: 'stallMaxMs', label: 'page gap max', format: 'ms' },
        ],
        rows,
      },
    ],
    charts: [
      {
        kind: 'bar',
        title: `The page's longest wait during a ${mib} MiB gzip`,
        subtitle: 'ms between setTimeout(0) heartbeats on the page thread (idle ≈ 4 ms); log scale, lower is better',
        x: { field: 'figure', label: '' },
        y: { field: 'ms', label: 'ms', log: true },
        series: 'way',
        data: rows.flatMap((r) => [
          { figure: `${r.browser}: gap p99`, ms: r.stallP99Ms, way: r.way },
          { figure: `${r.browser}: gap max`, ms: r.stallMaxMs, way: r.way },
        ]),
      },
    ],
    ratios: BROWSERS.flatMap(([b]) => [
      { label: `${b}: page gap max: offthread on workers`, value: row(b, 'offthread, workers').stallMaxMs, unit: 'ms' },
      {
        label: `${b}: page gap max: offthread in the page`,
        value: row(b, 'offthread, in page').stallMaxMs,
        unit: 'ms',
      },
      { label: `${b}: page gap max: CompressionStream`, value: row(b, 'CompressionStream').stallMaxMs, unit: 'ms' },
      {
        label: `${b}: throughput: offthread on workers / CompressionStream`,
        value: row(b, 'CompressionStream').wallMs / row(b, 'offthread, workers').wallMs,
      },
      {
        label: `${b}: throughput: offthread on workers / offthread in the page`,
        value: row(b, 'offthread, in page').wallMs / row(b, 'offthread, workers').wallMs,
      },
    ]),
    raw: { rows },
  };
}
