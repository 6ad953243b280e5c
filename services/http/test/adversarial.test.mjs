// The malformed-request battery over raw sockets (node:net, loopback): bad
// percent-encodings, huge and repeated parameters, traversal on /static, every method,
// oversize and missing headers, malformed HTTP, bad numbers, slow and silent clients.
// Every error must be `{ error: { code, message } }` with its code and status, and be
// counted in /metrics.
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import { LIMITS } from '../src/server.mjs';
import { md5LoopReference, requireKernels, startServer } from '../test-support/helpers.mjs';

const H = 'Host: 127.0.0.1\r\n';
const get = (/** @type {string} */ target) => `GET ${target} HTTP/1.1\r\n${H}\r\n`;

/**
 * @typedef {{ status: number | null, headers: Record<string, string>, body: string, closed: boolean, bytes: number, text?: string }} RawResponse
 */

/**
 * Opens a connection, writes `data` (or lets `drive` write), and reads one response:
 * resolves when its body is complete, when the server closes the connection, or after
 * `deadlineMs` (then `status` is null and the connection is destroyed).
 * @param {number} port
 * @param {{ data?: string, head?: boolean, drive?: (socket: net.Socket) => void, deadlineMs?: number, waitClose?: boolean }} o
 * @returns {Promise<RawResponse>}
 */
function exchange(port, { data, head = false, drive, deadlineMs = 10_000, waitClose = false }) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    /** @type {RawResponse | undefined} */
    let parsed;
    let settled = false;
    const finish = (/** @type {boolean} */ closed) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        ...(parsed ?? { status: null, headers: {}, body: '' }),
        closed,
        bytes: buf.length,
        text: buf.toString('latin1'),
      });
      socket.destroy();
    };
    const timer = setTimeout(() => finish(false), deadlineMs);
    socket.on('error', () => {});
    socket.on('close', () => finish(true));
    socket.on('connect', () => (drive ? drive(socket) : socket.write(data ?? '')));
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (!parsed) parsed = parseResponse(buf, head);
      if (parsed && !waitClose) finish(false);
    });
  });
}

/**
 * One complete response at the start of `buf` (after any 100 Continue), or undefined.
 * @param {Buffer} buf
 * @param {boolean} head
 * @returns {RawResponse | undefined}
 */
function parseResponse(buf, head) {
  let at = 0;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', at);
    if (end < 0) return undefined;
    const lines = buf.subarray(at, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1]);
    if (status === 100) {
      at = end + 4;
      continue;
    }
    /** @type {Record<string, string>} */
    const headers = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = head ? 0 : Number(headers['content-length'] ?? 0);
    if (buf.length - (end + 4) < length) return undefined;
    const body = buf.subarray(end + 4, end + 4 + length).toString('utf8');
    return { status, headers, body, closed: false, bytes: buf.length };
  }
}

/** The JSON error shape, exactly: `{ error: { code, message } }`. */
function assertErrorShape(/** @type {RawResponse} */ r, /** @type {string} */ code, /** @type {string} */ why) {
  assert.match(r.headers['content-type'] ?? '', /^application\/json/, `${why}: content-type`);
  const body = JSON.parse(r.body);
  assert.deepEqual(Object.keys(body), ['error'], `${why}: ${r.body}`);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message'], `${why}: ${r.body}`);
  assert.equal(body.error.code, code, `${why}: ${r.body}`);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
}

/**
 * [why, request bytes, status, code (errors) or a check of the body (successes), closes?]
 * `closes`: the server ends the connection after answering (errors before a request exists).
 * @type {Array<{ why: string, send: string, status: number, code?: string, body?: (b: string) => void, head?: boolean, closes?: boolean }>}
 */
const CASES = [
  // percent-encodings
  { why: 'bad escape in the path', send: get('/%ZZ'), status: 400, code: 'ERR_INVALID_ARG' },
  { why: 'truncated UTF-8 escape in /static', send: get('/static/%E0%A4%A'), status: 400, code: 'ERR_INVALID_ARG' },
  { why: 'bad escape in a path parameter', send: get('/md5/%ZZ?text=a'), status: 400, code: 'ERR_INVALID_ARG' },
  {
    why: 'bad escape in the query is kept literally (README)',
    send: get('/md5?text=%ZZ&rounds=3'),
    status: 200,
    body: (b) => assert.equal(JSON.parse(b).digest, md5LoopReference('%ZZ', 3)),
  },
  {
    why: 'an encoded NUL is ordinary text',
    send: get('/md5?text=%00&rounds=3'),
    status: 200,
    body: (b) => assert.equal(JSON.parse(b).digest, md5LoopReference('\0', 3)),
  },
  { why: 'an empty text', send: get('/md5?text='), status: 400, code: 'ERR_INVALID_TEXT' },
  {
    why: 'an encoded lone surrogate (invalid UTF-8) is kept literally',
    send: get('/md5?text=%ED%A0%80&rounds=3'),
    status: 200,
    body: (b) => assert.equal(JSON.parse(b).digest, md5LoopReference('%ED%A0%80', 3)),
  },
  // huge and duplicated parameters
  {
    why: 'text over 4 KiB',
    send: get(`/md5?text=${'a'.repeat(LIMITS.md5TextBytes + 1)}`),
    status: 400,
    code: 'ERR_TEXT_TOO_LONG',
  },
  {
    why: 'a 20 KB query string',
    send: get(`/md5?text=${'a'.repeat(20_000)}`),
    status: 431,
    code: 'ERR_HEADERS_TOO_LARGE',
    closes: true,
  },
  { why: 'text repeated', send: get('/md5?text=a&text=b'), status: 400, code: 'ERR_INVALID_ARG' },
  { why: 'rounds repeated', send: get('/md5?text=a&rounds=1&rounds=2'), status: 400, code: 'ERR_INVALID_ARG' },
  { why: 'text as a bracket array', send: get('/qr?text[]=a'), status: 400, code: 'ERR_INVALID_ARG' },
  {
    why: '1,500 unknown parameters are ignored',
    send: get(`/md5?text=a&rounds=1&${Array.from({ length: 1500 }, (_, i) => `p${i}=1`).join('&')}`),
    status: 200,
    body: (b) => assert.equal(JSON.parse(b).digest, md5LoopReference('a', 1)),
  },
  {
    why: 'a path parameter over 100 characters',
    send: get(`/md5/${'a'.repeat(101)}?text=a`),
    status: 414,
    code: 'ERR_URI_TOO_LONG',
  },
  // traversal on /static
  { why: 'traversal ../', send: get('/static/../src/server.mjs'), status: 404, code: 'ERR_NOT_FOUND' },
  { why: 'traversal %2e%2e/', send: get('/static/%2e%2e/src/server.mjs'), status: 404, code: 'ERR_NOT_FOUND' },
  { why: 'traversal ..%2f', send: get('/static/..%2fsrc%2fserver.mjs'), status: 404, code: 'ERR_NOT_FOUND' },
  {
    why: 'traversal to package.json',
    send: get('/static/%2e%2e%2f%2e%2e%2fpackage.json'),
    status: 404,
    code: 'ERR_NOT_FOUND',
  },
  { why: 'traversal ....//', send: get('/static/....//....//etc/passwd'), status: 404, code: 'ERR_NOT_FOUND' },
  { why: 'traversal with backslashes', send: get('/static/..\\src\\server.mjs'), status: 404, code: 'ERR_NOT_FOUND' },
  { why: 'absolute path in /static', send: get('/static//etc/passwd'), status: 404, code: 'ERR_NOT_FOUND' },
  { why: 'NUL in a /static path', send: get('/static/%00'), status: 404, code: 'ERR_NOT_FOUND' },
  {
    why: '/static/bench.html itself',
    send: get('/static/bench.html'),
    status: 200,
    body: (b) => assert.equal(Buffer.byteLength(b), 8673),
  },
  // methods
  ...['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND'].map((m) => ({
    why: `${m} /md5`,
    send: `${m} /md5?text=a HTTP/1.1\r\n${H}Content-Length: 0\r\n\r\n`,
    status: 404,
    code: 'ERR_NOT_FOUND',
  })),
  { why: 'OPTIONS *', send: `OPTIONS * HTTP/1.1\r\n${H}\r\n`, status: 404, code: 'ERR_NOT_FOUND' },
  {
    why: 'CONNECT gets an answer',
    send: `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`,
    status: 404,
    code: 'ERR_NOT_FOUND',
    closes: true,
  },
  {
    why: 'HEAD /health',
    send: `HEAD /health HTTP/1.1\r\n${H}\r\n`,
    status: 200,
    head: true,
    body: (b) => assert.equal(b, ''),
  },
  { why: 'an unknown method', send: `FOO / HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'ERR_INVALID_ARG', closes: true },
  {
    why: 'HTTP/2 preface on HTTP/1',
    send: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
    status: 400,
    code: 'ERR_INVALID_ARG',
    closes: true,
  },
  {
    why: 'a body of an unsupported type',
    send: `POST /loop/reset HTTP/1.1\r\n${H}Content-Type: text/xml\r\nContent-Length: 1\r\n\r\nx`,
    status: 415,
    code: 'ERR_INVALID_ARG',
  },
  {
    why: 'a 2 MB body announced',
    send: `POST /loop/reset HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 2000000\r\n\r\n`,
    status: 413,
    code: 'ERR_INVALID_ARG',
  },
  // Host and headers
  { why: 'HTTP/1.1 without Host', send: 'GET /health HTTP/1.1\r\n\r\n', status: 400, code: 'ERR_INVALID_ARG' },
  {
    why: 'HTTP/1.0 without Host is fine',
    send: 'GET /health HTTP/1.0\r\n\r\n',
    status: 200,
    body: (b) => assert.equal(JSON.parse(b).ok, true),
  },
  {
    why: 'one 20 KB header',
    send: `GET /health HTTP/1.1\r\n${H}X-A: ${'a'.repeat(20_000)}\r\n\r\n`,
    status: 431,
    code: 'ERR_HEADERS_TOO_LARGE',
    closes: true,
  },
  {
    why: '200 headers of 100 bytes',
    send: `GET /health HTTP/1.1\r\n${H}${Array.from({ length: 200 }, (_, i) => `X-${i}: ${'a'.repeat(100)}\r\n`).join('')}\r\n`,
    status: 431,
    code: 'ERR_HEADERS_TOO_LARGE',
    closes: true,
  },
  // malformed HTTP
  {
    why: 'a non-numeric Content-Length',
    send: `GET / HTTP/1.1\r\n${H}Content-Length: abc\r\n\r\n`,
    status: 400,
    code: 'ERR_INVALID_ARG',
    closes: true,
  },
  {
    why: 'Content-Length with chunked (smuggling)',
    send: `POST /loop/reset HTTP/1.1\r\n${H}Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    status: 400,
    code: 'ERR_INVALID_ARG',
    closes: true,
  },
  {
    why: 'a header without a colon',
    send: `GET / HTTP/1.1\r\n${H}Bad header\r\n\r\n`,
    status: 400,
    code: 'ERR_INVALID_ARG',
    closes: true,
  },
  { why: 'HTTP/9.9', send: `GET / HTTP/9.9\r\n${H}\r\n`, status: 400, code: 'ERR_INVALID_ARG', closes: true },
  {
    why: 'a space in the target',
    send: `GET /a b HTTP/1.1\r\n${H}\r\n`,
    status: 400,
    code: 'ERR_INVALID_ARG',
    closes: true,
  },
  {
    why: 'NUL in a header value',
    send: `GET / HTTP/1.1\r\n${H}X: a\0b\r\n\r\n`,
    status: 400,
    code: 'ERR_INVALID_ARG',
    closes: true,
  },
  {
    why: 'line noise',
    send: '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n',
    status: 400,
    code: 'ERR_INVALID_ARG',
    closes: true,
  },
  // bad numbers
  ...['0x10', '0b11', '%205', '1.0', '1e3', '%2B5', '', 'NaN', '-'].map((v) => ({
    why: `rounds=${v}`,
    send: get(`/md5?text=a&rounds=${v}`),
    status: 400,
    code: 'ERR_INVALID_ARG',
  })),
  { why: 'rounds=-0', send: get('/md5?text=a&rounds=-0'), status: 400, code: 'ERR_INVALID_ROUNDS' },
  { why: 'samples=1e6', send: get('/pi?samples=1e6'), status: 400, code: 'ERR_INVALID_ARG' },
  {
    why: 'samples beyond 2^53',
    send: get('/pi?samples=99999999999999999999'),
    status: 400,
    code: 'ERR_INVALID_SAMPLES',
  },
  { why: 'seed=0x10', send: get('/pi?samples=10&seed=0x10'), status: 400, code: 'ERR_INVALID_ARG' },
  // event-loop rows are not public
  { why: '/md5/js at 10^7 rounds', send: get('/md5/js?text=a&rounds=10000000'), status: 404, code: 'ERR_NOT_FOUND' },
];

/** Sums http_requests_total by status code. */
function totalsByStatus(/** @type {string} */ text) {
  /** @type {Record<string, number>} */
  const totals = {};
  for (const m of text.matchAll(/^http_requests_total\{[^}]*status_code="(\d+)"\} (\d+)$/gm)) {
    totals[m[1]] = (totals[m[1]] ?? 0) + Number(m[2]);
  }
  return totals;
}

describe('adversarial requests over raw sockets', () => {
  test('every case: its status, the JSON error shape, counted in /metrics', async (t) => {
    requireKernels();
    const { app } = await startServer(t);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = /** @type {import('node:net').AddressInfo} */ (app.server.address()).port;
    /** @type {Record<string, number>} */
    const expected = {};
    for (const c of CASES) {
      const r = await exchange(port, { data: c.send, head: c.head });
      assert.equal(r.status, c.status, `${c.why}: got ${r.status} ${r.body.slice(0, 200)}`);
      if (c.code) assertErrorShape(r, c.code, c.why);
      else c.body?.(r.body);
      if (c.closes) assert.equal(r.headers.connection?.toLowerCase(), 'close', `${c.why}: Connection`);
      expected[c.status] = (expected[c.status] ?? 0) + 1;
    }
    const metrics = await exchange(port, { data: get('/metrics') });
    assert.equal(metrics.status, 200);
    assert.deepEqual(totalsByStatus(metrics.body), expected, 'every answer counted once, by status');
    // Still serving.
    assert.equal((await exchange(port, { data: get('/md5?text=a&rounds=1') })).status, 200);
  });
});

describe('slow and silent clients (short timeouts)', () => {
  // The idle timeout far beyond the headers one (as by default), so that node's header
  // check (408) always comes first; the idle test sets its own.
  const timeouts = { headersMs: 300, requestMs: 600, idleMs: 10_000, keepAliveMs: 300, checkIntervalMs: 100 };

  /** @param {import('node:test').TestContext} t @param {object} [opts] */
  async function listen(t, opts = {}) {
    const { app } = await startServer(t, { timeouts, ...opts });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { app, port: /** @type {import('node:net').AddressInfo} */ (app.server.address()).port };
  }

  test('half a header, then silence → 408 ERR_REQUEST_TIMEOUT, closed', async (t) => {
    const { port } = await listen(t);
    const r = await exchange(port, { data: `GET /health HTTP/1.1\r\n${H}X-Half: `, waitClose: true });
    assert.equal(r.status, 408, JSON.stringify(r));
    assertErrorShape(r, 'ERR_REQUEST_TIMEOUT', 'half a header');
    assert.equal(r.closed, true);
  });

  test('slowloris (a header byte every 50 ms) → 408, closed', async (t) => {
    const { port } = await listen(t);
    /** @type {NodeJS.Timeout | undefined} */
    let drip;
    t.after(() => clearInterval(drip));
    const r = await exchange(port, {
      waitClose: true,
      drive(socket) {
        socket.write(`GET /health HTTP/1.1\r\n${H}X-Slow: `);
        let sent = 0;
        drip = setInterval(() => {
          // Bounded: 200 bytes (10 s) at most; the server must cut it long before.
          if (sent++ >= 200 || socket.destroyed) return clearInterval(drip);
          socket.write('a');
        }, 50);
      },
    });
    clearInterval(drip);
    assert.equal(r.status, 408, JSON.stringify(r));
    assertErrorShape(r, 'ERR_REQUEST_TIMEOUT', 'slowloris');
  });

  test('a connection that sends nothing → 408 ERR_REQUEST_TIMEOUT, closed', async (t) => {
    const { port } = await listen(t);
    const r = await exchange(port, { data: '', waitClose: true });
    assert.equal(r.status, 408, JSON.stringify(r));
    assertErrorShape(r, 'ERR_REQUEST_TIMEOUT', 'silent connection');
    assert.equal(r.closed, true, 'still open after the deadline');
  });

  test('an idle kept-alive connection is closed after its answer', async (t) => {
    const { port } = await listen(t);
    const r = await exchange(port, { data: get('/health'), waitClose: true });
    assert.equal(r.status, 200);
    assert.equal(r.closed, true, 'kept open past the deadline');
    assert.equal(r.text?.split('HTTP/1.1 ').length, 2, `one answer only: ${r.text}`);
  });

  test('with the keep-alive timeout off, an idle connection is closed after the idle timeout', async (t) => {
    const { port } = await listen(t, { timeouts: { ...timeouts, keepAliveMs: 0, idleMs: 400 } });
    const started = performance.now();
    const r = await exchange(port, { data: get('/health'), waitClose: true, deadlineMs: 5_000 });
    const ms = performance.now() - started;
    assert.equal(r.status, 200);
    assert.equal(r.closed, true, 'kept open past the idle timeout');
    assert.ok(ms >= 400, `closed after ${ms.toFixed(0)} ms, before the idle timeout`);
  });

  test('a request slower than the idle timeout still gets its answer', async (t) => {
    // A kernel that takes 1.5 s with the connection silent (idle timeout 400 ms).
    const slow = () =>
      new Promise((resolve) => setTimeout(() => resolve({ estimate: 3, inside: 3, samples: 4, seed: 1 }), 1500));
    const { port } = await listen(t, {
      kernels: { pi: { estimate: slow, estimateSync: slow } },
      timeouts: { ...timeouts, idleMs: 400 },
    });
    const r = await exchange(port, { data: get('/pi?samples=4') });
    assert.equal(r.status, 200, JSON.stringify(r));
    assert.equal(JSON.parse(r.body).estimate, 3);
  });

  test('the client-error answers are counted in /metrics', async (t) => {
    const { port } = await listen(t);
    await exchange(port, { data: `GET /health HTTP/1.1\r\n${H}X-Half: `, waitClose: true });
    await exchange(port, { data: 'FOO / HTTP/1.1\r\n\r\n' });
    const m = await exchange(port, { data: get('/metrics') });
    assert.match(
      m.body,
      /^http_requests_total\{method="\(unparsed\)",route="\(client error\)",status_code="408"\} 1$/m,
    );
    assert.match(
      m.body,
      /^http_requests_total\{method="\(unparsed\)",route="\(client error\)",status_code="400"\} 1$/m,
    );
  });
});
