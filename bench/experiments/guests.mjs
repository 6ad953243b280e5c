// Guests (docs/guest-abi.md) side by side with Extism (@extism/extism running a plugin
// built with extism-pdk, bench/guests/extism-reflect) in one process and one run:
// empty call and 64 KiB round trips, calls/s at 100 in flight, fanout of 1 MiB to 8
// guests with its copies counted (a copy per guest, and read in place from one shared
// memory where the engine has multi-memory), CPU-bound throughput on 1 vs 2 workers,
// and the cost of stopping a runaway guest.
//
//   npm run bench -- guests [--quick]
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import createPlugin from '@extism/extism';
import { guests } from 'offthread';
import * as msg from '../../packages/offthread/dist/schema/generated/fixtures/guests.js';
import { summarize } from '../lib/measure.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const wasmDir = `${root}target/wasm32-unknown-unknown/release/`;

/** The Extism plugin is built here, not by setup: only this benchmark needs it. */
function extismPlugin(progress) {
  const path = `${wasmDir}extism_reflect.wasm`;
  if (!existsSync(path)) {
    progress('guests: building the Extism plugin (extism-pdk, first run only)');
    const r = spawnSync(
      'cargo',
      [
        'build',
        '--quiet',
        '--release',
        '--target',
        'wasm32-unknown-unknown',
        '--manifest-path',
        'bench/guests/extism-reflect/Cargo.toml',
        '--target-dir',
        'target',
      ],
      { cwd: root, stdio: 'inherit' },
    );
    if (r.status !== 0) throw new Error('cannot build bench/guests/extism-reflect');
  }
  return readFileSync(path);
}

/** Per-call latency of `n` sequential awaited calls (µs). */
async function latency(fn, n) {
  // Warm-up: at least min(200, n) calls and 1 s (at most 10,000 calls), so V8's tiers (JS and wasm) are in
  // place for every runtime alike; 200 calls alone left the first thousands of timed
  // calls on slower code (p99 158 µs in that window, 58–90 µs after, same process).
  const end = performance.now() + 1000;
  let warmups = 0;
  while (warmups < Math.min(200, n) || (performance.now() < end && warmups < 10_000)) {
    await fn();
    warmups++;
  }
  const us = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    us[i] = (performance.now() - t) * 1000;
  }
  return { ...summarize(us), warmups };
}

/** Calls/s with `depth` calls in flight for `ms` (each finished call starts the next). */
async function throughput(fn, depth, ms) {
  let done = 0;
  const end = performance.now() + ms;
  const t0 = performance.now();
  const lane = async () => {
    while (performance.now() < end) {
      await fn();
      done++;
    }
  };
  await Promise.all(Array.from({ length: depth }, lane));
  return done / ((performance.now() - t0) / 1000);
}

/** A queue in front of an Extism plugin: it runs one call at a time ("plugin is not reentrant"). */
function serialised(plugin) {
  let tail = Promise.resolve();
  return (name, input) => {
    const run = tail.then(() => plugin.call(name, input));
    tail = run.then(
      () => {},
      () => {},
    );
    return run;
  };
}

const u64le = (n) => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
  return b;
};

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const calls = ctx.quick ? 2_000 : 10_000;
  const bigCalls = ctx.quick ? 300 : 1_500;
  const window = ctx.quick ? 1_000 : 3_000;
  const rounds = ctx.quick ? 20_000_000 : 50_000_000;
  const basic = readFileSync(`${wasmDir}guest_basic.wasm`);
  const extism = extismPlugin(ctx.progress);
  const payload = msg.encodeBlob({ data: new Uint8Array(65_536).fill(7) });
  const raw64k = new Uint8Array(65_536).fill(7);

  const host = await guests.load([{ name: 'basic', bytes: basic }], { threads: 2 });
  const inWorker = await createPlugin({ wasm: [{ data: extism }] }, { useWasi: false, runInWorker: true });
  // An in-thread Extism plugin (1.0.3) fails every call after its 32,767th ("cannot assign
  // to this block"): each in-thread row gets a fresh one.
  let inThread = await createPlugin({ wasm: [{ data: extism }] }, { useWasi: false, runInWorker: false });
  const ext = { worker: serialised(inWorker), thread: serialised(inThread) };
  const freshInThread = async () => {
    await inThread.close();
    inThread = await createPlugin({ wasm: [{ data: extism }] }, { useWasi: false, runInWorker: false });
    ext.thread = serialised(inThread);
  };

  const rows = [];
  const add = (row) => {
    rows.push(row);
    ctx.progress(
      `guests: ${row.runtime} ${row.case}: p50 ${row.p50Us?.toFixed(1)} µs, ${Math.round(row.opsPerSec)} calls/s`,
    );
  };
  const lat = async (runtime, name, fn, n) => {
    const s = await latency(fn, n);
    add({ runtime, case: name, p50Us: s.p50, p99Us: s.p99, opsPerSec: 1e6 / s.mean });
  };

  await lat('offthread guests', 'empty call', () => host.call('echo', 'empty'), calls);
  // The same call a message each way (the path without shared memory), for the mailbox's gain.
  const posted = await guests.load([{ name: 'basic', bytes: basic }], { threads: 2, mailbox: false });
  await lat('offthread guests (mailbox: false)', 'empty call', () => posted.call('echo', 'empty'), calls);
  await posted.close();
  await lat('extism (runInWorker)', 'empty call', () => ext.worker('empty'), calls);
  await lat('extism (in-thread)', 'empty call', () => ext.thread('empty'), calls);
  await lat('offthread guests', '64 KiB round trip', () => host.call('echo', 'echo', payload), bigCalls);
  await lat('extism (runInWorker)', '64 KiB round trip', () => ext.worker('reflect', raw64k), bigCalls);
  await freshInThread();
  await lat('extism (in-thread)', '64 KiB round trip', () => ext.thread('reflect', raw64k), bigCalls);

  const failures = [];
  const tput = async (runtime, fn) => {
    let ops = Number.NaN;
    try {
      ops = await throughput(fn, 100, window);
    } catch (err) {
      failures.push(`${runtime}, 100 in flight: ${err.message}`);
      ctx.progress(`guests: ${runtime} failed: ${err.message}`);
    }
    add({ runtime, case: 'empty calls, 100 in flight', p50Us: undefined, p99Us: undefined, opsPerSec: ops });
    return ops;
  };
  const ourTput = await tput('offthread guests', () => host.call('echo', 'empty'));
  const extTput = await tput('extism (runInWorker)', () => ext.worker('empty'));
  await freshInThread();
  await tput('extism (in-thread)', () => ext.thread('empty'));

  // Runaway guest: a `loop {}` with a 50 ms timeout; meanwhile the other worker serves.
  // Baseline: the same serving beside a well-behaved call of about 50 ms (crunch rounds,
  // timed here), so the ratio isolates what the runaway and its stop cost the others.
  const probeRounds = 5_000_000n;
  const p0 = performance.now();
  await host.call('crunch', 'work', msg.encodeCount({ value: probeRounds }));
  const legit50 = msg.encodeCount({ value: BigInt(Math.round((50 * Number(probeRounds)) / (performance.now() - p0))) });
  const stops = [];
  const serving = { runaway: { calls: 0, ms: 0 }, legit: { calls: 0, ms: 0 } };
  for (let i = 0; i < (ctx.quick ? 5 : 20); i++) {
    for (const kind of ['legit', 'runaway']) {
      const t = performance.now();
      let running = true;
      const other = (async () => {
        while (running) {
          await host.call('echo', 'empty');
          serving[kind].calls++;
        }
      })();
      if (kind === 'legit') await host.call('crunch', 'work', legit50);
      else {
        await host.call('echo', 'spin', null, { timeout: 50 }).catch((e) => {
          if (e.code !== 'ERR_TIMEOUT') throw e;
        });
        stops.push(performance.now() - t - 50);
      }
      running = false;
      await other;
      serving[kind].ms += performance.now() - t;
      await new Promise((r) => setTimeout(r, 100)); // a replaced worker starts
    }
  }
  const servedMeanwhile = serving.runaway.calls;
  const othersRatio = serving.runaway.calls / serving.runaway.ms / (serving.legit.calls / serving.legit.ms);
  const stop = summarize(stops);
  await host.close();

  // Fanout: 1 MiB to 8 exporters (the same module loaded 8 times), 2 workers, twice:
  // `checksum` with a copy in every guest (sharedInput: false, as before in-place reads
  // existed and as every guest gets on Node 20), and `checksum_in_place` (the same FNV,
  // read through offthread.input: in place from one shared memory where the engine has
  // multi-memory, else over the same copies), and `checksum` again where the input may be
  // read in place (the basic guest implements `scan::Export<InPlace>`: its generated typed
  // reader reads the input memory). Copies are counted from host.stats().
  const eight = Array.from({ length: 8 }, (_, i) => ({ name: `g${i}`, bytes: basic }));
  const mib = msg.encodeBlob({ data: Uint8Array.from({ length: 1 << 20 }, (_, i) => i & 0xff) });
  const fanN = ctx.quick ? 20 : 100;
  // The two hosts take turns, fanout by fanout, so a load that comes and goes on a
  // shared machine weighs on both rows alike; each gets latency()'s warm-up first.
  const rowsOf = [
    { fn: 'checksum', host: await guests.load(eight, { threads: 2, sharedInput: false }), us: [] },
    { fn: 'checksum_in_place', host: await guests.load(eight, { threads: 2 }), us: [] },
    { fn: 'checksum', host: await guests.load(eight, { threads: 2 }), us: [] },
  ];
  const before = rowsOf.map((r) => r.host.stats());
  const warmups = [];
  for (const r of rowsOf) warmups.push((await latency(() => r.host.fanout('scan', r.fn, mib), 1)).warmups + 1);
  for (let i = 0; i < fanN; i++) {
    for (const r of rowsOf) {
      const t = performance.now();
      await r.host.fanout('scan', r.fn, mib);
      r.us.push((performance.now() - t) * 1000);
    }
  }
  const [copying, inPlace, typed] = await Promise.all(
    rowsOf.map(async (r, k) => {
      const after = r.host.stats();
      const fanCalls = fanN + (warmups[k] ?? 0);
      const per = {
        sharedBytes: (after.sharedBytes - (before[k]?.sharedBytes ?? 0)) / fanCalls,
        copiedIn: (after.copiedIn - (before[k]?.copiedIn ?? 0)) / fanCalls,
      };
      await r.host.close();
      const lat = summarize(Float64Array.from(r.us));
      return { lat, per, copies: (per.sharedBytes + per.copiedIn) / mib.length, inPlace: after.sharedInput };
    }),
  );
  const fanLat = copying.lat;
  const perFanout = copying.per;
  const extPlugins = await Promise.all(
    eight.map(() => createPlugin({ wasm: [{ data: extism }] }, { useWasi: false, runInWorker: true })),
  );
  const mibRaw = new Uint8Array(1 << 20).fill(3);
  const extFan = await latency(
    () => Promise.all(extPlugins.map((p) => p.call('reflect', mibRaw))),
    ctx.quick ? 10 : 40,
  );
  for (const p of extPlugins) await p.close();
  add({
    runtime: 'offthread guests',
    case: 'fanout 1 MiB → 8 guests',
    p50Us: fanLat.p50,
    p99Us: fanLat.p99,
    opsPerSec: 1e6 / fanLat.mean,
  });
  add({
    // Labelled with what it did: without multi-memory (Node 20) the same guests get copies.
    runtime: inPlace.inPlace ? 'offthread guests (read in place)' : 'offthread guests (no multi-memory: copies)',
    case: `fanout 1 MiB → 8 guests, ${inPlace.copies.toFixed(0)} ${inPlace.copies === 1 ? 'copy' : 'copies'}`,
    p50Us: inPlace.lat.p50,
    p99Us: inPlace.lat.p99,
    opsPerSec: 1e6 / inPlace.lat.mean,
  });
  add({
    runtime: typed.inPlace
      ? 'offthread guests (typed reader in place)'
      : 'offthread guests (typed, no multi-memory: copies)',
    case: `fanout 1 MiB → 8 guests, ${typed.copies.toFixed(0)} ${typed.copies === 1 ? 'copy' : 'copies'}`,
    p50Us: typed.lat.p50,
    p99Us: typed.lat.p99,
    opsPerSec: 1e6 / typed.lat.mean,
  });
  add({
    runtime: 'extism (runInWorker)',
    case: 'fanout 1 MiB → 8 plugins',
    p50Us: extFan.p50,
    p99Us: extFan.p99,
    opsPerSec: 1e6 / extFan.mean,
  });

  // CPU-bound: 8 calls of `rounds` xorshift rounds on 1 and on 2 workers.
  const cpu = [];
  for (const threads of [1, 2]) {
    const h = await guests.load([{ name: 'basic', bytes: basic }], { threads });
    const work = msg.encodeCount({ value: BigInt(rounds) });
    await h.call('crunch', 'work', work);
    for (const timeout of [undefined, 60_000]) {
      const t = performance.now();
      await Promise.all(Array.from({ length: 8 }, () => h.call('crunch', 'work', work, { timeout })));
      const s = (performance.now() - t) / 1000;
      cpu.push({ runtime: 'offthread guests', threads, timeout: timeout ?? 'none', roundsPerSec: (8 * rounds) / s });
    }
    await h.close();
  }
  for (const plugins of [1, 2]) {
    const ps = await Promise.all(
      Array.from({ length: plugins }, () =>
        createPlugin({ wasm: [{ data: extism }] }, { useWasi: false, runInWorker: true }),
      ),
    );
    const queues = ps.map(serialised);
    await queues[0]('crunch', u64le(rounds));
    const t = performance.now();
    await Promise.all(Array.from({ length: 8 }, (_, i) => queues[i % plugins]('crunch', u64le(rounds))));
    const s = (performance.now() - t) / 1000;
    cpu.push({ runtime: 'extism (runInWorker)', threads: plugins, timeout: 'none', roundsPerSec: (8 * rounds) / s });
    for (const p of ps) await p.close();
  }
  await inWorker.close();
  await inThread.close();

  const find = (runtime, c) => rows.find((r) => r.runtime === runtime && r.case === c);
  const cpuAt = (runtime, threads, timeout = 'none') =>
    cpu.find((r) => r.runtime === runtime && r.threads === threads && r.timeout === timeout)?.roundsPerSec ?? NaN;
  const ours = (c) => find('offthread guests', c);
  const theirs = (c) => find('extism (runInWorker)', c);

  return {
    title: 'Guests: offthread vs Extism on the same work',
    params: { calls, bigCalls, window, rounds, extism: '@extism/extism 1.0.3, extism-pdk 1', threads: 2 },
    notes: [
      'Both run V8 WebAssembly. offthread: guests.load on 2 worker threads, calls are Promises, any number in flight. Extism: createPlugin(..., { runInWorker: true }) (off the loop, the ratios are against this) and in-thread for reference; a plugin runs one call at a time, so its calls go through a queue.',
      'offthread inputs are encoded `blob` messages (65,544 bytes for 64 KiB of data); Extism inputs are the raw bytes.',
      '@extism/extism 1.0.3 in-thread fails at its 32,768th call ("cannot assign to this block", measured here): each in-thread row gets a fresh plugin, and a row that makes more calls than that (100 in flight for the whole window) fails.',
      'Latency rows: one call in flight, after a warm-up of 1 s (at least 200 and at most 10,000 calls) for every runtime alike, so V8 has tiered up the JS and the wasm on both sides.',
      `Fanout of 1 MiB to 8 guests, a copy each (\`checksum\`, sharedInput: false): offthread wrote the input once into shared memory (${Math.round(perFanout.sharedBytes)} bytes per fanout) and copied it into each guest's own memory (${Math.round(perFanout.copiedIn)} bytes per fanout). Extism copies it into each plugin.`,
      inPlace.inPlace
        ? `Fanout of 1 MiB to 8 guests read in place (\`checksum_in_place\` through offthread.input, rewritten at load into i64.load from the imported input memory): ${Math.round(inPlace.per.sharedBytes)} bytes written once per fanout into one shared WebAssembly.Memory, ${Math.round(inPlace.per.copiedIn)} bytes copied into guests: ${inPlace.copies.toFixed(2)} copies per fanout, p50 ${(inPlace.lat.p50 / 1000).toFixed(2)} ms against ${(fanLat.p50 / 1000).toFixed(2)} ms with a copy each.`
        : `Fanout of 1 MiB to 8 guests through offthread.input: this engine has no multi-memory (${process.version}), so the guests got copies as before (${inPlace.copies.toFixed(2)} copies per fanout); the in-place row needs Node ≥ 22.`,
      `Runaway guest: \`loop {}\` with timeout 50 ms rejected ${stop.p50.toFixed(2)} ms after the deadline (p50; max ${stop.max.toFixed(2)} ms, ${stops.length} runs); the other worker served ${servedMeanwhile} empty calls meanwhile (${Math.round((serving.runaway.calls * 1000) / serving.runaway.ms)} calls/s, against ${Math.round((serving.legit.calls * 1000) / serving.legit.ms)} beside a well-behaved crunch call of about 50 ms).`,
      ...failures.map((f) => `Failed in this run: ${f}.`),
      'Interruption costs nothing inside the guest: a timeout terminates the worker (no epoch or fuel instrumentation), so a CPU-bound call with a timeout runs the same code as one without.',
    ],
    tables: [
      {
        title: 'Calls',
        columns: [
          { key: 'runtime', label: 'Runtime' },
          { key: 'case', label: 'Case' },
          { key: 'p50Us', label: 'p50 µs', format: 'sig3' },
          { key: 'p99Us', label: 'p99 µs', format: 'sig3' },
          { key: 'opsPerSec', label: 'calls/s', format: 'ops' },
        ],
        rows,
      },
      {
        title: 'CPU-bound guest (8 calls of xorshift rounds)',
        columns: [
          { key: 'runtime', label: 'Runtime' },
          { key: 'threads', label: 'workers / plugins', format: 'int' },
          { key: 'timeout', label: 'timeout' },
          { key: 'roundsPerSec', label: 'rounds/s', format: 'ops' },
        ],
        rows: cpu,
      },
    ],
    charts: [
      {
        title: 'CPU-bound guest on 1 and 2 workers (plugins for Extism)',
        subtitle: 'xorshift rounds per second over 8 calls; higher is better',
        x: { field: 'threads', label: 'workers / plugins' },
        y: { field: 'roundsPerSec', label: 'rounds/s' },
        series: 'series',
        data: cpu.map((r) => ({ ...r, series: `${r.runtime}${r.timeout === 'none' ? '' : ', with timeout'}` })),
      },
    ],
    ratios: [
      { label: 'empty guest call p50 (offthread)', value: ours('empty call').p50Us, target: 20, op: '<=', unit: 'µs' },
      { label: 'empty guest call p99 (offthread)', value: ours('empty call').p99Us, target: 100, op: '<=', unit: 'µs' },
      {
        label: '64 KiB round trip: Extism (runInWorker) p50 / offthread p50',
        value: theirs('64 KiB round trip').p50Us / ours('64 KiB round trip').p50Us,
        target: 10,
      },
      { label: 'calls/s at 100 in flight: offthread / Extism (runInWorker)', value: ourTput / extTput, target: 10 },
      {
        label:
          'fanout 1 MiB → 8 through offthread.input: copies of the payload per fanout (shared write + per-guest copies)',
        value: inPlace.copies,
        target: 1,
        op: '<=',
      },
      {
        label: 'fanout 1 MiB → 8, the generated typed reader (`checksum`): copies of the payload per fanout',
        value: typed.copies,
        target: 1,
        op: '<=',
      },
      {
        label: 'runaway guest stopped after its timeout (p50 delay)',
        value: stop.p50,
        target: 5,
        op: '<=',
        unit: 'ms',
      },
      {
        label: 'empty calls/s on the other worker during a runaway / beside a well-behaved 50 ms call',
        value: othersRatio,
        target: 0.9,
      },
      {
        label: 'CPU-bound guest: 2 workers / 1 worker',
        value: cpuAt('offthread guests', 2) / cpuAt('offthread guests', 1),
        target: 1.7,
      },
      {
        label: 'interruption overhead: rounds/s with a timeout / without (2 workers)',
        value: cpuAt('offthread guests', 2, 60_000) / cpuAt('offthread guests', 2),
        target: 0.9,
      },
    ],
    raw: {
      stops,
      perFanout,
      inPlace: { ...inPlace.per, copies: inPlace.copies, inPlace: inPlace.inPlace },
      typedInPlace: { ...typed.per, copies: typed.copies, inPlace: typed.inPlace },
      serving,
      cpu,
    },
  };
}
