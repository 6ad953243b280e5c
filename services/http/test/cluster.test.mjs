// The service on every core (src/cluster.mjs): PROCESSES=2 starts a primary and two
// copies on one port. Requests reach both copies; /metrics, asked of either, counts the
// requests of both and the pools' threads add up to one machine's worth; a copy that dies
// is replaced; SIGTERM to the primary lets every accepted request finish and exits 0.
// Real processes on real sockets; no timing assertions (every wait polls a condition).
import assert from 'node:assert/strict';
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { test } from 'node:test';
import { spawnService } from '../test-support/process.mjs';

/** GET on its own connection (a new one each time, so the kernel may pick another copy). */
function get(url, timeoutMs = 0) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false, timeout: timeoutMs }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode, body }));
      })
      .on('timeout', function () {
        this.destroy(Object.assign(new Error('no answer'), { code: 'ETIMEDOUT' }));
      })
      .on('error', reject);
  });
}

/** @param {string} text @param {string} series */
function metric(text, series) {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : Number.NaN;
}

/** Polls `check` every 20 ms until it returns something truthy (the test's own timeout bounds it). */
async function until(check) {
  for (;;) {
    const value = await check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The pids answering /health, asking on new connections until `n` distinct ones answered.
 * `lossy`: right after a copy was killed, a connection already handed to it is reset,
 * or (round-robin, Node 20) never answered: its process is gone. Such a request is asked again.
 */
async function pidsAnswering(url, n, lossy = false) {
  const pids = new Set();
  await until(async () => {
    const res = await get(`${url}/health`, lossy ? 5000 : 0).catch((err) => {
      if (lossy && (err.code === 'ECONNRESET' || err.code === 'ETIMEDOUT')) return null;
      throw err;
    });
    if (res === null) return false;
    assert.equal(res.status, 200);
    pids.add(JSON.parse(res.body).pid);
    return pids.size >= n;
  });
  return pids;
}

test('two processes on one port: both answer, metrics add up, a dead copy is replaced, SIGTERM drains', {
  timeout: 120_000,
}, async () => {
  const service = spawnService(['--mode', 'offload'], { PROCESSES: '2' });
  try {
    const url = await service.url;
    assert.match(service.output(), /\(offload, 2 processes\) listening on/);
    const first = await pidsAnswering(url, 2);
    assert.ok(!first.has(service.child.pid), 'the primary answers nothing itself');

    // /metrics from whichever copy answers counts both copies' requests.
    const before = metric(
      (await get(`${url}/metrics`)).body,
      'http_requests_total{method="GET",route="/health",status_code="200"}',
    );
    for (let i = 0; i < 10; i++) assert.equal((await get(`${url}/health`)).status, 200);
    for (let i = 0; i < 4; i++) {
      const text = (await get(`${url}/metrics`)).body;
      assert.equal(metric(text, 'http_requests_total{method="GET",route="/health",status_code="200"}'), before + 10);
      // One machine's cores split between the copies, not each copy taking all of them.
      assert.equal(metric(text, 'offthread_pool_threads'), 2 * Math.max(1, Math.floor(availableParallelism() / 2)));
    }

    // A copy killed outright is replaced; the service keeps answering on the same port.
    const [victim] = first;
    process.kill(victim, 'SIGKILL');
    const after = await until(async () => {
      const pids = await pidsAnswering(url, 2, true);
      return !pids.has(victim) && pids;
    });
    assert.equal(after.size, 2);
    assert.match(service.output(), new RegExp(`process ${victim} exited \\(SIGKILL\\); starting another`));

    // SIGTERM to the primary while a request runs: it is answered, then all exit 0. A
    // π request the copy finished before /metrics saw it in flight is simply made again.
    let slow;
    for (let seed = 1; ; seed++) {
      let settled = false;
      slow = get(`${url}/pi?samples=1000000000&seed=${seed}`).finally(() => {
        settled = true;
      });
      const running = await until(async () => {
        // The /metrics request itself is in flight too: 2 means the π request is accepted.
        const text = (await get(`${url}/metrics`)).body;
        if (metric(text, 'http_requests_in_flight') >= 2) return 'running';
        return settled && 'done';
      });
      if (running === 'running') break;
    }
    service.child.kill('SIGTERM');
    const answer = await slow;
    assert.equal(answer.status, 200, answer.body);
    assert.equal(JSON.parse(answer.body).samples, 1_000_000_000);
    const exit = await service.exit;
    assert.deepEqual(exit, { code: 0, signal: null }, service.output());
    assert.match(service.output(), /all 2 processes stopped/);
  } finally {
    service.child.kill('SIGKILL');
  }
});

test('--processes that is not a whole number from 1 to 256 is refused (exit 2)', async () => {
  for (const bad of ['0', '-1', '1.5', 'two', '257']) {
    const service = spawnService([`--processes=${bad}`]);
    service.url.catch(() => {});
    const exit = await service.exit;
    assert.equal(exit.code, 2, `${bad}: ${service.output()}`);
    assert.match(service.output(), /--processes must be a whole number from 1 to 256/);
  }
});
