/** A worker of a pool's task workers in Node: the job loop (pool/serve.ts) running task modules. */
import { parentPort } from 'node:worker_threads';
import { serveJobs, type ToWorker } from '../pool/serve.js';
import { taskRunner } from '../tasks/runner.js';

const port = parentPort;
if (!port) throw new Error('offthread: node/task-worker.js runs only as a worker thread');
// This build is CommonJS, where tsc would turn `import()` into `require()`: a task
// module may be ESM (or TypeScript, where Node strips types), which only import() loads.
const load = new Function('url', 'return import(url)') as (url: string) => Promise<unknown>;
const handle = serveJobs(taskRunner(load), (msg, transfer) => port.postMessage(msg, transfer as never));
port.on('message', (msg: ToWorker) => handle(msg));
