// QUEUE_URL mode: the heavy routes (/qr, /md5, /pi) enqueue their kernel as a BullMQ job
// (offthread/queue) instead of running it on this process's pool; `offthread worker
// --redis QUEUE_URL` processes run them, on this host or others. The answers are the
// same bytes. /metrics gains the queue's depth and each queued call's latency.
import { md5, pi } from 'offthread';
import { createQueue } from 'offthread/queue';
import client from 'prom-client';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const STATES = /** @type {const} */ (['waiting', 'active', 'delayed', 'completed', 'failed']);

/**
 * A producer on `url` and the kernels the routes call through it (the shape of
 * kernels.mjs' `Kernels`). `registerMetrics(register)` adds the queue's series.
 * @param {string} url redis://host:port
 * @param {{ name?: string }} [opts]
 */
export function createQueueKernels(url, opts = {}) {
  const queue = createQueue({ url, ...(opts.name ? { name: opts.name } : {}) });
  /** @type {import('prom-client').Histogram<'kernel' | 'outcome'> | undefined} */
  let latency;

  /**
   * Times one queued call: enqueue → result, as the route sees it.
   * @template T
   * @param {string} kernel
   * @param {() => Promise<T>} run
   * @returns {Promise<T>}
   */
  async function timed(kernel, run) {
    const t0 = performance.now();
    let outcome = 'error';
    try {
      const r = await run();
      outcome = 'ok';
      return r;
    } finally {
      latency?.observe({ kernel, outcome }, (performance.now() - t0) / 1000);
    }
  }

  /** The routes pass `{ pool, signal }`; a queued call has no pool. @param {{ signal?: AbortSignal, timeout?: number }} [call] */
  const callOf = (call) => ({
    ...(call?.signal ? { signal: call.signal } : {}),
    ...(call?.timeout ? { timeout: call.timeout } : {}),
  });

  const kernels = {
    pi: {
      /** @param {number} samples @param {{ seed?: number, signal?: AbortSignal }} [o] */
      estimate: (samples, o = {}) =>
        timed('pi', async () => {
          const r = await queue.pi.estimate(samples, {
            ...(o.seed === undefined ? {} : { seed: o.seed }),
            ...callOf(o),
          });
          return { estimate: r.estimate, inside: r.inside, samples: r.samples, seed: r.seed, variant: r.variant };
        }),
      estimateSync: pi.estimateSync,
    },
    qr: {
      /** @param {string} text @param {{ size?: number, ecc?: 'L' | 'M' | 'Q' | 'H', margin?: number, signal?: AbortSignal }} [o] */
      toDataURL: (text, o = {}) =>
        timed('qr', async () => {
          const { size, ecc, margin } = o;
          const png = await queue.qr.toPNG(text, { size, ecc, margin, ...callOf(o) });
          return `data:image/png;base64,${png.toString('base64')}`;
        }),
    },
    md5: {
      hex: md5.hex,
      /** @param {string} text @param {{ signal?: AbortSignal }} [o] */
      hexAsync: (text, o) => timed('md5.hex', () => queue.md5.hex(text, callOf(o))),
      /** @param {string} text @param {number} rounds @param {{ signal?: AbortSignal }} [o] */
      iterate: (text, rounds, o) => timed('md5.iterate', () => queue.md5.iterate(text, rounds, callOf(o))),
      iterateSync: md5.iterateSync,
    },
  };

  return {
    queue,
    kernels,
    /** @param {import('prom-client').Registry} register */
    registerMetrics(register) {
      latency = new client.Histogram({
        name: 'offthread_queue_job_duration_seconds',
        help: 'Queued calls from enqueue to result (Redis, a worker, the kernel), by kernel and outcome.',
        labelNames: ['kernel', 'outcome'],
        buckets: LATENCY_BUCKETS,
        registers: [register],
      });
      new client.Gauge({
        name: 'offthread_queue_jobs',
        help: 'Jobs in the BullMQ queue by state (waiting + delayed is the depth).',
        labelNames: ['state'],
        registers: [register],
        async collect() {
          try {
            // Bounded: with Redis down, commands wait for the reconnection.
            const counts = await Promise.race([
              queue.counts(),
              new Promise((_, reject) => setTimeout(reject, 500, new Error('timeout')).unref()),
            ]);
            for (const state of STATES) this.set({ state }, counts[state]);
          } catch {
            // Redis unreachable: leave the last values; the latency series shows the outage.
          }
        },
      });
      new client.Gauge({
        name: 'offthread_queue_calls_pending',
        help: 'Queued calls of this process waiting for their result.',
        registers: [register],
        collect() {
          this.set(queue.pending);
        },
      });
    },
    close: () => queue.close(),
  };
}
