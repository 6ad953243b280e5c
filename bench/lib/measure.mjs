// Measurement helpers shared by the experiments: in-process timing (tinybench), CPU and
// memory meters, one child process per variant, and a progress printer.

import { fork } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Bench } from 'tinybench';

// ---------------------------------------------------------------------------------------
// Progress

/** Set in a child started by runInChild: progress lines go to the parent over IPC. */
const CHILD_ENV = 'OFFTHREAD_BENCH_CHILD';
const processStart = performance.now();

/**
 * Make a progress printer: one line per call on `stream`, prefixed with the time since
 * `start` (performance.now() milliseconds), e.g. "[   12.3 s] pi: js 10⁶".
 * @param {{ stream?: { write(s: string): unknown }, start?: number }} [opts]
 * @returns {(msg: string) => void}
 */
export function createProgress({ stream = process.stderr, start = performance.now() } = {}) {
  return (msg) => {
    const s = ((performance.now() - start) / 1000).toFixed(1).padStart(7);
    stream.write(`[${s} s] ${msg}\n`);
  };
}

const printProgress = createProgress({ start: processStart });

/**
 * Print one progress line to stderr with the elapsed time. Inside a child started by
 * runInChild the line is sent to the parent instead, which prints it with its own clock.
 * @param {string} msg
 */
export function progress(msg) {
  if (process.env[CHILD_ENV] === '1' && process.send) process.send({ type: 'progress', msg: String(msg) });
  else printProgress(String(msg));
}

// ---------------------------------------------------------------------------------------
// Timing

/**
 * @typedef {object} TimeOptions
 * @property {number} [minTime=1000]      ms of measured calls to aim for (tinybench `time`)
 * @property {number} [minIterations=5]   at least this many samples (tinybench `iterations`)
 * @property {number} [maxIterations=1000] stop after this many samples even if minTime is
 *   not reached (bounds the raw samples a report stores)
 * @property {number} [warmup=250]        ms of untimed calls first; at least one call is
 *   always made (it also sizes `batch`). 0 = just that one call.
 * @property {number | 'auto'} [batch='auto'] calls per sample; a sample is the mean of its
 *   batch. 'auto' makes a sample last max(20 µs, minTime / maxIterations): timer overhead
 *   stays under 1% and maxIterations samples fill minTime. Use 1 for per-call p99.
 */

/**
 * @typedef {object} TimeResult
 * @property {number[]} samples   ns per call, one per sample, sorted ascending (tinybench sorts them)
 * @property {number} median      ns per call
 * @property {number} p99         ns per call (of samples: with batch > 1, of batch means)
 * @property {number} mean        ns per call
 * @property {number} min         ns per call
 * @property {number} max         ns per call
 * @property {number} rme         relative margin of error of the mean, percent
 * @property {number} opsPerSec   1e9 / median
 * @property {number} batch       calls per sample
 * @property {number} calls       timed calls in total (samples × batch)
 */

/** Shortest sample 'auto' batching aims for: ~50 ns of timer overhead is then <1%. */
const MIN_SAMPLE_MS = 0.02;

/**
 * @param {() => unknown} fn
 * @param {number} n
 * @param {boolean} isAsync
 */
function batched(fn, n, isAsync) {
  if (n === 1) return fn;
  return isAsync
    ? async () => {
        const t0 = performance.now();
        for (let i = 0; i < n; i++) await fn();
        const cost = performance.now() - t0;
        return { overriddenDuration: cost / n, overriddenIterationCost: cost };
      }
    : () => {
        const t0 = performance.now();
        for (let i = 0; i < n; i++) fn();
        const cost = performance.now() - t0;
        return { overriddenDuration: cost / n, overriddenIterationCost: cost };
      };
}

/**
 * Time `fn` with tinybench: warm up, then take samples until both `minTime` and
 * `minIterations` are reached, or `maxIterations` samples. A call of seconds runs
 * `minIterations` times; a call of nanoseconds runs in batches, many times.
 * `fn` may return a Promise (it is then awaited per call).
 * @param {() => unknown} fn
 * @param {TimeOptions} [opts]
 * @returns {Promise<TimeResult>}
 */
export async function timeFn(fn, opts = {}) {
  const { minTime = 1000, minIterations = 5, maxIterations = 1000, warmup = 250, batch = 'auto' } = opts;
  if (!(maxIterations >= minIterations && minIterations >= 1)) {
    throw new RangeError(`timeFn: need 1 ≤ minIterations (${minIterations}) ≤ maxIterations (${maxIterations})`);
  }

  // Probe call: warms up, tells sync from async, and sizes the batch.
  let t0 = performance.now();
  const first = fn();
  const isAsync = typeof (/** @type {any} */ (first)?.then) === 'function';
  if (isAsync) await first;
  const probeMs = performance.now() - t0;

  // Warm up in chunks that double until one lasts ≥ 1 ms, so reading the clock does not
  // inflate the per-call estimate of a tiny fn. The fastest chunk sizes the batch: a GC
  // pause or a preemption only ever makes a chunk slower.
  let perCallMs = probeMs;
  t0 = performance.now();
  for (let chunk = 1; performance.now() - t0 < warmup; ) {
    const c0 = performance.now();
    for (let i = 0; i < chunk; i++) {
      if (isAsync) await fn();
      else fn();
    }
    const chunkMs = performance.now() - c0;
    perCallMs = Math.min(perCallMs, chunkMs / chunk);
    if (chunkMs < 1) chunk *= 2;
  }
  const n =
    batch === 'auto'
      ? Math.max(
          1,
          Math.min(1e7, Math.ceil(Math.max(MIN_SAMPLE_MS, minTime / maxIterations) / Math.max(perCallMs, 1e-9))),
        )
      : Math.max(1, Math.floor(batch));

  const stop = new AbortController();
  let taken = 0;
  const bench = new Bench({
    time: minTime,
    iterations: minIterations,
    warmup: false, // done above, with our own budget (tinybench's default is ≥16 calls)
    retainSamples: true,
    throws: true,
  });
  bench.add('fn', batched(fn, n, isAsync), {
    async: isAsync,
    signal: stop.signal,
    afterEach() {
      if (++taken >= maxIterations) stop.abort();
    },
  });
  await bench.run();
  const result = /** @type {any} */ (bench.tasks[0].result);
  if (result.state !== 'completed' && result.state !== 'aborted-with-statistics') {
    throw result.error ?? new Error(`timeFn: tinybench finished in state ${result.state}`);
  }
  // tinybench reports latency in ms (sorted); our samples are ns per call.
  const lat = result.latency;
  // Rounded to 0.01 ns: finer digits are float noise, and they bloat the JSON.
  const samples = Array.from(lat.samples, (/** @type {number} */ ms) => Math.round(ms * 1e8) / 100);
  return {
    samples,
    median: lat.p50 * 1e6,
    p99: lat.p99 * 1e6,
    mean: lat.mean * 1e6,
    min: lat.min * 1e6,
    max: lat.max * 1e6,
    rme: lat.rme,
    opsPerSec: 1e3 / lat.p50,
    batch: n,
    calls: samples.length * n,
  };
}

/**
 * @typedef {object} Summary
 * @property {number} count
 * @property {number} min
 * @property {number} p50
 * @property {number} p95
 * @property {number} p99
 * @property {number} max
 * @property {number} mean
 */

/**
 * Percentiles (nearest rank) and mean of samples an experiment collected itself, e.g.
 * round-trip latencies of N tasks in flight. Same unit in as out; empty input gives NaN.
 * @param {ArrayLike<number>} values
 * @returns {Summary}
 */
export function summarize(values) {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  const rank = (/** @type {number} */ p) =>
    n ? sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))] : Number.NaN;
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: n,
    min: rank(0),
    p50: rank(50),
    p95: rank(95),
    p99: rank(99),
    max: rank(100),
    mean: n ? sum / n : Number.NaN,
  };
}

/**
 * The run with the median wall time (nearest rank, as `summarize(...).p50`: the lower
 * middle of an even count): a row that reports one whole run of several.
 * @template {{ wallMs: number }} R
 * @param {R[]} runs
 * @returns {R}
 */
export function medianRun(runs) {
  return /** @type {R} */ ([...runs].sort((a, b) => a.wallMs - b.wallMs)[(runs.length - 1) >> 1]);
}

// ---------------------------------------------------------------------------------------
// CPU and memory

/**
 * @typedef {object} CpuReading
 * @property {number} wallMs
 * @property {number} cpuMs      user + system CPU of this whole process (all threads)
 * @property {number} userMs
 * @property {number} systemMs
 * @property {number} coresUsed  cpuMs / wallMs: 1 = one core busy the whole time
 */

/**
 * Measure wall time and this process's CPU time (process.cpuUsage counts every thread,
 * so native pool threads show up as cores used).
 * @returns {{ start(): void, stop(): CpuReading }}
 */
/**
 * Keeps `inFlight` calls of `call(i)` going until `total` completed (or `capMs` passed):
 * throughput and each call's round trip (submit → settled), p50/p99 nearest rank, in µs.
 * @param {(i: number) => Promise<unknown>} call
 */
export async function keepInFlight(call, inFlight, total, capMs) {
  const latencies = [];
  let started = 0;
  let done = 0;
  const t0 = performance.now();
  await new Promise((resolve, reject) => {
    const launch = () => {
      started++;
      const ts = performance.now();
      call(started).then(() => {
        latencies.push(performance.now() - ts);
        done++;
        if (started < total && performance.now() - t0 < capMs) launch();
        else if (done === started) resolve(undefined);
      }, reject);
    };
    for (let k = 0; k < Math.min(inFlight, total); k++) launch();
  });
  const wallMs = performance.now() - t0;
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { tasks: done, wallMs, tasksPerSec: done / (wallMs / 1000), p50Us: at(0.5) * 1000, p99Us: at(0.99) * 1000 };
}

export function cpuMeter() {
  /** @type {NodeJS.CpuUsage | null} */
  let cpu0 = null;
  let wall0 = 0;
  return {
    start() {
      cpu0 = process.cpuUsage();
      wall0 = performance.now();
    },
    stop() {
      if (!cpu0) throw new Error('cpuMeter: stop() before start()');
      const wallMs = performance.now() - wall0;
      const { user, system } = process.cpuUsage(cpu0);
      const userMs = user / 1000;
      const systemMs = system / 1000;
      const cpuMs = userMs + systemMs;
      return { wallMs, cpuMs, userMs, systemMs, coresUsed: wallMs > 0 ? cpuMs / wallMs : 0 };
    },
  };
}

/**
 * Peak resident set size of this process so far, in MiB (getrusage maxrss). It never
 * goes down: run each variant in its own process (runInChild) to attribute it.
 * @returns {number}
 */
export function peakRssMiB() {
  return process.resourceUsage().maxRSS / 1024;
}

// ---------------------------------------------------------------------------------------
// One child process per variant

/**
 * @typedef {object} ChildOptions
 * @property {number} [timeoutMs=600000]  kill the child (SIGKILL) and reject after this
 * @property {(msg: string) => void} [progress]  where the child's progress lines go
 *   (default: this process's progress printer)
 * @property {string[]} [execArgv]  Node flags for the child, e.g. ['--expose-gc']
 * @property {Record<string, string>} [env]  added to the child's environment, e.g.
 *   { UV_THREADPOOL_SIZE: '8' }
 */

/**
 * @template T
 * @typedef {object} ChildResult
 * @property {T} value          what the export returned (structured clone: numbers,
 *   strings, arrays, plain objects, BigInt, typed arrays, Map, Set)
 * @property {number} peakRssMiB  the child's peak RSS when the export returned
 * @property {number} wallMs     time inside the export
 * @property {number} cpuMs      the child's user + system CPU inside the export
 * @property {number} coresUsed  cpuMs / wallMs
 */

const RUNNER = fileURLToPath(new URL('./child-runner.mjs', import.meta.url));
const STDERR_TAIL = 4000;

/**
 * Run `exportName` of the ES module at `modulePath` in a fresh Node process: clean JIT
 * state and its own peak RSS. The export is called as `fn(...args)` and may be async.
 * Inside it, `progress()` from this file forwards lines to the parent.
 * Rejects if the export throws, the child exits without an answer, or `timeoutMs` passes.
 * @template [T=unknown]
 * @param {string | URL} modulePath  absolute or cwd-relative path, or a file: URL
 *   (e.g. `import.meta.url` to run an export of the calling experiment)
 * @param {string} exportName
 * @param {unknown[]} [args]
 * @param {ChildOptions} [opts]
 * @returns {Promise<ChildResult<T>>}
 */
export function runInChild(modulePath, exportName, args = [], opts = {}) {
  const { timeoutMs = 600_000, progress: onProgress = progress, execArgv = [], env = {} } = opts;
  const file =
    modulePath instanceof URL || String(modulePath).startsWith('file:')
      ? fileURLToPath(modulePath)
      : path.resolve(String(modulePath));
  const what = `${path.basename(file)}#${exportName}`;

  return new Promise((resolve, reject) => {
    const child = fork(RUNNER, [], {
      execArgv,
      env: { ...process.env, ...env, [CHILD_ENV]: '1' },
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    });
    let stderrTail = '';
    let settled = false;
    /** @param {() => void} fn */
    const settle = (fn) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(() => {
      settle(() => reject(new Error(`child ${what} timed out after ${timeoutMs} ms (killed)`)));
      child.kill('SIGKILL');
    }, timeoutMs);

    child.stderr?.on('data', (chunk) => {
      process.stderr.write(chunk);
      stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL);
    });
    child.on('message', (/** @type {any} */ m) => {
      if (m?.type === 'progress') onProgress(m.msg);
      else if (m?.type === 'result') {
        settle(() => resolve(m.result));
      } else if (m?.type === 'error') {
        const err = new Error(`child ${what} threw: ${m.message}`, { cause: m.stack });
        settle(() => reject(err));
      }
    });
    child.on('error', (err) => settle(() => reject(new Error(`child ${what} failed to start: ${err.message}`))));
    // 'close', not 'exit': it comes after the IPC channel has delivered every message.
    child.on('close', (code, signal) =>
      settle(() =>
        reject(
          new Error(
            `child ${what} exited (${signal ?? `code ${code}`}) without a result` +
              (stderrTail ? `; stderr:\n${stderrTail.trim()}` : ''),
          ),
        ),
      ),
    );
    child.send({ file, exportName, args });
  });
}
