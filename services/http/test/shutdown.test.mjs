// A real socket: src/main.mjs in a child on an ephemeral port. 200 slow requests in
// flight on keep-alive connections plus 20 half-open connections (silent, or half a
// request), then SIGTERM: every accepted request gets its 200 (the answers after SIGTERM
// with `Connection: close`), the half-open ones are closed at once, late ones are refused
// or answered 503 in the JSON shape, and the process exits 0 right after the last answer.
// A request that outlives SHUTDOWN_TIMEOUT_MS still gets the force exit (1).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { md5LoopReference, requireKernels } from '../test-support/helpers.mjs';
import { spawnService } from '../test-support/process.mjs';

const MAIN = fileURLToPath(new URL('../src/main.mjs', import.meta.url));
const N = 200;
const ROUNDS = 100_000; // ≈25 ms of native MD5 each: ≈2.5 s for all of them on 2 cores
const HALF_OPEN = 20;

/** GET on its own connection; resolves { status, body } or { error: code }. */
function request(url, timeoutMs = 30_000) {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode, body }));
      res.on('error', (err) => resolve({ error: err.code ?? err.message }));
    });
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', (err) => resolve({ error: err.code ?? err.message }));
  });
}

/** Starts main.mjs (offload mode) on port 0; resolves { child, url, exit, output() }. */
const startMain = (env = {}) => spawnService(['--mode', 'offload'], env);

/** @param {string} text @param {string} series */
function metric(text, series) {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/**
 * GET with `agent`; resolves { status, body, headers, at (ms, performance.now) } or
 * { error: code, at }.
 * @param {string} url
 * @param {http.Agent | false} agent
 */
function requestWith(url, agent, timeoutMs = 60_000) {
  return new Promise((resolve) => {
    const req = http.get(url, { agent, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode, body, headers: res.headers, at: performance.now() }));
      res.on('error', (err) => resolve({ error: err.code ?? err.message, at: performance.now() }));
    });
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', (err) => resolve({ error: err.code ?? err.message, at: performance.now() }));
  });
}

/**
 * A raw connection that sends `data` (maybe nothing) and never finishes its request;
 * resolves { received, closedAt } when the server closes it.
 */
function halfOpen(/** @type {string} */ base, /** @type {string} */ data) {
  const { hostname, port } = new URL(base);
  const socket = net.connect(Number(port), hostname);
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (c) => {
    received += c;
  });
  socket.on('error', () => {});
  const connected = new Promise((resolve) => socket.once('connect', resolve)).then(() => {
    if (data) socket.write(data);
  });
  const closed = new Promise((resolve) =>
    socket.once('close', () => resolve({ received, closedAt: performance.now() })),
  );
  return { socket, connected, closed };
}

/** Waits until the server has received `n` requests of `route` (in flight or answered). */
async function untilReceived(/** @type {string} */ base, /** @type {string} */ route, /** @type {number} */ n) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = await request(`${base}/metrics`);
    assert.equal(m.status, 200, `metrics: ${JSON.stringify(m)}`);
    const inFlight = metric(m.body, 'http_requests_in_flight') - 1; // minus this scrape
    const done = metric(m.body, `http_requests_total{method="GET",route="${route}",status_code="200"}`);
    if (inFlight + done >= n) return { inFlight, done };
    assert.ok(Date.now() < deadline, `server received only ${inFlight + done} of ${n}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('SIGTERM with keep-alive clients and half-open connections: all answered, exit 0 at once', {
  timeout: 120_000,
}, async (t) => {
  requireKernels();
  const main = startMain();
  t.after(() => main.child.kill('SIGKILL'));
  const base = await main.url;

  // One keep-alive connection per request: all N in flight at once (node's agent does not pipeline).
  const agent = new http.Agent({ keepAlive: true, maxSockets: N });
  t.after(() => agent.destroy());
  const silent = Array.from({ length: HALF_OPEN / 2 }, () => halfOpen(base, ''));
  const partial = Array.from({ length: HALF_OPEN / 2 }, (_, i) =>
    halfOpen(base, `GET /md5?text=partial${i}&rounds=10 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: `),
  );
  await Promise.all([...silent, ...partial].map((h) => h.connected));

  const sentAt = performance.now();
  const wave = Array.from({ length: N }, (_, i) => requestWith(`${base}/md5?text=req${i}&rounds=${ROUNDS}`, agent));
  const { inFlight, done } = await untilReceived(base, '/md5', N);
  // Enough work left that the last answers come after SIGTERM (so they must say close).
  assert.ok(inFlight >= N / 2, `only ${inFlight} of ${N} in flight at SIGTERM: make them slower`);
  t.diagnostic(`at SIGTERM: ${inFlight} in flight, ${done} answered, ${HALF_OPEN} half-open connections`);

  const sigtermAt = performance.now();
  main.child.kill('SIGTERM');
  const exitAt = main.exit.then((e) => ({ ...e, at: performance.now() }));
  await new Promise((r) => setTimeout(r, 50));
  const late = await Promise.all(
    Array.from({ length: 20 }, (_, i) => requestWith(`${base}/md5?text=late${i}&rounds=10`, false, 10_000)),
  );

  const results = await Promise.all(wave);
  const halves = await Promise.all([...silent, ...partial].map((h) => h.closed));
  const exit = await exitAt;

  const failed = results.map((r, i) => ({ i, ...r })).filter((r) => r.status !== 200);
  assert.deepEqual(failed, [], `requests lost during shutdown:\n${main.output()}`);
  for (const i of [0, 99, N - 1]) {
    assert.equal(JSON.parse(results[i].body).digest, md5LoopReference(`req${i}`, ROUNDS));
  }
  // The last answer came after SIGTERM: it closes its connection instead of keeping it.
  const last = results.reduce((a, b) => (b.at > a.at ? b : a));
  assert.equal(last.headers.connection, 'close', 'an answer during shutdown kept its connection alive');
  const closing = results.filter((r) => r.headers.connection === 'close').length;

  // Half-open connections got nothing and were closed before the process exited.
  for (const h of halves) {
    assert.equal(h.received, '');
    assert.ok(h.closedAt <= exit.at, 'a half-open connection outlived the process');
  }

  /** @type {Record<string, number>} */
  const tally = {};
  for (const r of late) tally[r.status ?? r.error] = (tally[r.status ?? r.error] ?? 0) + 1;
  for (const r of late) {
    // Refused at the socket, or answered (200) / turned away (503 in the JSON shape) if it slipped in first.
    assert.ok(
      [200, 503].includes(r.status) || ['ECONNREFUSED', 'ECONNRESET'].includes(r.error),
      `late request: ${JSON.stringify(r)}`,
    );
    if (r.status === 503) assert.equal(JSON.parse(r.body).error.code, 'ERR_SHUTTING_DOWN');
  }

  assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null }, main.output());
  assert.match(main.output(), /SIGTERM, finishing accepted requests[\s\S]*stopped/);
  // Exit follows the last answer (pool close, process exit), far from the 30 s force limit.
  const longest = Math.max(...results.map((r) => r.at - sentAt));
  const afterLast = exit.at - last.at;
  assert.ok(afterLast < 10_000, `exited ${afterLast.toFixed(0)} ms after the last answer`);
  t.diagnostic(
    `SIGTERM → last answer ${(last.at - sigtermAt).toFixed(0)} ms, → exit ${(exit.at - sigtermAt).toFixed(0)} ms; ` +
      `last answer → exit ${afterLast.toFixed(0)} ms; longest request ${longest.toFixed(0)} ms; ` +
      `${closing} answers with Connection: close; half-open closed ≤ ${Math.max(...halves.map((h) => h.closedAt - sigtermAt)).toFixed(0)} ms after SIGTERM; ` +
      `late: ${JSON.stringify(tally)}`,
  );
});

test('a request that outlives SHUTDOWN_TIMEOUT_MS: forced exit 1', { timeout: 60_000 }, async (t) => {
  requireKernels();
  // The piscina row at 10^7 rounds: ~20 s of JS MD5 in a worker, far beyond the 500 ms limit.
  const main = startMain({ SHUTDOWN_TIMEOUT_MS: '500' });
  t.after(() => main.child.kill('SIGKILL'));
  const base = await main.url;
  const stuck = requestWith(`${base}/md5/piscina?text=stuck&rounds=10000000`, false);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const m = await request(`${base}/metrics`);
    if (metric(m.body, 'http_requests_in_flight') >= 2) break; // the stuck one and this scrape
    assert.ok(Date.now() < deadline, 'the slow request never arrived');
    await new Promise((r) => setTimeout(r, 20));
  }
  main.child.kill('SIGTERM');
  assert.deepEqual(await main.exit, { code: 1, signal: null }, main.output());
  assert.match(main.output(), /shutdown took over 500 ms, exiting/);
  const r = await stuck;
  assert.ok(r.error, `the stuck request was answered: ${JSON.stringify(r)}`);
});

test('main.mjs refuses an unknown --mode', async () => {
  const bad = spawn(process.execPath, [MAIN, '--mode', 'sideways'], { stdio: 'pipe' });
  let err = '';
  bad.stderr.on('data', (c) => {
    err += c;
  });
  const code = await new Promise((r) => bad.once('exit', r));
  assert.equal(code, 2);
  assert.match(err, /--mode must be offload or blocking/);
});

/** Nice values of the process's threads named offthread-N (its pool's workers), from /proc. */
function poolWorkerNices(/** @type {number} */ pid) {
  const nices = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    // fields after "(comm) ": state is field 3, nice is field 19
    if (/^offthread-\d+$/.test(name)) nices.push(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return nices;
}

test('main.mjs runs the pool at POOL_NICE (default 0)', { skip: process.platform !== 'linux' }, async (t) => {
  requireKernels();
  for (const [env, want] of [
    [{}, 0],
    [{ POOL_NICE: '7' }, 7],
  ]) {
    const main = startMain(env);
    t.after(() => main.child.kill('SIGKILL'));
    const base = await main.url;
    const r = await request(`${base}/pi?samples=1000`); // the pool's threads start with its first job
    assert.equal(r.status, 200, JSON.stringify(r));
    const nices = poolWorkerNices(/** @type {number} */ (main.child.pid));
    assert.ok(nices.length > 0, 'no offthread-N worker threads found');
    assert.deepEqual(new Set(nices), new Set([want]), `POOL_NICE ${JSON.stringify(env)}`);
    main.child.kill('SIGTERM');
    assert.deepEqual(await main.exit, { code: 0, signal: null });
  }
});
