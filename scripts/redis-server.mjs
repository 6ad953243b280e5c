// A real redis-server for tests and benchmarks: its own process on a random loopback
// port, its files in a fresh temporary directory that stop() removes (no dump.rdb or
// AOF left behind). BullMQ needs Redis ≥ 6.2 and its Lua scripts rule out mocks.
// scripts/setup.mjs installs Debian's `redis-server` when it is missing.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const MIN_REDIS = [6, 2];

/** `[major, minor, patch]` of the redis-server on the PATH, or null when there is none. */
export function redisVersion(bin = 'redis-server') {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  const m = r.status === 0 ? /v=(\d+)\.(\d+)\.(\d+)/.exec(r.stdout) : null;
  return m ? m.slice(1).map(Number) : null;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const live = new Set();
process.once('exit', () => {
  // A test that crashed still takes its Redis and its files with it.
  for (const r of live) r.killNow();
});

/**
 * Starts redis-server. `persist: true` turns on the append-only file with fsync on every
 * write, so restart() keeps every accepted job (the Redis-restart fault test).
 * Returns `{ url, port, stop(), restart(), kill() }`.
 */
export async function startRedis({ persist = false } = {}) {
  const version = redisVersion();
  if (!version) throw new Error('redis-server not found: run `node scripts/setup.mjs` (installs Debian redis-server)');
  if (version[0] < MIN_REDIS[0] || (version[0] === MIN_REDIS[0] && version[1] < MIN_REDIS[1])) {
    throw new Error(`redis-server ${version.join('.')} is too old: BullMQ needs ≥ ${MIN_REDIS.join('.')}`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'offthread-redis-'));
  let port;
  let child;
  const args = () => [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    persist ? 'yes' : 'no',
    ...(persist ? ['--appendfsync', 'always'] : []),
    '--daemonize',
    'no',
    '--logfile',
    '',
    '--loglevel',
    'warning',
    // BullMQ refuses to run when keys may be evicted.
    '--maxmemory-policy',
    'noeviction',
  ];

  async function launch() {
    child = spawn('redis-server', args(), { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    const onData = (d) => {
      log += d;
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // Ready once it answers PING on the port (the log line depends on the loglevel).
    for (let i = 0; i < 200; i++) {
      if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): ${log}`);
      if (await ping(port)) return { exited }; // wrapped: returning the promise would wait for it
      await new Promise((r) => setTimeout(r, 25));
    }
    child.kill('SIGKILL');
    throw new Error(`redis-server did not answer on port ${port}: ${log}`);
  }

  let exited;
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      ({ exited } = await launch());
      break;
    } catch (err) {
      if (attempt >= 4) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }

  const handle = {
    url: `redis://127.0.0.1:${port}`,
    get port() {
      return port;
    },
    get pid() {
      return child.pid;
    },
    /** SIGKILL, then the same port and directory again (with `persist`, the same data). */
    async restart({ downMs = 0 } = {}) {
      child.kill('SIGKILL');
      await exited;
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      ({ exited } = await launch());
    },
    async stop() {
      live.delete(handle);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
    killNow() {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  live.add(handle);
  return handle;
}

/** True when something on 127.0.0.1:port answers PING with +PONG. */
function ping(port) {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    let buf = '';
    const done = (ok) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(500, () => done(false));
    sock.once('error', () => done(false));
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      buf += d;
      if (buf.includes('\r\n')) done(buf.startsWith('+PONG'));
    });
  });
}
