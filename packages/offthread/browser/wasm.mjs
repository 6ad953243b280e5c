// Loading offthread.wasm and calling its C-ABI exports (crates/offthread-wasm): the
// same code runs on the page (sync calls) and in every worker of the pool.
import { makeError, WASM_ERRORS } from './errors.mjs';

/** Where the wasm build sits next to this file in the package (…/wasm/offthread.wasm). */
export const defaultWasmUrl = new URL('../wasm/offthread.wasm', import.meta.url).href;

/** Rounds per MD5 step between two cancellation checks (~1 ms). */
export const MD5_CHECK_ROUNDS = 4096;
/** Samples per π step between two cancellation checks (a few ms). */
export const PI_CHECK_SAMPLES = 2 ** 20;

/**
 * Compiles the module. Streams when the server sends `application/wasm`; otherwise
 * compiles from the bytes (a wrong MIME type costs speed, not correctness).
 */
export async function compileWasm(url = defaultWasmUrl) {
  let res;
  try {
    res = await fetch(url);
  } catch (err) {
    throw makeError('ERR_BACKEND_UNAVAILABLE', `cannot fetch ${url}: ${err.message}`, err);
  }
  if (!res.ok) throw makeError('ERR_BACKEND_UNAVAILABLE', `cannot fetch ${url}: HTTP ${res.status}`);
  try {
    const type = res.headers.get('content-type') ?? '';
    if (type.startsWith('application/wasm') && WebAssembly.compileStreaming) {
      return await WebAssembly.compileStreaming(res);
    }
    return await WebAssembly.compile(await res.arrayBuffer());
  } catch (err) {
    throw makeError('ERR_BACKEND_UNAVAILABLE', `cannot compile ${url}: ${err.message}`, err);
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const ECC = { L: 0, M: 1, Q: 2, H: 3 };

/** Typed wrappers over one instance's exports. */
export class Kernels {
  constructor(instance) {
    this.x = instance.exports;
  }

  static async instantiate(module) {
    return new Kernels(await WebAssembly.instantiate(module, {}));
  }

  bytes() {
    return new Uint8Array(this.x.memory.buffer);
  }

  fail(code) {
    const name = WASM_ERRORS[-code - 1] ?? 'ERR_KERNEL_PANIC';
    const len = this.x.last_error_len();
    const raw =
      len > 0 ? decoder.decode(this.bytes().subarray(this.x.last_error_ptr(), this.x.last_error_ptr() + len)) : '';
    const message = raw.startsWith(`${name}: `) ? raw.slice(name.length + 2) : raw || `${name} (${code})`;
    return makeError(name, message);
  }

  /** `inside` for samples [first, first + count) of `seed`'s stream (fast kernel). */
  piCount(first, count, seed) {
    const r = this.x.pi_count_range(first, count, seed);
    if (r < 0) throw makeError(r === -2 ? 'ERR_INVALID_SEED' : 'ERR_INVALID_SAMPLES', `pi_count_range returned ${r}`);
    return r;
  }

  /** As piCount, calling `stop()` every PI_CHECK_SAMPLES samples; null when stopped. */
  piCountChecked(first, count, seed, stop) {
    let inside = 0;
    for (let done = 0; done < count; ) {
      if (stop()) return null;
      const n = Math.min(PI_CHECK_SAMPLES, count - done);
      inside += this.piCount(first + done, n, seed);
      done += n;
    }
    return inside;
  }

  /** Copies `input` (string or bytes) into linear memory; call `free()` after use. */
  input(data) {
    const bytes = typeof data === 'string' ? encoder.encode(data) : data;
    const ptr = this.x.alloc(bytes.length);
    if (ptr === 0) throw makeError('ERR_INVALID_ARG', 'out of wasm memory');
    this.bytes().set(bytes, ptr);
    return { ptr, len: bytes.length, free: () => this.x.dealloc(ptr, bytes.length) };
  }

  md5Hex(data) {
    const text = this.input(data);
    const out = this.x.alloc(32);
    try {
      const r = this.x.md5_hex(text.ptr, text.len, out);
      if (r < 0) throw this.fail(r);
      return decoder.decode(this.bytes().slice(out, out + 32));
    } finally {
      this.x.dealloc(out, 32);
      text.free();
    }
  }

  /** d_N of the MD5 loop from `start` (d₀ = ""); null when `stop()` said so. */
  md5Iterate(data, rounds, start = '', stop = () => false) {
    const text = this.input(data);
    const io = this.x.alloc(32);
    try {
      let digest = start;
      let done = 0;
      if (digest.length === 32) this.bytes().set(encoder.encode(digest), io);
      while (done < rounds) {
        if (stop()) return null;
        const n = Math.min(MD5_CHECK_ROUNDS, rounds - done);
        const r =
          digest.length === 0
            ? this.x.md5_iterate(text.ptr, text.len, n, io)
            : this.x.md5_iterate_from(text.ptr, text.len, n, io);
        if (r < 0) throw this.fail(r);
        digest = decoder.decode(this.bytes().slice(io, io + 32));
        done += n;
      }
      return digest;
    } finally {
      this.x.dealloc(io, 32);
      text.free();
    }
  }

  /** `format` 'dataURL' | 'png' | 'svg' → string, Uint8Array (a copy), string. */
  qr(format, text, { ecc, size, margin }) {
    const input = this.input(text);
    try {
      const fn = format === 'png' ? this.x.qr_png : format === 'svg' ? this.x.qr_svg : this.x.qr_data_url;
      const r = fn(input.ptr, input.len, ECC[ecc], size, margin);
      if (r < 0) throw this.fail(r);
      const ptr = this.x.qr_last_ptr();
      const out = this.bytes().slice(ptr, ptr + r);
      return format === 'png' ? out : decoder.decode(out);
    } finally {
      input.free();
    }
  }
}
