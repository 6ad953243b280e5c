// Blocking and offload modes agree: QR codes decode (jsQR + pngjs) to the exact text,
// MD5 digests equal the node:crypto loop, for every /md5/:impl row too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeQrDataURL, get, md5LoopReference, requireKernels, startServer } from '../test-support/helpers.mjs';

const TEXTS = [
  'hello',
  'https://example.com/offthread?q=1&r=2',
  'Grüße aus Köln — 東京 🚀 ünïcødé',
  'x'.repeat(1000),
  'Ω'.repeat(400), // 800 UTF-8 bytes
];

test('QR: both modes decode back to the exact UTF-8 bytes; 128 px when the symbol fits at 1 px/module', async (t) => {
  requireKernels();
  const servers = {
    offload: (await startServer(t, { mode: 'offload' })).app,
    blocking: (await startServer(t, { mode: 'blocking' })).app,
  };
  for (const text of TEXTS) {
    for (const [mode, app] of Object.entries(servers)) {
      const r = await get(app, `/qr?text=${encodeURIComponent(text)}`);
      assert.equal(r.status, 200, `${mode} ${text.slice(0, 20)}: ${JSON.stringify(r.body).slice(0, 200)}`);
      const qr = decodeQrDataURL(r.body.result);
      assert.deepEqual(qr.bytes, Buffer.from(text, 'utf8'), `${mode}: ${text.slice(0, 20)}`);
      assert.equal(qr.height, qr.width);
      // offthread scales by whole pixels per module (never below 1), so a big symbol
      // (version ≥ 25: 117 modules + 2·4 quiet) comes out larger than 128 px.
      if (Buffer.byteLength(text) <= 200) assert.ok(qr.width <= 128, `${mode}: ${qr.width}×${qr.height}`);
    }
  }
});

test('QR: the largest text that fits at ECC M (2,331 bytes) encodes in both modes', async (t) => {
  requireKernels();
  for (const mode of ['offload', 'blocking']) {
    const { app } = await startServer(t, { mode });
    const r = await get(app, `/qr?text=${'a'.repeat(2331)}`);
    assert.equal(r.status, 200, `${mode}: ${JSON.stringify(r.body).slice(0, 200)}`);
    const over = await get(app, `/qr?text=${'a'.repeat(2332)}`);
    assert.equal(over.body.error?.code, 'ERR_TEXT_TOO_LONG', mode);
  }
});

test('MD5: /md5 in both modes and every /md5/:impl equal the node:crypto loop', async (t) => {
  requireKernels();
  const offload = (await startServer(t, { mode: 'offload', piscinaThreads: 1 })).app;
  const blocking = (await startServer(t, { mode: 'blocking' })).app;
  const impls = Object.keys((await get(offload, '/md5/impls')).body);
  for (const text of ['hello', 'Grüße 東京 🚀', 'y'.repeat(4096)]) {
    for (const rounds of [1, 7, 1000]) {
      const want = md5LoopReference(text, rounds);
      const q = `text=${encodeURIComponent(text)}&rounds=${rounds}`;
      for (const [name, app] of [
        ['offload', offload],
        ['blocking', blocking],
      ]) {
        const r = await get(app, `/md5?${q}`);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.body.digest, want, `${name} /md5 ${text.slice(0, 10)} × ${rounds}`);
      }
      for (const impl of impls) {
        const r = await get(offload, `/md5/${impl}?${q}`);
        assert.equal(r.status, 200, `${impl}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.digest, want, `/md5/${impl} ${text.slice(0, 10)} × ${rounds}`);
        assert.equal(r.body.impl, impl);
      }
    }
  }
});

test('MD5: rounds defaults to 200,000 (the blog figure)', async (t) => {
  requireKernels();
  const { app } = await startServer(t);
  const r = await get(app, '/md5?text=hello');
  assert.equal(r.status, 200);
  assert.equal(r.body.digest, md5LoopReference('hello', 200_000));
});
