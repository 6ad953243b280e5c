// Builds bench/wasm-threads (π on WebAssembly threads) for the browser experiment and
// its test. Bench-only and optional: it needs the nightly toolchain with rust-src,
// because stable's precompiled std is built without atomics and wasm-ld refuses a
// shared memory for it (`--shared-memory is disallowed by … because it was not
// compiled with 'atomics' or 'bulk-memory' features`). `-Z build-std` rebuilds std
// with them. Never fetches a toolchain: `buildWasmThreads()` returns why it could not
// build (`{ error }`), and the callers skip with that reason.
//   node bench/wasm-threads/build.mjs
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MEMORY } from '../browser/wasm-threads.mjs';

const DIR = fileURLToPath(new URL('./', import.meta.url));
const TARGET = fileURLToPath(new URL('../../target/wasm-threads/', import.meta.url));
/** The built module (cargo's output: served by the browser experiment from this folder). */
export const OUT_DIR = join(TARGET, 'wasm32-unknown-unknown', 'release');
export const OUT_FILE = 'pi_wasm_threads.wasm';
const TOOLCHAIN = 'nightly';

const RUSTFLAGS = [
  // atomics + bulk-memory: shared memory and its one-time data initialisation;
  // mutable-globals: the exported __stack_pointer each worker sets; simd128: as the
  // repo's offthread.wasm (.cargo/config.toml), so the same f64x2 kernel runs.
  '-C target-feature=+atomics,+bulk-memory,+mutable-globals,+simd128',
  '-C link-arg=--shared-memory',
  '-C link-arg=--import-memory',
  `-C link-arg=--initial-memory=${MEMORY.initial * 65536}`,
  `-C link-arg=--max-memory=${MEMORY.maximum * 65536}`,
  '-C link-arg=--export=__stack_pointer',
].join(' ');

/** Why the nightly build cannot run here, or null when it can. */
export function toolchainMissing() {
  const sysroot = spawnSync('rustc', [`+${TOOLCHAIN}`, '--print', 'sysroot'], { encoding: 'utf8' });
  if (sysroot.status !== 0) {
    return `no ${TOOLCHAIN} Rust toolchain (\`rustup toolchain install ${TOOLCHAIN}\`): ${(sysroot.stderr || sysroot.error?.message || '').trim()}`;
  }
  const src = join(sysroot.stdout.trim(), 'lib/rustlib/src/rust/library/std');
  if (!existsSync(src)) {
    return `${TOOLCHAIN} has no rust-src, which -Z build-std needs (\`rustup component add rust-src --toolchain ${TOOLCHAIN}\`)`;
  }
  return null;
}

/**
 * Builds the module (cargo is incremental: a no-op when up to date).
 * @returns {{ path: string, dir: string, file: string, rustc: string } | { error: string }}
 */
export function buildWasmThreads(progress = console.error) {
  const missing = toolchainMissing();
  if (missing) return { error: missing };
  progress('wasm-threads: cargo +nightly build -Z build-std (wasm32, atomics, shared memory)');
  const r = spawnSync(
    'cargo',
    [
      `+${TOOLCHAIN}`,
      'build',
      '--quiet',
      '--release',
      '--target',
      'wasm32-unknown-unknown',
      '-Z',
      'build-std=std,panic_abort',
    ],
    {
      cwd: DIR,
      // RUSTFLAGS replaces the repo's [target.wasm32-unknown-unknown] rustflags.
      env: { ...process.env, CARGO_TARGET_DIR: TARGET, RUSTFLAGS },
      encoding: 'utf8',
    },
  );
  if (r.status !== 0) return { error: `cargo +${TOOLCHAIN} build failed:\n${r.stderr}` };
  const rustc = spawnSync('rustc', [`+${TOOLCHAIN}`, '--version'], { encoding: 'utf8' }).stdout.trim();
  return { path: join(OUT_DIR, OUT_FILE), dir: OUT_DIR, file: OUT_FILE, rustc };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const r = buildWasmThreads();
  if ('error' in r) {
    console.error(r.error);
    process.exit(1);
  }
  console.log(r.path);
}
