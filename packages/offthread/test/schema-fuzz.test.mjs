// Fuzzing every generated TS reader and writer (issue 11, "Fuzzing that runs"), with
// fast-check. Readers: arbitrary bytes and mutated golden encodings, at aligned and
// unaligned offsets, into every `decodeX`, `XReader.fromBytes` and every accessor reachable
// from it → a value or a SchemaReadError with an R code, never another throw, never more
// than a second per input. Writers: random valid values → encode → decode equal (and the
// top-down writer agrees byte for byte); the documented bad values → W codes.
//
// `npm test` runs a small, fixed-seed budget; `npm run fuzz` (scripts/fuzz.mjs) sets
// OFFTHREAD_FUZZ_RUNS (runs per property), OFFTHREAD_FUZZ_SEED, and OFFTHREAD_FUZZ_STATS (a
// JSON file for executions and the slowest input per property).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import { errorRegistry } from '../dist/errors.js';
import * as v1 from '../dist/schema/generated/fixtures/evolution_v1.js';
import * as v2 from '../dist/schema/generated/fixtures/evolution_v2.js';
import * as ks from '../dist/schema/generated/fixtures/kitchen_sink.js';
import * as rec from '../dist/schema/generated/fixtures/records.js';
import * as recV1 from '../dist/schema/generated/fixtures/records_v1.js';
import * as un from '../dist/schema/generated/fixtures/unions.js';
import * as scooter from '../dist/schema/generated/scooter.js';
import * as temperature from '../dist/schema/generated/temperature.js';
import { SchemaReadError, SchemaWriteError } from '../dist/schema/runtime.js';
import { fuzzStats } from './fuzz-stats.mjs';

const RUNS = Number(process.env.OFFTHREAD_FUZZ_RUNS ?? 150);
const SEED = Number(process.env.OFFTHREAD_FUZZ_SEED ?? 0x0ff7);
/** Work per input is bounded: generous, so a loaded CI machine does not flake. */
const CEILING_MS = 1000;

const golden = (name) =>
  new Uint8Array(
    Buffer.from(
      readFileSync(new URL(`../../../tests/fixtures/schema/golden/${name}.hex`, import.meta.url), 'utf8').replace(
        /\s/g,
        '',
      ),
      'hex',
    ),
  );

/** Each generated module, its golden encodings, and every struct it can open as a root. */
const MODULES = [
  ['temperature', temperature, ['temperature_10']],
  ['scooter', scooter, ['scooter_fleet']],
  ['kitchen_sink', ks, ['kitchen_sink']],
  ['unions', un, ['unions']],
  ['records', rec, ['records']],
  ['records_v1', recV1, ['records']],
  ['evolution_v1', v1, ['evolution_v1', 'evolution_v2']],
  ['evolution_v2', v2, ['evolution_v2', 'evolution_v1']],
].map(([name, mod, seeds]) => ({
  name,
  seeds: seeds.map(golden),
  roots: Object.keys(mod)
    .filter((k) => /^decode\w+$/.test(k) && typeof mod[`${k.slice(6)}Reader`]?.fromBytes === 'function')
    .map((k) => ({ name: k.slice(6), decode: mod[k], Reader: mod[`${k.slice(6)}Reader`] })),
}));

// ---- statistics, for `npm run fuzz` ------------------------------------------------------

const stats = fuzzStats({ seed: SEED, runs: RUNS, blank: { slowestBytes: 0 } });
function timed(prop, bytes, fn) {
  const once = () => {
    const t0 = performance.now();
    fn();
    return performance.now() - t0;
  };
  let ms = once();
  // A new slowest input is timed twice (the faster counts), so a GC pause or a busy
  // machine is not reported as the input's own cost.
  if (ms > stats.slowestMs(prop)) ms = Math.min(ms, once());
  stats.record(prop, ms, { slowestBytes: bytes });
  assert.ok(ms < CEILING_MS, `${prop}: one input took ${ms.toFixed(1)} ms (${bytes} bytes)`);
}
function check(prop, property) {
  const r = fc.check(property, { numRuns: RUNS, seed: SEED });
  if (r.failed) {
    stats.failed(prop);
    throw new Error(fc.defaultReportMessage(r));
  }
}

// ---- readers -----------------------------------------------------------------------------

const R_CODE = /^R00(0[1-9]|1[01])$/; // R0001–R0011 (docs/schema-format.md §3)
/** The only errors a reader may throw: SchemaReadError with an R code. */
function readOnly(fn) {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SchemaReadError && R_CODE.test(e.code)) return undefined;
    throw new Error(`untyped reader error: ${e?.constructor?.name} ${e?.code} ${e?.message}`, { cause: e });
  }
}

/** Calls every accessor reachable from `x` (readers, union refs, SoA/AoS/BoV readers). */
function walk(x, left) {
  if (left.n-- <= 0 || x === null || typeof x !== 'object') return;
  if (ArrayBuffer.isView(x)) {
    for (let i = 0; i < Math.min(x.length, 64); i++) void x[i];
    return;
  }
  if (Array.isArray(x)) {
    for (const v of x.slice(0, 64)) walk(v, left);
    return;
  }
  if ('tag' in x && !(x.constructor?.name ?? '').endsWith('Reader')) {
    if (x.tag === 'unknown') assert.ok(Number.isInteger(x.raw) && x.raw > 0, `unknown tag ${x.raw}`);
    walk(x.value, left);
    return;
  }
  const proto = Object.getPrototypeOf(x);
  if (!proto?.constructor?.name?.endsWith('Reader')) return;
  const len = readOnly(() => x.length);
  for (const key of Object.getOwnPropertyNames(proto)) {
    if (key === 'constructor') continue;
    const d = Object.getOwnPropertyDescriptor(proto, key);
    if (typeof d.value !== 'function') continue;
    if (d.value.length === 0)
      walk(
        readOnly(() => x[key]()),
        left,
      );
    else if (key === 'get' && typeof len === 'number') {
      for (const i of new Set([0, len - 1, len, -1])) {
        const v = readOnly(() => x.get(i));
        if (i < 0 || i >= len) assert.equal(v, undefined, `get(${i}) of ${len}`);
        walk(v, left);
      }
    }
  }
  if (typeof x[Symbol.iterator] === 'function') {
    let n = 0;
    readOnly(() => {
      for (const v of x) {
        walk(v, left);
        if (++n >= 64) break;
      }
    });
  }
}

const TIGHT = { maxDepth: 2, maxSoaColumns: 1, maxTraversal: 24 };
/** Everything a caller can do with untrusted bytes, for every root of `mod`. */
function readAll(mod, bytes) {
  for (const root of mod.roots) {
    readOnly(() => root.decode(bytes));
    readOnly(() => root.decode(bytes, TIGHT));
    const r = readOnly(() => root.Reader.fromBytes(bytes));
    if (r) walk(r, { n: 4096 });
  }
}

/** u32 values that hit headers, counts, offsets and limits. */
const INTERESTING = [0, 1, 2, 3, 4, 7, 8, 16, 63, 64, 65, 128, 192, 256, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff];

/** Arbitrary bytes, or a golden encoding with a few bytes/words changed or cut short. */
function bytesFor(mod) {
  const raw = fc.uint8Array({ maxLength: 1024 });
  const mutation = fc.oneof(
    fc.record({ kind: fc.constant('byte'), at: fc.nat(), v: fc.nat(255) }),
    fc.record({ kind: fc.constant('word'), at: fc.nat(), v: fc.constantFrom(...INTERESTING) }),
    fc.record({ kind: fc.constant('cut'), at: fc.nat(), v: fc.constant(0) }),
  );
  const mutated = fc
    .record({ seed: fc.nat(mod.seeds.length - 1), edits: fc.array(mutation, { minLength: 1, maxLength: 6 }) })
    .map(({ seed, edits }) => {
      let b = Uint8Array.from(mod.seeds[seed]);
      for (const { kind, at, v } of edits) {
        if (b.length === 0) break;
        if (kind === 'byte') b[at % b.length] = v;
        else if (kind === 'cut') b = b.slice(0, at % b.length);
        else if (b.length >= 4) new DataView(b.buffer).setUint32(((at % (b.length >> 2)) * 4) >>> 0, v, true);
      }
      return b;
    });
  // Unaligned placements make the readers take their copy paths.
  return fc.tuple(fc.oneof(raw, mutated, mutated), fc.constantFrom(0, 0, 0, 1, 4)).map(([b, shift]) => {
    if (shift === 0) return b;
    const host = new Uint8Array(b.length + shift);
    host.set(b, shift);
    return host.subarray(shift);
  });
}

for (const mod of MODULES) {
  test(`${mod.name}: arbitrary and mutated bytes into every reader → a value or an R code, bounded`, () => {
    assert.ok(mod.roots.length >= 2, `${mod.name} roots: ${mod.roots.map((r) => r.name)}`);
    // The golden bytes themselves decode.
    assert.ok(mod.roots.some((r) => readOnly(() => r.decode(mod.seeds[0])) !== undefined));
    const prop = `read ${mod.name}`;
    check(
      prop,
      fc.property(bytesFor(mod), (bytes) => timed(prop, bytes.length, () => readAll(mod, bytes))),
    );
  });
}

test('non-bytes into every decoder → ERR_INVALID_ARG (a registry code) or a value, never untyped', () => {
  const prop = 'non-bytes into decoders';
  check(
    prop,
    fc.property(fc.anything({ withTypedArray: true, withBigInt: true, withMap: true }), (input) =>
      timed(prop, 0, () => {
        for (const mod of MODULES) {
          for (const root of mod.roots) {
            try {
              root.decode(input);
            } catch (e) {
              const typed = (e instanceof SchemaReadError && R_CODE.test(e.code)) || e?.code in errorRegistry;
              assert.ok(typed, `${root.name}: untyped ${e?.constructor?.name}: ${e?.message}`);
            }
          }
        }
      }),
    ),
  );
});

// ---- writers -----------------------------------------------------------------------------

const f32 = fc.float({ noDefaultInfinity: false });
const f64 = fc.double();
const u = (bits) => fc.nat(2 ** bits - 1);
const i = (bits) => fc.integer({ min: -(2 ** (bits - 1)), max: 2 ** (bits - 1) - 1 });
/** 64-bit: a bigint, or a safe-integer number (writers take both; readers return bigint). */
const i64 = fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.maxSafeInteger());
const u64 = fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.maxSafeNat());
const text = fc.string({ unit: 'binary', maxLength: 24 });
const few = (arb, max = 6) => fc.array(arb, { maxLength: max });

const pointXy = fc.record({ x: f32, y: f32 });
const pointXyz = fc.record({ x: f32, y: f32, z: f32 });
const anyPoint = fc.oneof(
  fc.record({ tag: fc.constant('point2d'), value: pointXy }),
  fc.record({ tag: fc.constant('point3d'), value: pointXyz }),
);
const color = u(8);
const particle = fc.record({
  pos: pointXy,
  color,
  alive: fc.boolean(),
  tags: fc.array(u(8), { minLength: 4, maxLength: 4 }),
  weights: fc.array(f64, { minLength: 2, maxLength: 2 }),
  hues: fc.array(color, { minLength: 3, maxLength: 3 }),
  flags: fc.array(fc.boolean(), { minLength: 2, maxLength: 2 }),
});
const node = fc.letrec((tie) => ({
  node: fc.record({
    id: u64,
    next: fc.option(tie('node'), { depthSize: 'small', maxDepth: 4 }),
    name: text,
  }),
})).node;
const kitchenSink = fc.record({
  aU8: u(8),
  aU16: u(16),
  aU32: u(32),
  aU64: u64,
  aI8: i(8),
  aI16: i(16),
  aI32: i(32),
  aI64: i64,
  aF32: f32,
  aF64: f64,
  aBool: fc.boolean(),
  color,
  fixed: fc.array(i(32), { minLength: 3, maxLength: 3 }),
  origin: pointXy,
  shape: fc.option(anyPoint),
  head: fc.option(node),
  title: text,
  wideTitle: text,
  bytes: few(u(8), 40),
  numbers: few(f64),
  flags: few(fc.boolean()),
  colors: few(color),
  particles: few(particle, 4),
  particlesAos: few(particle, 4),
  nodes: few(node, 3),
  type: u(32),
});
/** A valid KitchenSink to vary one field of. */
const KS_ZERO = ks.decodeKitchenSink(ks.encodeKitchenSink(fc.sample(kitchenSink, { numRuns: 1, seed: 1 })[0]));
const reading1 = fc.record({ id: u(32), value: f32 });
const reading2 = fc.record({ id: u(32), value: f32, quality: u(16), extra: f64 });

/**
 * What a reader returns for written `v`: deep equality where 64-bit numbers come back as
 * bigints and ArrayLikes as typed arrays or arrays; floats by SameValue (NaN, -0).
 */
function same(got, want, path = '$') {
  if (typeof got === 'bigint') {
    assert.equal(got, BigInt(want), path);
  } else if (got === null || typeof got !== 'object') {
    assert.ok(Object.is(got, want), `${path}: got ${String(got)}, wrote ${String(want)}`);
  } else if (Array.isArray(got) || ArrayBuffer.isView(got)) {
    assert.equal(got.length, want.length, `${path}.length`);
    for (let k = 0; k < got.length; k++) same(got[k], want[k], `${path}[${k}]`);
  } else {
    assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), path);
    for (const k of Object.keys(got)) same(got[k], want[k], `${path}.${k}`);
  }
}

const ROUND_TRIPS = [
  [
    'temperature.TemperatureBatch',
    temperature,
    'TemperatureBatch',
    fc.record({ readings: few(fc.record({ timestamp: i64, value: f32 }), 20) }),
  ],
  [
    'temperature.AnalysisResult',
    temperature,
    'AnalysisResult',
    fc.record({ averageTemperature: f32, maxTemperature: f32, minTemperature: f32 }),
  ],
  [
    'scooter.ScooterFleet',
    scooter,
    'ScooterFleet',
    fc.record({
      soa: few(fc.record({ id: u(32), distance: u(32) }), 20),
      aos: few(fc.record({ id: u(32), distance: u(32) }), 20),
    }),
  ],
  ['kitchen_sink.KitchenSink', ks, 'KitchenSink', kitchenSink],
  ['kitchen_sink.Node', ks, 'Node', node],
  ['kitchen_sink.Particle', ks, 'Particle', particle],
  [
    'unions.Particles',
    un,
    'Particles',
    fc.record({
      single: fc.option(anyPoint),
      aos: few(fc.option(anyPoint)),
      soa: few(fc.option(anyPoint)),
      bovoa: few(anyPoint),
      bovos: few(anyPoint),
    }),
  ],
  ['evolution_v1.Batch', v1, 'Batch', fc.record({ label: u(32), readings: few(reading1), readingsAos: few(reading1) })],
  [
    'evolution_v2.Batch',
    v2,
    'Batch',
    fc.record({ label: u(32), readings: few(reading2), readingsAos: few(reading2), note: text, count: u64 }),
  ],
];

/** BoV layouts return items grouped by variant, in declaration order (docs §2.9). */
const byVariant = (items) => [...items.filter((p) => p.tag === 'point2d'), ...items.filter((p) => p.tag === 'point3d')];

for (const [name, mod, type, arb] of ROUND_TRIPS) {
  test(`${name}: random valid values → write → read back equal; the top-down writer agrees`, () => {
    const prop = `round trip ${name}`;
    check(
      prop,
      fc.property(arb, (value) => {
        let bytes;
        timed(prop, 0, () => {
          bytes = mod[`encode${type}`](value);
          const back = mod[`decode${type}`](bytes);
          const want =
            type === 'Particles' ? { ...value, bovoa: byVariant(value.bovoa), bovos: byVariant(value.bovos) } : value;
          same(back, want);
          const viaWriter = mod[`${type}Writer`].create().fill(value).finish();
          assert.deepEqual(viaWriter, bytes);
        });
        // Evolution: each version reads what the other wrote.
        if (mod === v1)
          same(v2.decodeBatch(bytes), {
            ...value,
            note: '',
            count: 0,
            readings: value.readings.map((r) => ({ ...r, quality: 0, extra: 0 })),
            readingsAos: value.readingsAos.map((r) => ({ ...r, quality: 0, extra: 0 })),
          });
        if (mod === v2) {
          const strip = (r) => ({ id: r.id, value: r.value });
          same(v1.decodeBatch(bytes), {
            label: value.label,
            readings: value.readings.map(strip),
            readingsAos: value.readingsAos.map(strip),
          });
        }
      }),
    );
  });
}

test('bad values into writers → W codes: unsafe 64-bit numbers (W0004), unknown union tags (W0005)', () => {
  const prop = 'bad values into writers';
  const unsafe = fc.oneof(
    fc.double().filter((d) => !Number.isSafeInteger(d)),
    fc.constantFrom(2 ** 53, -(2 ** 53), 1.5, Number.NaN, Number.POSITIVE_INFINITY),
  );
  const badTag = fc.oneof(
    fc.string().filter((s) => s !== 'point2d' && s !== 'point3d'),
    fc.constantFrom(undefined, null, 0, 1, Symbol('t'), {}),
  );
  const cases = fc.oneof(
    unsafe.map((n) => ['W0004', () => temperature.encodeTemperatureBatch({ readings: [{ timestamp: n, value: 1 }] })]),
    unsafe.map((n) => ['W0004', () => ks.encodeNode({ id: n, next: null, name: '' })]),
    fc
      .integer({ min: -(2 ** 53) + 1, max: -1 })
      .map((n) => ['W0004', () => v2.encodeBatch({ label: 0, readings: [], readingsAos: [], note: '', count: n })]),
    fc.tuple(badTag, fc.constantFrom('single', 'aos', 'soa', 'bovoa', 'bovos')).map(([tag, field]) => {
      const bogus = { tag, value: { x: 1, y: 2 } };
      const base = { single: null, aos: [], soa: [], bovoa: [], bovos: [] };
      return ['W0005', () => un.encodeParticles({ ...base, [field]: field === 'single' ? bogus : [bogus] })];
    }),
    badTag.map((tag) => ['W0005', () => ks.encodeKitchenSink({ ...KS_ZERO, shape: { tag, value: { x: 0, y: 0 } } })]),
  );
  check(
    prop,
    fc.property(cases, ([code, write]) =>
      timed(prop, 0, () =>
        assert.throws(write, (e) => e instanceof SchemaWriteError && e.code === code, `expected ${code}`),
      ),
    ),
  );
});

const W_CODE = /^W00(0[1-9]|1[01])$/; // W0001–W0011 (docs/schema-format.md §3)

/** `value` with the item at a random path (a field, an array item, a field of one) replaced by `bad`. */
function replaceAt(value, pick, bad) {
  if (value === null || typeof value !== 'object' || pick.length === 0) return bad;
  const keys = Object.keys(value);
  if (keys.length === 0) return bad;
  const copy = Array.isArray(value) ? [...value] : { ...value };
  const k = keys[pick[0] % keys.length];
  copy[k] = replaceAt(value[k], pick.slice(1), bad);
  return copy;
}

test('anything into every writer → bytes that decode, or a W code (registry code), never untyped', () => {
  const prop = 'anything into writers';
  const bad = fc.anything({ withTypedArray: true, withBigInt: true, withMap: true, withNullPrototype: true });
  const strings = fc.string({ unit: 'binary', maxLength: 8 }); // lone surrogates included
  const cases = fc.tuple(
    fc.nat(ROUND_TRIPS.length - 1),
    fc.array(fc.nat(), { maxLength: 4 }),
    fc.oneof(bad, strings, fc.double(), fc.bigInt()),
  );
  check(
    prop,
    fc.property(cases, ([which, pick, replacement]) => {
      const [, mod, type, arb] = ROUND_TRIPS[which];
      const valid = fc.sample(arb, { numRuns: 1, seed: pick[0] ?? 0 })[0];
      const value = replaceAt(valid, pick, replacement);
      timed(prop, 0, () => {
        let bytes;
        try {
          bytes = mod[`encode${type}`](value);
        } catch (e) {
          const typed = (e instanceof SchemaWriteError && W_CODE.test(e.code)) || e?.code in errorRegistry;
          assert.ok(typed, `encode${type}: untyped ${e?.constructor?.name}: ${e?.message}`);
          return;
        }
        readOnly(() => mod[`decode${type}`](bytes));
      });
    }),
  );
});
