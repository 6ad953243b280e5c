/** A worker of the worker engine in Node: worker.ts's loop on worker_threads' port. */
import { createHash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { type WorkerMessage, workerLoop } from '../worker.js';

const port = parentPort;
if (!port) throw new Error('offthread: node/worker.js runs only as a worker thread');
const handle = workerLoop(
  (reply, transfer) => port.postMessage(reply, transfer as never),
  (data) => createHash('md5').update(data).digest('hex'),
);
port.on('message', (msg: WorkerMessage) => handle(msg));
