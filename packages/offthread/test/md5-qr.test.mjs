// MD5 against node:crypto and RFC 1321; QR codes decoded back to the exact text by an
// independent decoder (jsQR over pngjs), sync and on the pool; bad input.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import jsQR from 'jsqr';
import { md5, Pool, qr } from 'offthread';
import { PNG } from 'pngjs';

const rfc1321 = [
  ['', 'd41d8cd98f00b204e9800998ecf8427e'],
  ['a', '0cc175b9c0f1b6a831c399e269772661'],
  ['abc', '900150983cd24fb0d6963f7d28e17f72'],
  ['message digest', 'f96b697d7cb7938d525a2f31aaf161d0'],
  ['abcdefghijklmnopqrstuvwxyz', 'c3fcd3d76192e4007dfb496cca67e13b'],
  [
    '12345678901234567890123456789012345678901234567890123456789012345678901234567890',
    '57edf4a22be3c955ac49da2e2107b67a',
  ],
];

describe('md5', () => {
  test('RFC 1321 test vectors, strings and bytes', () => {
    for (const [input, digest] of rfc1321) {
      assert.equal(md5.hex(input), digest, input);
      assert.equal(md5.hex(Buffer.from(input)), digest, input);
    }
  });

  test('non-ASCII strings hash their UTF-8 bytes, like node:crypto', () => {
    for (const s of ['héllo wörld ✓ 日本', '😀'.repeat(100)]) {
      assert.equal(md5.hex(s), createHash('md5').update(s).digest('hex'));
    }
  });

  test('the loop matches node:crypto for several texts and round counts', async () => {
    for (const text of ['', 'hello', 'héllo ✓', 'x'.repeat(1000)]) {
      for (const rounds of [0, 1, 2, 1000]) {
        const expected = md5.iterateReference(text, rounds);
        assert.equal(md5.iterateSync(text, rounds), expected, `${text.slice(0, 8)} ×${rounds}`);
        assert.equal(await md5.iterate(text, rounds), expected, `${text.slice(0, 8)} ×${rounds} async`);
      }
    }
  });

  test('a loop split into pieces (start) equals one call', async () => {
    const whole = md5.iterateSync('split', 5000);
    const half = await md5.iterate('split', 2500);
    assert.equal(md5.iterateSync('split', 2500, { start: half }), whole);
  });

  test('hexAsync runs one digest on the pool', async () => {
    assert.equal(await md5.hexAsync('abc'), '900150983cd24fb0d6963f7d28e17f72');
  });

  test('a long loop can be aborted', async () => {
    const pool = new Pool({ threads: 1 });
    const controller = new AbortController();
    const running = md5.iterate('abort me', 1e9, { pool, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await assert.rejects(running, { code: 'ERR_ABORTED' });
    assert.equal(await md5.iterate('a', 1, { pool }), md5.iterateReference('a', 1));
    await pool.close();
  });

  test('bad input is a typed error', async () => {
    assert.throws(() => md5.hex(5), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => md5.iterateSync('a', -1), { name: 'RangeError', code: 'ERR_INVALID_ROUNDS' });
    assert.throws(() => md5.iterateSync('a', 1.5), { code: 'ERR_INVALID_ROUNDS' });
    assert.throws(() => md5.iterateSync('a', 1e9 + 1), { code: 'ERR_INVALID_ROUNDS' });
    assert.throws(() => md5.iterateSync('a', '10'), { code: 'ERR_INVALID_ARG' });
    assert.throws(() => md5.iterateSync('a', 1, { start: 'nope' }), { code: 'ERR_INVALID_ARG' });
    await assert.rejects(md5.iterate(null, 1), { code: 'ERR_INVALID_ARG' });
  });
});

function decode(png) {
  const image = PNG.sync.read(png);
  const result = jsQR(new Uint8ClampedArray(image.data), image.width, image.height);
  assert.ok(result, 'jsQR found no QR code');
  return { text: new TextDecoder().decode(new Uint8Array(result.binaryData)), width: image.width };
}

const dataURLToPNG = (url) => {
  assert.match(url, /^data:image\/png;base64,/);
  return Buffer.from(url.slice('data:image/png;base64,'.length), 'base64');
};

describe('qr', () => {
  const texts = ['hello', 'https://example.com/?q=1&r=2', '0123456789', 'HELLO WORLD', 'héllo wörld ✓ 日本', ''];

  test('data URLs decode back to the exact text (sync and on the pool)', async () => {
    for (const text of texts) {
      assert.equal(decode(dataURLToPNG(qr.toDataURLSync(text))).text, text, JSON.stringify(text));
      assert.equal(decode(dataURLToPNG(await qr.toDataURL(text))).text, text, JSON.stringify(text));
    }
  });

  test('PNG buffers decode, every ECC level, and size bounds the image', async () => {
    for (const ecc of ['L', 'M', 'Q', 'H']) {
      const { text, width } = decode(await qr.toPNG('ecc level test', { ecc, size: 200 }));
      assert.equal(text, 'ecc level test');
      assert.ok(width <= 200, `width ${width}`);
    }
    assert.ok(Buffer.isBuffer(qr.toPNGSync('x')));
  });

  test('near-capacity text decodes (byte mode, ECC L, version 40)', () => {
    const text = 'a'.repeat(2000) + 'é'.repeat(400); // 2,800 bytes; capacity at L is 2,953
    const { text: got } = decode(qr.toPNGSync(text, { ecc: 'L', size: 1000 }));
    assert.equal(got, text);
  });

  test('SVG output is an SVG document with a path', async () => {
    for (const svg of [qr.toSVGSync('svg'), await qr.toSVG('svg')]) {
      assert.match(svg, /^<svg[^>]*viewBox=/);
      assert.match(svg, /<path /);
    }
  });

  test('text over capacity and bad options are typed errors', async () => {
    assert.throws(() => qr.toDataURLSync('a'.repeat(2954), { ecc: 'L' }), { code: 'ERR_TEXT_TOO_LONG' });
    await assert.rejects(qr.toDataURL('a'.repeat(3000)), { code: 'ERR_TEXT_TOO_LONG' });
    assert.throws(() => qr.toDataURLSync('x', { size: 0 }), { code: 'ERR_INVALID_QR_OPTIONS' });
    assert.throws(() => qr.toDataURLSync('x', { size: 5000 }), { code: 'ERR_INVALID_QR_OPTIONS' });
    assert.throws(() => qr.toDataURLSync('x', { margin: -1 }), { code: 'ERR_INVALID_QR_OPTIONS' });
    assert.throws(() => qr.toDataURLSync('x', { ecc: 'X' }), { code: 'ERR_INVALID_QR_OPTIONS' });
    assert.throws(() => qr.toDataURLSync(42), { code: 'ERR_INVALID_ARG' });
    await assert.rejects(qr.toPNG(undefined), { code: 'ERR_INVALID_ARG' });
  });
});
