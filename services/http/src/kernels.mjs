// The work behind the routes. Offload mode calls offthread's kernels on its pool;
// blocking mode runs the npm packages the original blog posts used, in the handler.
// Kernels are injected (buildServer({ kernels })) so tests can swap them.
import offthread from 'offthread';
import QRCode from 'qrcode';
import qrPng from 'qrcode/lib/renderer/png.js';
import { HttpError } from './errors.mjs';
import { md5Blueimp, md5Crypto, md5Loop } from './md5-js.mjs';

export { md5Blueimp, md5Crypto, md5Loop };

/**
 * @typedef {{ pool?: unknown, signal?: AbortSignal, timeout?: number }} CallOptions
 * The kernels the routes call: offthread's own namespaces, typed by the package. Tests
 * replace a namespace (`buildServer({ kernels: { pi: { … } } })`); the rest stay real.
 * @typedef {{ pi: typeof offthread.pi, qr: typeof offthread.qr, md5: typeof offthread.md5 }} Kernels
 */

/** @returns {Kernels} offthread's kernels */
export function defaultKernels() {
  return { pi: offthread.pi, qr: offthread.qr, md5: offthread.md5 };
}

/**
 * The kernels with `overrides` in place of whole namespaces.
 * @param {Partial<{ [K in keyof Kernels]: Partial<Kernels[K]> }>} [overrides]
 * @returns {Kernels}
 */
export function withKernels(overrides = {}) {
  return /** @type {Kernels} */ ({ ...defaultKernels(), ...overrides });
}

/** QR: 128 px, ECC M, quiet zone 4 modules (docs/kernels.md), in both modes. */
export const QR_DEFAULTS = Object.freeze({ size: 128, ecc: 'M', margin: 4 });

/**
 * The blog's original: npm `qrcode` on the event loop. Same geometry as offthread's
 * kernel: a whole number of pixels per module (at least 1), so at most `size` px when
 * the symbol fits. (qrcode's own `width` option scales by a fraction, which blurs big
 * symbols past what decoders read.)
 * @param {string} text
 * @param {{ size: number, ecc: string, margin: number }} o
 * @returns {Promise<string>}
 */
export function qrBlocking(text, o) {
  let symbol;
  try {
    symbol = QRCode.create(text, { errorCorrectionLevel: o.ecc });
  } catch (err) {
    if (/too big/i.test(String(/** @type {Error} */ (err)?.message))) {
      throw new HttpError('ERR_TEXT_TOO_LONG', `text does not fit in a QR code at ECC ${o.ecc}`);
    }
    throw err;
  }
  const scale = Math.max(1, Math.floor(o.size / (symbol.modules.size + 2 * o.margin)));
  return new Promise((resolve, reject) => {
    qrPng.renderToDataURL(symbol, { scale, margin: o.margin }, (err, url) => (err ? reject(err) : resolve(url)));
  });
}

/**
 * One row of the http-md5 experiment each (docs/experiments.md). `run` gets the kernels,
 * the parsed input and per-request call options; every row returns the hex digest of
 * `rounds` rounds, except `mixed` (see its summary). `blocksLoop`: the row runs (some of)
 * its rounds on the event loop by design, so the service serves it only with
 * `experimentRoutes` (10^7 rounds of `js` would freeze it for ~20 s).
 * @type {Record<string, { summary: string, blocksLoop: boolean, run(k: Kernels, text: string, rounds: number, call: CallOptions, ctx: { piscina(): Promise<any> }): Promise<string> | string }>}
 */
export const md5Impls = {
  js: {
    blocksLoop: true,
    summary: 'JS loop, JS MD5 (blueimp-md5), sync on the event loop',
    run: (_k, text, rounds) => md5Loop(md5Blueimp, text, rounds),
  },
  'js-native': {
    blocksLoop: true,
    summary: 'JS loop, native MD5 per round (md5.hex), sync',
    run: (k, text, rounds) => md5Loop((s) => k.md5.hex(s), text, rounds),
  },
  'js-native-async': {
    blocksLoop: false,
    summary: 'JS loop, native MD5 per round as one pool job each (md5.hexAsync), async',
    run: async (k, text, rounds, call) => {
      let d = '';
      for (let i = 0; i < rounds; i++) d = await k.md5.hexAsync(text + d, call);
      return d;
    },
  },
  native: {
    blocksLoop: true,
    summary: 'native loop (md5.iterateSync), sync on the event loop',
    run: (k, text, rounds) => k.md5.iterateSync(text, rounds),
  },
  'native-async': {
    blocksLoop: false,
    summary: 'native loop on the offthread pool (md5.iterate), async',
    run: (k, text, rounds, call) => k.md5.iterate(text, rounds, call),
  },
  mixed: {
    blocksLoop: true,
    summary:
      'native loop in 4 segments: async, sync, async, sync (rounds/4 each, the last takes the rest), ' +
      'each resuming from the previous digest (the blog model T + (N−1)·S·W)',
    run: async (k, text, rounds, call) => {
      const seg = Math.floor(rounds / 4);
      let start = '';
      for (let i = 0; i < 4; i++) {
        const n = i === 3 ? rounds - 3 * seg : seg;
        start = i % 2 === 0 ? await k.md5.iterate(text, n, { ...call, start }) : k.md5.iterateSync(text, n, { start });
      }
      return start;
    },
  },
  crypto: {
    blocksLoop: true,
    summary: "JS loop, node:crypto createHash('md5') per round, sync",
    run: (_k, text, rounds) => md5Loop(md5Crypto, text, rounds),
  },
  piscina: {
    blocksLoop: false,
    summary: 'the JS loop (blueimp-md5) in a piscina worker thread',
    run: async (_k, text, rounds, call, ctx) => {
      try {
        return await (await ctx.piscina()).run({ text, rounds }, { signal: call.signal });
      } catch (err) {
        // piscina's AbortError has no code (it was a 500 with a stack in the log): a client
        // that left is ERR_ABORTED (499), as on the offthread rows.
        if (call.signal?.aborted) throw new HttpError('ERR_ABORTED', 'the client closed the connection');
        throw err;
      }
    },
  },
};
