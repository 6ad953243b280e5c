#!/usr/bin/env node
// `offthread doctor` / `offthread info`: which backend is active, and why.
const { backendInfo } = require('../dist/index.js');

const command = process.argv[2] ?? 'doctor';
if (command !== 'doctor' && command !== 'info') {
  console.error(`usage: offthread doctor | info\nunknown command: ${command}`);
  process.exit(2);
}
const info = backendInfo();
if (command === 'info') {
  console.log(JSON.stringify(info, null, 2));
} else {
  console.log(`active backend: ${info.active}`);
  for (const name of ['native', 'wasm']) {
    const b = info[name];
    console.log(
      `  ${name.padEnd(7)} ${b.loaded ? 'loaded ' : 'missing'} ${b.path}${b.error ? `\n          ${b.error}` : ''}`,
    );
  }
  if (info.active !== 'native')
    console.log('\nTo build the native addon: npm run setup (needs Rust: https://rustup.rs)');
}
