/**
 * QR codes: text (UTF-8) → symbol (ECC L/M/Q/H, default M) → 1-bit greyscale PNG of at
 * most `size` px with a quiet zone of `margin` modules → data URL, PNG or SVG.
 * Native (fast_qr + png + base64) on the calling thread or on the pool.
 */
import { warnFallbackOnce } from './backends/index';
import { native } from './backends/native';
import { wasm, wasmCheck, withBytes } from './backends/wasm';
import { fromNative, makeError } from './errors';
import { type CallOptions, checkCallOptions, defaultPool } from './pool';
import { toOptions } from './validate';

export type Ecc = 'L' | 'M' | 'Q' | 'H';

export interface QrOptions {
  /** Largest image side in pixels, 1…4096 (default 128). */
  size?: number;
  /** Error-correction level (default 'M'). */
  ecc?: Ecc;
  /** Quiet zone in modules, 0…64 (default 4). */
  margin?: number;
}

/** Output formats, as the binding numbers them. */
const FORMAT = { dataURL: 0, png: 1, svg: 2 } as const;

interface Parsed {
  text: string;
  ecc: Ecc;
  size: number;
  margin: number;
}

function parse(text: unknown, options: unknown): Parsed & { opts: Partial<QrOptions & CallOptions> } {
  if (typeof text !== 'string') throw makeError('ERR_INVALID_ARG', `text must be a string, got ${typeof text}`);
  const opts = toOptions<QrOptions & CallOptions>(options);
  const { size = 128, ecc = 'M', margin = 4 } = opts;
  if (!Number.isInteger(size) || size < 1 || size > 4096) {
    throw makeError('ERR_INVALID_QR_OPTIONS', `size must be an integer from 1 to 4096 pixels, got ${String(size)}`);
  }
  if (!Number.isInteger(margin) || margin < 0 || margin > 64) {
    throw makeError('ERR_INVALID_QR_OPTIONS', `margin must be an integer from 0 to 64 modules, got ${String(margin)}`);
  }
  if (!['L', 'M', 'Q', 'H'].includes(ecc)) {
    throw makeError('ERR_INVALID_QR_OPTIONS', `ecc must be one of L, M, Q, H, got ${JSON.stringify(ecc)}`);
  }
  return { text, ecc, size, margin, opts };
}

const ECC_INDEX: Record<Ecc, number> = { L: 0, M: 1, Q: 2, H: 3 };

/** One encode in the WASM build (the fallback): returns the output bytes. */
function encodeWasm(p: Parsed, format: 'qr_data_url' | 'qr_png' | 'qr_svg'): Buffer {
  const w = wasm();
  if (!w)
    throw makeError('ERR_BACKEND_UNAVAILABLE', 'QR codes need the native addon or offthread.wasm (npm run setup)');
  warnFallbackOnce();
  const bytes = Buffer.from(p.text, 'utf8');
  return withBytes(w, bytes, 0, (ptr) => {
    const len = wasmCheck(w, w[format](ptr, bytes.length, ECC_INDEX[p.ecc], p.size, p.margin));
    return Buffer.from(new Uint8Array(w.memory.buffer, w.qr_last_ptr(), len));
  });
}

function sync<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    throw fromNative(err);
  }
}

async function onPool<T>(text: unknown, options: unknown, format: number): Promise<T> {
  const { opts, ...p } = parse(text, options);
  const call = checkCallOptions(opts);
  if (!native) {
    const out = encodeWasm(p, format === FORMAT.png ? 'qr_png' : format === FORMAT.svg ? 'qr_svg' : 'qr_data_url');
    return (format === FORMAT.png ? out : out.toString('utf8')) as T;
  }
  return (call.pool ?? defaultPool()).submitQr(p.text, p.ecc, p.size, p.margin, format, call) as Promise<T>;
}

/** `data:image/png;base64,…` on the calling thread (~70 µs for 128 px). */
export function toDataURLSync(text: string, options?: QrOptions): string {
  const p = parse(text, options);
  if (!native) return encodeWasm(p, 'qr_data_url').toString('utf8');
  return sync(() => native!.qrDataUrlSync(p.text, p.ecc, p.size, p.margin));
}

export function toPNGSync(text: string, options?: QrOptions): Buffer {
  const p = parse(text, options);
  if (!native) return encodeWasm(p, 'qr_png');
  return sync(() => native!.qrPngSync(p.text, p.ecc, p.size, p.margin));
}

export function toSVGSync(text: string, options?: QrOptions): string {
  const p = parse(text, options);
  if (!native) return encodeWasm(p, 'qr_svg').toString('utf8');
  return sync(() => native!.qrSvgSync(p.text, p.ecc, p.size, p.margin));
}

/** The data URL, encoded on the pool. */
export function toDataURL(text: string, options?: QrOptions & CallOptions): Promise<string> {
  return onPool(text, options, FORMAT.dataURL);
}

export function toPNG(text: string, options?: QrOptions & CallOptions): Promise<Buffer> {
  return onPool(text, options, FORMAT.png);
}

export function toSVG(text: string, options?: QrOptions & CallOptions): Promise<string> {
  return onPool(text, options, FORMAT.svg);
}
