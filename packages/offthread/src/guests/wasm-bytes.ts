/**
 * A cursor over a WebAssembly binary: the one reader of bytes, LEB128s, names and limits
 * that the guest ABI's module reader (abi.ts), the code scan (wasm-scan.ts) and the input
 * rewrite (wasm-rewrite.ts) share. Every read is bounds-checked; `fail` makes the error
 * (ERR_GUEST_MODULE, located by the caller).
 */

const utf8 = new TextDecoder();

export interface Limits {
  initial: number;
  maximum: number | null;
  shared: boolean;
  /** 64-bit or a custom page size (flags bits 2–3). */
  exotic: boolean;
}

export class WasmCursor {
  /** The offset of the next byte. */
  at = 0;

  constructor(
    readonly bytes: Uint8Array,
    readonly fail: (why: string) => Error,
  ) {}

  byte(): number {
    if (this.at >= this.bytes.length) throw this.fail('truncated WebAssembly module');
    return this.bytes[this.at++] as number;
  }

  /** An unsigned LEB128 (exact up to 2^53). */
  uleb(): number {
    // Most immediates are one byte: skip the loop for them (the scan reads one per instruction).
    const first = this.bytes[this.at];
    if (first !== undefined && first < 0x80) {
      this.at++;
      return first;
    }
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
      if (shift > 63) throw this.fail('malformed LEB128 in the module');
    }
  }

  /** A signed LEB128, as a number (exact for the small values blocktypes and heap types use). */
  sleb(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if ((b & 0x80) === 0) return b & 0x40 ? result - 2 ** shift : result;
      if (shift > 70) throw this.fail('malformed LEB128 in the module');
    }
  }

  skip(n: number): void {
    if (this.at + n > this.bytes.length) throw this.fail('truncated WebAssembly module');
    this.at += n;
  }

  /** A length-prefixed UTF-8 name. */
  name(): string {
    const len = this.uleb();
    this.skip(len);
    return utf8.decode(this.bytes.subarray(this.at - len, this.at));
  }

  /** A value type: one byte, or (ref null? ht) with its heap type after it; the first byte. */
  valtype(): number {
    const t = this.byte();
    if (t === 0x63 || t === 0x64) this.sleb();
    return t;
  }

  /** A memory's or table's limits. */
  limits(): Limits {
    const flags = this.byte();
    const initial = this.uleb();
    const maximum = flags & 1 ? this.uleb() : null;
    if (flags & 8) this.uleb(); // custom page size (log2)
    return { initial, maximum, shared: (flags & 2) !== 0, exotic: (flags & 0b1100) !== 0 };
  }

  /** The sections after the header: id and the span of each body. */
  sections(): { id: number; head: number; start: number; end: number }[] {
    const out: { id: number; head: number; start: number; end: number }[] = [];
    this.at = 8;
    while (this.at < this.bytes.length) {
      const head = this.at;
      const id = this.byte();
      const size = this.uleb();
      if (this.at + size > this.bytes.length) throw this.fail('truncated WebAssembly module');
      out.push({ id, head, start: this.at, end: this.at + size });
      this.at += size;
    }
    return out;
  }
}
