/**
 * Pure-JS π kernels: the baselines of the benchmarks, the oracle of the tests and the
 * last-resort fallback. Same definition as the Rust kernel (docs/kernels.md), same results.
 */

const M = 2147483647; // m = 2^31 − 1
const A = 16807;
const D = 2147483646; // m − 1
const TWO31 = 2147483648;
const INV_TWO31 = 1 / TWO31;

/** Seed normalisation: s = seed mod m (JS `%`); if s ≤ 0 then s += m − 1. */
export function normalizeSeed(seed: number): number {
  let s = seed % M;
  if (s <= 0) s += M - 1;
  return s;
}

/** 16807^k mod m (BigInt: k may exceed 2^32; O(log k) steps). */
export function jumpMultiplier(k: number): number {
  const m = BigInt(M);
  let base = BigInt(A);
  let acc = 1n;
  let e = BigInt(k);
  while (e > 0n) {
    if (e & 1n) acc = (acc * base) % m;
    base = (base * base) % m;
    e >>= 1n;
  }
  return Number(acc);
}

/** Stream state just before the draws of sample `first` (jump-ahead by 2·first). */
export function stateAt(seed: number, first: number): number {
  const s = normalizeSeed(seed);
  if (first === 0) return s;
  return Number((BigInt(s) * BigInt(jumpMultiplier(2 * first))) % BigInt(M));
}

/** The `js` variant: the definition with `%` (16807·s < 2^46 is exact in a double). */
export function countInsideJs(state: number, samples: number): number {
  let s = state;
  let inside = 0;
  for (let i = 0; i < samples; i++) {
    s = (A * s) % M;
    const x = (s - 1) / D;
    s = (A * s) % M;
    const y = (s - 1) / D;
    if (x * x + y * y <= 1) inside++;
  }
  return inside;
}

/**
 * The `jsBitwise` variant: Carta's division-free reduction. p = a·s = hi·2^31 + lo
 * and 2^31 ≡ 1 (mod m), so a·s mod m = lo + hi, less m once if needed. Every step is
 * exact in doubles (p < 2^46); the fastest sequential JS form we measured here
 * (int32-halves Carta and `%` were slower).
 */
export function countInsideJsBitwise(state: number, samples: number): number {
  let s = state;
  let inside = 0;
  for (let i = 0; i < samples; i++) {
    let p = A * s;
    let hi = Math.floor(p * INV_TWO31);
    s = p - hi * TWO31 + hi;
    if (s >= M) s -= M;
    const x = (s - 1) / D;
    p = A * s;
    hi = Math.floor(p * INV_TWO31);
    s = p - hi * TWO31 + hi;
    if (s >= M) s -= M;
    const y = (s - 1) / D;
    if (x * x + y * y <= 1) inside++;
  }
  return inside;
}

/** First `count` outputs of the generator for `seed` (tests: 16807, 282475249, …). */
export function parkMillerOutputs(seed: number, count: number): number[] {
  let s = normalizeSeed(seed);
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    s = (A * s) % M;
    out.push(s);
  }
  return out;
}
