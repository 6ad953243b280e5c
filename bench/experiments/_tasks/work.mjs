// The task code every pool of the async experiment's task rows runs (each pool loads it
// through its own API: bench/experiments/_tasks/<pool>.mjs wraps it where a pool needs a
// worker script of its own).
export const echo = (value) => value;

/**
 * ≈ n·1 ns of pure JS (a hash loop the JIT cannot remove); the experiment calibrates n to
 * ≈ 5 ms. Xor, not `+ i | 0`: that add overflows, and on Node 24 (V8 13.6) a worker then
 * ran it at 1.1 or 4.9 ms per 10^6 steps by which tier it happened to end on (OSR code or
 * TurboFan compiled after the overflow deopt), so 1- and 2-worker rows measured the JIT's
 * luck; the xor form runs 1.09 ms per 10^6 on Node 20, 24 and 26 from the first 100 calls.
 */
export function cpu(n) {
  let h = 0;
  for (let i = 0; i < n; i++) h = Math.imul(h, 31) ^ i;
  return h;
}

export const size = (bytes) => bytes.byteLength;

/** Writes into the bytes it was given (a SharedArrayBuffer view: the caller sees it). */
export function mark(bytes) {
  bytes[0] = 42;
  return bytes.byteLength;
}
