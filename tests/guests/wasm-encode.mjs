// The WebAssembly binary format's building blocks, for the hand-assembled test guests
// (tests/guests/hostile, packages/offthread/test/guests-wasm.mjs) and the guest fuzzer's
// module mutations: LEB128 integers, names, sections and vectors.
const enc = new TextEncoder();

/** Unsigned LEB128. */
export function uleb(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

/** Signed LEB128 (any size: through BigInt). */
export function sleb(v) {
  let n = BigInt(v);
  const out = [];
  for (;;) {
    const b = Number(n & 0x7fn);
    n >>= 7n;
    if ((n === 0n && (b & 0x40) === 0) || (n === -1n && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

/** A name: its UTF-8 length, then the bytes. */
export const str = (s) => [...uleb(enc.encode(s).length), ...enc.encode(s)];
/** Section `id` holding `body`. */
export const section = (id, body) => [id, ...uleb(body.length), ...body];
/** A vector of already encoded items. */
export const vec = (items) => [...uleb(items.length), ...items.flat()];

export const I32 = 0x7f;
export const I64 = 0x7e;
