// Experiment `md5-like` (issue 35 item 3): the "MD5-like" loop of "Node vs. JS" (seed
// 002) measured as the blog did — 20 M iterations of blueimp-md5's MD5 function stripped
// to its calls, shifts and arithmetic (http-md5-like.mjs / .rs), JS against the same
// functions in Rust (native through koffi, and wasm32 in V8). Blog (seed 002): JS
// 12.4 s, C++ 7.4 s, 1.68×. It used to be a table of http-md5 with one F-round step per
// iteration, about 1/300 of this work, and a ratio that was another kernel's.
import { runInChild } from '../lib/measure.mjs';

const HELPER = new URL('./http-md5-like.mjs', import.meta.url);
const ITERATIONS = 20_000_000;
/** The blog's figures (seed 002): seconds for 20 M iterations. */
const BLOG = { js: 12.4, cpp: 7.4 };

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const iterations = ctx.quick ? ITERATIONS / 10 : ITERATIONS;
  const runs = ctx.quick ? 1 : 3;
  ctx.progress(`md5-like: ${iterations.toLocaleString('en-US')} iterations, ${runs} run(s) per implementation`);
  const rows = (await runInChild(HELPER, 'measureMd5Like', [{ iterations, runs }], { timeoutMs: 3_600_000 })).value;
  const get = (/** @type {string} */ impl) => rows.find((/** @type {any} */ r) => r.impl === impl);
  const blogRatio = BLOG.js / BLOG.cpp;
  const blog = `blog (seed 002, JS ${BLOG.js} s / C++ ${BLOG.cpp} s): ${blogRatio.toFixed(2)}`;
  const m = `${iterations / 1e6} M`;
  return {
    title: `md5-like: blueimp's MD5 function stripped to its calls, shifts and arithmetic, ${m} iterations — JS vs Rust`,
    params: { iterations, runs, blog: BLOG },
    notes: [
      'Kernel (bench/experiments/http-md5-like.mjs and .rs, the same functions in both): blueimp-md5\'s safeAdd (two 16-bit halves), bitRotateLeft, md5cmn and md5ff/gg/hh/ii, and its block function — the 64 steps with their constants and shifts, then the add of the previous state. Stripped, as the blog describes it: no string-to-words conversion, no padding step, no hex digest. One iteration = one block; the block\'s word 1 is the iteration number (word 0 is 0x80, the rest 0, so iteration 0 is the padded empty message and one iteration gives MD5(""), which bench/test/http-md5-like.test.mjs checks).',
      'Rust: plain rustc (opt-level 3, panic=abort), not through the addon — a measurement device, not a product kernel — as a shared library called through koffi ("native") and as wasm32 in V8. Every timed call returns one word of the final state (run r: word r mod 4), each compared with the JS call of the same run; all four words are compared at 100,000 iterations first (that call is also the warm-up).',
      'Each implementation in turn, in one child process; per run, wall time and the process CPU time (user + system) around the synchronous call. The ratios use CPU time: on this shared 2-core machine a run waits for a core for much of its wall time (see the load average in the header), which CPU time does not count. Wall ratios beside them.',
      `The blog (seed 002) timed JS against C++ on its machine; we time JS against Rust on this one. ${blog}.`,
    ],
    tables: [
      {
        title: `${m} iterations, median of ${runs} run(s)`,
        columns: [
          { key: 'impl', label: 'implementation' },
          { key: 'cpuMs', label: 'CPU ms', format: 'sig3' },
          { key: 'wallMs', label: 'wall ms', format: 'sig3' },
          { key: 'cpuNsPerIteration', label: 'CPU ns/iteration', format: 'sig3' },
          { key: 'cpuRunsMs', label: 'CPU ms per run', format: (v) => v.map((x) => x.toFixed(0)).join(' · ') },
          { key: 'wordsChecked', label: 'state words checked = JS', format: 'int' },
        ],
        rows,
      },
    ],
    ratios: [
      {
        label: `JS / Rust native (koffi), CPU time, ${m} iterations; ${blog}`,
        value: get('js').cpuMs / get('native').cpuMs,
      },
      {
        label: `JS / Rust wasm (V8), CPU time, ${m} iterations; ${blog}`,
        value: get('js').cpuMs / get('wasm').cpuMs,
      },
      { label: `JS / Rust native (koffi), wall time, ${m} iterations`, value: get('js').wallMs / get('native').wallMs },
      { label: `JS / Rust wasm (V8), wall time, ${m} iterations`, value: get('js').wallMs / get('wasm').wallMs },
    ],
    raw: { rows },
  };
}
