// The π definition in plain JS for browsers (DESIGN.md): Park–Miller minimal standard,
// x then y from one stream, x·x + y·y ≤ 1 in f64. Used by the `js` and `jsBitwise`
// variants on the page and in workers; the browser tests check it against Node's.

export const MODULUS = 2147483647; // m = 2^31 − 1
export const MULTIPLIER = 16807; // a
const DENOM = MODULUS - 1; // the float of a draw is (s − 1)/(m − 1)
const TWO_31 = 2 ** 31;
const INV_TWO_31 = 2 ** -31;

/** s = seed mod m (truncated like `%`); s ≤ 0 → s + m − 1. */
export function seedState(seed) {
  let s = seed % MODULUS;
  if (s <= 0) s += MODULUS - 1;
  return s;
}

/** a^k mod m by square-and-multiply in BigInt (k up to 2^54). */
function powMod(k) {
  const m = BigInt(MODULUS);
  let result = 1n;
  let base = BigInt(MULTIPLIER);
  for (let e = BigInt(k); e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * base) % m;
    base = (base * base) % m;
  }
  return result;
}

/** The state just before sample `first` draws its x: 2·first steps after the seed. */
export function stateAt(seed, first) {
  const s = seedState(seed);
  return first === 0 ? s : Number((BigInt(s) * powMod(2 * first)) % BigInt(MODULUS));
}

/** `js`: the definition with `%` (a·s < 2^46 is exact in a double). */
export function countJs(state, samples) {
  let s = state;
  let inside = 0;
  for (let i = 0; i < samples; i++) {
    s = (MULTIPLIER * s) % MODULUS;
    const x = (s - 1) / DENOM;
    s = (MULTIPLIER * s) % MODULUS;
    const y = (s - 1) / DENOM;
    if (x * x + y * y <= 1) inside++;
  }
  return inside;
}

/**
 * `jsBitwise`: division-free reduction. a·s = q·2^31 + r and 2^31 ≡ 1 (mod m), so
 * a·s ≡ q + r; one conditional subtraction brings it below m. Exact in doubles.
 */
export function countJsBitwise(state, samples) {
  let s = state;
  let inside = 0;
  for (let i = 0; i < samples; i++) {
    let p = MULTIPLIER * s;
    let q = Math.floor(p * INV_TWO_31);
    s = p - q * TWO_31 + q;
    if (s >= MODULUS) s -= MODULUS;
    const x = (s - 1) / DENOM;
    p = MULTIPLIER * s;
    q = Math.floor(p * INV_TWO_31);
    s = p - q * TWO_31 + q;
    if (s >= MODULUS) s -= MODULUS;
    const y = (s - 1) / DENOM;
    if (x * x + y * y <= 1) inside++;
  }
  return inside;
}

/** `inside` for samples [first, first + count) of `seed`'s stream, JS kernel `variant`. */
export function countRangeJs(variant, first, count, seed) {
  const state = stateAt(seed, first);
  return variant === 'js' ? countJs(state, count) : countJsBitwise(state, count);
}
