#!/usr/bin/env node
// Builds the integrity guests ahead of use (scripts/setup.mjs runs it for `npm test`):
//
//   node tests/integrity/prepare.mjs            the batch of `npm test`'s shortened run
//                                               (Rust, and C with zig cc)
//   node tests/integrity/prepare.mjs --freeze   tests/integrity/fixtures/v1 (refuses to
//                                               overwrite it: those guests are frozen)
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareBatches, prepareCBatch } from './build.mjs';
import { TEST_RUN, validSchema } from './run.mjs';

const quiet = process.argv.includes('--quiet');
const log = quiet ? () => {} : (m) => console.error(m);

/** The frozen batch: few, varied schemas, so its guest stays small. */
export const FROZEN = { seed: 0x5eed, schemas: [0, 1, 2, 3, 4] };

if (process.argv.includes('--freeze')) {
  const dir = join(import.meta.dirname, 'fixtures', 'v1');
  if (existsSync(join(dir, 'integrity.wasm'))) {
    console.error(`${dir} exists: frozen fixtures are never regenerated (see its README.md); make a v2 instead`);
    process.exit(1);
  }
  const schemas = FROZEN.schemas.map((i) => validSchema(FROZEN.seed, i));
  const { batches } = await prepareBatches([{ schemas, profile: 'small' }], { log });
  mkdirSync(dir, { recursive: true });
  cpSync(batches[0].wasmPath, join(dir, 'integrity.wasm'));
  for (const s of schemas) writeFileSync(join(dir, `${s.name}.km`), s.km);
  const models = schemas.map((s) => ({ name: s.name, model: s.model }));
  writeFileSync(join(dir, 'schemas.json'), `${JSON.stringify({ seed: FROZEN.seed, schemas: models }, null, 1)}\n`);
  log(
    `froze ${schemas.length} schemas and ${readFileSync(join(dir, 'integrity.wasm')).length} bytes of guest in ${dir}`,
  );
} else {
  const all = Array.from({ length: TEST_RUN.schemas }, (_, i) => validSchema(TEST_RUN.seed, i));
  const groups = [];
  for (let at = 0; at < all.length; at += TEST_RUN.batchSize)
    groups.push({ schemas: all.slice(at, at + TEST_RUN.batchSize) });
  const { built, compileMs } = await prepareBatches(groups, { log });
  if (built > 0) log(`integrity: ${built} test batch guest(s) built in ${(compileMs / 1000).toFixed(1)} s`);
  // The C consumer of the same batches (zig cc); without zig, the test says why it runs Rust alone.
  for (const g of groups) {
    const c = prepareCBatch(g.schemas, { log });
    if (c.missing) log(`integrity: no C consumer: ${c.missing}`);
  }
}
