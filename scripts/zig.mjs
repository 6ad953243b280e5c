// zig, for the cross builds of scripts/package.mjs and the C guests (docs/guests.md,
// "C guests"): the `zig` on PATH, else PyPI's ziglang (`python3 -m ziglang`), installed
// with pip when asked. `zig cc --target=wasm32-freestanding` is the C guests' compiler:
// one pip package, no system clang or wasm-ld needed.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The PyPI version installed when no zig is found (the one the C guests are tested with). */
export const ZIGLANG = 'ziglang==0.17.1';

/** Where setup installs ziglang (`pip install --target`: no root, and allowed where PEP 668 marks the system Python externally managed). */
export const ZIG_CACHE = join(homedir(), '.cache', 'offthread', 'ziglang');

/** The per-process result of `zigCommand`: a lookup spawns up to three `zig version`s, and a run builds many batches. */
let found;

/**
 * How to run zig: `{ command, env }` — `['zig']`, or `['python3', '-m', 'ziglang']` (on
 * the path, or from ZIG_CACHE with PYTHONPATH) — installing ziglang there with pip when
 * `install` and none is found; `{ missing }` with the reason when there is none (no
 * python3 or pip, no network). Looked up once per process (again only to install).
 */
export function zigCommand({ install = false, quiet = false } = {}) {
  if (found === undefined || (found.missing && install)) found = lookUp(install, quiet);
  return found;
}

function lookUp(install, quiet) {
  const runs = (cmd, args, env = process.env) => spawnSync(cmd, args, { env, stdio: 'ignore' }).status === 0;
  if (runs('zig', ['version'])) return { command: ['zig'], env: process.env };
  const py = ['python3', '-m', 'ziglang'];
  if (runs(py[0], [...py.slice(1), 'version'])) return { command: py, env: process.env };
  const cached = { ...process.env, PYTHONPATH: [ZIG_CACHE, process.env.PYTHONPATH].filter(Boolean).join(':') };
  if (runs(py[0], [...py.slice(1), 'version'], cached)) return { command: py, env: cached };
  if (!install) {
    return { missing: `no zig: neither \`zig\` nor \`python3 -m ziglang\` runs (pip install ${ZIGLANG})` };
  }
  const r = spawnSync('python3', ['-m', 'pip', 'install', '--quiet', '--target', ZIG_CACHE, ZIGLANG], {
    stdio: quiet ? 'ignore' : ['ignore', 'ignore', 'inherit'],
  });
  if (r.error || r.status !== 0) {
    return {
      missing: `no zig: \`python3 -m pip install --target ${ZIG_CACHE} ${ZIGLANG}\` failed (${r.error?.code ?? `exit ${r.status}`})`,
    };
  }
  return runs(py[0], [...py.slice(1), 'version'], cached)
    ? { command: py, env: cached }
    : { missing: `no zig: ${ZIGLANG} installed in ${ZIG_CACHE} but \`python3 -m ziglang version\` fails` };
}

/**
 * A PATH with a `zig` on it (for cargo-zigbuild): the real one, or what `zigCommand`
 * finds or installs (the pinned ziglang) behind a small shim under `root`/target.
 */
export function zigPath(root) {
  const zig = zigCommand({ install: true });
  if (zig.missing) throw new Error(zig.missing);
  if (zig.command[0] === 'zig') return process.env.PATH;
  const shim = join(root, 'target', 'zig-shim');
  mkdirSync(shim, { recursive: true });
  // The shim carries the PYTHONPATH that finds ZIG_CACHE's ziglang (cargo-zigbuild runs it bare).
  const pythonPath = zig.env.PYTHONPATH ? `PYTHONPATH='${zig.env.PYTHONPATH}' ` : '';
  writeFileSync(join(shim, 'zig'), `#!/bin/sh\n${pythonPath}exec ${zig.command.join(' ')} "$@"\n`, { mode: 0o755 });
  return `${shim}:${process.env.PATH}`;
}

/** The flags of a C guest: freestanding wasm32, its memory imported (docs/guest-abi.md). */
export const C_GUEST_FLAGS = [
  'cc',
  '--target=wasm32-freestanding',
  '-std=c11',
  '-Wall',
  '-Wextra',
  '-Werror',
  '-Wl,--no-entry',
  '-Wl,--import-memory',
];

/** Compiles C `sources` into the guest `out` with `zig` (what `zigCommand` found); throws with zig's stderr. */
export function buildCGuest(zig, sources, out, { opt = '-O2', cwd } = {}) {
  const [cmd, ...pre] = zig.command;
  const r = spawnSync(cmd, [...pre, ...C_GUEST_FLAGS, opt, '-o', out, ...sources], {
    cwd,
    env: zig.env,
    encoding: 'utf8',
  });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`zig cc failed for ${out} (exit ${r.status}):\n${r.stderr}`);
}
