/**
 * A worker of the worker engine in browsers: the pool's worker loop (pool/worker-loop.ts)
 * on the worker's own port, running the kernels' and the guests' jobs.
 */
import { guestJobs } from '../guests/worker.js';
import { kernelJobs } from '../kernels/worker.js';
import { type WorkerMessage, workerLoop } from '../pool/worker-loop.js';

const scope = globalThis as unknown as {
  postMessage(message: unknown, transfer: Transferable[]): void;
  onmessage: ((e: MessageEvent<WorkerMessage>) => void) | null;
};
const handle = workerLoop(
  (reply, transfer) => scope.postMessage(reply, transfer ?? []),
  [kernelJobs(null), guestJobs()],
);
scope.onmessage = (e) => handle(e.data);
