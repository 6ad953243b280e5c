// /static/… gzipped off the event loop, as Nexus.js's server does: a GET whose client
// accepts gzip, for a compressible file of at least GZIP_MIN_BYTES, is read from disk
// and gzipped by offthread's filters.gzip() on the pool, chunk by chunk, and sent with
// chunked transfer encoding (no Content-Length: the size is known only at the end).
// Everything else falls through to the plain static routes (server.mjs): clients that
// do not accept gzip (ab, the benchmark's uncompressed case, keeps the in-memory path),
// HEAD, Range requests, small or already-compressed files, and anything that does not
// resolve to a file inside the root (those routes answer 404 in JSON).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream';
import offthread from 'offthread';

/**
 * Smaller files go out plain: gzip's 18-byte frame and a pool round trip buy little
 * under 1 KiB (the `compression` middleware's default threshold too).
 */
export const GZIP_MIN_BYTES = 1024;

/** MIME types by extension; anything else is application/octet-stream. */
export const STATIC_TYPES = /** @type {Record<string, string>} */ ({
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

/** @param {string} name */
export const staticType = (name) => STATIC_TYPES[extname(name)] ?? 'application/octet-stream';

/** Text formats and wasm compress well; images (but SVG) and unknown bytes are sent as they are. */
const COMPRESSIBLE = /^(text\/|application\/(json|wasm)|image\/svg\+xml)/;

/**
 * Whether a file of this type and size is gzipped for a client that accepts it.
 * @param {string} type
 * @param {number} size bytes
 * @param {number} [minBytes]
 */
export const gzipCandidate = (type, size, minBytes = GZIP_MIN_BYTES) => size >= minBytes && COMPRESSIBLE.test(type);

const MAY_ACCEPT_GZIP = /gzip|\*/i;

/**
 * Whether an Accept-Encoding header takes gzip (`gzip`, `x-gzip` or `*`, with q > 0;
 * an explicit `gzip;q=0` refuses it even next to `*`).
 * @param {unknown} header
 */
export function acceptsGzip(header) {
  // Most clients that do not take gzip name neither it nor `*` (`identity`, `br`): no parse.
  if (typeof header !== 'string' || !MAY_ACCEPT_GZIP.test(header)) return false;
  let star = false;
  for (const part of header.toLowerCase().split(',')) {
    const [name, ...params] = part.split(';').map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    const ok = q === undefined || Number(q.slice(2)) > 0;
    if (name === 'gzip' || name === 'x-gzip') return ok;
    if (name === '*') star = ok;
  }
  return star;
}

/**
 * The file a /static/ URL names inside `root`: a directory asked for with a trailing
 * slash means its index.html. Null for anything else: a path that leaves the root
 * (`..`, an absolute path), a dotfile, a bad escape, NUL, no such file. Symlinks inside
 * the root are followed, as the plain route (@fastify/static) follows them.
 * @param {string} root an absolute directory
 * @param {string} url the request URL (`/static/…`, maybe with a query)
 * @returns {Promise<{ path: string, size: number, mtimeMs: number, type: string } | null>}
 */
export async function staticFile(root, url) {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (!path.startsWith('/static/')) return null;
  let rel;
  try {
    rel = decodeURIComponent(path.slice('/static/'.length));
  } catch {
    return null;
  }
  if (rel.includes('\0') || rel.includes('\\') || rel.startsWith('/')) return null;
  if (rel.split('/').some((s) => s.startsWith('.'))) return null; // `..`, `.`, dotfiles
  const base = resolve(root);
  let full = resolve(base, rel);
  if (full !== base && !full.startsWith(base + sep)) return null;
  let s = await stat(full).catch(() => null);
  if (s?.isDirectory()) {
    if (!path.endsWith('/')) return null; // the plain route redirects to the slash form
    full = join(full, 'index.html');
    s = await stat(full).catch(() => null);
  }
  if (!s?.isFile()) return null;
  return { path: full, size: s.size, mtimeMs: s.mtimeMs, type: staticType(full) };
}

/**
 * Resolves once `stream` has bytes to read (or has ended); rejects with its error if it
 * fails first. Reads nothing: the bytes stay buffered for the reply.
 * @param {import('node:stream').Readable} stream
 */
function firstBytes(stream) {
  return new Promise((resolve, reject) => {
    const done = (/** @type {Error | undefined} */ err) => {
      stream.off('readable', done).off('end', done).off('error', done);
      if (err instanceof Error) reject(err);
      else resolve(undefined);
    };
    stream.on('readable', done).on('end', done).on('error', done);
  });
}

/**
 * The onRequest hook of the /static/ routes: answers gzip-accepting GETs of compressible
 * files with their gzip stream, leaves every other request to the route.
 * @param {{ root: string, pool: () => import('offthread').Pool, minBytes?: number }} o
 */
export function staticGzip({ root, pool, minBytes = GZIP_MIN_BYTES }) {
  /**
   * @param {import('fastify').FastifyRequest} request
   * @param {import('fastify').FastifyReply} reply
   */
  return async function gzipStatic(request, reply) {
    if (request.method !== 'GET' || request.headers.range) return;
    if (!acceptsGzip(request.headers['accept-encoding'])) return;
    const file = await staticFile(root, request.url);
    if (!file || !gzipCandidate(file.type, file.size, minBytes)) return;
    // Another representation than the plain bytes: its own (weak) validator.
    const etag = `W/"${file.size.toString(16)}-${Math.floor(file.mtimeMs).toString(16)}-gzip"`;
    if (request.headers['if-none-match'] === etag) {
      return reply.code(304).header('vary', 'accept-encoding').header('etag', etag).send();
    }
    // A stream waits for room on a full queue (docs/streams.md); an HTTP answer should not
    // wait behind minutes of work: past the pool's maxQueue it is 503 + Retry-After now.
    const p = pool();
    if (p.stats().queued >= p.maxQueue) {
      throw Object.assign(new Error(`the pool already holds ${p.maxQueue} queued jobs (maxQueue)`), {
        code: 'ERR_QUEUE_FULL',
      });
    }
    const gzip = offthread.filters.gzip({ pool: p });
    // pipeline destroys the file stream when the reply's stream is destroyed (client gone).
    pipeline(createReadStream(file.path, { highWaterMark: 64 * 1024 }), gzip, () => {});
    // Nothing is promised before the pool has made the first gzip bytes: a refusal then
    // (ERR_QUEUE_FULL, ERR_POOL_CLOSED, an unreadable file) is the error handler's
    // answer in JSON (503 + Retry-After), not a 500 labelled gzip. After it only a
    // truncated body can say that the stream failed.
    await firstBytes(gzip);
    return reply
      .type(file.type)
      .header('content-encoding', 'gzip')
      .header('vary', 'accept-encoding')
      .header('etag', etag)
      .header('cache-control', 'public, max-age=0')
      .send(gzip);
  };
}
