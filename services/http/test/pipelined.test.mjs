// Pipelined requests over raw sockets (node:net): each request the server read gets its
// answer, in order, whatever follows it on the connection: bad bytes (the 400 comes last),
// an unknown Expect (417 in the JSON shape), SIGTERM (the answers queued behind a running
// request are sent, not dropped with the connection). And `http_requests_in_flight`
// comes back to the scrape alone.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { md5LoopReference, startServer } from '../test-support/helpers.mjs';
import { spawnService } from '../test-support/process.mjs';

const H = 'Host: 127.0.0.1\r\n';

/**
 * A raw connection: `write(data)`, `responses(n)` (the first n complete responses, parsed),
 * `closed` (resolves with everything received when the server closes it).
 * @param {number} port
 */
function connection(port) {
  const socket = net.connect(port, '127.0.0.1');
  let buf = Buffer.alloc(0);
  const waiters = new Set();
  socket.on('error', () => {});
  socket.on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (const w of waiters) w();
  });
  const connected = new Promise((resolve) => socket.once('connect', resolve));
  const closed = new Promise((resolve) =>
    socket.once('close', () => {
      for (const w of waiters) w();
      resolve(parseAll(buf));
    }),
  );
  return {
    socket,
    connected,
    closed,
    write: (/** @type {string} */ data) => socket.write(data),
    /** @param {number} n */
    responses(n) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const all = parseAll(buf);
          if (all.length >= n) {
            waiters.delete(check);
            resolve(all);
          } else if (socket.destroyed) {
            waiters.delete(check);
            reject(new Error(`closed after ${all.length} of ${n} responses: ${buf.toString('latin1')}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/**
 * Every complete response in `buf` (Content-Length or chunked bodies).
 * @param {Buffer} buf
 * @returns {{ status: number, headers: Record<string, string>, body: string }[]}
 */
function parseAll(buf) {
  const out = [];
  let at = 0;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', at);
    if (end < 0) return out;
    const lines = buf.subarray(at, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0])?.[1]);
    /** @type {Record<string, string>} */
    const headers = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
    }
    let pos = end + 4;
    let body = '';
    if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const eol = buf.indexOf('\r\n', pos);
        if (eol < 0) return out;
        const size = Number.parseInt(buf.subarray(pos, eol).toString('latin1'), 16);
        if (buf.length < eol + 2 + size + 2) return out;
        body += buf.subarray(eol + 2, eol + 2 + size).toString('utf8');
        pos = eol + 2 + size + 2;
        if (size === 0) break;
      }
    } else {
      const length = Number(headers['content-length'] ?? 0);
      if (buf.length - pos < length) return out;
      body = buf.subarray(pos, pos + length).toString('utf8');
      pos += length;
    }
    out.push({ status, headers, body });
    at = pos;
  }
}

/** The gauge's value in a /metrics text. */
const inFlight = (/** @type {string} */ text) => Number(/^http_requests_in_flight (\d+)$/m.exec(text)?.[1]);

/** @param {import('node:test').TestContext} t */
async function listen(t) {
  const { app } = await startServer(t);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: /** @type {import('node:net').AddressInfo} */ (app.server.address()).port };
}

test('valid pipelined requests then a bad byte: both answered in order, then the 400, then close', {
  timeout: 30_000,
}, async (t) => {
  const { app, port } = await listen(t);
  const c = connection(port);
  await c.connected;
  c.write(`GET /health HTTP/1.1\r\n${H}\r\nGET /md5?text=a&rounds=3 HTTP/1.1\r\n${H}\r\n\x01`);
  const all = await c.closed;
  assert.deepEqual(
    all.map((r) => r.status),
    [200, 200, 400],
    JSON.stringify(all),
  );
  assert.equal(JSON.parse(all[0].body).ok, true);
  assert.equal(JSON.parse(all[1].body).digest, md5LoopReference('a', 3));
  assert.equal(JSON.parse(all[2].body).error.code, 'ERR_INVALID_ARG');
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  assert.equal(inFlight(metrics), 1, 'only this scrape is in flight');
});

test('a bad JSON body pipelined before a bad byte: answered, and nothing stays in flight', {
  timeout: 30_000,
}, async (t) => {
  const { app, port } = await listen(t);
  const c = connection(port);
  await c.connected;
  c.write(`POST /loop/reset HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 5\r\n\r\n{bad}\x01`);
  const all = await c.closed;
  // fastify closes the connection after a body it could not parse: the bad byte after it
  // is never read (or is answered 400 after it).
  assert.ok(all.length === 1 || all.length === 2, JSON.stringify(all));
  for (const r of all) {
    assert.equal(r.status, 400);
    assert.equal(JSON.parse(r.body).error.code, 'ERR_INVALID_ARG');
  }
  assert.match(JSON.parse(all[0].body).error.message, /JSON/);
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  assert.equal(inFlight(metrics), 1, 'only this scrape is in flight');
});

test('an unknown Expect: 417 in the JSON shape, counted', { timeout: 30_000 }, async (t) => {
  const { app, port } = await listen(t);
  const c = connection(port);
  await c.connected;
  c.write(`GET /health HTTP/1.1\r\n${H}Expect: something-else\r\n\r\n`);
  const [r] = await c.responses(1);
  assert.equal(r.status, 417);
  assert.match(r.headers['content-type'] ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(JSON.parse(r.body).error).sort(), ['code', 'message']);
  assert.equal(JSON.parse(r.body).error.code, 'ERR_EXPECTATION_FAILED');
  c.socket.destroy();
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  assert.match(metrics, /^http_requests_total\{method="GET",route="\(unmatched\)",status_code="417"\} 1$/m);
});

test('SIGTERM: a request pipelined behind a running one is answered (200 or 503), not dropped', {
  timeout: 60_000,
}, async (t) => {
  const main = spawnService(['--mode', 'offload']);
  t.after(() => main.child.kill('SIGKILL'));
  const { port } = new URL(await main.url);
  const c = connection(Number(port));
  await c.connected;
  // A request that cannot finish before its body comes: in flight until this test sends it.
  c.write(`POST /loop/reset HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n`);
  const scrape = connection(Number(port));
  await scrape.connected;
  for (let i = 0; ; i++) {
    scrape.write(`GET /metrics HTTP/1.1\r\n${H}\r\n`);
    const all = await scrape.responses(i + 1);
    if (inFlight(all[i].body) >= 2) break; // the POST and this scrape
    assert.ok(i < 500, 'the POST never arrived');
    await new Promise((r) => setTimeout(r, 20));
  }
  scrape.socket.destroy();
  main.child.kill('SIGTERM');
  for (let i = 0; i < 500 && !main.output().includes('SIGTERM'); i++) await new Promise((r) => setTimeout(r, 20));
  // The body, and a second request pipelined behind the first.
  c.write(`{}GET /health HTTP/1.1\r\n${H}\r\n`);
  const all = await c.closed;
  assert.equal(all.length, 2, `answers: ${JSON.stringify(all)}\n${main.output()}`);
  assert.equal(all[0].status, 200);
  assert.ok([200, 503].includes(all[1].status), JSON.stringify(all[1]));
  if (all[1].status === 503) assert.equal(JSON.parse(all[1].body).error.code, 'ERR_SHUTTING_DOWN');
  assert.equal(all[1].headers.connection, 'close', 'the last answer says close');
  assert.deepEqual(await main.exit, { code: 0, signal: null }, main.output());
});
