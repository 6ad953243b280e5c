// The files directly in public/, read once at start and served from memory: as fastify
// routes (GET /static/<name>, HEAD too) and, in front of fastify, by a plain node:http
// handler that answers the same GETs and HEADs itself. A new connection per request
// (ab without keep-alive) costs the service mostly fastify's per-request machinery
// (request and reply objects, a child logger, four async hooks): the front handler
// skips it and writes the same status, headers and bytes as those routes, counted in
// the same metrics. Anything it is not sure to answer identically goes to fastify.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { acceptsGzip, gzipCandidate, staticType } from './static-gzip.mjs';

/**
 * @typedef {object} MemoryFile
 * @property {string} route          `/static/<name>`: the URL path, and the route label in /metrics
 * @property {Buffer} body
 * @property {string} etag           a strong validator: the SHA-1 of the bytes
 * @property {string} type           Content-Type by extension
 * @property {boolean} gzipCandidate a GET from a client that accepts gzip goes to the pool (static-gzip.mjs)
 * @property {Record<string, string>} ok           200 headers, in the order fastify writes them
 * @property {Record<string, string>} notModified  304 headers for a GET
 * @property {Record<string, string>} notModifiedHead 304 headers for a HEAD (fastify's HEAD route adds a length of 0)
 */

/**
 * The regular, non-hidden files directly in `root`, keyed by their URL path.
 * @param {string} root
 * @returns {Map<string, MemoryFile>}
 */
export function loadMemoryFiles(root) {
  /** @type {Map<string, MemoryFile>} */
  const files = new Map();
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (!entry.isFile() || entry.name.startsWith('.')) continue;
    const body = readFileSync(join(root, entry.name));
    const etag = `"${createHash('sha1').update(body).digest('base64url')}"`;
    const type = staticType(entry.name);
    const validators = { etag, 'cache-control': 'public, max-age=0' };
    files.set(`/static/${entry.name}`, {
      route: `/static/${entry.name}`,
      body,
      etag,
      type,
      gzipCandidate: gzipCandidate(type, body.length),
      ok: { ...validators, 'content-type': type, 'content-length': String(body.length) },
      notModified: validators,
      notModifiedHead: { ...validators, 'content-length': '0' },
    });
  }
  return files;
}

/**
 * The fastify routes for `files` (what inject() and the requests the front handler
 * passes on get), each with an ETag and 304s.
 * @param {import('fastify').FastifyInstance} app
 * @param {Map<string, MemoryFile>} files
 */
export function registerMemoryRoutes(app, files) {
  for (const file of files.values()) {
    app.get(file.route, (request, reply) => {
      reply.header('etag', file.etag).header('cache-control', 'public, max-age=0');
      if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
      return reply.type(file.type).send(file.body);
    });
  }
}

/**
 * @typedef {object} FrontStaticOptions
 * @property {Map<string, MemoryFile>} files
 * @property {(method: string, route: string, status: number, ms: number) => void} record
 *   counts an answered request (metrics.record: http_requests_total and the duration histogram)
 */

/**
 * The front handler: answers a request for one of `files` and returns true, or returns
 * false without touching `res` (fastify takes it). It passes on: other methods and
 * paths (a path is matched as sent: `%2E` or `//` forms go to fastify's router), an
 * HTTP/1.1 request without Host (fastify's onRequest hook answers 400), and a GET the
 * gzip hook would compress (a compressible file of at least 1 KiB for a client that
 * accepts gzip, no Range).
 * No in-flight gauge change: the answer is written before the handler returns, so no
 * scrape can see the request in flight.
 * @param {FrontStaticOptions} o
 * @returns {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => boolean}
 */
export function frontStatic({ files, record }) {
  return function serveFromMemory(req, res) {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = /** @type {string} */ (req.url);
    const q = url.indexOf('?');
    const file = files.get(q < 0 ? url : url.slice(0, q));
    if (file === undefined) return false;
    const headers = req.headers;
    if (headers.host === undefined && req.httpVersion === '1.1') return false;
    // The gzip hook's own test (static-gzip.mjs), in the same terms.
    if (method === 'GET' && file.gzipCandidate && !headers.range && acceptsGzip(headers['accept-encoding'])) {
      return false;
    }
    const startedAt = performance.now();
    let status = 200;
    if (headers['if-none-match'] === file.etag) {
      status = 304;
      res.writeHead(304, method === 'HEAD' ? file.notModifiedHead : file.notModified);
      res.end();
    } else {
      res.writeHead(200, file.ok);
      res.end(method === 'HEAD' ? undefined : file.body);
    }
    record(method, file.route, status, performance.now() - startedAt);
    return true;
  };
}
