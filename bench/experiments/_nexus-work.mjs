// The task module of the nexus-tasks experiment: the same functions run on the loop
// (imported) and on the pool's workers (tasks()).

/** CPU-bound JS: `n` rounds of float math (deterministic work, not a timed spin). */
export function burn(n) {
  let x = 0;
  for (let i = 1; i <= n; i++) x += Math.sqrt(i) * Math.sin(i);
  return x;
}

/** A stream transform doing a copy's work: every chunk copied into a new buffer. */
export async function* copy(chunks) {
  for await (const chunk of chunks) yield new Uint8Array(chunk);
}

/** Adler-32 of `bytes` (RFC 1950), in plain JS: a byte at a time, as a user's own code would. */
export function adler32(bytes) {
  let a = 1;
  let b = 0;
  for (let i = 0; i < bytes.length; ) {
    // 5552 bytes: the most before b can pass 2^32 (zlib's NMAX).
    const end = Math.min(i + 5552, bytes.length);
    for (; i < end; i++) {
      a += bytes[i];
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** A stream transform doing real work: each chunk's Adler-32 computed, the chunk passed on; returns their sum. */
export async function* checksum(chunks) {
  let sums = 0;
  for await (const chunk of chunks) {
    sums = (sums + adler32(chunk)) >>> 0;
    yield chunk;
  }
  return sums;
}
