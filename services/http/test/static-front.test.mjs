// The in-memory static files answered in front of fastify (static-memory.mjs): which
// requests the front handler takes and which it passes on, that the service's answers
// are byte for byte what fastify's routes answer (status line, headers in order, body;
// only Date differs), and that /metrics counts them as it counts fastify's.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { GZIP_MIN_BYTES } from '../src/static-gzip.mjs';
import { frontStatic, loadMemoryFiles } from '../src/static-memory.mjs';
import { startServer } from '../test-support/helpers.mjs';

/** A root with a big and a small compressible file, an image, an unknown type, a dotfile and a sub-directory. */
function makeRoot() {
  const root = mkdtempSync(join(tmpdir(), 'offthread-front-'));
  const page = Array.from({ length: 200 }, (_, i) => `<p>line ${i}, déjà vu 日本</p>\n`).join('');
  writeFileSync(join(root, 'page.html'), `<!doctype html>${page}`);
  writeFileSync(join(root, 'small.txt'), 'short');
  writeFileSync(join(root, 'pic.png'), Buffer.alloc(4096, 7));
  writeFileSync(join(root, 'blob.xyz'), Buffer.alloc(2048, 1));
  writeFileSync(join(root, '.hidden'), 'secret');
  writeFileSync(join(root, 'index.html'), `<!doctype html><title>index</title>${page}`);
  return root;
}

/**
 * Sends `request` (a whole HTTP/1.x request, as text) on a fresh connection and reads
 * until the server closes it (every request here asks for that, or is HTTP/1.0).
 * @param {number} port
 * @param {string} request
 * @returns {Promise<Buffer>}
 */
async function exchange(port, request) {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(request);
  const chunks = [];
  socket.on('data', (c) => chunks.push(c));
  await once(socket, 'end');
  socket.destroy();
  return Buffer.concat(chunks);
}

/** The response without its Date header (the only part that may differ between two servers). */
const withoutDate = (/** @type {Buffer} */ raw) => raw.toString('latin1').replace(/\r\nDate: [^\r]*/, '');

/**
 * @param {string} method
 * @param {string} path
 * @param {Record<string, string>} [headers]
 * @param {'1.0' | '1.1'} [version]
 */
function requestText(method, path, headers = {}, version = '1.1') {
  const lines = [`${method} ${path} HTTP/${version}`];
  if (version === '1.1') lines.push('Host: 127.0.0.1', 'Connection: close');
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** @param {string} text @param {string} series */
function metric(text, series) {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('static files in front of fastify', () => {
  test('the front handler takes GET/HEAD of the in-memory files and passes on the rest', async (t) => {
    const root = makeRoot();
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const files = loadMemoryFiles(root);
    assert.deepEqual([...files.keys()].sort(), [
      '/static/blob.xyz',
      '/static/index.html',
      '/static/page.html',
      '/static/pic.png',
      '/static/small.txt',
    ]);
    assert.ok((files.get('/static/small.txt')?.body.length ?? Infinity) < GZIP_MIN_BYTES);
    /** @type {[string, string, number, number][]} */
    const recorded = [];
    const serve = frontStatic({
      files,
      record: (method, route, status, ms) => recorded.push([method, route, status, ms]),
    });
    // What the front does not take answers 418, so each case shows who answered.
    // (requireHostHeader off, as in the service: the Host check is the front's to make)
    const server = createServer({ requireHostHeader: false }, (req, res) => {
      if (!serve(req, res)) res.writeHead(418, { connection: 'close' }).end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.after(() => server.close());
    const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
    const etag = files.get('/static/page.html')?.etag ?? '';
    const gzip = { 'Accept-Encoding': 'gzip, deflate, br' };
    /** @type {[string, string, Record<string, string>, '1.0' | '1.1', number][]} method, path, headers, version, status */
    const cases = [
      ['GET', '/static/page.html', {}, '1.1', 200],
      ['GET', '/static/page.html', {}, '1.0', 200], // ab's request: HTTP/1.0, no keep-alive
      ['HEAD', '/static/page.html', {}, '1.1', 200],
      ['GET', '/static/page.html?v=2', {}, '1.1', 200],
      ['GET', '/static/page.html', { 'If-None-Match': etag }, '1.1', 304],
      ['HEAD', '/static/page.html', { 'If-None-Match': etag }, '1.1', 304],
      ['GET', '/static/page.html', { 'If-None-Match': '"other"' }, '1.1', 200],
      ['GET', '/static/page.html', { 'Accept-Encoding': 'gzip;q=0, br' }, '1.1', 200],
      ['GET', '/static/page.html', { ...gzip, Range: 'bytes=0-9' }, '1.1', 200], // the gzip hook skips Range
      ['HEAD', '/static/page.html', gzip, '1.1', 200],
      ['GET', '/static/pic.png', gzip, '1.1', 200], // not compressible
      ['GET', '/static/blob.xyz', gzip, '1.1', 200],
      ['GET', '/static/small.txt', {}, '1.1', 200],
      ['GET', '/static/small.txt', gzip, '1.1', 200], // under 1 KiB: never gzipped
      // passed on to fastify:
      ['GET', '/static/page.html', gzip, '1.1', 418], // gzipped on the pool
      ['GET', '/static/page.html', { 'Accept-Encoding': '*', Range: '' }, '1.1', 418],
      ['POST', '/static/page.html', {}, '1.1', 418],
      ['OPTIONS', '/static/page.html', {}, '1.1', 418],
      ['GET', '/static/%70age.html', {}, '1.1', 418], // fastify's router decodes it
      ['GET', '/static//page.html', {}, '1.1', 418],
      ['GET', '/static/page.html/', {}, '1.1', 418],
      ['GET', '/static/Page.html', {}, '1.1', 418],
      ['GET', '/static/.hidden', {}, '1.1', 418],
      ['GET', '/static/', {}, '1.1', 418], // the directory's index.html comes from disk
      ['GET', '/static/missing.html', {}, '1.1', 418],
      ['GET', '/page.html', {}, '1.1', 418],
      ['GET', 'http://127.0.0.1/static/page.html', {}, '1.1', 418],
    ];
    let taken = 0;
    for (const [method, path, headers, version, status] of cases) {
      const raw = (await exchange(port, requestText(method, path, headers, version))).toString('latin1');
      const why = `${method} ${path} ${JSON.stringify(headers)} HTTP/${version}`;
      assert.match(raw, new RegExp(`^HTTP/1\\.1 ${status} `), why);
      if (status !== 418) {
        taken++;
        assert.deepEqual(recorded.at(-1)?.slice(0, 3), [method, path.split('?')[0], status], why);
      }
    }
    // HTTP/1.1 without Host: fastify answers 400 in JSON.
    const noHost = await exchange(port, 'GET /static/page.html HTTP/1.1\r\nConnection: close\r\n\r\n');
    assert.match(noHost.toString('latin1'), /^HTTP\/1\.1 418 /);
    assert.equal(recorded.length, taken);
    for (const [, , , ms] of recorded) assert.ok(ms >= 0 && Number.isFinite(ms));
  });

  test("the service's answers equal fastify's routes, byte for byte but Date", async (t) => {
    const root = makeRoot();
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const ports = [];
    for (const staticFront of [false, true]) {
      const { app } = await startServer(t, { staticRoot: root, staticFront });
      await app.listen({ port: 0, host: '127.0.0.1' });
      ports.push(/** @type {import('node:net').AddressInfo} */ (app.server.address()).port);
    }
    const etag = loadMemoryFiles(root).get('/static/page.html')?.etag ?? '';
    const gzip = { 'Accept-Encoding': 'gzip, deflate, br' };
    /** @type {[string, string, Record<string, string>, ('1.0' | '1.1')?][]} */
    const cases = [
      ['GET', '/static/page.html', {}, '1.0'],
      ['GET', '/static/page.html', {}],
      ['HEAD', '/static/page.html', {}],
      ['HEAD', '/static/page.html', {}, '1.0'],
      ['GET', '/static/page.html?v=2', {}],
      ['GET', '/static/page.html', { 'If-None-Match': etag }],
      ['GET', '/static/page.html', { 'If-None-Match': etag }, '1.0'],
      ['HEAD', '/static/page.html', { 'If-None-Match': etag }],
      ['GET', '/static/page.html', { 'If-None-Match': `W/${etag}` }],
      ['GET', '/static/page.html', { ...gzip, Range: 'bytes=0-9' }],
      ['HEAD', '/static/page.html', gzip],
      ['GET', '/static/pic.png', gzip],
      ['GET', '/static/blob.xyz', {}],
      ['GET', '/static/small.txt', gzip],
      ['GET', '/static/index.html', {}],
      ['GET', '/static/page.html', { 'Accept-Encoding': 'identity' }],
      // passed on in the service too: the same answers by construction, checked all the same
      ['GET', '/static/missing.html', {}],
      ['GET', '/static/.hidden', {}],
      ['GET', '/static/%2e%2e/secret', {}],
      ['GET', '/static/', {}],
      ['POST', '/static/page.html', {}],
    ];
    for (const [method, path, headers, version] of cases) {
      const why = `${method} ${path} ${JSON.stringify(headers)} HTTP/${version ?? '1.1'}`;
      const [viaFastify, viaFront] = await Promise.all(
        ports.map((port) => exchange(port, requestText(method, path, headers, version))),
      );
      assert.match(viaFastify.toString('latin1'), /\r\nDate: /, why);
      assert.equal(withoutDate(viaFront), withoutDate(viaFastify), why);
    }
    // The gzip path still answers a browser, through fastify.
    const zipped = await exchange(ports[1], requestText('GET', '/static/page.html', gzip, '1.0'));
    const split = zipped.indexOf('\r\n\r\n');
    assert.match(zipped.subarray(0, split).toString('latin1'), /\r\ncontent-encoding: gzip\r\n/i);
    assert.match(gunzipSync(zipped.subarray(split + 4)).toString(), /^<!doctype html>/);
  });

  test('/metrics counts what the front answers as it counts fastify', async (t) => {
    const root = makeRoot();
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const etag = loadMemoryFiles(root).get('/static/page.html')?.etag ?? '';
    const texts = [];
    for (const staticFront of [false, true]) {
      const { app } = await startServer(t, { staticRoot: root, staticFront });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = /** @type {import('node:net').AddressInfo} */ (app.server.address()).port;
      for (let i = 0; i < 3; i++) await exchange(port, requestText('GET', '/static/page.html', {}, '1.0'));
      await exchange(port, requestText('HEAD', '/static/page.html'));
      await exchange(port, requestText('GET', '/static/page.html', { 'If-None-Match': etag }));
      await exchange(port, requestText('GET', '/static/pic.png'));
      texts.push((await app.inject({ method: 'GET', url: '/metrics' })).body);
    }
    for (const [series, want] of [
      ['http_requests_total{method="GET",route="/static/page.html",status_code="200"}', 3],
      ['http_requests_total{method="HEAD",route="/static/page.html",status_code="200"}', 1],
      ['http_requests_total{method="GET",route="/static/page.html",status_code="304"}', 1],
      ['http_requests_total{method="GET",route="/static/pic.png",status_code="200"}', 1],
      ['http_request_duration_seconds_count{method="GET",route="/static/page.html",status_code="200"}', 3],
      ['http_request_duration_seconds_count{method="GET",route="/static/page.html",status_code="304"}', 1],
      ['http_requests_in_flight', 1], // the scrape itself
    ]) {
      assert.equal(metric(texts[0], series), want, `fastify: ${series}`);
      assert.equal(metric(texts[1], series), want, `front: ${series}`);
    }
  });

  test("with fastify's request log lines on (level info), fastify answers, so each request is logged", async (t) => {
    const root = makeRoot();
    t.after(() => rmSync(root, { recursive: true, force: true }));
    for (const level of ['info', 'warn']) {
      /** @type {any[]} */
      const lines = [];
      const stream = { write: (/** @type {string} */ line) => lines.push(JSON.parse(line)) };
      const { app } = await startServer(t, { staticRoot: root, logger: { level, stream } });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = /** @type {import('node:net').AddressInfo} */ (app.server.address()).port;
      const raw = await exchange(port, requestText('GET', '/static/page.html', {}, '1.0'));
      assert.match(raw.toString('latin1'), /^HTTP\/1\.1 200 /);
      const completed = lines.filter((l) => l.msg === 'request completed');
      assert.equal(completed.length, level === 'info' ? 1 : 0, level);
      const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      assert.equal(
        metric(metrics, 'http_requests_total{method="GET",route="/static/page.html",status_code="200"}'),
        1,
        level,
      );
    }
  });
});
