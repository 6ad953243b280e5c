// The /static/ route over real HTTP: gzip on the pool for clients that accept it
// (chunked, and the gunzipped body is the file), the plain in-memory path otherwise,
// directory → index.html, 404 in JSON, MIME types, and paths that leave the root.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import offthread from 'offthread';
import { PUBLIC_DIR } from '../src/server.mjs';
import { acceptsGzip, GZIP_MIN_BYTES, staticFile } from '../src/static-gzip.mjs';
import { startServer } from '../test-support/helpers.mjs';

/**
 * One raw GET (or HEAD): status, headers and the body bytes as sent (not decoded).
 * @param {number} port
 * @param {string} path sent as is (no normalisation)
 * @param {Record<string, string>} [headers]
 * @param {string} [method]
 * @returns {Promise<{ status: number, headers: import('node:http').IncomingHttpHeaders, body: Buffer }>}
 */
function fetchRaw(port, path, headers = {}, method = 'GET') {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const GZIP = { 'accept-encoding': 'gzip, deflate, br' };

/** A root with a sub-directory, small and big files, a dotfile, and a secret beside it. */
function makeRoot() {
  const dir = mkdtempSync(join(tmpdir(), 'offthread-static-'));
  const root = join(dir, 'public');
  mkdirSync(join(root, 'sub'), { recursive: true });
  const text = (n, seed) =>
    Array.from({ length: n }, (_, i) => `line ${i * seed} of the test page, déjà vu 日本\n`).join('');
  const files = {
    'index.html': `<!doctype html><title>root</title>${text(60, 1)}`,
    'sub/index.html': `<!doctype html><title>sub</title>${text(80, 3)}`,
    'big.txt': text(40_000, 7), // ~2 MiB: many 64 KiB chunks through the pool
    'small.txt': 'short',
    'style.css': `body { color: red; }\n${text(40, 5)}`,
    'data.json': JSON.stringify({ rows: text(40, 9).split('\n') }),
    'pic.svg': `<svg xmlns="http://www.w3.org/2000/svg">${'<rect/>'.repeat(300)}</svg>`,
    'pic.png': Buffer.alloc(4096, 7),
    'blob.xyz': Buffer.alloc(4096, 1),
    '.secret': text(50, 2),
  };
  for (const [name, body] of Object.entries(files)) writeFileSync(join(root, name), body);
  writeFileSync(join(dir, 'outside.txt'), text(50, 11));
  return { dir, root, file: (/** @type {string} */ name) => readFileSync(join(root, name)) };
}

/** A listening server over `root`; closed after the test. */
async function listen(t, opts) {
  const { app } = await startServer(t, opts);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return /** @type {import('node:net').AddressInfo} */ (app.server.address()).port;
}

describe('static files', () => {
  test('acceptsGzip reads Accept-Encoding (q-values, *, x-gzip)', () => {
    for (const [h, want] of [
      ['gzip', true],
      ['deflate, gzip;q=0.5', true],
      ['GZIP', true],
      ['x-gzip', true],
      ['*', true],
      ['gzip;q=0', false],
      ['*, gzip;q=0', false],
      ['*;q=0', false],
      ['identity', false],
      ['br', false],
      ['', false],
      [undefined, false],
    ])
      assert.equal(acceptsGzip(h), want, String(h));
  });

  test('gzip on the pool for a client that accepts it: chunked, gunzips to the file', async (t) => {
    const { dir, root, file } = makeRoot();
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const port = await listen(t, { staticRoot: root });
    for (const [path, name, type] of [
      ['/static/big.txt', 'big.txt', /^text\/plain/],
      ['/static/index.html', 'index.html', /^text\/html/],
      ['/static/style.css', 'style.css', /^text\/css/],
      ['/static/data.json', 'data.json', /^application\/json/],
      ['/static/pic.svg', 'pic.svg', /^image\/svg\+xml/],
      ['/static/', 'index.html', /^text\/html/],
      ['/static/sub/', 'sub/index.html', /^text\/html/],
      ['/static/big.txt?v=2', 'big.txt', /^text\/plain/],
    ]) {
      const r = await fetchRaw(port, path, GZIP);
      assert.equal(r.status, 200, path);
      assert.equal(r.headers['content-encoding'], 'gzip', path);
      assert.equal(r.headers['transfer-encoding'], 'chunked', path);
      assert.equal(r.headers['content-length'], undefined, path);
      assert.equal(r.headers.vary, 'accept-encoding', path);
      assert.match(String(r.headers['content-type']), type, path);
      assert.ok(r.body.length < file(name).length, `${path}: compressed`);
      assert.deepEqual(gunzipSync(r.body), file(name), path);
    }
    // The gzip variant has its own validator, and a 304 for it.
    const first = await fetchRaw(port, '/static/big.txt', GZIP);
    assert.match(String(first.headers.etag), /^W\/".*-gzip"$/);
    const again = await fetchRaw(port, '/static/big.txt', { ...GZIP, 'if-none-match': String(first.headers.etag) });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
  });

  test('plain bytes without gzip, for small, incompressible and HEAD requests', async (t) => {
    const { dir, root, file } = makeRoot();
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const port = await listen(t, { staticRoot: root });
    assert.ok(file('small.txt').length < GZIP_MIN_BYTES);
    for (const [path, headers, name, type] of [
      ['/static/index.html', {}, 'index.html', /^text\/html/], // from memory
      ['/static/index.html', { 'accept-encoding': 'gzip;q=0, br' }, 'index.html', /^text\/html/],
      ['/static/sub/', {}, 'sub/index.html', /^text\/html/], // from disk
      ['/static/small.txt', GZIP, 'small.txt', /^text\/plain/],
      ['/static/pic.png', GZIP, 'pic.png', /^image\/png$/],
      ['/static/blob.xyz', GZIP, 'blob.xyz', /^application\/octet-stream$/],
    ]) {
      const r = await fetchRaw(port, path, headers);
      assert.equal(r.status, 200, path);
      assert.equal(r.headers['content-encoding'], undefined, path);
      assert.equal(Number(r.headers['content-length']), file(name).length, path);
      assert.match(String(r.headers['content-type']), type, path);
      assert.deepEqual(r.body, file(name), path);
    }
    const head = await fetchRaw(port, '/static/big.txt', GZIP, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-encoding'], undefined);
    assert.equal(Number(head.headers['content-length']), file('big.txt').length);
  });

  test('a directory without its slash redirects; missing files are 404 in JSON', async (t) => {
    const { dir, root } = makeRoot();
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const port = await listen(t, { staticRoot: root });
    for (const headers of [{}, GZIP]) {
      const r = await fetchRaw(port, '/static/sub', headers);
      assert.equal(r.status, 301);
      assert.equal(r.headers.location, '/static/sub/');
      for (const path of ['/static/missing.html', '/static/sub/missing.css']) {
        const m = await fetchRaw(port, path, headers);
        assert.equal(m.status, 404, path);
        assert.match(String(m.headers['content-type']), /^application\/json/);
        const body = JSON.parse(m.body.toString());
        assert.equal(body.error.code, 'ERR_NOT_FOUND');
        assert.equal(typeof body.error.message, 'string');
      }
    }
  });

  test('paths that leave the root, dotfiles and NUL are refused, gzip or not', async (t) => {
    const { dir, root } = makeRoot();
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const port = await listen(t, { staticRoot: root });
    for (const path of [
      '/static/../outside.txt',
      '/static/%2e%2e/outside.txt',
      '/static/..%2foutside.txt',
      '/static/sub/..%2f..%2foutside.txt',
      `/static/${encodeURIComponent(join(dir, 'outside.txt'))}`,
      '/static//etc/passwd',
      '/static/..\\outside.txt',
      '/static/.secret',
      '/static/%2esecret',
      '/static/big.txt%00.html',
    ]) {
      for (const headers of [{}, GZIP]) {
        const r = await fetchRaw(port, path, headers);
        assert.equal(r.status, 404, path);
        assert.equal(JSON.parse(r.body.toString()).error.code, 'ERR_NOT_FOUND', path);
        assert.equal(r.headers['content-encoding'], undefined, path);
        assert.doesNotMatch(r.body.toString('latin1'), /line \d+ of the test page/, path);
      }
    }
  });

  test('staticFile resolves inside the root only', async (t) => {
    const { dir, root } = makeRoot();
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    assert.equal((await staticFile(root, '/static/sub/'))?.path, join(root, 'sub', 'index.html'));
    assert.equal((await staticFile(root, '/static/style.css?x=1'))?.type, 'text/css; charset=utf-8');
    for (const url of ['/static/sub', '/static/../outside.txt', '/static/%E0%A4%A', '/static/.secret', '/other/x']) {
      assert.equal(await staticFile(root, url), null, url);
    }
  });

  test('clients that leave in the middle of a gzip answer: the server closes its files', {
    timeout: 60_000,
  }, async (t) => {
    if (!existsSync('/proc/self/fd')) return t.skip('counts open files in /proc/self/fd');
    const { dir, root } = makeRoot();
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    // 16 MiB that gzip shrinks to ~12: far more than the socket buffers hold, so the
    // answer is still being read from disk when the client goes.
    writeFileSync(join(root, 'huge.txt'), randomBytes(12 << 20).toString('base64'));
    const port = await listen(t, { staticRoot: root });
    const openFiles = () => readdirSync('/proc/self/fd').length;
    const before = openFiles();
    await Promise.all(
      Array.from(
        { length: 10 },
        () =>
          new Promise((resolve, reject) => {
            const socket = connect(port, '127.0.0.1', () =>
              socket.write(`GET /static/huge.txt HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n`),
            );
            socket.once('data', () => socket.destroy()); // the headers and a first chunk, then gone
            socket.on('close', resolve);
            socket.on('error', reject);
          }),
      ),
    );
    let now = openFiles();
    for (let i = 0; i < 200 && now > before; i++) {
      await new Promise((r) => setTimeout(r, 50));
      now = openFiles();
    }
    assert.ok(now <= before, `${now - before} files or sockets still open 10 s after the clients left`);
    // And the server still answers.
    const small = await fetchRaw(port, '/static/index.html', GZIP);
    assert.equal(small.status, 200);
  });

  test('pool queue full: a gzip request gets 503 ERR_QUEUE_FULL in JSON, not a 500 labelled gzip', {
    timeout: 60_000,
  }, async (t) => {
    const pool = new offthread.Pool({ threads: 1, maxQueue: 1 });
    const ac = new AbortController();
    t.after(async () => {
      ac.abort();
      await pool.close();
    });
    const port = await listen(t, { pool });
    // An MD5 loop of minutes on the one thread, and a gzip answer's first step waiting
    // behind it: the queue is full until the abort.
    offthread.md5.iterate('busy', 1e9, { pool, signal: ac.signal }).catch(() => {});
    for (let i = 0; i < 400 && pool.stats().running === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const first = fetchRaw(port, '/static/bench.html', GZIP);
    for (let i = 0; i < 400 && pool.stats().queued === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual([pool.stats().running, pool.stats().queued], [1, 1], 'the queue is full');
    for (const path of ['/static/bench.html', '/static/']) {
      const r = await fetchRaw(port, path, GZIP);
      assert.equal(r.status, 503, `${path}: ${r.status} ${r.body.toString('latin1').slice(0, 200)}`);
      assert.equal(r.headers['content-encoding'], undefined, path);
      assert.match(String(r.headers['content-type']), /^application\/json/, path);
      assert.equal(r.headers['retry-after'], '1', path);
      assert.equal(JSON.parse(r.body.toString('utf8')).error.code, 'ERR_QUEUE_FULL', path);
    }
    // Without gzip the page comes from memory, pool or not.
    assert.equal((await fetchRaw(port, '/static/bench.html')).status, 200);
    ac.abort();
    // The answer that waited is whole once the pool is free.
    const zipped = await first;
    assert.equal(zipped.status, 200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(zipped.body), readFileSync(join(PUBLIC_DIR, 'bench.html')));
  });

  test("the service's own page: gzip to a browser, the 8,673 plain bytes to ab", async (t) => {
    const port = await listen(t, {});
    const page = readFileSync(join(PUBLIC_DIR, 'bench.html'));
    const zipped = await fetchRaw(port, '/static/bench.html', GZIP);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(zipped.body), page);
    const plain = await fetchRaw(port, '/static/bench.html');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(Number(plain.headers['content-length']), 8673);
    assert.deepEqual(plain.body, page);
  });
});
