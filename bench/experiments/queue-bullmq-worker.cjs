// A BullMQ worker process with a sandboxed processor (queue-sandbox.cjs in a child
// process per concurrent job): the setup BullMQ recommends for CPU-heavy work.
// node queue-bullmq-worker.cjs <redis-port> <queue> <concurrency>
const { join } = require('node:path');
const { Worker } = require('bullmq');

const [port, name, concurrency] = process.argv.slice(2);
const worker = new Worker(name, join(__dirname, 'queue-sandbox.cjs'), {
  connection: { host: '127.0.0.1', port: Number(port), maxRetriesPerRequest: null },
  concurrency: Number(concurrency),
});
worker.on('error', () => {});
worker.waitUntilReady().then(() => console.error('bullmq worker: ready'));
process.once('SIGTERM', () => worker.close().then(() => process.exit(0)));
