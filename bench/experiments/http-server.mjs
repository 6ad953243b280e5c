// Helper of the http-* experiments (not an experiment itself): starts the service
// (services/http/src/main.mjs) in its own process on a free 127.0.0.1 port, reads its
// CPU time from /proc, talks to its /loop endpoint, and stops it with SIGTERM.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../services/http/src/main.mjs', import.meta.url));
const TICKS_PER_SEC = 100; // Linux USER_HZ

/** CPU seconds (user + system, all threads) of a process, from /proc/<pid>/stat; NaN once it is gone. */
export function cpuSeconds(/** @type {number} */ pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SEC; // utime, stime
  } catch {
    return Number.NaN;
  }
}

/**
 * @typedef {object} ServerHandle
 * @property {string} url        e.g. http://127.0.0.1:41234
 * @property {number} pid
 * @property {() => { wallMs: number, cpuMs: number, coresUsed: number }} cpuSince  since the last resetCpu()
 * @property {() => void} resetCpu
 * @property {() => Promise<void>} resetLoop       POST /loop/reset
 * @property {() => Promise<any>} loop             GET /loop → { resolutionMs, total, … }
 * @property {() => Promise<number | null>} stop   SIGTERM; resolves the exit code
 */

/**
 * @param {{ mode: 'offload' | 'blocking', env?: Record<string, string> }} opts
 * @returns {Promise<ServerHandle>}
 */
export function startServer({ mode, env = {} }) {
  const child = spawn(process.execPath, [MAIN, '--mode', mode], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c) => {
    out += c;
    process.stderr.write(c);
  });
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in 15 s:\n${out}`));
    }, 15_000);
    exited.then((code) => reject(new Error(`server exited ${code} before listening:\n${out}`)));
    child.stdout.on('data', (c) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      const url = m[1];
      const pid = /** @type {number} */ (child.pid);
      let cpu0 = cpuSeconds(pid);
      let wall0 = performance.now();
      resolve({
        url,
        pid,
        resetCpu() {
          cpu0 = cpuSeconds(pid);
          wall0 = performance.now();
        },
        cpuSince() {
          const wallMs = performance.now() - wall0;
          const cpuMs = (cpuSeconds(pid) - cpu0) * 1000;
          return { wallMs, cpuMs, coresUsed: cpuMs / wallMs };
        },
        async resetLoop() {
          const res = await fetch(`${url}/loop/reset`, { method: 'POST' });
          if (!res.ok) throw new Error(`POST /loop/reset: ${res.status}`);
        },
        async loop() {
          const res = await fetch(`${url}/loop`);
          if (!res.ok) throw new Error(`GET /loop: ${res.status}`);
          return res.json();
        },
        async stop() {
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
          const code = await exited;
          clearTimeout(killer);
          return /** @type {number | null} */ (code);
        },
      });
    });
  });
}

/** Not an experiment: the runner lists every file here, so say so if it is run. */
export async function run() {
  throw new Error('http-server.mjs is a helper of the http-* experiments; run http-qr, http-md5 or http-static');
}
