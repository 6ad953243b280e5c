/**
 * QR codes: text (UTF-8) → symbol (ECC L/M/Q/H, default M) → 1-bit greyscale PNG of at
 * most `size` px with a quiet zone of `margin` modules → data URL, PNG or SVG. Native
 * (fast_qr + png + base64) or offthread.wasm, on the calling thread or on the pool:
 * registry kernels `qr.dataURL`, `qr.png`, `qr.svg`. The pure-JS tier has no QR
 * encoder: without both, calls fail with ERR_BACKEND_UNAVAILABLE.
 */
import { describe, makeError } from '../errors.js';
import { host } from '../host.js';
import { type CallOptions, checkCallOptions } from '../pool/pool.js';
import { CALL_KEYS, toOptions } from '../validate.js';
import { type Ecc, type QrArgs, type QrFormat, qrCall } from './kernels.js';
import { callAsync, callSync } from './registry.js';

export type { Ecc } from './kernels.js';

export interface QrOptions {
  /** Largest image side in pixels, 1…4096 (default 128). */
  size?: number;
  /** Error-correction level (default 'M'). */
  ecc?: Ecc;
  /** Quiet zone in modules, 0…64 (default 4). */
  margin?: number;
}

const ECCS: readonly Ecc[] = ['L', 'M', 'Q', 'H'];

const QR_KEYS = ['size', 'ecc', 'margin'] as const;

type QrKey = keyof (QrOptions & CallOptions) & string;

function parse(
  text: unknown,
  options: unknown,
  format: QrFormat,
  keys: readonly QrKey[] = QR_KEYS,
): { args: QrArgs; call: CallOptions } {
  if (typeof text !== 'string') throw makeError('ERR_INVALID_ARG', `text must be a string, got ${describe(text)}`);
  const opts = toOptions<QrOptions & CallOptions>(options, keys);
  const { size = 128, ecc = 'M', margin = 4 } = opts;
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > 4096) {
    throw makeError('ERR_INVALID_QR_OPTIONS', `size must be an integer from 1 to 4096 pixels, got ${describe(size)}`);
  }
  if (typeof margin !== 'number' || !Number.isInteger(margin) || margin < 0 || margin > 64) {
    throw makeError(
      'ERR_INVALID_QR_OPTIONS',
      `margin must be an integer from 0 to 64 modules, got ${describe(margin)}`,
    );
  }
  if (!ECCS.includes(ecc)) {
    throw makeError('ERR_INVALID_QR_OPTIONS', `ecc must be one of L, M, Q, H, got ${describe(ecc)}`);
  }
  return { args: { text, ecc, size, margin, format }, call: opts };
}

/** One encode on the calling thread (registry kernel `qr.<format>`). */
function encodeSync(a: QrArgs): string | Uint8Array {
  return callSync(qrCall(a)) as string | Uint8Array;
}

async function onPool(text: unknown, options: unknown, format: QrFormat): Promise<string | Uint8Array> {
  const { args, call } = parse(text, options, format, [...QR_KEYS, ...CALL_KEYS]);
  const checked = checkCallOptions(call);
  return (await callAsync(checked, qrCall(args))) as string | Uint8Array;
}

/** `data:image/png;base64,…` on the calling thread (~70 µs for 128 px natively). */
export function toDataURLSync(text: string, options?: QrOptions): string {
  return encodeSync(parse(text, options, 'dataURL').args) as string;
}

/** The PNG file's bytes (a Buffer in Node). */
export function toPNGSync(text: string, options?: QrOptions): Uint8Array {
  return host().binary(encodeSync(parse(text, options, 'png').args) as Uint8Array);
}

export function toSVGSync(text: string, options?: QrOptions): string {
  return encodeSync(parse(text, options, 'svg').args) as string;
}

/** The data URL, encoded on the pool. */
export async function toDataURL(text: string, options?: QrOptions & CallOptions): Promise<string> {
  return (await onPool(text, options, 'dataURL')) as string;
}

/** The PNG file's bytes (a Buffer in Node), encoded on the pool. */
export async function toPNG(text: string, options?: QrOptions & CallOptions): Promise<Uint8Array> {
  return host().binary((await onPool(text, options, 'png')) as Uint8Array);
}

export async function toSVG(text: string, options?: QrOptions & CallOptions): Promise<string> {
  return (await onPool(text, options, 'svg')) as string;
}
