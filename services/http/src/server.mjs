// offthread's HTTP service: QR codes, the MD5 loop and π, either offloaded to the
// offthread pool (mode 'offload') or computed in the handler (mode 'blocking', the
// original blog services), with Prometheus metrics, loop-delay figures and a live page.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import Fastify from 'fastify';
import offthread from 'offthread';
import { registerBenchPage } from './bench-page.mjs';
import { describeError, HttpError } from './errors.mjs';
import { defaultKernels, md5Blueimp, md5Impls, md5Loop, need, QR_DEFAULTS, qrBlocking } from './kernels.mjs';
import { createLoopWatch } from './loop.mjs';
import { createMetrics } from './metrics.mjs';

/** Input bounds (README.md of this package). */
export const LIMITS = Object.freeze({
  /** QR text, UTF-8 bytes: the most any QR symbol holds (version 40, ECC L, byte mode). */
  qrTextBytes: 2953,
  /** MD5 text, UTF-8 bytes. */
  md5TextBytes: 4096,
  /** MD5 rounds: 1 … 10^7 (default 200,000, the blog's figure). */
  minRounds: 1,
  maxRounds: 10_000_000,
  defaultRounds: 200_000,
  /** π samples: 1 … 10^9 (default 10^6). */
  maxSamples: 1_000_000_000,
  defaultSamples: 1_000_000,
});

export const PUBLIC_DIR = fileURLToPath(new URL('../public/', import.meta.url));

const textSchema = { type: 'string' };

/**
 * @param {unknown} text
 * @param {number} maxBytes
 * @returns {string}
 */
function checkText(text, maxBytes) {
  if (typeof text !== 'string' || text.length === 0) throw new HttpError('ERR_INVALID_TEXT', 'text must not be empty');
  if (text.isWellFormed && !text.isWellFormed()) {
    throw new HttpError('ERR_INVALID_TEXT', 'text contains a lone surrogate (not valid UTF-16)');
  }
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) {
    throw new HttpError('ERR_TEXT_TOO_LONG', `text is ${bytes} bytes of UTF-8; at most ${maxBytes}`);
  }
  return text;
}

/** @param {number} rounds */
function checkRounds(rounds) {
  if (!Number.isSafeInteger(rounds) || rounds < LIMITS.minRounds || rounds > LIMITS.maxRounds) {
    throw new HttpError(
      'ERR_INVALID_ROUNDS',
      `rounds must be an integer from ${LIMITS.minRounds} to ${LIMITS.maxRounds}, got ${rounds}`,
    );
  }
  return rounds;
}

/** @param {number} samples */
function checkSamples(samples) {
  if (!Number.isSafeInteger(samples) || samples < 1 || samples > LIMITS.maxSamples) {
    throw new HttpError(
      'ERR_INVALID_SAMPLES',
      `samples must be an integer from 1 to ${LIMITS.maxSamples}, got ${samples}`,
    );
  }
  return samples;
}

/**
 * An AbortSignal that fires if the client goes away before the response is sent:
 * its queued pool job is dropped, a running kernel stops at its next check.
 * @param {import('fastify').FastifyReply} reply
 */
function clientGone(reply) {
  const ac = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ac.abort(new Error('client closed the connection'));
  });
  return ac.signal;
}

/**
 * @typedef {object} ServerOptions
 * @property {'offload' | 'blocking'} [mode] offload (default): kernels on the offthread pool; blocking: in the handler
 * @property {import('./kernels.mjs').Kernels} [kernels] default: offthread's pi, qr, md5
 * @property {import('offthread').Pool} [pool] the pool offloaded calls use (default: offthread's default pool)
 * @property {boolean | object} [logger] fastify's logger option (default false)
 * @property {number} [loopResolutionMs] loop-delay sampling resolution (default 1 ms)
 * @property {number} [loopWindowMs] window of GET /loop's recent figures (default 500 ms)
 * @property {boolean} [defaultMetrics] prom-client's process metrics in /metrics (default true)
 * @property {number} [piscinaThreads] worker threads of the md5 piscina row (default: available parallelism)
 * @property {boolean} [staticCache] serve the files of public/ from memory, read once at start (default true);
 *   false: @fastify/static streams them from disk on every request
 */

const TYPES = /** @type {Record<string, string>} */ ({
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
});

/**
 * Routes serving each file directly in public/ from memory, with an ETag and 304s.
 * @param {import('fastify').FastifyInstance} app
 */
function cachePublicFiles(app) {
  for (const entry of readdirSync(PUBLIC_DIR, { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const body = readFileSync(join(PUBLIC_DIR, entry.name));
    const etag = `"${createHash('sha1').update(body).digest('base64url')}"`;
    const type = TYPES[extname(entry.name)] ?? 'application/octet-stream';
    app.get(`/static/${entry.name}`, (request, reply) => {
      reply.header('etag', etag).header('cache-control', 'public, max-age=0');
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.type(type).send(body);
    });
  }
}

/**
 * Builds the service (not listening). `app.close()` stops its timers and workers; the
 * caller owns `pool` and closes it after the server.
 * @param {ServerOptions} [opts]
 */
export function buildServer(opts = {}) {
  const mode = opts.mode ?? 'offload';
  if (mode !== 'offload' && mode !== 'blocking') {
    throw new TypeError(`mode must be 'offload' or 'blocking', got ${JSON.stringify(mode)}`);
  }
  const kernels = opts.kernels ?? defaultKernels();
  const poolOf = () => opts.pool ?? offthread.defaultPool();
  const app = Fastify({
    logger: opts.logger ?? false,
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });

  const loop = createLoopWatch({ resolutionMs: opts.loopResolutionMs ?? 1, windowMs: opts.loopWindowMs ?? 500 });
  const metrics = createMetrics({ pool: poolOf, defaultMetrics: opts.defaultMetrics ?? true });
  /** @type {Promise<any> | undefined} created on the first /md5/piscina request */
  let piscina;
  const md5Ctx = {
    piscina() {
      piscina ??= import('piscina').then(({ Piscina }) => {
        const threads = opts.piscinaThreads ?? availableParallelism();
        return new Piscina({
          filename: new URL('./md5-worker.mjs', import.meta.url).href,
          minThreads: threads,
          maxThreads: threads,
        });
      });
      return piscina;
    },
  };

  /** Per-request call options for offloaded kernels. @param {import('fastify').FastifyReply} reply */
  const call = (reply) => ({ pool: poolOf(), signal: clientGone(reply) });

  app.decorate('offthreadMode', mode);
  app.decorateRequest('startedAt', 0);
  app.decorate('loopWatch', loop);

  app.addHook('onRequest', async (request) => {
    metrics.inFlight.inc();
    request.startedAt = performance.now();
  });
  // Each request is counted once: when its response is sent, or (status 499, nginx's
  // "client closed request") when the client goes away first.
  const counted = new WeakSet();
  /**
   * @param {import('fastify').FastifyRequest} request
   * @param {number} status
   * @param {number} ms
   */
  const done = (request, status, ms) => {
    if (counted.has(request)) return;
    counted.add(request);
    metrics.inFlight.dec();
    metrics.record(request.method, request.routeOptions.url ?? '(unmatched)', status, ms);
  };
  app.addHook('onResponse', async (request, reply) => done(request, reply.statusCode, reply.elapsedTime));
  app.addHook('onRequestAbort', async (request) => done(request, 499, performance.now() - request.startedAt));
  app.addHook('onClose', async () => {
    loop.stop();
    metrics.stop();
    await (await piscina)?.destroy();
  });

  app.setErrorHandler((err, request, reply) => {
    const { status, code, message } = describeError(err);
    if (status >= 500) request.log.error({ err }, 'request failed');
    if (code === 'ERR_QUEUE_FULL' || code === 'ERR_POOL_CLOSED') reply.header('retry-after', '1');
    reply.code(status).send({ error: { code, message } });
  });
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send({ error: { code: 'ERR_NOT_FOUND', message: `no route for ${request.method} ${request.url}` } });
  });

  // public/ from memory (opts.staticCache, default) and anything else there from disk.
  if (opts.staticCache ?? true) cachePublicFiles(app);
  app.register(fastifyStatic, { root: PUBLIC_DIR, prefix: '/static/', index: false });
  registerBenchPage(app);

  app.get('/', (_request, reply) => reply.sendFile('index.html'));

  app.get(
    '/qr',
    { schema: { querystring: { type: 'object', required: ['text'], properties: { text: textSchema } } } },
    async (request, reply) => {
      const text = checkText(/** @type {{ text: string }} */ (request.query).text, LIMITS.qrTextBytes);
      const result =
        mode === 'offload'
          ? await need(kernels, 'qr.toDataURL')(text, { ...QR_DEFAULTS, ...call(reply) })
          : await qrBlocking(text, QR_DEFAULTS);
      return { result };
    },
  );

  const md5Query = {
    type: 'object',
    required: ['text'],
    properties: { text: textSchema, rounds: { type: 'integer', default: LIMITS.defaultRounds } },
  };

  app.get('/md5', { schema: { querystring: md5Query } }, async (request, reply) => {
    const q = /** @type {{ text: string, rounds: number }} */ (request.query);
    const text = checkText(q.text, LIMITS.md5TextBytes);
    const rounds = checkRounds(q.rounds);
    const digest =
      mode === 'offload'
        ? await need(kernels, 'md5.iterate')(text, rounds, call(reply))
        : md5Loop(md5Blueimp, text, rounds);
    return { digest };
  });

  app.get(
    '/md5/:impl',
    {
      schema: {
        querystring: md5Query,
        params: { type: 'object', properties: { impl: { type: 'string', enum: Object.keys(md5Impls) } } },
      },
    },
    async (request, reply) => {
      const q = /** @type {{ text: string, rounds: number }} */ (request.query);
      const { impl } = /** @type {{ impl: string }} */ (request.params);
      const text = checkText(q.text, LIMITS.md5TextBytes);
      const rounds = checkRounds(q.rounds);
      return { digest: await md5Impls[impl].run(kernels, text, rounds, call(reply), md5Ctx), impl };
    },
  );

  app.get('/md5/impls', async () =>
    Object.fromEntries(Object.entries(md5Impls).map(([name, { summary }]) => [name, summary])),
  );

  app.get(
    '/pi',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: {
            samples: { type: 'integer', default: LIMITS.defaultSamples },
            seed: { type: 'integer', default: 1 },
          },
        },
      },
    },
    async (request, reply) => {
      const q = /** @type {{ samples: number, seed: number }} */ (request.query);
      const samples = checkSamples(q.samples);
      if (mode === 'blocking') return need(kernels, 'pi.estimateSync')(samples, { seed: q.seed });
      return need(kernels, 'pi.estimate')(samples, { seed: q.seed, ...call(reply) });
    },
  );

  app.get('/loop', async () => loop.snapshot());
  app.post('/loop/reset', async () => {
    loop.reset();
    return { ok: true };
  });

  app.get('/metrics', async (_request, reply) => {
    reply.type(metrics.register.contentType);
    return metrics.register.metrics();
  });

  app.get('/health', async () => ({ ok: true, mode, pool: poolOf().stats() }));

  return app;
}
