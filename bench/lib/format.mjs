// Number formatting for reports. Every helper returns a string and never throws on
// odd input: null/undefined/NaN become '–' so a missing measurement shows as a gap.

const MISSING = '–';
const SUPERSCRIPT = { '-': '⁻', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹' };

/** @param {unknown} x */
const missing = (x) => x === null || x === undefined || (typeof x === 'number' && !Number.isFinite(x));

/**
 * Integer with thousands separators: 1234567 → "1,234,567". Accepts BigInt.
 * @param {number | bigint | null | undefined} n
 */
export function formatInt(n) {
  if (missing(n)) return MISSING;
  const s = (typeof n === 'bigint' ? n : BigInt(Math.round(/** @type {number} */ (n)))).toString();
  const neg = s.startsWith('-');
  const digits = neg ? s.slice(1) : s;
  return (neg ? '-' : '') + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * `digits` significant digits (default 3), thousands separators above 1,000:
 * 0.012345 → "0.0123", 3.14159 → "3.14", 1.5 → "1.50", 1234567 → "1,230,000".
 * @param {number | null | undefined} x
 * @param {number} [digits]
 */
export function formatSig(x, digits = 3) {
  if (missing(x)) return MISSING;
  // Round first, so 9.996 becomes 10.0 and takes the next decade's layout.
  const v = Number(/** @type {number} */ (x).toPrecision(digits));
  if (v === 0) return '0';
  const magnitude = Math.floor(Math.log10(Math.abs(v)));
  if (magnitude >= digits - 1) return formatInt(v);
  // Fixed notation keeps trailing zeros (0.500, 1.50) so columns line up, and never
  // switches to exponents (1.23e-7 → "0.000000123").
  return v.toFixed(digits - 1 - magnitude);
}

/**
 * Operations per second: whole numbers with separators from 100 up, else 3 significant
 * digits (1234567.8 → "1,234,568", 12.345 → "12.3").
 * @param {number | null | undefined} opsPerSec
 */
export function formatOps(opsPerSec) {
  if (missing(opsPerSec)) return MISSING;
  return Math.abs(/** @type {number} */ (opsPerSec)) >= 100 ? formatInt(opsPerSec) : formatSig(opsPerSec);
}

/**
 * A duration given in nanoseconds, auto unit, 3 significant digits:
 * 950 → "950 ns", 1234 → "1.23 µs", 45_600_000 → "45.6 ms", 2.5e9 → "2.50 s".
 * @param {number | null | undefined} ns
 */
export function formatDuration(ns) {
  if (missing(ns)) return MISSING;
  const v = /** @type {number} */ (ns);
  if (v === 0) return '0';
  // Pick the unit after rounding, so 999.6 ns reads "1.00 µs", not "1,000 ns".
  const abs = Number(Math.abs(v).toPrecision(3));
  const [scale, unit] = abs < 1e3 ? [1, 'ns'] : abs < 1e6 ? [1e3, 'µs'] : abs < 1e9 ? [1e6, 'ms'] : [1e9, 's'];
  const scaled = v / scale;
  // Keep trailing zeros in the unit's range (2.50 s) but never use exponent notation.
  const text = Math.abs(scaled) >= 1000 ? formatInt(scaled) : scaled.toPrecision(3);
  return `${text.includes('e') ? formatSig(scaled) : text} ${unit}`;
}

/**
 * A duration given in milliseconds, auto unit (see formatDuration).
 * @param {number | null | undefined} ms
 */
export const formatMs = (ms) => (missing(ms) ? MISSING : formatDuration(/** @type {number} */ (ms) * 1e6));

/**
 * A ratio: 12.345 → "12.3×".
 * @param {number | null | undefined} x
 */
export const formatRatio = (x) => (missing(x) ? MISSING : `${formatSig(x)}×`);

/**
 * A fraction as a percentage: 0.1234 → "12.3%".
 * @param {number | null | undefined} fraction
 */
export const formatPercent = (fraction) =>
  missing(fraction) ? MISSING : `${formatSig(/** @type {number} */ (fraction) * 100)}%`;

/**
 * Mebibytes: 123.456 → "123 MiB".
 * @param {number | null | undefined} mib
 */
export const formatMiB = (mib) => (missing(mib) ? MISSING : `${formatSig(mib)} MiB`);

/**
 * Exact powers of ten as 10ⁿ (1e6 → "10⁶"), anything else as formatInt. For sizes.
 * @param {number | null | undefined} n
 */
export function formatPow10(n) {
  if (missing(n)) return MISSING;
  const v = /** @type {number} */ (n);
  const e = Math.round(Math.log10(v));
  if (v > 0 && e >= 1 && 10 ** e === v) {
    return `10${[...String(e)].map((c) => SUPERSCRIPT[/** @type {keyof typeof SUPERSCRIPT} */ (c)]).join('')}`;
  }
  return formatInt(v);
}

/**
 * Default cell text: numbers with 3 significant digits, BigInt with separators,
 * booleans as ✓/✗, everything else String().
 * @param {unknown} v
 */
export function formatAuto(v) {
  if (v === null || v === undefined) return MISSING;
  if (typeof v === 'number') return Number.isInteger(v) ? formatInt(v) : formatSig(v);
  if (typeof v === 'bigint') return formatInt(v);
  if (typeof v === 'boolean') return v ? '✓' : '✗';
  return String(v);
}

/**
 * Every run's figure in whole ms, in run order: `1,161 / 1,125 / 1,080` (a row that is
 * the median of its runs shows them all).
 * @param {unknown} v an array of ms
 */
export function formatMsEach(v) {
  if (!Array.isArray(v)) return MISSING;
  return v.map((ms) => formatInt(ms)).join(' / ');
}

/**
 * Named formatters, so a table column can say `format: 'ops'` and stay JSON-serialisable.
 * @type {Readonly<Record<string, (v: any) => string>>}
 */
export const formatters = Object.freeze({
  auto: formatAuto,
  int: formatInt,
  sig3: formatSig,
  ops: formatOps,
  ns: formatDuration,
  ms: formatMs,
  ratio: formatRatio,
  percent: formatPercent,
  mib: formatMiB,
  pow10: formatPow10,
  msEach: formatMsEach,
});
