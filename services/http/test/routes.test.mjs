// Every route through fastify's inject, in both modes, and every bad input.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import vm from 'node:vm';
import { BENCH_HTML_BYTES, benchHtml } from '../scripts/make-bench-html.mjs';
import { LIMITS, PUBLIC_DIR } from '../src/server.mjs';
import { get, md5LoopReference, requireKernels, startServer } from '../test-support/helpers.mjs';

for (const mode of ['offload', 'blocking']) {
  describe(`${mode} mode`, () => {
    test('GET /qr answers { result: data URL }', async (t) => {
      requireKernels();
      const { app } = await startServer(t, { mode });
      const r = await get(app, '/qr?text=hello');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.match(r.body.result, /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
    });

    test('GET /md5 answers { digest }', async (t) => {
      requireKernels();
      const { app } = await startServer(t, { mode });
      const r = await get(app, '/md5?text=hello&rounds=10');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.match(r.body.digest, /^[0-9a-f]{32}$/);
    });

    test('GET /pi answers the π result object', async (t) => {
      const { app } = await startServer(t, { mode });
      const r = await get(app, '/pi?samples=100000&seed=1');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.inside, 78463);
      assert.equal(r.body.samples, 100000);
      assert.equal(r.body.seed, 1);
      assert.equal(r.body.estimate, 3.13852);
      assert.equal(typeof r.body.variant, 'string');
      const big = await get(app, '/pi?samples=1000000');
      assert.equal(big.status, 200);
      if (mode === 'offload') assert.equal(big.body.variant, 'parallelAsync');
    });

    test('GET /health names the mode', async (t) => {
      const { app } = await startServer(t, { mode });
      const r = await get(app, '/health');
      assert.equal(r.body.mode, mode);
      assert.equal(typeof r.body.pool.threads, 'number');
    });
  });
}

describe('bad input → 400 { error: { code, message } }', () => {
  const cases = [
    ['/qr', 'ERR_INVALID_ARG', 'text missing'],
    ['/qr?text=', 'ERR_INVALID_TEXT', 'text empty'],
    ['/qr?text=a&text=b', 'ERR_INVALID_ARG', 'text repeated'],
    [`/qr?text=${'a'.repeat(LIMITS.qrTextBytes + 1)}`, 'ERR_TEXT_TOO_LONG', 'over the service bound'],
    [`/qr?text=${'é'.repeat(1500)}`, 'ERR_TEXT_TOO_LONG', '3,000 UTF-8 bytes in 1,500 characters'],
    [`/qr?text=${'a'.repeat(2400)}`, 'ERR_TEXT_TOO_LONG', 'over the symbol capacity at ECC M (2,331 bytes)'],
    ['/md5', 'ERR_INVALID_ARG', 'text missing'],
    ['/md5?text=', 'ERR_INVALID_TEXT', 'text empty'],
    [`/md5?text=${'a'.repeat(LIMITS.md5TextBytes + 1)}`, 'ERR_TEXT_TOO_LONG', 'text over 4 KiB'],
    ['/md5?text=a&rounds=0', 'ERR_INVALID_ROUNDS', 'rounds 0'],
    ['/md5?text=a&rounds=-5', 'ERR_INVALID_ROUNDS', 'rounds negative'],
    [`/md5?text=a&rounds=${LIMITS.maxRounds + 1}`, 'ERR_INVALID_ROUNDS', 'rounds over 10^7'],
    ['/md5?text=a&rounds=1.5', 'ERR_INVALID_ARG', 'rounds fractional'],
    ['/md5?text=a&rounds=many', 'ERR_INVALID_ARG', 'rounds not a number'],
    ['/md5/nope?text=a', 'ERR_INVALID_ARG', 'unknown implementation'],
    ['/md5/native-async?text=a&rounds=0', 'ERR_INVALID_ROUNDS', 'rounds 0 on an implementation route'],
    ['/md5/piscina?text=', 'ERR_INVALID_TEXT', 'text empty on an implementation route'],
    // Numbers are plain decimal integers (README.md): no other notation ajv would coerce.
    ['/md5?text=a&rounds=0x10', 'ERR_INVALID_ARG', 'rounds in hex'],
    ['/md5?text=a&rounds=0b11', 'ERR_INVALID_ARG', 'rounds in binary'],
    ['/md5?text=a&rounds=0o7', 'ERR_INVALID_ARG', 'rounds in octal'],
    ['/md5?text=a&rounds=%205', 'ERR_INVALID_ARG', 'rounds with a leading space'],
    ['/md5?text=a&rounds=5%20', 'ERR_INVALID_ARG', 'rounds with a trailing space'],
    ['/md5?text=a&rounds=1.0', 'ERR_INVALID_ARG', 'rounds with a fraction part'],
    ['/md5?text=a&rounds=1e3', 'ERR_INVALID_ARG', 'rounds with an exponent'],
    ['/md5?text=a&rounds=%2B5', 'ERR_INVALID_ARG', 'rounds with a plus sign'],
    ['/md5?text=a&rounds=', 'ERR_INVALID_ARG', 'rounds empty'],
    ['/md5?text=a&rounds=1&rounds=2', 'ERR_INVALID_ARG', 'rounds repeated'],
    ['/md5?text=a&rounds=Infinity', 'ERR_INVALID_ARG', 'rounds Infinity'],
    ['/md5?text=a&rounds=99999999999999999999', 'ERR_INVALID_ROUNDS', 'rounds decimal but huge'],
    ['/pi?samples=0', 'ERR_INVALID_SAMPLES', 'samples 0'],
    ['/pi?samples=-1', 'ERR_INVALID_SAMPLES', 'samples negative'],
    [`/pi?samples=${LIMITS.maxSamples + 1}`, 'ERR_INVALID_SAMPLES', 'samples over 10^9'],
    ['/pi?samples=abc', 'ERR_INVALID_ARG', 'samples not a number'],
    ['/pi?samples=1e6', 'ERR_INVALID_ARG', 'samples with an exponent'],
    ['/pi?samples=0x10', 'ERR_INVALID_ARG', 'samples in hex'],
    ['/pi?samples=10&seed=1.5', 'ERR_INVALID_ARG', 'seed fractional'],
    ['/pi?samples=10&seed=1e20', 'ERR_INVALID_ARG', 'seed with an exponent'],
    ['/pi?samples=10&seed=100000000000000000000', 'ERR_INVALID_SEED', 'seed beyond 2^53'],
  ];
  for (const mode of ['offload', 'blocking']) {
    test(`${mode}: every case`, async (t) => {
      requireKernels();
      const { app } = await startServer(t, { mode });
      for (const [url, code, why] of cases) {
        const r = await get(app, url);
        assert.equal(
          r.status,
          400,
          `${why}: ${url.slice(0, 60)} → ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`,
        );
        assert.equal(r.body.error?.code, code, `${why}: ${JSON.stringify(r.body).slice(0, 200)}`);
        assert.equal(typeof r.body.error.message, 'string');
      }
      // Still serving afterwards.
      assert.equal((await get(app, '/pi?samples=10')).status, 200);
    });
  }
});

describe('other routes', () => {
  test('unknown route → 404 ERR_NOT_FOUND; wrong method → 404', async (t) => {
    const { app } = await startServer(t);
    const r = await get(app, '/nope');
    assert.equal(r.status, 404);
    assert.equal(r.body.error.code, 'ERR_NOT_FOUND');
    const post = await app.inject({ method: 'POST', url: '/qr?text=a' });
    assert.equal(post.statusCode, 404);
  });

  test('GET / is the self-contained page (no external scripts) that calls the endpoints', async (t) => {
    const { app } = await startServer(t);
    const r = await get(app, '/');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/html/);
    for (const path of ['/qr?', '/md5?', '/pi?', '/loop', '<canvas']) assert.ok(r.body.includes(path), path);
    assert.doesNotMatch(r.body, /<script[^>]+src=|<link[^>]+href="http/);
    const script = /<script>([\s\S]*)<\/script>/.exec(r.body)?.[1];
    assert.ok(script, 'inline script');
    new vm.Script(script); // compiles (a syntax error would break the whole page)
  });

  for (const staticCache of [true, false]) {
    test(`GET /static/bench.html (${staticCache ? 'from memory' : 'from disk'}): exactly 8,673 bytes, reproducible`, async (t) => {
      const { app } = await startServer(t, { staticCache });
      const r = await get(app, '/static/bench.html');
      assert.equal(r.status, 200);
      assert.match(String(r.headers['content-type']), /^text\/html/);
      assert.equal(r.raw.rawPayload.length, BENCH_HTML_BYTES);
      assert.equal(BENCH_HTML_BYTES, 8673);
      assert.equal(readFileSync(`${PUBLIC_DIR}/bench.html`, 'utf8'), benchHtml(), 'run scripts/make-bench-html.mjs');
      const etag = String(r.headers.etag);
      assert.ok(etag);
      const again = await app.inject({ method: 'GET', url: '/static/bench.html', headers: { 'if-none-match': etag } });
      assert.equal(again.statusCode, 304);
      assert.equal((await get(app, '/static/index.html')).status, 200);
      assert.equal((await get(app, '/static/missing.html')).status, 404);
      assert.equal((await get(app, '/static/../src/server.mjs')).status, 404);
    });
  }

  test('GET /loop: resolution, window, totals and recent windows; POST /loop/reset', async (t) => {
    const { app } = await startServer(t, { loopWindowMs: 50 });
    await new Promise((r) => setTimeout(r, 160));
    const r = await get(app, '/loop');
    assert.equal(r.status, 200);
    assert.equal(r.body.resolutionMs, 1);
    assert.equal(r.body.windowMs, 50);
    for (const k of ['p50Ms', 'p95Ms', 'p99Ms', 'maxMs', 'meanMs', 'count'])
      assert.equal(typeof r.body.total[k], 'number');
    assert.ok(r.body.recent.length >= 2, `recent windows: ${r.body.recent.length}`);
    assert.ok(r.body.total.count > 0);
    const reset = await app.inject({ method: 'POST', url: '/loop/reset' });
    assert.equal(reset.statusCode, 200);
    const after = await get(app, '/loop');
    assert.ok(after.body.since >= r.body.since);
    assert.ok(after.body.total.count < r.body.total.count);
  });

  test('GET /md5/impls lists the implementations (the event-loop rows only with experimentRoutes)', async (t) => {
    const { app: plain } = await startServer(t);
    assert.deepEqual(Object.keys((await get(plain, '/md5/impls')).body).sort(), [
      'js-native-async',
      'native-async',
      'piscina',
    ]);
    const { app } = await startServer(t, { experimentRoutes: true });
    const r = await get(app, '/md5/impls');
    assert.deepEqual(Object.keys(r.body).sort(), [
      'crypto',
      'js',
      'js-native',
      'js-native-async',
      'mixed',
      'native',
      'native-async',
      'piscina',
    ]);
  });
});

describe('/md5/:impl rows that block the event loop', () => {
  const blocking = ['js', 'js-native', 'native', 'mixed', 'crypto'];
  const pooled = ['js-native-async', 'native-async', 'piscina'];

  test('default: 404 ERR_NOT_FOUND naming the flag; the pooled rows answer', async (t) => {
    requireKernels();
    const { app } = await startServer(t, { piscinaThreads: 1 });
    for (const impl of blocking) {
      // The largest rounds: refused before any work (no 20 s freeze).
      const r = await get(app, `/md5/${impl}?text=a&rounds=${LIMITS.maxRounds}`);
      assert.equal(r.status, 404, impl);
      assert.equal(r.body.error.code, 'ERR_NOT_FOUND', impl);
      assert.match(r.body.error.message, /--experiments|EXPERIMENT_ROUTES=1/);
    }
    for (const impl of pooled) {
      const r = await get(app, `/md5/${impl}?text=a&rounds=3`);
      assert.equal(r.status, 200, `${impl}: ${JSON.stringify(r.body)}`);
    }
  });

  test('experimentRoutes: every row answers the same digest', async (t) => {
    requireKernels();
    const { app } = await startServer(t, { experimentRoutes: true, piscinaThreads: 1 });
    for (const impl of [...blocking, ...pooled]) {
      const r = await get(app, `/md5/${impl}?text=a&rounds=8`);
      assert.equal(r.status, 200, `${impl}: ${JSON.stringify(r.body)}`);
      assert.deepEqual(r.body, { digest: md5LoopReference('a', 8), impl });
    }
  });
});
