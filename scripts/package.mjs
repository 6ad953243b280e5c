#!/usr/bin/env node
// `npm run package`: the npm tarballs in the napi-rs layout, under target/npm/:
//   offthread-<version>.tgz                 the package (JS, types, browser bundle, WASM)
//                                           with exact-version optionalDependencies on
//   offthread-<platform>-<version>.tgz      one package per native target: the stripped .node
// npm installs only the platform package matching the machine (os/cpu/libc); without
// it (another platform, or --omit=optional) the package runs on its WASM engine.
// The host's target comes from `npm run setup`. `--cross` also builds linux-arm64-gnu and
// linux-x64-musl with zig (cargo-zigbuild, `napi build --cross-compile`), installing what
// is missing from the registries (rustup targets, PyPI's ziglang, crates.io's
// cargo-zigbuild). Every .node in packages/offthread/native becomes a platform package.
// `--arm64` builds linux-arm64-gnu from Debian's packages alone (see debianRust below) and
// adds it to this pack only; `--out DIR` packs somewhere other than target/npm (the
// foreign-target test packs there, leaving target/npm to `npm run package`).
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { zigPath } from './zig.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkgDir = join(root, 'packages', 'offthread');
const args = parseArgs({
  options: { cross: { type: 'boolean' }, arm64: { type: 'boolean' }, out: { type: 'string' } },
}).values;
const out = args.out ? resolve(args.out) : join(root, 'target', 'npm');
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));

/** napi-rs platform suffix → npm's os/cpu/libc fields. */
const TARGETS = {
  'linux-x64-gnu': { os: ['linux'], cpu: ['x64'], libc: ['glibc'] },
  'linux-arm64-gnu': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  'linux-x64-musl': { os: ['linux'], cpu: ['x64'], libc: ['musl'] },
};

/** rustup target → napi platform suffix, for the cross builds. */
const CROSS = { 'aarch64-unknown-linux-gnu': 'linux-arm64-gnu', 'x86_64-unknown-linux-musl': 'linux-x64-musl' };

function crossBuild() {
  const PATH = zigPath(root);
  if (spawnSync('cargo', ['zigbuild', '--help'], { stdio: 'ignore' }).status !== 0) {
    execFileSync('cargo', ['install', '--locked', 'cargo-zigbuild'], { stdio: 'inherit' });
  }
  for (const [target, suffix] of Object.entries(CROSS)) {
    execFileSync('rustup', ['target', 'add', target], { stdio: 'ignore' });
    console.error(`package: building ${suffix} (${target}) with zig`);
    execFileSync(
      join(root, 'node_modules', '.bin', 'napi'),
      ['build', '--platform', '--release', '--target', target, '--cross-compile', '--no-js'].concat(
        [
          '--manifest-path',
          'crates/offthread-node/Cargo.toml',
          '--package-json-path',
          'packages/offthread/package.json',
        ],
        ['--output-dir', join(root, 'target', 'cross', suffix), '--target-dir', join(root, 'target', 'cross')],
      ),
      {
        cwd: root,
        stdio: ['ignore', 'ignore', 'inherit'],
        // musl links statically by default, which rules out a cdylib (the .node).
        env: {
          ...process.env,
          PATH,
          CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS: '-C target-feature=-crt-static',
        },
      },
    );
    copyFileSync(
      join(root, 'target', 'cross', suffix, `offthread.${suffix}.node`),
      join(pkgDir, 'native', `offthread.${suffix}.node`),
    );
  }
}

/** apt's candidate version of a Debian package, e.g. `1.96.0+dfsg1-1~deb12u2`. */
function aptCandidate(name) {
  const m = /Candidate:\s*(\S+)/.exec(execFileSync('apt-cache', ['policy', name], { encoding: 'utf8' }));
  if (!m || m[1] === '(none)') throw new Error(`package: apt knows no ${name} (run apt-get update)`);
  return m[1];
}

/**
 * Debian's Rust 1.9x (`rustc-web`, bookworm's security updates) with its amd64 and arm64
 * standard libraries, unpacked (never installed: it would take over /usr/bin/rustc) under
 * ~/.cache/offthread/cross. rustup's arm64 target comes from no package registry, and
 * Debian's is built for this very rustc. The arm64 .deb comes through a private apt state
 * (the machine's Debian sources with `Architectures: arm64`): no `dpkg
 * --add-architecture`, which here once pulled arm64 packages over the machine's own.
 * Returns the environment for cargo.
 */
function debianRust() {
  const version = aptCandidate('rustc-web');
  const short = /^\d+\.\d+/.exec(version)[0];
  const dir = join(
    process.env.OFFTHREAD_CROSS_CACHE ?? join(homedir(), '.cache', 'offthread', 'cross'),
    `rust-web-${version.replace(/[^\w.-]/g, '_')}`,
  );
  const rustc = join(dir, 'usr', 'bin', 'rustc');
  if (!existsSync(join(dir, 'usr', 'lib', 'rustlib', 'aarch64-unknown-linux-gnu'))) {
    const debs = join(dir, 'debs');
    mkdirSync(debs, { recursive: true });
    const show = execFileSync('apt-cache', ['show', `libstd-rust-web-${short}=${version}`], { encoding: 'utf8' });
    const llvm = /libllvm\d+/.exec(show)?.[0];
    if (!llvm) throw new Error(`package: no libllvm in the dependencies of libstd-rust-web-${short}`);
    const apt = (extra, cmd) =>
      execFileSync('apt-get', ['-qq', '-o', 'APT::Sandbox::User=root', ...extra, ...cmd], {
        cwd: debs,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    apt(
      [],
      [
        'download',
        `rustc-web=${version}`,
        `libstd-rust-web-${short}=${version}`,
        `libstd-rust-web-dev=${version}`,
        llvm,
      ],
    );
    // The private apt state: the machine's Debian stanzas, for arm64 only.
    const state = join(dir, 'apt');
    for (const d of ['parts', 'lists/partial', 'cache/archives/partial'])
      mkdirSync(join(state, d), { recursive: true });
    const codename = /VERSION_CODENAME=(\w+)/.exec(readFileSync('/etc/os-release', 'utf8'))?.[1];
    const stanzas = readFileSync('/etc/apt/sources.list.d/debian.sources', 'utf8')
      .split(/\n\s*\n/)
      .filter((st) => new RegExp(`^Suites:.*\\b${codename}\\b`, 'm').test(st));
    if (stanzas.length === 0)
      throw new Error(`package: no ${codename} stanza in /etc/apt/sources.list.d/debian.sources`);
    writeFileSync(
      join(state, 'parts', 'arm64.sources'),
      stanzas.map((st) => `${st.trim()}\nArchitectures: arm64\n`).join('\n'),
    );
    const priv = ['parts', 'lists', 'cache'].map((d) => join(state, d));
    const opts = [
      ['Dir::Etc::SourceList', '/dev/null'],
      ['Dir::Etc::SourceParts', priv[0]],
      ['Dir::State::Lists', priv[1]],
      ['Dir::Cache', priv[2]],
      ['APT::Architectures::', 'arm64'],
      ['Debug::NoLocking', '1'],
    ].flatMap(([k, v]) => ['-o', `${k}=${v}`]);
    apt(opts, ['update']);
    apt(opts, ['download', `libstd-rust-web-dev:arm64=${version}`]);
    for (const deb of readdirSync(debs).filter((f) => f.endsWith('.deb'))) {
      execFileSync('dpkg', ['-x', join(debs, deb), dir]);
    }
    rmSync(debs, { recursive: true, force: true });
  }
  if (!existsSync(rustc)) throw new Error(`package: ${rustc} missing after unpacking`);
  const libs = join(dir, 'usr', 'lib', 'x86_64-linux-gnu');
  return {
    RUSTC: rustc,
    // rustc-web's librustc_driver and libLLVM sit beside it, not in ld.so's path.
    LD_LIBRARY_PATH: [libs, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
  };
}

/** Installs the Debian packages that provide `tool` when it is missing (root only). */
function aptTool(tool, packages) {
  if (spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0) return;
  if (process.getuid?.() !== 0) throw new Error(`package: ${tool} missing: apt-get install ${packages.join(' ')}`);
  const opts = { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } };
  execFileSync('apt-get', ['update', '-qq'], opts);
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], opts);
}

/**
 * linux-arm64-gnu from Debian's packages: rustc-web's arm64 std, gcc-aarch64-linux-gnu to
 * link. Returns the .node's path (target/cross/linux-arm64-gnu). Plain cargo, not `napi
 * build`: the typings come from the host build, and napi's type-def pass forces the crate
 * to rebuild (a ~1 min fat-LTO link) on every call; with cargo an unchanged tree is a no-op.
 */
function arm64Build() {
  aptTool('aarch64-linux-gnu-gcc', ['gcc-aarch64-linux-gnu', 'libc6-dev-arm64-cross']);
  const suffix = 'linux-arm64-gnu';
  const triple = 'aarch64-unknown-linux-gnu';
  const targetDir = join(root, 'target', 'cross-debian');
  console.error(`package: building ${suffix} (${triple}) with Debian's rustc-web`);
  execFileSync('cargo', ['build', '--release', '-p', 'offthread-node', '--target', triple, '--target-dir', targetDir], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      ...debianRust(),
      CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER: 'aarch64-linux-gnu-gcc',
      // One job: the machine's two cores are shared; the fat-LTO link is serial anyway.
      CARGO_BUILD_JOBS: process.env.CARGO_BUILD_JOBS ?? '1',
    },
  });
  const dir = join(root, 'target', 'cross', suffix);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `offthread.${suffix}.node`);
  copyFileSync(join(targetDir, triple, 'release', 'liboffthread_node.so'), file);
  return file;
}

if (args.cross) crossBuild();
const extra = args.arm64 ? [arm64Build()] : [];

const pack = (dir) =>
  execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: dir, encoding: 'utf8' }).trim();

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

// A build asked for here (--arm64) wins over a file of the same name in native/.
const built = readdirSync(join(pkgDir, 'native'))
  .filter((f) => f.endsWith('.node') && !extra.some((e) => basename(e) === f))
  .map((f) => join(pkgDir, 'native', f))
  .concat(extra);
const platforms = [];
for (const path of built) {
  const file = basename(path);
  const suffix = file.slice('offthread.'.length, -'.node'.length);
  const fields = TARGETS[suffix];
  if (!fields) throw new Error(`no npm fields for ${suffix}: add it to TARGETS`);
  const dir = join(out, 'stage', `offthread-${suffix}`);
  mkdirSync(dir, { recursive: true });
  copyFileSync(path, join(dir, file));
  // The release build keeps its symbol table; the shipped one needs only the dynamic
  // symbols. Host `strip` reads only host binaries; zig's cross builds come stripped,
  // Debian's arm64 one is stripped by its own binutils.
  const sections = execFileSync('readelf', ['-S', '-W', join(dir, file)], { encoding: 'utf8' });
  if (sections.includes('.symtab')) {
    execFileSync(suffix === 'linux-arm64-gnu' ? 'aarch64-linux-gnu-strip' : 'strip', [
      '--strip-unneeded',
      join(dir, file),
    ]);
  }
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify(
      {
        name: `offthread-${suffix}`,
        version: pkg.version,
        description: `offthread's native addon for ${suffix}`,
        license: pkg.license,
        repository: pkg.repository,
        ...fields,
        main: file,
        files: [file],
        engines: pkg.engines,
      },
      null,
      2,
    )}\n`,
  );
  copyFileSync(join(root, 'LICENSE'), join(dir, 'LICENSE'));
  platforms.push({ name: `offthread-${suffix}`, tarball: pack(dir), size: statSync(join(dir, file)).size });
}

// The main package: the addon lives in the platform packages, not here. Its prepack
// (README, LICENSE, docs/ with links fixed for the package) runs here, since the staged
// copy is packed without scripts.
execFileSync(process.execPath, [join(pkgDir, 'scripts', 'prepack.mjs')]);
const main = join(out, 'stage', 'offthread');
cpSync(pkgDir, main, {
  recursive: true,
  filter: (src) => !/[\\/](node_modules|test|src|scripts)$/.test(src) && !src.endsWith('.node'),
});
const manifest = JSON.parse(readFileSync(join(main, 'package.json'), 'utf8'));
manifest.optionalDependencies = Object.fromEntries(platforms.map((p) => [p.name, pkg.version]));
delete manifest.devDependencies;
delete manifest.scripts;
writeFileSync(join(main, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
const tarball = pack(main);
rmSync(join(out, 'stage'), { recursive: true, force: true });

const report = { main: { tarball, bytes: statSync(join(out, tarball)).size }, platforms };
for (const p of platforms) p.bytes = statSync(join(out, p.tarball)).size;
writeFileSync(join(out, 'packages.json'), `${JSON.stringify(report, null, 2)}\n`);
console.log(JSON.stringify(report, null, 2));
