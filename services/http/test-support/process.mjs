// main.mjs in a child process, for the tests and scripts that need the real service
// (shutdown, soak): on a free loopback port, its output kept for failure messages.
import { spawn } from 'node:child_process';

const MAIN = new URL('../src/main.mjs', import.meta.url);

/**
 * The node flags the service is run with (`npm start`, the README's process-manager
 * command): the young generation fixed at V8's default maximum (16 MiB semi-spaces), so
 * V8 does not grow and shrink it with the request rate. Same steady-state RSS; in a pair
 * of 10-minute soaks side by side, RSS after warm-up rose 33 % without it and 1.0 % with
 * it (services/http/README.md, "Soak", has the rest of the reading).
 */
export const SERVICE_NODE_ARGS = ['--min-semi-space-size=16'];

/**
 * Starts `node ...nodeArgs main.mjs ...args` with PORT=0 on 127.0.0.1; `url` resolves once
 * it prints "listening on …", and rejects if it exits first.
 * @param {string[]} [args]
 * @param {Record<string, string>} [env]
 * @param {string[]} [nodeArgs] flags for node itself (heap sizing is not allowed in NODE_OPTIONS)
 */
export function spawnService(args = [], env = {}, nodeArgs = SERVICE_NODE_ARGS) {
  const child = spawn(process.execPath, [...nodeArgs, MAIN.pathname, ...args], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c) => {
    out += c;
  });
  /** @type {Promise<{ code: number | null, signal: NodeJS.Signals | null }>} */
  const exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  /** @type {Promise<string>} */
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
