// Test helpers (outside test/: node --test runs every file in a test/ directory).
import { createHash } from 'node:crypto';
import jsQR from 'jsqr';
import offthread from 'offthread';
import { PNG } from 'pngjs';
import { buildServer } from '../src/server.mjs';

/**
 * Decodes a `data:image/png;base64,…` QR code with jsQR (independent of both encoders).
 * @param {string} dataURL
 * @returns {{ bytes: Buffer, width: number, height: number }}
 */
export function decodeQrDataURL(dataURL) {
  const prefix = 'data:image/png;base64,';
  if (!dataURL.startsWith(prefix)) throw new Error(`not a PNG data URL: ${dataURL.slice(0, 40)}`);
  const png = PNG.sync.read(Buffer.from(dataURL.slice(prefix.length), 'base64'));
  const code = jsQR(
    new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length),
    png.width,
    png.height,
  );
  if (!code) throw new Error(`jsQR found no QR code in the ${png.width}×${png.height} image`);
  return { bytes: Buffer.from(code.binaryData), width: png.width, height: png.height };
}

/** The MD5 loop (docs/kernels.md) with node:crypto: the oracle. */
export function md5LoopReference(text, rounds) {
  let d = '';
  for (let i = 0; i < rounds; i++)
    d = createHash('md5')
      .update(text + d)
      .digest('hex');
  return d;
}

/**
 * A server of `mode` on its own pool; `t.after` closes both.
 * @param {import('node:test').TestContext} t
 * @param {import('../src/server.mjs').ServerOptions} [opts]
 */
export async function startServer(t, opts = {}) {
  const pool = opts.pool ?? new offthread.Pool({ threads: 2, maxQueue: 10_000 });
  const app = buildServer({ defaultMetrics: false, ...opts, pool });
  await app.ready();
  t.after(async () => {
    await app.close();
    if (!opts.pool) await pool.close();
  });
  return { app, pool };
}

/** Fails with the kernel's absence spelled out instead of a bare status mismatch. */
export function requireKernels() {
  const missing = [
    'qr.toDataURL',
    'qr.toDataURLSync',
    'md5.hex',
    'md5.hexAsync',
    'md5.iterate',
    'md5.iterateSync',
  ].filter((p) => {
    const [ns, fn] = p.split('.');
    return typeof offthread[ns]?.[fn] !== 'function';
  });
  if (missing.length) {
    throw new Error(
      `offthread lacks ${missing.join(', ')}: merge main (the MD5/QR kernels) and rebuild (npm run setup)`,
    );
  }
}

/**
 * GET via inject; returns { status, headers, body (parsed JSON when JSON) }.
 * @param {import('fastify').FastifyInstance} app
 * @param {string} url
 */
export async function get(app, url) {
  const res = await app.inject({ method: 'GET', url });
  const json = String(res.headers['content-type'] ?? '').startsWith('application/json');
  return { status: res.statusCode, headers: res.headers, body: json ? res.json() : res.body, raw: res };
}
