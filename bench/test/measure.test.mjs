import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import {
  cpuMeter,
  createProgress,
  keepInFlight,
  medianRun,
  peakRssMiB,
  runInChild,
  summarize,
  timeFn,
} from '../lib/measure.mjs';

const CHILD = new URL('../test-fixtures/child.mjs', import.meta.url);
const spin = (/** @type {number} */ ms) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

test('runInChild returns the export’s value with the child’s pid, RSS and CPU', async () => {
  const r = await runInChild(CHILD, 'add', [2, 3]);
  assert.equal(r.value, 5);
  assert.ok(r.peakRssMiB > 10 && r.peakRssMiB < 1024, `peak RSS ${r.peakRssMiB} MiB`);
  assert.ok(r.wallMs >= 0 && r.cpuMs >= 0 && r.coresUsed >= 0);
});

test('runInChild: async export, structured-clone values, progress forwarded to the parent', async () => {
  /** @type {string[]} */
  const lines = [];
  /** @type {import('../lib/measure.mjs').ChildResult<any>} */
  const r = await runInChild(CHILD.pathname, 'withProgress', [3], { progress: (m) => lines.push(m) });
  assert.notEqual(r.value.pid, process.pid, 'ran in another process');
  assert.equal(r.value.big, 2n ** 64n);
  assert.deepEqual(r.value.arr, new Float64Array([1.5, 2.5]));
  assert.deepEqual(lines, ['step 0', 'step 1', 'step 2']);
});

test('runInChild passes env to the child', async () => {
  const r = await runInChild(CHILD, 'env', ['OFFTHREAD_TEST_VAR'], { env: { OFFTHREAD_TEST_VAR: 'yes' } });
  assert.equal(r.value, 'yes');
});

test('runInChild rejects when the export throws, with the child’s message', async () => {
  await assert.rejects(runInChild(CHILD, 'fail', ['boom 42']), /child child\.mjs#fail threw: boom 42/);
});

test('runInChild rejects on a missing export', async () => {
  await assert.rejects(runInChild(CHILD, 'nope'), /no exported function 'nope'/);
});

test('runInChild rejects on timeout and kills the child', async () => {
  const t0 = performance.now();
  await assert.rejects(runInChild(CHILD, 'hang', [], { timeoutMs: 300 }), /timed out after 300 ms/);
  assert.ok(performance.now() - t0 < 5000);
});

test('runInChild rejects when the child exits without an answer, with its stderr', async () => {
  await assert.rejects(runInChild(CHILD, 'crash'), /exited \(code 3\) without a result; stderr:\nabout to crash/);
});

test('timeFn: a ~2 ms call runs at least minIterations, samples in ns', async () => {
  const r = await timeFn(() => spin(2), { minTime: 20, minIterations: 5, warmup: 0 });
  assert.ok(r.samples.length >= 5, `${r.samples.length} samples`);
  assert.equal(r.batch, 1);
  assert.ok(r.median >= 1.9e6 && r.median < 50e6, `median ${r.median} ns`);
  assert.ok(r.p99 >= r.median && r.max >= r.p99 && r.min <= r.median);
  assert.ok(Math.abs(r.opsPerSec - 1e9 / r.median) < 1e-6 * r.opsPerSec);
});

test('timeFn: a long call does not run more than minIterations once minTime is spent', async () => {
  let calls = 0;
  const r = await timeFn(
    () => {
      calls++;
      spin(60);
    },
    { minTime: 10, minIterations: 2, warmup: 0 },
  );
  assert.equal(r.samples.length, 2);
  assert.equal(calls, 3, 'one probe call + two timed calls');
});

test('timeFn: a tiny call is batched so that maxIterations samples fill minTime', async () => {
  let x = 0;
  const t0 = performance.now();
  const r = await timeFn(() => (x += Math.sqrt(x + 1)), { minTime: 300, maxIterations: 50, warmup: 20 });
  const elapsed = performance.now() - t0;
  assert.ok(r.samples.length >= 5 && r.samples.length <= 50, `${r.samples.length} samples`);
  assert.ok(r.batch > 1000, `batch ${r.batch}`);
  assert.equal(r.calls, r.samples.length * r.batch);
  assert.ok(r.median < 1000, `median ${r.median} ns per call`);
  // Aimed at 300 ms / 50 = 6 ms per sample; the batch is sized from a short warm-up on a
  // shared machine, so accept anything well above the 20 µs floor.
  assert.ok(r.batch * r.median >= 1e6, `sample length ${(r.batch * r.median) / 1e6} ms`);
  assert.ok(elapsed >= 50 && elapsed < 5000, `took ${elapsed} ms`);
});

test('timeFn: maxIterations caps the samples before minTime', async () => {
  const t0 = performance.now();
  const r = await timeFn(() => spin(0.2), { minTime: 60_000, maxIterations: 30, warmup: 0, batch: 1 });
  assert.equal(r.samples.length, 30);
  assert.equal(r.calls, 30);
  assert.ok(performance.now() - t0 < 10_000);
});

test('timeFn: async functions are awaited', async () => {
  const r = await timeFn(() => new Promise((resolve) => setTimeout(resolve, 2)), {
    minTime: 20,
    minIterations: 3,
    warmup: 0,
    batch: 1,
  });
  assert.ok(r.median >= 1.5e6, `median ${r.median} ns`);
});

test('timeFn: a throwing function rejects; bad options are refused', async () => {
  await assert.rejects(
    timeFn(() => {
      throw new Error('kaput');
    }),
    /kaput/,
  );
  await assert.rejects(
    timeFn(() => 0, { minIterations: 10, maxIterations: 5 }),
    RangeError,
  );
});

test('cpuMeter: a busy loop uses at most one core, sleeping far less', async () => {
  // The machines are shared (and node --test runs files in parallel), so a busy loop
  // may get well under a full core: assert the bounds and the ordering, not "≈ 1".
  const m = cpuMeter();
  m.start();
  spin(150);
  const busy = m.stop();
  assert.ok(busy.wallMs >= 150);
  assert.ok(busy.coresUsed > 0.05 && busy.coresUsed < 1.3, `busy cores ${busy.coresUsed}`);
  assert.equal(busy.coresUsed, busy.cpuMs / busy.wallMs);
  assert.ok(Math.abs(busy.cpuMs - (busy.userMs + busy.systemMs)) < 1e-9);
  m.start();
  await new Promise((resolve) => setTimeout(resolve, 150));
  const idle = m.stop();
  assert.ok(idle.cpuMs < busy.cpuMs / 2, `idle ${idle.cpuMs} ms vs busy ${busy.cpuMs} ms of CPU`);
  assert.throws(() => cpuMeter().stop(), /before start/);
});

test('peakRssMiB grows with a large allocation', () => {
  const before = peakRssMiB();
  const buf = Buffer.alloc(64 * 2 ** 20, 1);
  assert.ok(peakRssMiB() >= before + 50, `${before} → ${peakRssMiB()}`);
  assert.equal(buf[0], 1);
});

test('createProgress writes one line per step with the elapsed seconds', () => {
  let out = '';
  const p = createProgress({ stream: { write: (s) => (out += s) }, start: performance.now() - 12_345 });
  p('pi: js 10⁶');
  assert.match(out, /^\[ {3}12\.3 s\] pi: js 10⁶\n$/);
});

test("medianRun: the whole run whose wall time is summarize's p50; the input is not reordered", () => {
  for (const walls of [[30], [30, 10], [30, 10, 20], [40, 10, 30, 20], [5, 50, 15, 45, 25]]) {
    const runs = walls.map((wallMs, i) => ({ wallMs, i }));
    const mid = medianRun(runs);
    assert.equal(mid.wallMs, summarize(walls).p50, String(walls));
    assert.equal(runs[mid.i], mid, 'one of the runs itself, not a copy');
    assert.deepEqual(
      runs.map((r) => r.wallMs),
      walls,
    );
  }
});

test('summarize: nearest-rank percentiles and mean, unsorted input, empty input', () => {
  const values = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 … 1
  assert.deepEqual(summarize(values), { count: 100, min: 1, p50: 50, p95: 95, p99: 99, max: 100, mean: 50.5 });
  assert.deepEqual(summarize([7]), { count: 1, min: 7, p50: 7, p95: 7, p99: 7, max: 7, mean: 7 });
  const empty = summarize([]);
  assert.equal(empty.count, 0);
  assert.ok(Number.isNaN(empty.p99) && Number.isNaN(empty.mean));
});

test('keepInFlight: never more than inFlight at once, every call counted, stops at total', async () => {
  let now = 0;
  let most = 0;
  const call = async () => {
    most = Math.max(most, ++now);
    await new Promise((r) => setImmediate(r));
    now--;
  };
  const r = await keepInFlight(call, 10, 250, 60_000);
  assert.equal(r.tasks, 250);
  assert.equal(most, 10);
  assert.ok(r.p50Us <= r.p99Us && r.tasksPerSec > 0, JSON.stringify(r));
});

test('keepInFlight: the cap ends the run early, with what completed', async () => {
  const call = () => new Promise((r) => setTimeout(r, 5));
  const r = await keepInFlight(call, 1, 1_000_000, 30);
  assert.ok(r.tasks >= 1 && r.tasks < 100, JSON.stringify(r));
});
