#!/usr/bin/env node
// `offthread doctor` / `offthread info`: which backend is active, and why.
// `offthread schema build <file.km> --ts <dir> --rust <dir>` / `offthread schema check <file.km>`:
// the schema compiler (crates/offthread-schema), run from this repository's Cargo workspace.
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');

const [command = 'doctor', ...rest] = process.argv.slice(2);

function schema(args) {
  const root = join(__dirname, '..', '..', '..');
  const manifest = join(root, 'Cargo.toml');
  if (!existsSync(join(root, 'crates', 'offthread-schema'))) {
    console.error(
      'offthread schema: the schema compiler is part of the offthread repository (crates/offthread-schema)',
    );
    return 2;
  }
  const built = join(
    root,
    'target',
    'release',
    process.platform === 'win32' ? 'offthread-schema.exe' : 'offthread-schema',
  );
  const [cmd, cmdArgs] = existsSync(built)
    ? [built, args]
    : ['cargo', ['run', '--quiet', '--release', '--manifest-path', manifest, '-p', 'offthread-schema', '--', ...args]];
  const r = spawnSync(cmd, cmdArgs, { stdio: 'inherit' });
  if (r.error) {
    console.error(`offthread schema: cannot run ${cmd}: ${r.error.message}`);
    return 2;
  }
  return r.status ?? 1;
}

function doctor(json) {
  const { backendInfo } = require('../dist/index.js');
  const info = backendInfo();
  if (json) {
    console.log(JSON.stringify(info, null, 2));
    return 0;
  }
  console.log(`active backend: ${info.active}`);
  for (const name of ['native', 'wasm']) {
    const b = info[name];
    console.log(
      `  ${name.padEnd(7)} ${b.loaded ? 'loaded ' : 'missing'} ${b.path}${b.error ? `\n          ${b.error}` : ''}`,
    );
  }
  if (info.active !== 'native')
    console.log('\nTo build the native addon: npm run setup (needs Rust: https://rustup.rs)');
  return 0;
}

switch (command) {
  case 'doctor':
    process.exitCode = doctor(false);
    break;
  case 'info':
    process.exitCode = doctor(true);
    break;
  case 'schema':
    process.exitCode = schema(rest);
    break;
  default:
    console.error(
      `usage: offthread doctor | info | schema (build <file.km> --ts <dir> --rust <dir> | check <file.km>)\nunknown command: ${command}`,
    );
    process.exitCode = 2;
}
