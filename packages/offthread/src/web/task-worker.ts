/**
 * A worker of a pool's task workers in browsers (a module Web Worker): the job loop
 * (pool/serve.ts) running task modules, as node/task-worker.ts does in Node. A page's
 * thread never blocks, and a worker's event loop cannot be seen, so an idle worker
 * waits with Atomics.waitAsync (no `receive`, no `loopIdle`).
 */
import { serveJobs, type ToWorker } from '../pool/serve.js';
import { taskRunner } from '../tasks/runner.js';

const scope = globalThis as unknown as {
  postMessage(message: unknown, transfer: Transferable[]): void;
  onmessage: ((e: MessageEvent<ToWorker>) => void) | null;
};
// `@vite-ignore`: the URL is the user's, known only at run time; bundlers must leave it.
const load = (url: string): Promise<unknown> => import(/* @vite-ignore */ url);
const handle = serveJobs(taskRunner(load), (msg, transfer) => scope.postMessage(msg, transfer ?? []));
scope.onmessage = (e) => handle(e.data);
