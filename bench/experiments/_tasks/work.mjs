// The task code every pool of the async experiment's task rows runs (each pool loads it
// through its own API: bench/experiments/_tasks/<pool>.mjs wraps it where a pool needs a
// worker script of its own).
export const echo = (value) => value;

/** ≈ n·1 ns of pure JS (a hash loop the JIT cannot remove); the experiment calibrates n to ≈ 5 ms. */
export function cpu(n) {
  let h = 0;
  for (let i = 0; i < n; i++) h = (Math.imul(h, 31) + i) | 0;
  return h;
}

export const size = (bytes) => bytes.byteLength;

/** Writes into the bytes it was given (a SharedArrayBuffer view: the caller sees it). */
export function mark(bytes) {
  bytes[0] = 42;
  return bytes.byteLength;
}
