// A real socket: src/main.mjs in a child on an ephemeral port, 200 concurrent slow
// requests, SIGTERM while they run. Every accepted request gets its 200, late ones are
// refused (never left hanging), and the process exits 0.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { md5LoopReference, requireKernels } from '../test-support/helpers.mjs';

const MAIN = fileURLToPath(new URL('../src/main.mjs', import.meta.url));
const N = 200;
const ROUNDS = 100_000; // ≈25 ms of native MD5 each: ≈2.5 s for all of them on 2 cores

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

/** Starts main.mjs on port 0; resolves { child, url, exit, output() }. */
function startMain(env = {}) {
  const child = spawn(process.execPath, [MAIN, '--mode', 'offload'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c) => {
    out += c;
  });
  const exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = new Promise((resolve, reject) => {
    child.stdout.on('data', (c) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    exit.then(({ code }) => reject(new Error(`main.mjs exited ${code} before listening:\n${out}`)));
  });
  return { child, url, exit, output: () => out };
}

/** @param {string} text @param {string} series */
function metric(text, series) {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

test('SIGTERM mid-load: every accepted request gets its 200, the process exits 0', { timeout: 90_000 }, async (t) => {
  requireKernels();
  const main = startMain();
  t.after(() => main.child.kill('SIGKILL'));
  const base = await main.url;

  const wave = Array.from({ length: N }, (_, i) => request(`${base}/md5?text=req${i}&rounds=${ROUNDS}`));

  // Wait until the server has received all N (in flight or already answered).
  const deadline = Date.now() + 20_000;
  for (;;) {
    const m = await request(`${base}/metrics`);
    assert.equal(m.status, 200, `metrics: ${JSON.stringify(m)}`);
    const inFlight = metric(m.body, 'http_requests_in_flight') - 1; // minus this scrape
    const done = metric(m.body, 'http_requests_total{method="GET",route="/md5",status_code="200"}');
    if (inFlight + done >= N) {
      assert.ok(inFlight > 0, `all ${N} requests finished before SIGTERM: make them slower`);
      t.diagnostic(`at SIGTERM: ${inFlight} in flight, ${done} answered`);
      break;
    }
    assert.ok(Date.now() < deadline, `server received only ${inFlight + done} of ${N}`);
    await new Promise((r) => setTimeout(r, 20));
  }

  main.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 50));
  const late = await Promise.all(
    Array.from({ length: 20 }, (_, i) => request(`${base}/md5?text=late${i}&rounds=10`, 10_000)),
  );

  const results = await Promise.all(wave);
  const exit = await main.exit;
  const failed = results.map((r, i) => ({ i, ...r })).filter((r) => r.status !== 200);
  assert.deepEqual(failed, [], `requests lost during shutdown:\n${main.output()}`);
  for (const i of [0, 99, N - 1]) {
    assert.equal(JSON.parse(results[i].body).digest, md5LoopReference(`req${i}`, ROUNDS));
  }
  /** @type {Record<string, number>} */
  const tally = {};
  for (const r of late) tally[r.status ?? r.error] = (tally[r.status ?? r.error] ?? 0) + 1;
  t.diagnostic(`late requests: ${JSON.stringify(tally)}`);
  for (const r of late) {
    // Refused at the socket, or answered (200) / turned away (503) if it slipped in first.
    assert.ok(
      [200, 503].includes(r.status) || ['ECONNREFUSED', 'ECONNRESET'].includes(r.error),
      `late request: ${JSON.stringify(r)}`,
    );
  }
  assert.deepEqual(exit, { code: 0, signal: null }, main.output());
  assert.match(main.output(), /SIGTERM, finishing accepted requests[\s\S]*stopped/);
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
