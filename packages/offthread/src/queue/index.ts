/**
 * offthread/queue: the same kernels as BullMQ jobs on Redis, for when one machine's
 * cores are not enough. Producers call `queue.pi.estimate(…)`, `queue.md5.iterate(…)`,
 * `queue.qr.toPNG(…)` and get the local calls' results; `offthread worker --redis URL`
 * (or `createWorker`) runs them on an offthread Pool on any host. Task modules too:
 * `queue.tasks(new URL('./work.js', import.meta.url)).blur(…)` runs on workers started
 * with `--tasks ./work.js`. Needs `bullmq` and
 * `ioredis` (optional peer dependencies) and Redis ≥ 6.2. See docs/queue.md.
 *
 * ```js
 * const { createQueue } = require('offthread/queue');
 * const queue = createQueue({ url: 'redis://127.0.0.1:6379' });
 * await queue.pi.estimate(1e10, { seed: 1 }); // split into jump-ahead chunks over the workers
 * ```
 */
import '../node/install.js';

export type { RedisConnection } from './connection.js';
export {
  createQueue,
  type QueueCallOptions,
  QueueClient,
  type QueueClientOptions,
  type QueueCounts,
  type QueueGuest,
  type QueuePiOptions,
  type QueuePiResult,
} from './producer.js';
export type { QueueTaskCallOptions, QueueTaskFunction, QueueTaskModule, QueueTasksOptions } from './tasks.js';
export { createWorker, QueueWorker, type QueueWorkerOptions, type QueueWorkerStats } from './worker.js';
