/** A worker of a pool's task workers in Node: the job loop (pool/serve.ts) running task modules. */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, receiveMessageOnPort } from 'node:worker_threads';
import { serveJobs, type ToWorker } from '../pool/serve.js';
import { taskRunner } from '../tasks/runner.js';

const port = parentPort;
if (!port) throw new Error('offthread: node/task-worker.js runs only as a worker thread');
// This build is CommonJS, where tsc would turn `import()` into `require()`: a task
// module may be ESM (or TypeScript, where Node strips types), which only import() loads.
const load = new Function('url', 'return import(url)') as (url: string) => Promise<unknown>;
const handle = serveJobs(taskRunner(load), (msg, transfer) => port.postMessage(msg, transfer as never), {
  // A message due while serving is read at once, not after a trip through the event loop.
  receive: () => receiveMessageOnPort(port)?.message as ToWorker | undefined,
  // Only ports pending (no timers, sockets, files): the worker may block in Atomics.wait.
  loopIdle: () => process.getActiveResourcesInfo().every((r) => r === 'MessagePort'),
});
port.on('message', (msg: ToWorker) => {
  if (msg.type === 'init' && msg.nice > 0) niceThisThread(msg.nice);
  handle(msg);
});

/**
 * Below the event loop's priority, as the native pool's threads are: with every core busy
 * the loop still gets its turn (Linux nices threads one by one: /proc/thread-self names
 * this one). Elsewhere, or where it is refused, the worker keeps the default.
 */
function niceThisThread(nice: number): void {
  if (process.platform !== 'linux') return;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, nice);
  } catch {
    // not permitted (a container's seccomp, a read-only /proc): run at the default priority
  }
}
