// offthread's HTTP service: QR codes, the MD5 loop and π, either offloaded to the
// offthread pool (mode 'offload') or computed in the handler (mode 'blocking', the
// original blog services), with Prometheus metrics, loop-delay figures and a live page.
import { createServer, STATUS_CODES } from 'node:http';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import Fastify from 'fastify';
import offthread from 'offthread';
import { registerBenchPage } from './bench-page.mjs';
import { describeClientError, describeError, HttpError } from './errors.mjs';
import { md5Blueimp, md5Impls, md5Loop, QR_DEFAULTS, qrBlocking, withKernels } from './kernels.mjs';
import { createLoopWatch } from './loop.mjs';
import { createMetrics } from './metrics.mjs';
import { staticGzip } from './static-gzip.mjs';
import { frontStatic, loadMemoryFiles, registerMemoryRoutes } from './static-memory.mjs';

/** The fastify request of a raw response (set in onRequest), for answered()'s bookkeeping. */
const kFastifyRequest = Symbol('offthread.fastifyRequest');

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
 * Numbers in query strings are plain decimal integers: digits with an optional leading
 * `-` (no `+`, spaces, `0x`/`0b`, fractions or exponents, which ajv would coerce); the
 * handlers turn them into numbers and check their ranges.
 * @param {number} byDefault
 */
const integerSchema = (byDefault) => ({ type: 'string', pattern: '^-?[0-9]+$', default: String(byDefault) });

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
 * @property {Partial<import('./kernels.mjs').Kernels>} [kernels] namespaces to use instead of offthread's (tests)
 * @property {import('offthread').Pool} [pool] the pool offloaded calls use (default: offthread's default pool)
 * @property {boolean | object} [logger] fastify's logger option (default false)
 * @property {number} [loopResolutionMs] loop-delay sampling resolution (default 1 ms)
 * @property {number} [loopWindowMs] window of GET /loop's recent figures (default 500 ms)
 * @property {boolean} [defaultMetrics] prom-client's process metrics in /metrics (default true)
 * @property {(register: import('prom-client').Registry) => void} [registerMetrics] adds series to /metrics
 * @property {number} [piscinaThreads] worker threads of the md5 piscina row (default: available parallelism)
 * @property {boolean} [staticCache] serve the files of public/ from memory, read once at start (default true);
 *   false: @fastify/static streams them from disk on every request
 * @property {boolean} [staticFront] with staticCache: answer GET/HEAD of those files in a plain node:http handler in
 *   front of fastify: same answers and metrics, less CPU per request (default true; false: fastify's routes answer)
 * @property {string} [staticRoot] the directory /static/ serves (default public/; tests)
 * @property {boolean} [experimentRoutes] serve the `/md5/:impl` rows that run on the event loop (default false:
 *   they answer 404; the http-md5 experiment turns them on)
 * @property {Partial<typeof TIMEOUTS>} [timeouts] connection and request timeouts, ms (see TIMEOUTS)
 * @property {typeof import('./cluster.mjs').copySide} [cluster] this server is one copy of several (cluster.mjs):
 *   /metrics answers for all of them; the side is `app.clusterSide`
 */

/** Connection and request timeouts (ms); README.md of this package lists their variables. */
export const TIMEOUTS = Object.freeze({
  /** From a request's first byte to the end of its headers (slowloris); node checks every `checkIntervalMs`. */
  headersMs: 10_000,
  /** From a request's first byte to the end of its body (not its answer). */
  requestMs: 30_000,
  /** A connection with no request in progress and no bytes for this long is closed (sent nothing, kept alive). */
  idleMs: 30_000,
  /** How long a kept-alive connection may wait for its next request. */
  keepAliveMs: 5_000,
  /** How often node looks for requests past headersMs / requestMs. */
  checkIntervalMs: 1_000,
});

/**
 * A whole HTTP/1.1 response for a raw socket (errors before fastify has a request).
 * @param {number} status
 * @param {unknown} body
 */
function rawResponse(status, body) {
  const json = JSON.stringify(body);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n` +
    `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`
  );
}

/**
 * 503s are load shedding, not faults: one warn line (no stack) per code at most every
 * 10 s, saying how many there were since the last; /metrics counts each one.
 */
function unavailableLogger() {
  /** @type {Map<string, { at: number, count: number }>} */
  const seen = new Map();
  /**
   * @param {import('fastify').FastifyBaseLogger} log
   * @param {string} code
   * @param {string} message
   */
  return (log, code, message) => {
    const now = Date.now();
    const last = seen.get(code) ?? { at: -Infinity, count: 0 };
    last.count++;
    if (now - last.at >= 10_000) {
      log.warn({ code, count: last.count }, `503 ${code}: ${message}`);
      last.at = now;
      last.count = 0;
    }
    seen.set(code, last);
  };
}

/**
 * Closes connections idle for `idleMs` (no request in progress, no byte read or written):
 * one sweep over the tracked sockets every `checkIntervalMs` (at most `idleMs`) instead of
 * node's socket timeout, which re-arms a timer on every read and write of every
 * connection (≈ 2.6 µs a connection in a CPU profile under `ab` without keep-alive). A
 * connection is closed up to two sweeps after `idleMs`; a long computation keeps it.
 * @param {Map<import('node:net').Socket, number>} sockets each with its unanswered requests
 * @param {{ idleMs: number, checkIntervalMs: number }} timeouts idleMs 0: never
 * @returns {NodeJS.Timeout | undefined}
 */
function sweepIdle(sockets, { idleMs, checkIntervalMs }) {
  if (idleMs <= 0) return undefined;
  /** @type {WeakMap<import('node:net').Socket, { bytes: number, since: number }>} */
  const lastActive = new WeakMap();
  const sweep = setInterval(
    () => {
      const now = performance.now();
      for (const [socket, unanswered] of sockets) {
        const bytes = socket.bytesRead + socket.bytesWritten;
        const seen = lastActive.get(socket);
        if (unanswered > 0 || seen === undefined || seen.bytes !== bytes) lastActive.set(socket, { bytes, since: now });
        else if (now - seen.since >= idleMs) socket.destroy();
      }
    },
    Math.min(checkIntervalMs, idleMs),
  );
  sweep.unref();
  return sweep;
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
  const kernels = withKernels(opts.kernels);
  const poolOf = () => opts.pool ?? offthread.defaultPool();
  const timeouts = { ...TIMEOUTS, ...opts.timeouts };
  const experimentRoutes = opts.experimentRoutes ?? false;
  // Set by the preClose hook: from then on every answer says `Connection: close`.
  let stopping = false;
  const metrics = createMetrics({ pool: poolOf, defaultMetrics: opts.defaultMetrics ?? true });
  opts.registerMetrics?.(metrics.register); // e.g. the queue's series (QUEUE_URL, queue.mjs)
  const clusterSide = opts.cluster?.(metrics.register);

  const staticRoot = opts.staticRoot ?? PUBLIC_DIR;
  const memoryFiles = (opts.staticCache ?? true) ? loadMemoryFiles(staticRoot) : new Map();
  const serveFromMemory =
    (opts.staticFront ?? true) && memoryFiles.size > 0
      ? frontStatic({ files: memoryFiles, record: metrics.record })
      : () => false;

  // Every connection and how many of its requests are unanswered: at shutdown those with
  // none are closed at once (idle keep-alive, sent nothing, half a request), the others
  // as soon as their last answer is written.
  /** @type {Map<import('node:net').Socket, number>} */
  const sockets = new Map();
  // A connection's newest request: while stopping, its answer is the one that says
  // `Connection: close` (node ends the connection after an answer that says so, and drops
  // the answers queued behind it: those of requests pipelined after it).
  /** @type {WeakMap<import('node:net').Socket, import('node:http').IncomingMessage>} */
  const newest = new WeakMap();
  // The error answer for a connection whose bytes stopped parsing while requests before
  // them were still unanswered: written after their answers, in order (HTTP/1.1 answers
  // pipelined requests in turn), instead of cutting them off.
  /** @type {WeakMap<import('node:net').Socket, string>} */
  const parseErrorAfter = new WeakMap();
  // Shared listeners, not a closure per connection and per request: a connection per
  // request (ab, httperf) pays for each allocation thousands of times a second.
  /** @this {import('node:net').Socket} */
  function forgetSocket() {
    sockets.delete(this);
  }
  /** @this {import('node:http').ServerResponse} */
  function answered() {
    const socket = this.req.socket;
    // A response that closed unfinished (its connection gone after the request was
    // complete: fastify then runs neither onResponse nor onRequestAbort) is counted here.
    const request = this[kFastifyRequest];
    if (request !== undefined && !this.writableFinished) done(request, 499, performance.now() - request.startedAt);
    const unanswered = sockets.get(socket);
    if (unanswered === undefined) return;
    sockets.set(socket, unanswered - 1);
    if (unanswered !== 1) return;
    const parseError = parseErrorAfter.get(socket);
    if (parseError !== undefined) {
      parseErrorAfter.delete(socket);
      if (socket.writable) socket.end(parseError);
      socket.destroySoon();
    } else if (stopping) socket.destroySoon();
  }
  /**
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   */
  const trackRequest = (req, res) => {
    const socket = req.socket;
    sockets.set(socket, (sockets.get(socket) ?? 0) + 1);
    newest.set(socket, req);
    res.on('close', answered); // 'close' comes once per response
  };

  const app = Fastify({
    // The server fastify would create, with a handler in front of fastify's: the
    // in-memory files are answered there. fastify answers everything while stopping (503 and Connection: close) and
    // while its per-request log lines are on (level info and below), so none is missed.
    serverFactory(fastifyHandler, options) {
      const server = createServer(options.http ?? {}, (req, res) => {
        trackRequest(req, res);
        if (stopping || app.log.isLevelEnabled?.('info') || !serveFromMemory(req, res)) fastifyHandler(req, res);
      });
      // What fastify sets on the server it creates itself, except: the keep-alive timeout
      // as given (fastify turns 0, node's "none", into its default of 72 s), and no socket
      // timeout: idle connections are swept (idleSweep below).
      server.keepAliveTimeout = timeouts.keepAliveMs;
      server.requestTimeout = options.requestTimeout;
      // An Expect other than 100-continue: node's own 417 has an empty body; this one
      // has the JSON shape, and closes (the client may send the body it held back).
      server.on('checkExpectation', (req, res) => {
        trackRequest(req, res);
        const json = JSON.stringify({
          error: { code: 'ERR_EXPECTATION_FAILED', message: `cannot meet Expect: ${req.headers.expect}` },
        });
        res.writeHead(417, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(json),
          connection: 'close',
        });
        res.end(json);
        metrics.record(req.method ?? '(unparsed)', '(unmatched)', 417, 0);
      });
      return server;
    },
    logger: opts.logger ?? false,
    forceCloseConnections: 'idle',
    // fastify's own 503 while closing has a body of its own shape: the onRequest hook answers instead.
    return503OnClosing: false,
    requestTimeout: timeouts.requestMs,
    http: {
      headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: timeouts.checkIntervalMs,
      // node answers a missing Host with an empty 400; the onRequest hook answers in JSON.
      requireHostHeader: false,
    },
    // Errors before a request exists (parse errors, oversize headers, timeouts).
    clientErrorHandler(err, socket) {
      if (/** @type {any} */ (err).code === 'ECONNRESET' || socket.destroyed) return;
      const { status, code, message } = describeClientError(/** @type {any} */ (err));
      metrics.record('(unparsed)', '(client error)', status, 0);
      const answer = rawResponse(status, { error: { code, message } });
      // Requests parsed before the bad bytes (pipelined in the same packet) are answered
      // first; this answer follows theirs (see answered()).
      if ((sockets.get(/** @type {import('node:net').Socket} */ (socket)) ?? 0) > 0) {
        parseErrorAfter.set(/** @type {import('node:net').Socket} */ (socket), answer);
        return;
      }
      if (socket.writable) socket.end(answer);
      socket.destroySoon();
    },
    // Errors fastify raises before routing (a bad percent-encoding, an overlong path parameter).
    frameworkErrors(err, request, reply) {
      const { status, code, message } = describeError(err);
      reply.code(status).send({ error: { code, message } });
      metrics.record(request.method, '(unmatched)', status, 0); // no route, so no onResponse hook
    },
  });

  app.server.on('connection', (socket) => {
    if (stopping) return socket.destroy();
    sockets.set(socket, 0);
    socket.on('close', forgetSocket);
  });
  const idleSweep = sweepIdle(sockets, timeouts);
  // CONNECT is not routed by fastify: without this node drops the socket unanswered.
  app.server.on('connect', (req, socket) => {
    metrics.record('CONNECT', '(unmatched)', 404, 0);
    const error = { code: 'ERR_NOT_FOUND', message: `no route for CONNECT ${req.url}` };
    socket.end(rawResponse(404, { error }));
    socket.destroySoon();
  });
  app.addHook('preClose', async () => {
    stopping = true;
    for (const [socket, unanswered] of sockets) if (unanswered === 0) socket.destroy();
  });

  const loop = createLoopWatch({ resolutionMs: opts.loopResolutionMs ?? 1, windowMs: opts.loopWindowMs ?? 500 });
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

  app.addHook('onRequest', async (request, reply) => {
    metrics.inFlight.inc();
    request.startedAt = performance.now();
    /** @type {any} */ (reply.raw)[kFastifyRequest] = request;
    if (stopping) {
      return reply
        .code(503)
        .header('retry-after', '1')
        .send({ error: { code: 'ERR_SHUTTING_DOWN', message: 'the server is stopping' } });
    }
    if (request.raw.httpVersion === '1.1' && !request.headers.host) {
      return reply
        .code(400)
        .send({ error: { code: 'ERR_INVALID_ARG', message: 'HTTP/1.1 request without a Host header' } });
    }
  });
  app.addHook('onSend', async (request, reply) => {
    // Only the connection's newest request says close: an answer that says so ends the
    // connection, and the answers of requests pipelined behind it would be lost.
    if (stopping && newest.get(request.raw.socket) === request.raw) reply.header('connection', 'close');
  });
  // Each request is counted once: when its response is sent, or (status 499, nginx's
  // "client closed request") when the client goes away first.
  const counted = new WeakSet();
  /**
   * @param {import('fastify').FastifyRequest} request
   * @param {number} status
   * @param {number} ms
   */
  function done(request, status, ms) {
    if (counted.has(request)) return;
    counted.add(request);
    metrics.inFlight.dec();
    metrics.record(request.method, request.routeOptions.url ?? '(unmatched)', status, ms);
  }
  app.addHook('onResponse', async (request, reply) => done(request, reply.statusCode, reply.elapsedTime));
  app.addHook('onRequestAbort', async (request) => done(request, 499, performance.now() - request.startedAt));
  app.addHook('onClose', async () => {
    clearInterval(idleSweep);
    loop.stop();
    metrics.stop();
    await (await piscina)?.destroy();
  });

  const warnUnavailable = unavailableLogger();
  app.setErrorHandler((err, request, reply) => {
    const { status, code, message } = describeError(err);
    // The error body is a representation of its own: what was set for the one that failed
    // (a type, an encoding, a validator) does not describe it.
    for (const h of ['content-type', 'content-encoding', 'etag', 'cache-control']) reply.removeHeader(h);
    if (status === 503) warnUnavailable(request.log, code, message);
    else if (status >= 500) request.log.error({ err }, 'request failed');
    if (code === 'ERR_QUEUE_FULL' || code === 'ERR_POOL_CLOSED') reply.header('retry-after', '1');
    reply.code(status).send({ error: { code, message } });
  });
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send({ error: { code: 'ERR_NOT_FOUND', message: `no route for ${request.method} ${request.url}` } });
  });

  // /static/: public/'s files from memory (opts.staticCache, default; GET/HEAD answered in
  // front of fastify, see serverFactory above), anything else there from disk (a directory's index.html; `/static/dir` redirects to `/static/dir/`). A
  // client that accepts gzip gets compressible files gzipped on the pool instead
  // (static-gzip.mjs, an onRequest hook of every /static/ route, added as they register).
  const gzipStatic = staticGzip({ root: staticRoot, pool: poolOf });
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/static/')) return;
    const own = route.onRequest === undefined ? [] : [route.onRequest].flat();
    route.onRequest = [...own, gzipStatic];
  });
  registerMemoryRoutes(app, memoryFiles);
  app.register(fastifyStatic, {
    root: staticRoot,
    prefix: '/static/',
    index: 'index.html',
    redirect: true,
    dotfiles: 'ignore', // 404, as in the memory and gzip paths (@fastify/static's default serves them)
  });
  registerBenchPage(app);

  app.get('/', (_request, reply) => reply.sendFile('index.html'));

  app.get(
    '/qr',
    { schema: { querystring: { type: 'object', required: ['text'], properties: { text: textSchema } } } },
    async (request, reply) => {
      const text = checkText(/** @type {{ text: string }} */ (request.query).text, LIMITS.qrTextBytes);
      const result =
        mode === 'offload'
          ? await kernels.qr.toDataURL(text, { ...QR_DEFAULTS, ...call(reply) })
          : await qrBlocking(text, QR_DEFAULTS);
      return { result };
    },
  );

  const md5Query = {
    type: 'object',
    required: ['text'],
    properties: { text: textSchema, rounds: integerSchema(LIMITS.defaultRounds) },
  };

  app.get('/md5', { schema: { querystring: md5Query } }, async (request, reply) => {
    const q = /** @type {{ text: string, rounds: string }} */ (request.query);
    const text = checkText(q.text, LIMITS.md5TextBytes);
    const rounds = checkRounds(Number(q.rounds));
    const digest =
      mode === 'offload' ? await kernels.md5.iterate(text, rounds, call(reply)) : md5Loop(md5Blueimp, text, rounds);
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
      const q = /** @type {{ text: string, rounds: string }} */ (request.query);
      const { impl } = /** @type {{ impl: string }} */ (request.params);
      if (md5Impls[impl].blocksLoop && !experimentRoutes) {
        throw new HttpError(
          'ERR_NOT_FOUND',
          `/md5/${impl} runs on the event loop (an experiment row): start the service with --experiments or EXPERIMENT_ROUTES=1`,
        );
      }
      const text = checkText(q.text, LIMITS.md5TextBytes);
      const rounds = checkRounds(Number(q.rounds));
      return { digest: await md5Impls[impl].run(kernels, text, rounds, call(reply), md5Ctx), impl };
    },
  );

  app.get('/md5/impls', async () =>
    Object.fromEntries(
      Object.entries(md5Impls)
        .filter(([, { blocksLoop }]) => experimentRoutes || !blocksLoop)
        .map(([name, { summary }]) => [name, summary]),
    ),
  );

  app.get(
    '/pi',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: {
            samples: integerSchema(LIMITS.defaultSamples),
            seed: integerSchema(1),
          },
        },
      },
    },
    async (request, reply) => {
      const q = /** @type {{ samples: string, seed: string }} */ (request.query);
      const samples = checkSamples(Number(q.samples));
      const seed = Number(q.seed); // beyond 2^53 the kernel answers ERR_INVALID_SEED
      if (mode === 'blocking') return kernels.pi.estimateSync(samples, { seed });
      return kernels.pi.estimate(samples, { seed, ...call(reply) });
    },
  );

  app.get('/loop', async () => loop.snapshot());
  app.post('/loop/reset', async () => {
    loop.reset();
    return { ok: true };
  });

  app.get('/metrics', async (_request, reply) => {
    reply.type(metrics.register.contentType);
    return clusterSide ? clusterSide.metrics() : metrics.register.metrics();
  });

  app.get('/health', async () => ({ ok: true, mode, pid: process.pid, pool: poolOf().stats() }));
  app.decorate('clusterSide', clusterSide);

  return app;
}
