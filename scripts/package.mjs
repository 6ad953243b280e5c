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
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkgDir = join(root, 'packages', 'offthread');
const out = join(root, 'target', 'npm');
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));

/** napi-rs platform suffix → npm's os/cpu/libc fields. */
const TARGETS = {
  'linux-x64-gnu': { os: ['linux'], cpu: ['x64'], libc: ['glibc'] },
  'linux-arm64-gnu': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  'linux-x64-musl': { os: ['linux'], cpu: ['x64'], libc: ['musl'] },
};

/** rustup target → napi platform suffix, for the cross builds. */
const CROSS = { 'aarch64-unknown-linux-gnu': 'linux-arm64-gnu', 'x86_64-unknown-linux-musl': 'linux-x64-musl' };

/** A `zig` on PATH: the real one, or PyPI's ziglang behind a small shim. */
function zigPath() {
  if (spawnSync('zig', ['version']).status === 0) return process.env.PATH;
  if (spawnSync('python3', ['-m', 'ziglang', 'version']).status !== 0) {
    execFileSync('python3', ['-m', 'pip', 'install', '--quiet', 'ziglang'], { stdio: 'inherit' });
  }
  const shim = join(root, 'target', 'zig-shim');
  mkdirSync(shim, { recursive: true });
  writeFileSync(join(shim, 'zig'), '#!/bin/sh\nexec python3 -m ziglang "$@"\n', { mode: 0o755 });
  return `${shim}:${process.env.PATH}`;
}

function crossBuild() {
  const PATH = zigPath();
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

if (process.argv.includes('--cross')) crossBuild();

const pack = (dir) =>
  execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: dir, encoding: 'utf8' }).trim();

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const built = readdirSync(join(pkgDir, 'native')).filter((f) => f.endsWith('.node'));
const platforms = [];
for (const file of built) {
  const suffix = file.slice('offthread.'.length, -'.node'.length);
  const fields = TARGETS[suffix];
  if (!fields) throw new Error(`no npm fields for ${suffix}: add it to TARGETS`);
  const dir = join(out, 'stage', `offthread-${suffix}`);
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(pkgDir, 'native', file), join(dir, file));
  // The release build keeps its symbol table; the shipped one needs only the dynamic
  // symbols. Host `strip` reads only host binaries; zig's cross builds come stripped.
  const sections = execFileSync('readelf', ['-S', '-W', join(dir, file)], { encoding: 'utf8' });
  if (sections.includes('.symtab')) execFileSync('strip', ['--strip-unneeded', join(dir, file)]);
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
