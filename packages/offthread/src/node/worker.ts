/**
 * A worker of the worker engine in Node: the pool's worker loop (pool/worker-loop.ts) on
 * worker_threads' port, running the kernels' and the guests' jobs.
 */
import { createHash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { guestJobs } from '../guests/worker.js';
import { kernelJobs } from '../kernels/worker.js';
import { type WorkerMessage, workerLoop } from '../pool/worker-loop.js';

const port = parentPort;
if (!port) throw new Error('offthread: node/worker.js runs only as a worker thread');
const handle = workerLoop(
  (reply, transfer) => port.postMessage(reply, transfer as never),
  [kernelJobs((data) => createHash('md5').update(data).digest('hex')), guestJobs()],
);
port.on('message', (msg: WorkerMessage) => handle(msg));
