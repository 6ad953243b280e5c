import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  formatAuto,
  formatDuration,
  formatInt,
  formatMiB,
  formatMs,
  formatMsEach,
  formatOps,
  formatPercent,
  formatPow10,
  formatRatio,
  formatSig,
  formatters,
} from '../lib/format.mjs';

test('formatInt: thousands separators, rounding, negatives, BigInt', () => {
  assert.equal(formatInt(0), '0');
  assert.equal(formatInt(999), '999');
  assert.equal(formatInt(1000), '1,000');
  assert.equal(formatInt(1234567.6), '1,234,568');
  assert.equal(formatInt(-1234567), '-1,234,567');
  assert.equal(formatInt(2n ** 64n), '18,446,744,073,709,551,616');
});

test('formatSig: 3 significant digits, separators above 1,000, no exponents', () => {
  assert.equal(formatSig(1.23456), '1.23');
  assert.equal(formatSig(0.012345), '0.0123');
  assert.equal(formatSig(1.5), '1.50');
  assert.equal(formatSig(123.456), '123');
  assert.equal(formatSig(1234567), '1,230,000');
  assert.equal(formatSig(-5.4321), '-5.43');
  assert.equal(formatSig(1.2345e-7), '0.000000123');
  assert.equal(formatSig(9.996), '10.0');
  assert.equal(formatSig(99_960), '100,000');
  assert.equal(formatSig(0), '0');
  assert.equal(formatSig(1.23456, 5), '1.2346');
});

test('formatOps: whole ops/s with separators from 100 up', () => {
  assert.equal(formatOps(1234567.8), '1,234,568');
  assert.equal(formatOps(100.4), '100');
  assert.equal(formatOps(12.345), '12.3');
  assert.equal(formatOps(0.3333), '0.333');
});

test('formatDuration: ns in, unit picked after rounding', () => {
  assert.equal(formatDuration(0), '0');
  assert.equal(formatDuration(0.5), '0.500 ns');
  assert.equal(formatDuration(950), '950 ns');
  assert.equal(formatDuration(999.6), '1.00 µs');
  assert.equal(formatDuration(1234), '1.23 µs');
  assert.equal(formatDuration(45_600_000), '45.6 ms');
  assert.equal(formatDuration(2.5e9), '2.50 s');
  assert.equal(formatDuration(1.2e13), '12,000 s');
  assert.equal(formatMs(1.5), '1.50 ms');
  assert.equal(formatMs(0.0123), '12.3 µs');
});

test('ratio, percent, MiB, powers of ten', () => {
  assert.equal(formatRatio(12.345), '12.3×');
  assert.equal(formatPercent(0.1234), '12.3%');
  assert.equal(formatMiB(56.25), '56.3 MiB');
  assert.equal(formatPow10(10), '10¹');
  assert.equal(formatPow10(1e6), '10⁶');
  assert.equal(formatPow10(1e10), '10¹⁰');
  assert.equal(formatPow10(5000), '5,000');
  assert.equal(formatPow10(1), '1');
});

test('formatMsEach: every run in whole ms with separators, in order', () => {
  assert.equal(formatMsEach([1160.6, 1125, 980.2]), '1,161 / 1,125 / 980');
  assert.equal(formatMsEach([42]), '42');
});

test('missing values render as a dash, never "NaN"', () => {
  for (const f of Object.values(formatters)) {
    assert.equal(f(undefined), '–', f.name);
    assert.equal(f(null), '–', f.name);
    assert.equal(f(Number.NaN), '–', f.name);
  }
});

test('formatAuto: by type', () => {
  assert.equal(formatAuto(1234), '1,234');
  assert.equal(formatAuto(1.23456), '1.23');
  assert.equal(formatAuto(5n), '5');
  assert.equal(formatAuto(true), '✓');
  assert.equal(formatAuto('js'), 'js');
});
