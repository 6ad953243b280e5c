// `offthread worker` processes and a watcher of a queue's events, for the queue tests that
// run real processes on a real redis-server (queue-faults, queue-tasks).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { QueueEvents } from 'bullmq';

const bin = fileURLToPath(new URL('../bin/offthread.js', import.meta.url));

/** An `offthread worker` process; resolves once it takes jobs. */
export function spawnWorker(url, ...args) {
  return spawnWorkerOn(process.execPath, url, ...args);
}

/** The same on the Node binary `node` (another Node line: what crosses must read the same). */
export async function spawnWorkerOn(node, url, ...args) {
  const child = spawn(node, [bin, 'worker', '--redis', url, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (d) => {
    log += d;
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  await new Promise((resolve, reject) => {
    const check = () => {
      if (log.includes('ready')) resolve();
      else if (child.exitCode !== null) reject(new Error(`worker exited: ${log}`));
      else setTimeout(check, 20);
    };
    check();
  });
  return {
    child,
    /** Its stderr so far. */
    log: () => log,
    /** SIGTERM; resolves with the jobs it completed and failed (its last log line). */
    async stop() {
      child.kill('SIGTERM');
      const { code } = await exited;
      assert.equal(code, 0, log);
      const m = /stopped \((\d+) completed, (\d+) failed\)/.exec(log);
      assert.ok(m, log);
      return { completed: Number(m[1]), failed: Number(m[2]) };
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Counts 'completed' / 'failed' / 'stalled' events per job id on a queue. */
export async function watch(url, name = 'offthread') {
  const { port } = new URL(url);
  const events = new QueueEvents(name, { connection: { host: '127.0.0.1', port: Number(port) } });
  events.on('error', () => {});
  const seen = { completed: new Map(), failed: new Map(), stalled: new Map(), active: new Map() };
  for (const kind of Object.keys(seen)) {
    events.on(kind, ({ jobId }) => seen[kind].set(jobId, (seen[kind].get(jobId) ?? 0) + 1));
  }
  await events.waitUntilReady();
  return { seen, close: () => events.close() };
}
