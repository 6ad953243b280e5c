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
  let info;
  try {
    info = require('../dist/index.js').backendInfo();
  } catch (err) {
    console.error(`offthread: ${err.code ? `${err.code}: ` : ''}${err.message}`);
    return 1;
  }
  if (json) {
    console.log(JSON.stringify(info, null, 2));
    return 0;
  }
  const engine = {
    native: 'the native Rust pool',
    wasm: 'WebAssembly on worker threads',
    js: 'pure JS on worker threads (π and MD5 only; no QR)',
  };
  console.log(`active backend: ${info.active} — ${engine[info.active]}`);
  if (info.forced) console.log(`  (OFFTHREAD_BACKEND=${info.forced} disabled the tiers above it)`);
  for (const name of ['native', 'wasm']) {
    const b = info[name];
    const state = b.loaded ? 'loaded  ' : b.error?.startsWith('disabled') ? 'disabled' : 'missing ';
    console.log(`  ${name.padEnd(7)} ${state} ${b.path ?? '(no file)'}${b.error ? `\n           ${b.error}` : ''}`);
  }
  return 0;
}

const USAGE = `usage: offthread <command>
  doctor                 which backend runs your calls, and why
  info                   the same as JSON
  schema build <file.km> --ts <dir> [--rust <dir>]   generate readers and writers
  schema check <file.km>                            check a schema
  help                   this text`;

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
  case 'help':
  case '--help':
  case '-h':
    console.log(USAGE);
    break;
  default:
    console.error(`${USAGE}\nunknown command: ${command}`);
    process.exitCode = 2;
}
