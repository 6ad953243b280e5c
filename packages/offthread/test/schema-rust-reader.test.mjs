// The schema workflow across languages as a user meets it: `offthread schema build`
// generates TS and Rust for a batch whose SoA items carry text; a TS program writes the
// batch; a Rust program that depends only on the runtime crate (offthread-schema-rt, no
// compiler) reads the same bytes, zero copy, and gets the same values.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../../../', import.meta.url));
const bin = join(root, 'packages', 'offthread', 'bin', 'offthread.js');

const SCHEMA = `struct item (inline) {
    id: u32;
    label: []u8 #string;
}

struct batch (dynamic) {
    name: []u8 #string;
    items: []item #soa;
}
`;
const ITEMS = [
  { id: 7, label: 'ünïcödé ✓' },
  { id: 8, label: '' },
  { id: 9, label: 'x'.repeat(300) },
];

const MAIN_RS = `#[path = "../../gen/t.rs"]
mod t;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: reader <file>")?;
    let bytes = std::fs::read(path)?;
    let batch = t::BatchRef::from_bytes(&bytes).map_err(|e| format!("{e:?}"))?;
    let items = batch.items().map_err(|e| format!("{e:?}"))?;
    let ids = items.id().map_err(|e| format!("{e:?}"))?;
    let labels = items.label().map_err(|e| format!("{e:?}"))?;
    println!("{}", batch.name().map_err(|e| format!("{e:?}"))?);
    for i in 0..items.len() {
        println!("{}\\t{}", ids.get(i).ok_or("id")?, labels.get(i).ok_or("label")?);
    }
    Ok(())
}
`;

test('TS writes a batch with strings in SoA items; a Rust program with only offthread-schema-rt reads it', () => {
  const app = mkdtempSync(join(tmpdir(), 'offthread-rs-reader-'));
  try {
    writeFileSync(join(app, 't.km'), SCHEMA);
    execFileSync(process.execPath, [bin, 'schema', 'build', 't.km', '--ts', 'gen', '--rust', 'gen'], { cwd: app });

    // TS side: the generated writer, its runtime imported from offthread/schema.
    const { transformSync } = require('amaro');
    const ts = readFileSync(join(app, 'gen', 't.ts'), 'utf8');
    writeFileSync(join(app, 'gen', 't.mjs'), transformSync(ts, { mode: 'strip-only' }).code);
    writeFileSync(
      join(app, 'write.mjs'),
      `import { writeFileSync } from 'node:fs';
import { encodeBatch } from './gen/t.mjs';
writeFileSync('batch.bin', encodeBatch({ name: 'probe', items: ${JSON.stringify(ITEMS)} }));`,
    );
    mkdirSync(join(app, 'node_modules'), { recursive: true });
    execFileSync('ln', ['-s', join(root, 'packages', 'offthread'), join(app, 'node_modules', 'offthread')]);
    execFileSync(process.execPath, ['write.mjs'], { cwd: app });

    // Rust side: a crate whose only dependency is the runtime.
    mkdirSync(join(app, 'reader', 'src'), { recursive: true });
    writeFileSync(
      join(app, 'reader', 'Cargo.toml'),
      `[package]\nname = "reader"\nversion = "0.0.0"\nedition = "2024"\n\n[workspace]\n\n[dependencies]\noffthread-schema-rt = { path = ${JSON.stringify(join(root, 'crates', 'offthread-schema-rt'))} }\n`,
    );
    writeFileSync(join(app, 'reader', 'src', 'main.rs'), MAIN_RS);
    const run = spawnSync(
      'cargo',
      ['run', '--quiet', '--manifest-path', join(app, 'reader', 'Cargo.toml'), '--', join(app, 'batch.bin')],
      { encoding: 'utf8', env: { ...process.env, CARGO_TARGET_DIR: join(root, 'target', 'schema-reader-test') } },
    );
    assert.equal(run.status, 0, run.stderr);
    const [name, ...rows] = run.stdout.trimEnd().split('\n');
    assert.equal(name, 'probe');
    assert.deepEqual(
      rows.map((r) => r.split('\t')),
      ITEMS.map((i) => [String(i.id), i.label]),
    );
    const tree = execFileSync(
      'cargo',
      ['tree', '--manifest-path', join(app, 'reader', 'Cargo.toml'), '--prefix', 'none'],
      {
        encoding: 'utf8',
      },
    );
    assert.doesNotMatch(tree, /offthread-schema v/, 'the reader must not depend on the compiler');
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
});
