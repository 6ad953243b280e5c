// The integrity experiment (issue 13 item 5, Karmem §5.2.3; docs/guest-integrity.md),
// shortened: a dozen random schemas, a few values each, thousands of malicious messages,
// and the frozen guests of tests/integrity/fixtures (backward compatibility). The full
// run is `node bench/run.mjs guests-integrity`. The batch guest is built by
// `npm run setup` (scripts/setup.mjs), or here on first use.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { compileSchema, interfaceModule, tsDecodersOf } from '../../../tests/integrity/build.mjs';
import { combine, digestPaths } from '../../../tests/integrity/canonical.mjs';
import { fieldPaths, generateSchema } from '../../../tests/integrity/gen-schemas.mjs';
import { newStats, runBatch, runIntegrity, TEST_RUN } from '../../../tests/integrity/run.mjs';

const sha = (text) => createHash('sha256').update(text).digest();

test('canonical stringification: the tokens of each field path, pinned', () => {
  const model = {
    root: 'st0',
    enums: {},
    unions: {},
    structs: {
      st0: {
        kind: 'dynamic',
        fields: [
          { name: 'f0', ty: { k: 'int', t: 'i64' } },
          { name: 'f1', ty: { k: 'float', t: 'f32' } },
          { name: 'f2', ty: { k: 'string', unit: 'u8' } },
          { name: 'f3', ty: { k: 'slice', of: { k: 'bool' } } },
          { name: 'f4', ty: { k: 'struct', name: 'st0' } },
          { name: 'f5', ty: { k: 'fixed', n: 2, of: { k: 'float', t: 'f64' } } },
        ],
      },
    },
  };
  const inner = { f0: 7n, f1: -0, f2: '', f3: [], f4: null, f5: [Number.NaN, Number.POSITIVE_INFINITY] };
  const value = { f0: -5n, f1: 1.5, f2: 'hé', f3: [true, false], f4: inner, f5: [1, -2] };
  const got = digestPaths(model, value);
  assert.deepEqual(fieldPaths(model), ['st0.f0', 'st0.f1', 'st0.f2', 'st0.f3', 'st0.f4', 'st0.f5']);
  const want = [
    '2:-51:7',
    '8:3fc000008:80000000',
    '3:hé0:',
    '1:24:true5:false1:0',
    '1:11:0',
    '16:7ff800000000000016:7ff000000000000016:3ff000000000000016:c000000000000000',
  ].map(sha);
  assert.deepEqual(got, want);
  // One bit of one value changes that path's digest and the combined one, nothing else.
  const other = digestPaths(model, { ...value, f1: 1.5000001 });
  assert.deepEqual(
    other.map((d, i) => d.equals(got[i])),
    [true, false, true, true, true, true],
  );
  assert.notDeepEqual(combine(other), combine(got));
});

test('the schema generator is deterministic and every schema it draws compiles', () => {
  for (let i = 0; i < 40; i++) {
    const s = generateSchema(TEST_RUN.seed, i);
    assert.equal(generateSchema(TEST_RUN.seed, i).km, s.km);
    compileSchema(s);
  }
  assert.notEqual(generateSchema(TEST_RUN.seed, 0).km, generateSchema(TEST_RUN.seed + 1, 0).km);
});

test('random schemas: producer, Rust and C consumer guests and TS consumer agree; malicious messages are read alike or refused alike', async (t) => {
  const { stats } = await runIntegrity({ ...TEST_RUN, timeout: 30_000 });
  assert.deepEqual(stats.failures, []);
  // The C consumer (generated C readers, zig cc) reads every message beside the Rust one;
  // without zig (`npm run setup` installs it with pip) the run is Rust's alone and says why.
  if (stats.cMissing) t.diagnostic(`Rust consumer only: ${stats.cMissing}`);
  else {
    assert.deepEqual(stats.consumers, ['Rust', 'C']);
    assert.deepEqual(stats.maliciousByConsumer, { Rust: stats.malicious, C: stats.malicious });
  }
  assert.equal(stats.schemas, TEST_RUN.schemas);
  assert.equal(stats.values, TEST_RUN.schemas * TEST_RUN.values);
  assert.equal(stats.malicious, TEST_RUN.schemas * TEST_RUN.malicious);
  assert.equal(stats.mismatches, 0);
  assert.equal(stats.crashes, 0);
  assert.equal(stats.hangs, 0);
  // Both outcomes happen: the mutations reach the readers' checks and their values alike.
  assert.ok(stats.maliciousRead > 0 && stats.maliciousRefused > 0, JSON.stringify(stats));
  assert.ok(Object.keys(stats.refusedByCode).length >= 3, JSON.stringify(stats.refusedByCode));
  assert.ok(stats.pathsHashed >= stats.values * 2 * 3);
});

test('frozen guests (tests/integrity/fixtures): today’s host and TS reader agree with them', async () => {
  const dir = new URL('../../../tests/integrity/fixtures/v1/', import.meta.url);
  const frozen = JSON.parse(readFileSync(new URL('schemas.json', dir), 'utf8'));
  const wasm = readFileSync(new URL('integrity.wasm', dir));
  const schemas = frozen.schemas.map((s) => ({ ...s, km: readFileSync(new URL(`${s.name}.km`, dir), 'utf8') }));
  const batch = { schemas, decoders: await tsDecodersOf(schemas) };
  const stats = newStats();
  const iface = await interfaceModule();
  await runBatch(batch, {
    seed: frozen.seed,
    values: 4,
    malicious: 300,
    timeout: 30_000,
    firstIndex: 0,
    iface,
    stats,
    wasm,
  });
  assert.deepEqual(stats.failures, []);
  assert.equal(stats.values, schemas.length * 4);
  assert.equal(stats.mismatches + stats.crashes + stats.hangs, 0);
  assert.ok(stats.maliciousRead > 0 && stats.maliciousRefused > 0);
});
