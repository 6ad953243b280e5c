#!/usr/bin/env node
// Soak: `npm run soak -- --minutes N [--rate R] [--concurrency C]`. Starts the service
// (src/main.mjs, its own process, 127.0.0.1 only) and sends it a mix of good and bad
// requests at about R per second for N minutes, sampling its RSS, heap, active handles
// and open file descriptors every few seconds. Reports the growth after the warm-up (the
// first fifth of the run, at least 20 s) and every good request that did not get its
// expected answer; writes bench/results/soak.{json,md}. Exit code 1 if a good request
// failed or the service did not stop cleanly. `--overload-seconds S` adds an overload
// run on a fresh service: its capacity for one request kind, then S seconds at 10× that
// (accepted requests' latency, 503 rate, loop-delay max).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import offthread from 'offthread';
import { SERVICE_NODE_ARGS, spawnService } from '../test-support/process.mjs';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '2' },
    rate: { type: 'string', default: '150' },
    concurrency: { type: 'string', default: '16' },
    'sample-seconds': { type: 'string', default: '5' },
    'overload-seconds': { type: 'string', default: '0' },
    // Where soak.{json,md} go (default bench/results/): lets two configurations run side by side.
    out: { type: 'string' },
    // Flags for the service's node (repeatable); given, they replace the ones it is run
    // with (SERVICE_NODE_ARGS). V8's default sizing: --node-arg=--min-semi-space-size=0.
    'node-arg': { type: 'string', multiple: true },
  },
});
const nodeArgs = values['node-arg'] ?? SERVICE_NODE_ARGS;
const minutes = Number(values.minutes);
const rate = Number(values.rate);
const concurrency = Number(values.concurrency);
const sampleMs = Number(values['sample-seconds']) * 1000;
const overloadMs = Number(values['overload-seconds']) * 1000;
for (const [name, v] of Object.entries({ minutes, rate, concurrency, sampleMs })) {
  if (!Number.isFinite(v) || v <= 0) {
    console.error(`soak: --${name} must be a positive number`);
    process.exit(2);
  }
}
const durationMs = minutes * 60_000;
// A fifth of the run, at least 20 s — but never more than half, so a short run still
// has samples after warm-up to compare (a 0.3-minute run used to crash on none).
const warmupMs = Math.min(Math.max(20_000, durationMs / 5), durationMs / 2);
const RESULTS = values.out
  ? pathToFileURL(`${resolve(values.out)}/`)
  : new URL('../../../bench/results/', import.meta.url);

const TEXTS = Array.from({ length: 16 }, (_, i) => `soak-${i}`);
const DIGESTS = new Map(TEXTS.map((t) => [t, offthread.md5.iterateReference(t, 2000)]));

/**
 * The mix, by weight: good requests (each with a check of its answer) and bad ones (each
 * with the status it must get). Raw ones go over their own socket.
 * @type {Array<{ name: string, weight: number, good: boolean, path?: string, raw?: string, status: number, check?: (body: string, i: number) => boolean }>}
 */
const MIX = [
  {
    name: 'md5',
    weight: 20,
    good: true,
    status: 200,
    path: '/md5?text=TEXT&rounds=2000',
    check: (b, i) => JSON.parse(b).digest === DIGESTS.get(TEXTS[i % TEXTS.length]),
  },
  {
    name: 'qr',
    weight: 10,
    good: true,
    status: 200,
    path: '/qr?text=TEXT',
    check: (b) => JSON.parse(b).result.startsWith('data:image/png;base64,'),
  },
  {
    name: 'pi',
    weight: 10,
    good: true,
    status: 200,
    path: '/pi?samples=20000&seed=7',
    check: (b) => JSON.parse(b).samples === 20000,
  },
  { name: 'static', weight: 10, good: true, status: 200, path: '/static/bench.html', check: (b) => b.length === 8673 },
  { name: 'health', weight: 5, good: true, status: 200, path: '/health', check: (b) => JSON.parse(b).ok === true },
  { name: 'bad number', weight: 8, good: false, status: 400, path: '/md5?text=a&rounds=0x10' },
  { name: 'bad rounds', weight: 5, good: false, status: 400, path: '/md5?text=a&rounds=0' },
  { name: 'bad escape', weight: 5, good: false, status: 400, path: '/%ZZ' },
  { name: 'traversal', weight: 5, good: false, status: 404, path: '/static/%2e%2e/src/server.mjs' },
  { name: 'no route', weight: 5, good: false, status: 404, path: '/nope' },
  { name: 'event-loop row', weight: 3, good: false, status: 404, path: '/md5/js?text=a&rounds=10000000' },
  {
    name: 'oversize header',
    weight: 3,
    good: false,
    status: 431,
    raw: `GET /health HTTP/1.1\r\nHost: x\r\nX-A: ${'a'.repeat(20_000)}\r\n\r\n`,
  },
  { name: 'malformed', weight: 3, good: false, status: 400, raw: 'FOO / HTTP/1.1\r\nHost: x\r\n\r\n' },
  { name: 'no host', weight: 3, good: false, status: 400, raw: 'GET /health HTTP/1.1\r\n\r\n' },
  {
    name: 'connect',
    weight: 2,
    good: false,
    status: 404,
    raw: 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
  },
  { name: 'aborted', weight: 3, good: false, status: 0, path: '/md5?text=abort&rounds=200000' },
];
const totalWeight = MIX.reduce((s, m) => s + m.weight, 0);
/** Deterministic pick for request i (a fixed interleaving of the mix). */
function pick(/** @type {number} */ i) {
  let x = (i * 7919) % totalWeight;
  for (const m of MIX) {
    if (x < m.weight) return m;
    x -= m.weight;
  }
  return MIX[0];
}

/** Starts main.mjs on a free loopback port; resolves { child, url, exit }. */
function startService(/** @type {Record<string, string>} */ env = {}) {
  return spawnService([], { LOG_LEVEL: 'warn', ...env }, nodeArgs);
}

/** @returns {Promise<{ status: number, body: string } | { error: string }>} */
function httpGet(
  /** @type {string} */ url,
  /** @type {http.Agent | false} */ agent,
  /** @type {number} */ abortAfterMs = 0,
) {
  return new Promise((resolve) => {
    const req = http.get(url, { agent, timeout: 30_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (e) => resolve({ error: /** @type {any} */ (e).code ?? e.message }));
    });
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', (e) => resolve({ error: /** @type {any} */ (e).code ?? e.message }));
    if (abortAfterMs) setTimeout(() => req.destroy(new Error('aborted on purpose')), abortAfterMs);
  });
}

/** One raw request on its own socket; resolves the status of the first response line. */
function rawRequest(/** @type {number} */ port, /** @type {string} */ data) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(data));
    let head = '';
    const timer = setTimeout(() => socket.destroy(), 10_000);
    socket.setEncoding('latin1');
    socket.on('data', (c) => {
      head += c;
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0));
    });
  });
}

/** The service's own figures: /proc for RSS and fds, /metrics for heap and handles. */
async function sample(
  /** @type {number} */ pid,
  /** @type {string} */ base,
  /** @type {http.Agent} */ agent,
  /** @type {number} */ t0,
) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  const fds = readdirSync(`/proc/${pid}/fd`).length;
  const m = await httpGet(`${base}/metrics`, agent);
  const metric = (/** @type {string} */ name) => {
    if (!('body' in m)) return Number.NaN;
    const line = m.body.split('\n').find((l) => l.startsWith(`${name} `));
    return line ? Number(line.slice(name.length + 1)) : Number.NaN;
  };
  return {
    atS: (performance.now() - t0) / 1000,
    rssMiB: rssKiB / 1024,
    heapUsedMiB: metric('nodejs_heap_size_used_bytes') / 2 ** 20,
    // What V8 has reserved for the heap, and memory outside it (Buffers, ArrayBuffers):
    // with RSS they say where growth is, JS objects or native allocations.
    heapTotalMiB: metric('nodejs_heap_size_total_bytes') / 2 ** 20,
    externalMiB: metric('nodejs_external_memory_bytes') / 2 ** 20,
    handles: metric('nodejs_active_handles_total'),
    fds,
  };
}

/** Least-squares slope of y over x. */
function slope(/** @type {number[]} */ xs, /** @type {number[]} */ ys) {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return den ? num / den : 0;
}
const median = (/** @type {number[]} */ a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

async function main() {
  const service = startService();
  const base = /** @type {string} */ (await service.url);
  const port = Number(new URL(base).port);
  const pid = /** @type {number} */ (service.child.pid);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const sampler = new http.Agent({ keepAlive: true, maxSockets: 1 });
  console.log(
    `soak: ${base} (pid ${pid}), ${minutes} min at ~${rate} req/s, ${concurrency} in flight at most, warm-up ${(warmupMs / 1000).toFixed(0)} s`,
  );

  /** @type {Record<string, { sent: number, ok: number, wrong: number, statuses: Record<string, number> }>} */
  const byKind = Object.fromEntries(MIX.map((m) => [m.name, { sent: 0, ok: 0, wrong: 0, statuses: {} }]));
  /** @type {string[]} */
  const goodFailures = [];
  const t0 = performance.now();
  const samples = [await sample(pid, base, sampler, t0)];
  let next = 0;
  let inFlight = 0;

  const one = async (/** @type {number} */ i) => {
    const m = pick(i);
    const k = byKind[m.name];
    k.sent++;
    let status;
    let body = '';
    if (m.raw) status = await rawRequest(port, m.raw);
    else {
      const path = /** @type {string} */ (m.path).replace('TEXT', TEXTS[i % TEXTS.length]);
      // 'aborted': the client goes away mid-request (its pool job is cancelled).
      const r = await httpGet(`${base}${path}`, m.status === 0 ? false : agent, m.status === 0 ? 5 : 0);
      if ('error' in r) status = m.status === 0 ? 0 : r.error;
      else ({ status, body } = r);
    }
    k.statuses[status] = (k.statuses[status] ?? 0) + 1;
    let right = status === m.status || (m.status === 0 && status === 200);
    if (right && m.check) {
      try {
        right = m.check(body, i);
      } catch {
        right = false;
      }
    }
    if (right) k.ok++;
    else {
      k.wrong++;
      if (m.good && goodFailures.length < 20) goodFailures.push(`${m.name} #${i}: ${status} ${body.slice(0, 120)}`);
    }
  };

  // Open loop at `rate`, capped at `concurrency` in flight (beyond it requests wait: the
  // figures are about memory and correctness over time, not throughput).
  const interval = 1000 / rate;
  let nextSample = performance.now() + sampleMs;
  let lastReport = performance.now();
  while (performance.now() - t0 < durationMs) {
    const now = performance.now();
    if (now >= nextSample) {
      samples.push(await sample(pid, base, sampler, t0));
      nextSample += sampleMs;
      if (now - lastReport >= 30_000) {
        const s = samples.at(-1);
        console.log(
          `soak: ${s?.atS.toFixed(0)} s, ${next} requests, RSS ${s?.rssMiB.toFixed(1)} MiB, handles ${s?.handles}, fds ${s?.fds}`,
        );
        lastReport = now;
      }
    }
    if (inFlight >= concurrency) {
      await new Promise((r) => setTimeout(r, 1));
      continue;
    }
    const due = t0 + next * interval;
    if (due > now) {
      await new Promise((r) => setTimeout(r, Math.min(due - now, 50)));
      continue;
    }
    inFlight++;
    one(next++).finally(() => inFlight--);
  }
  const loadSeconds = (performance.now() - t0) / 1000;
  const drainDeadline = performance.now() + 30_000;
  while (inFlight > 0 && performance.now() < drainDeadline) await new Promise((r) => setTimeout(r, 10));
  // At rest (nothing in flight): reported apart, the growth figures compare samples under load.
  const atRest = await sample(pid, base, sampler, t0);
  agent.destroy();
  sampler.destroy();

  service.child.kill('SIGTERM');
  const exit = /** @type {{ code: number | null, signal: string | null }} */ (await service.exit);

  // Growth after warm-up: the median of the last three samples against the median of the
  // first three after the warm-up, and the least-squares slope over all of them.
  const after = samples.filter((s) => s.atS * 1000 >= warmupMs);
  /** @param {'rssMiB' | 'heapUsedMiB' | 'heapTotalMiB' | 'externalMiB' | 'handles' | 'fds'} key */
  const growth = (key) => {
    const first = median(after.slice(0, 3).map((s) => s[key]));
    const last = median(after.slice(-3).map((s) => s[key]));
    return {
      atWarmup: first,
      atEnd: last,
      growthPct: ((last - first) / first) * 100,
      slopePerMin: slope(
        after.map((s) => s.atS / 60),
        after.map((s) => s[key]),
      ),
    };
  };
  // Also the end against the most RSS held during warm-up: V8 may shrink its heap late in
  // warm-up (a memory-reducer collection) and regrow it to the same plateau, which the
  // median-based growth above reads as growth; a leak grows past what was already held.
  const warmupPeakMiB = Math.max(...samples.filter((s) => s.atS * 1000 < warmupMs).map((s) => s.rssMiB));
  const rssEndMiB = median(after.slice(-3).map((s) => s.rssMiB));
  const pastWarmupPeak = { warmupPeakMiB, pct: ((rssEndMiB - warmupPeakMiB) / warmupPeakMiB) * 100 };
  const good = MIX.filter((m) => m.good).map((m) => byKind[m.name]);
  const bad = MIX.filter((m) => !m.good).map((m) => byKind[m.name]);
  const result = {
    date: new Date().toISOString(),
    machine: { cpus: os.availableParallelism(), node: process.version },
    config: {
      minutes,
      rate,
      concurrency,
      sampleSeconds: sampleMs / 1000,
      warmupSeconds: warmupMs / 1000,
      nodeArgs,
    },
    requests: next,
    achievedRate: next / loadSeconds,
    good: { sent: good.reduce((s, k) => s + k.sent, 0), errors: good.reduce((s, k) => s + k.wrong, 0) },
    bad: { sent: bad.reduce((s, k) => s + k.sent, 0), unexpected: bad.reduce((s, k) => s + k.wrong, 0) },
    byKind,
    goodFailures,
    growth: {
      rssMiB: growth('rssMiB'),
      heapUsedMiB: growth('heapUsedMiB'),
      heapTotalMiB: growth('heapTotalMiB'),
      externalMiB: growth('externalMiB'),
      handles: growth('handles'),
      fds: growth('fds'),
    },
    pastWarmupPeak,
    atRest,
    exit,
    samples,
  };
  if (overloadMs > 0) {
    console.log(`soak: overload run (${overloadMs / 1000} s at 10× capacity)`);
    /** @type {any} */ (result).overload = await overload();
  }
  writeFileSync(new URL('soak.json', RESULTS), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(new URL('soak.md', RESULTS), markdown(result));
  console.log(markdown(result));
  const failed = result.good.errors > 0 || exit.code !== 0 || /** @type {any} */ (result).overload?.exit.code > 0;
  if (failed)
    console.error(`soak: FAILED (${result.good.errors} good requests failed, exit ${exit.code})\n${service.output()}`);
  process.exit(failed ? 1 : 0);
}

const OVERLOAD_PATH = '/md5?text=overload&rounds=200000';
const OVERLOAD_QUEUE = 64;

/** POST with no body; resolves the status. */
function httpPost(/** @type {string} */ url, /** @type {http.Agent} */ agent) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent }, (res) =>
      res.resume().on('end', () => resolve(res.statusCode)),
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * Capacity of the service for OVERLOAD_PATH (closed loop, 2 in flight per pool thread,
 * 5 s), then an open loop at 10× that for `overloadMs` with MAX_QUEUE=OVERLOAD_QUEUE: the
 * pool sheds the excess as 503 ERR_QUEUE_FULL; accepted requests should keep a bounded
 * latency and the event loop should stay responsive.
 */
async function overload() {
  const service = startService({ MAX_QUEUE: String(OVERLOAD_QUEUE) });
  const base = /** @type {string} */ (await service.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2048 });
  const health = await httpGet(`${base}/health`, agent);
  const threads = 'body' in health ? JSON.parse(health.body).pool.threads : 1;
  let done = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 2 * threads }, async () => {
      while (performance.now() - t0 < 5000) if ('status' in (await httpGet(`${base}${OVERLOAD_PATH}`, agent))) done++;
    }),
  );
  const capacity = done / ((performance.now() - t0) / 1000);
  const target = 10 * capacity;
  await httpPost(`${base}/loop/reset`, agent);
  /** @type {number[]} */
  const accepted = [];
  /** @type {Record<string, number>} */
  const statuses = {};
  /** @type {Promise<void>[]} */
  const pending = [];
  const t1 = performance.now();
  for (let i = 0; performance.now() - t1 < overloadMs; i++) {
    const wait = t1 + (i * 1000) / target - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const sent = performance.now();
    pending.push(
      httpGet(`${base}${OVERLOAD_PATH}`, agent).then((r) => {
        const key = 'status' in r ? String(r.status) : r.error;
        statuses[key] = (statuses[key] ?? 0) + 1;
        if ('status' in r && r.status === 200) accepted.push(performance.now() - sent);
      }),
    );
  }
  const sendSeconds = (performance.now() - t1) / 1000;
  await Promise.all(pending);
  const loopAnswer = await httpGet(`${base}/loop`, agent);
  const loop = 'body' in loopAnswer ? JSON.parse(loopAnswer.body).total : {};
  agent.destroy();
  service.child.kill('SIGTERM');
  const exit = /** @type {{ code: number | null }} */ (await service.exit);
  accepted.sort((a, b) => a - b);
  const q = (/** @type {number} */ p) => accepted[Math.min(accepted.length - 1, Math.floor(p * accepted.length))];
  return {
    path: OVERLOAD_PATH,
    maxQueue: OVERLOAD_QUEUE,
    poolThreads: threads,
    capacityPerS: capacity,
    offeredPerS: pending.length / sendSeconds,
    seconds: sendSeconds,
    sent: pending.length,
    statuses,
    rate503: (statuses['503'] ?? 0) / pending.length,
    acceptedMs: { p50: q(0.5), p99: q(0.99), max: accepted.at(-1) },
    loopDelayMs: { p99: loop.p99Ms, max: loop.maxMs },
    exit,
  };
}

/** @param {any} r */
function markdown(r) {
  const g = r.growth;
  const row = (/** @type {string} */ name, /** @type {any} */ x, /** @type {number} */ digits) =>
    `| ${name} | ${x.atWarmup.toFixed(digits)} | ${x.atEnd.toFixed(digits)} | ${x.growthPct.toFixed(1)} % | ${x.slopePerMin.toFixed(digits + 1)} |`;
  return [
    `# Soak (${r.date})`,
    '',
    `${r.config.minutes} min at ~${r.config.rate} req/s (at most ${r.config.concurrency} in flight), warm-up ${r.config.warmupSeconds} s, ` +
      `${r.machine.cpus} cores, node ${r.machine.node}; the service on 127.0.0.1 in its own process` +
      (r.config.nodeArgs?.length ? ` (node ${r.config.nodeArgs.join(' ')}).` : '.'),
    '',
    `- requests: ${r.requests} (good ${r.good.sent}, bad ${r.bad.sent}), ${r.achievedRate.toFixed(0)} req/s`,
    `- good requests that failed: **${r.good.errors}**; bad requests with an unexpected status: ${r.bad.unexpected}`,
    `- service exit after SIGTERM: ${r.exit.code}`,
    '',
    '| after warm-up | at warm-up | at end | growth | slope per minute |',
    '| ------------- | ---------- | ------ | ------ | ---------------- |',
    row('RSS (MiB)', g.rssMiB, 1),
    row('heap used (MiB)', g.heapUsedMiB, 1),
    row('heap reserved (MiB)', g.heapTotalMiB, 1),
    row('external (MiB)', g.externalMiB, 1),
    row('active handles', g.handles, 0),
    row('open fds', g.fds, 0),
    '',
    `- RSS at end against the most it held during warm-up (${r.pastWarmupPeak.warmupPeakMiB.toFixed(1)} MiB): ` +
      `${r.pastWarmupPeak.pct >= 0 ? '+' : ''}${r.pastWarmupPeak.pct.toFixed(1)} %`,
    '',
    `At rest after the load: RSS ${r.atRest.rssMiB.toFixed(1)} MiB, heap ${r.atRest.heapUsedMiB.toFixed(1)} MiB, ` +
      `${r.atRest.handles} handles, ${r.atRest.fds} fds.`,
    '',
    '| kind | sent | as expected | statuses |',
    '| ---- | ---- | ----------- | -------- |',
    ...Object.entries(r.byKind).map(
      ([name, k]) =>
        `| ${name} | ${/** @type {any} */ (k).sent} | ${/** @type {any} */ (k).ok} | ${JSON.stringify(/** @type {any} */ (k).statuses)} |`,
    ),
    ...(r.goodFailures.length
      ? ['', 'Good requests that failed (first 20):', '', ...r.goodFailures.map((f) => `- ${f}`)]
      : []),
    ...(r.overload ? overloadMarkdown(r.overload) : []),
    '',
  ].join('\n');
}

/** @param {any} o */
function overloadMarkdown(o) {
  return [
    '',
    '## Overload (10× capacity)',
    '',
    `\`GET ${o.path}\` on a fresh service (MAX_QUEUE=${o.maxQueue}, ${o.poolThreads} pool threads): capacity ` +
      `${o.capacityPerS.toFixed(1)} req/s (closed loop, 5 s), then ${o.offeredPerS.toFixed(0)} req/s offered for ${o.seconds.toFixed(1)} s.`,
    '',
    `- sent ${o.sent}: ${JSON.stringify(o.statuses)}; 503 rate ${(o.rate503 * 100).toFixed(1)} %`,
    `- accepted (200) latency: p50 ${o.acceptedMs.p50?.toFixed(0)} ms, p99 ${o.acceptedMs.p99?.toFixed(0)} ms, max ${o.acceptedMs.max?.toFixed(0)} ms`,
    `- event-loop delay during the run: p99 ${o.loopDelayMs.p99?.toFixed(1)} ms, max ${o.loopDelayMs.max?.toFixed(1)} ms`,
    `- service exit after SIGTERM: ${o.exit.code}`,
  ];
}

await main();
