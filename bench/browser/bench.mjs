// The browser π benchmark (docs/experiments.md `browser`, the paper's Figures 9–10): ops/s of
// `js`, `jsBitwise`, `wasm` (sync, on this page's thread), `wasmWorkers` (async, every
// worker) and, when the page is served with the module, `wasmThreads1`/`wasmThreads2`
// (the same wasm kernel on 1 or 2 WebAssembly threads over one shared memory:
// wasm-threads.mjs) at 10^1…10^8 samples, a log–log chart, and the results as JSON.
// Scripting: `window.runBench(options)` resolves the results object; `window.offthread`
// is the library. `?run=1` starts a run on load (`variants`, `min`, `max`, `minTime` too).
// The variants are research, not the public API: the page loads offthread/internal's
// browser bundle (dist/browser/offthread-internal.js: the entry plus `piVariants`).
import * as offthread from 'offthread/internal';
import { startWasmThreads } from './wasm-threads.mjs';

const { piVariants, backendInfo, defaultPool } = offthread;
export const VARIANTS = ['js', 'jsBitwise', 'wasm', 'wasmWorkers'];
/** WebAssembly threads on one shared memory, by thread count: opt-in (the module is bench-only). */
export const THREAD_VARIANTS = ['wasmThreads1', 'wasmThreads2'];
const COLORS = {
  js: '#d62728',
  jsBitwise: '#ff7f0e',
  wasm: '#1f77b4',
  wasmWorkers: '#2ca02c',
  wasmThreads1: '#9467bd',
  wasmThreads2: '#8c564b',
};
const SEED = 1;
/** Where the experiment serves bench/wasm-threads' module (bench/experiments/browser.mjs). */
const WASM_THREADS_URL = './wasm-threads/pi_wasm_threads.wasm';
/** The running wasm-threads set for the variant being measured. */
let threads = null;

const $ = (id) => document.getElementById(id);
const pause = () => new Promise((r) => setTimeout(r, 0));
let last = null;

function call(variant, n) {
  if (THREAD_VARIANTS.includes(variant)) return threads.estimate(n, SEED);
  return variant === 'wasmWorkers'
    ? piVariants.estimate(n, variant, { seed: SEED })
    : Promise.resolve(piVariants.estimateSync(n, variant, { seed: SEED }));
}

/** The thread count of a wasmThreads variant. */
const threadCount = (variant) => Number(variant.slice('wasmThreads'.length));

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Times one (variant, samples) point. Calibration doubles a batch of calls until it
 * lasts ≥ 10 ms (timers are coarse: 100 µs without cross-origin isolation); then batches
 * run until `minTime` ms and 3 batches, or 1 batch when one call takes ≥ `minTime`.
 * The figure is the median per-call time over batches.
 */
async function measure(variant, n, minTime) {
  const { inside } = await call(variant, n);
  const timeBatch = async (k) => {
    const t0 = performance.now();
    for (let i = 0; i < k; i++) {
      const r = await call(variant, n);
      if (r.inside !== inside) throw new Error(`${variant} at ${n}: inside changed ${inside} → ${r.inside}`);
    }
    return performance.now() - t0;
  };
  let batch = 1;
  let ms = await timeBatch(batch);
  while (ms < 10) {
    batch *= 2;
    ms = await timeBatch(batch);
  }
  const perCall = [ms / batch];
  const minBatches = ms / batch >= minTime ? 1 : 3;
  const start = performance.now();
  let calls = batch;
  while (perCall.length < minBatches || performance.now() - start < minTime) {
    perCall.push((await timeBatch(batch)) / batch);
    calls += batch;
    await pause();
    if (perCall.length >= 1000) break;
  }
  const median_ = median(perCall);
  return {
    variant,
    samples: n,
    opsPerSec: 1000 / median_,
    medianMs: median_,
    nsPerSample: (median_ * 1e6) / n,
    calls,
    batch,
    inside,
  };
}

/**
 * Runs the benchmark. Options: variants, minExp (1), maxExp (8), minTime (ms, 300),
 * maxCallMs (skip a variant's larger sizes once one call would exceed it; 30 000),
 * wasmThreadsUrl (the wasm-threads module, for the wasmThreads variants).
 */
export async function runBench(options = {}) {
  const {
    variants = VARIANTS,
    minExp = 1,
    maxExp = 8,
    minTime = 300,
    maxCallMs = 30_000,
    wasmThreadsUrl = WASM_THREADS_URL,
  } = options;
  const info = backendInfo();
  const result = {
    page: location.href,
    date: new Date().toISOString(),
    userAgent: navigator.userAgent,
    hardwareConcurrency: navigator.hardwareConcurrency,
    crossOriginIsolated: globalThis.crossOriginIsolated === true,
    backend: info,
    // How the workers talk to this page: 'shared' (SharedArrayBuffer) or 'message'.
    transport: info.sharedMemory ? 'shared' : 'message',
    params: { variants, minExp, maxExp, minTime, maxCallMs, seed: SEED },
    rows: [],
    skipped: [],
    // Per wasmThreads variant: how its workers learn a job finished, and how many of them
    // counted a chunk of the last call at each size (the split, seen from the memory).
    wasmThreads: {},
  };
  last = result;
  $('download').disabled = false;
  // Start the workers before timing (each compiles its instance once).
  if (variants.includes('wasmWorkers')) {
    await piVariants.estimate(1, 'wasmWorkers');
    result.threads = defaultPool().threads;
  }
  for (const variant of variants) {
    if (THREAD_VARIANTS.includes(variant)) {
      try {
        threads = await startWasmThreads({
          url: new URL(wasmThreadsUrl, location.href),
          workers: threadCount(variant),
        });
      } catch (err) {
        result.skipped.push({ variant, reason: err.message });
        continue;
      }
      result.wasmThreads[variant] = { workers: threads.workers, wake: threads.wake, countedBy: {} };
    }
    try {
      await measureSizes(result, variant, { minExp, maxExp, minTime, maxCallMs });
    } finally {
      threads?.close();
      threads = null;
    }
  }
  status(`done: ${result.rows.length} points`);
  return result;
}

/** Times `variant` at 10^minExp…10^maxExp (after the larger sizes a call would take too long: skipped). */
async function measureSizes(result, variant, { minExp, maxExp, minTime, maxCallMs }) {
  for (let e = minExp; e <= maxExp; e++) {
    const n = 10 ** e;
    const prev = result.rows.findLast((r) => r.variant === variant);
    if (prev && prev.medianMs * (n / prev.samples) > maxCallMs) {
      result.skipped.push({ variant, samples: n, reason: `one call would take > ${maxCallMs} ms` });
      continue;
    }
    status(`${variant} at 10^${e}…`);
    await pause();
    result.rows.push(await measure(variant, n, minTime));
    if (threads) result.wasmThreads[variant].countedBy[n] = threads.lastCountedBy;
    render(result);
  }
}

function status(text) {
  $('status').textContent = text;
}

function fmtOps(x) {
  if (x >= 1e6) return `${(x / 1e6).toPrecision(3)}M`;
  if (x >= 1e3) return `${(x / 1e3).toPrecision(3)}k`;
  return x.toPrecision(3);
}

function render(result) {
  drawChart($('chart'), result.rows);
  const sizes = [...new Set(result.rows.map((r) => r.samples))].sort((a, b) => a - b);
  const variants = [...new Set(result.rows.map((r) => r.variant))];
  const head = `<tr><th>ops/s</th>${sizes.map((s) => `<th>10^${Math.log10(s)}</th>`).join('')}</tr>`;
  const body = variants
    .map((v) => {
      const cells = sizes.map((s) => {
        const r = result.rows.find((x) => x.variant === v && x.samples === s);
        return `<td>${r ? fmtOps(r.opsPerSec) : ''}</td>`;
      });
      return `<tr><td>${v}</td>${cells.join('')}</tr>`;
    })
    .join('');
  $('table').innerHTML = head + body;
}

/** Log–log chart of ops/s vs samples, one line with points per variant. */
export function drawChart(canvas, rows) {
  const ctx = canvas.getContext('2d');
  const W = canvas.width;
  const H = canvas.height;
  const pad = { l: 70, r: 130, t: 30, b: 50 };
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, W, H);
  const pts = rows.filter((r) => r.opsPerSec > 0 && Number.isFinite(r.opsPerSec));
  const xs = pts.map((r) => Math.log10(r.samples));
  const ys = pts.map((r) => Math.log10(r.opsPerSec));
  const x0 = Math.min(1, ...xs);
  const x1 = Math.max(8, ...xs);
  const y0 = ys.length ? Math.floor(Math.min(...ys)) : 0;
  const y1 = ys.length ? Math.max(y0 + 1, Math.ceil(Math.max(...ys))) : 7;
  const X = (v) => pad.l + ((v - x0) / (x1 - x0)) * (W - pad.l - pad.r);
  const Y = (v) => H - pad.b - ((v - y0) / (y1 - y0)) * (H - pad.t - pad.b);
  ctx.strokeStyle = '#eee';
  ctx.fillStyle = '#333';
  ctx.font = '12px system-ui, sans-serif';
  ctx.textAlign = 'center';
  for (let e = Math.ceil(x0); e <= x1; e++) {
    ctx.beginPath();
    ctx.moveTo(X(e), Y(y0));
    ctx.lineTo(X(e), Y(y1));
    ctx.stroke();
    ctx.fillText(`10^${e}`, X(e), H - pad.b + 16);
  }
  ctx.textAlign = 'right';
  for (let e = y0; e <= y1; e++) {
    ctx.beginPath();
    ctx.moveTo(X(x0), Y(e));
    ctx.lineTo(X(x1), Y(e));
    ctx.stroke();
    ctx.fillText(`10^${e}`, pad.l - 6, Y(e) + 4);
  }
  ctx.strokeStyle = '#333';
  ctx.strokeRect(X(x0), Y(y1), X(x1) - X(x0), Y(y0) - Y(y1));
  ctx.textAlign = 'center';
  ctx.fillText('samples', (X(x0) + X(x1)) / 2, H - 12);
  ctx.save();
  ctx.translate(16, (Y(y0) + Y(y1)) / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.fillText('ops/s', 0, 0);
  ctx.restore();
  ctx.font = 'bold 13px system-ui, sans-serif';
  ctx.fillText(`π: ops/s vs samples (log–log), ${navigator.hardwareConcurrency} cores`, (X(x0) + X(x1)) / 2, 18);
  const variants = [...new Set(pts.map((r) => r.variant))];
  variants.forEach((v, i) => {
    const line = pts.filter((r) => r.variant === v).sort((a, b) => a.samples - b.samples);
    const color = COLORS[v] ?? '#777';
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    ctx.lineWidth = 2;
    ctx.beginPath();
    line.forEach((r, j) => {
      const px = X(Math.log10(r.samples));
      const py = Y(Math.log10(r.opsPerSec));
      if (j === 0) ctx.moveTo(px, py);
      else ctx.lineTo(px, py);
    });
    ctx.stroke();
    for (const r of line) {
      ctx.beginPath();
      ctx.arc(X(Math.log10(r.samples)), Y(Math.log10(r.opsPerSec)), 3.5, 0, 2 * Math.PI);
      ctx.fill();
    }
    const ly = pad.t + 10 + i * 20;
    ctx.fillRect(W - pad.r + 14, ly - 5, 16, 3);
    ctx.textAlign = 'left';
    ctx.font = '12px system-ui, sans-serif';
    ctx.fillText(v, W - pad.r + 36, ly);
    ctx.lineWidth = 1;
  });
}

function download() {
  if (!last) return;
  const blob = new Blob([JSON.stringify(last, null, 2)], { type: 'application/json' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = `offthread-browser-pi-${last.date.replace(/[:.]/g, '-')}.json`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

function setup() {
  const info = backendInfo();
  $('env').textContent =
    `backend ${info.active}${info.wasm.error ? ` (wasm failed: ${info.wasm.error})` : ''}; ` +
    `${navigator.hardwareConcurrency} logical cores; crossOriginIsolated ${globalThis.crossOriginIsolated === true}; ` +
    `transport ${info.sharedMemory ? 'shared' : 'message'}`;
  const q = new URLSearchParams(location.search);
  const chosen = q.get('variants')?.split(',') ?? VARIANTS;
  $('variant-boxes').innerHTML = [...VARIANTS, ...THREAD_VARIANTS]
    .map((v) => `<label><input type="checkbox" value="${v}" ${chosen.includes(v) ? 'checked' : ''}/> ${v}</label>`)
    .join('');
  if (q.has('min')) $('min-exp').value = q.get('min');
  if (q.has('max')) $('max-exp').value = q.get('max');
  if (q.has('minTime')) $('min-time').value = q.get('minTime');
  const options = () => ({
    variants: [...document.querySelectorAll('#variant-boxes input:checked')].map((b) => b.value),
    minExp: Number($('min-exp').value),
    maxExp: Number($('max-exp').value),
    minTime: Number($('min-time').value),
  });
  const start = async () => {
    $('run').disabled = true;
    try {
      await runBench(options());
    } catch (err) {
      status(`failed: ${err.message}`);
    } finally {
      $('run').disabled = false;
    }
  };
  $('run').addEventListener('click', start);
  $('download').addEventListener('click', download);
  $('run').disabled = false;
  drawChart($('chart'), []);
  if (q.get('run') === '1') start();
}

Object.assign(globalThis, { offthread, runBench, benchResults: () => last, drawChart });
// Sync calls (js, jsBitwise, wasm) need offthread.wasm loaded: the entry starts loading
// it on import and `ready` settles once it did (or failed: backendInfo() says why).
await offthread.ready;
setup();
globalThis.benchReady = true;
