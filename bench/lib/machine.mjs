// What a result was measured on. Absolute times only describe this machine; the report
// carries this so a reader can tell two runs apart.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

/**
 * @typedef {object} MachineInfo
 * @property {string} cpuModel      e.g. "AMD EPYC 7B13"
 * @property {string | null} simd  the widest x86 vector extension the CPU reports ("AVX-512", "AVX2", "SSE2"), null off Linux x86
 * @property {number} cores         os.availableParallelism(): what Node may use
 * @property {number} memoryGiB     total memory, 1 decimal
 * @property {string} os            distribution name if known ("Debian GNU/Linux 12 (bookworm)"), else os.type()
 * @property {string} kernel        os.release()
 * @property {string} arch          process.arch
 * @property {string} node          process.version
 * @property {string} v8            process.versions.v8
 * @property {string[]} [execArgv]  process.execArgv: the Node and V8 flags the run had
 * @property {string | null} rustc  `rustc --version`, null if rustc is not on PATH
 * @property {string} date          ISO 8601, when machineInfo() was called
 * @property {string | null} gitCommit  short HEAD of the repository holding bench/, null outside git
 * @property {boolean | null} gitDirty  uncommitted changes in the working tree
 * @property {[number, number, number]} loadAverage  1/5/15-minute load when machineInfo() was called
 * @property {string | null} uvThreadpoolSize  UV_THREADPOOL_SIZE if set
 */

/**
 * @param {string} cmd
 * @param {string[]} args
 * @returns {string | null} trimmed stdout, or null if the command is missing or fails
 */
function tryRun(cmd, args) {
  try {
    return execFileSync(cmd, args, {
      cwd: fileURLToPath(new URL('.', import.meta.url)),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 5000,
    }).trim();
  } catch {
    return null;
  }
}

function distroName() {
  try {
    const match = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'));
    if (match) return match[1];
  } catch {
    // not Linux, or no os-release: fall through
  }
  return os.type();
}

/**
 * The widest vector extension in /proc/cpuinfo: the π kernels pick AVX-512, AVX2 or SSE2
 * at run time, so two hosts with the same model name ("AMD EPYC") can differ 2–5× there.
 * @returns {string | null}
 */
function simdLevel() {
  let flags;
  try {
    flags = new Set((/^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '').trim().split(/\s+/));
  } catch {
    return null;
  }
  if (flags.has('avx512f')) return 'AVX-512';
  if (flags.has('avx2')) return 'AVX2';
  return flags.has('sse2') ? 'SSE2' : null;
}

/**
 * Describe this machine and toolchain. Call it at the start of a run: `loadAverage`
 * tells whether something else was already using the CPUs.
 * @returns {MachineInfo}
 */
export function machineInfo() {
  const status = tryRun('git', ['status', '--porcelain']);
  return {
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    simd: simdLevel(),
    cores: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: distroName(),
    kernel: os.release(),
    arch: process.arch,
    node: process.version,
    v8: process.versions.v8,
    execArgv: process.execArgv,
    rustc: tryRun('rustc', ['--version']),
    date: new Date().toISOString(),
    gitCommit: tryRun('git', ['rev-parse', '--short', 'HEAD']),
    gitDirty: status === null ? null : status.length > 0,
    loadAverage: /** @type {[number, number, number]} */ (os.loadavg().map((l) => Math.round(l * 100) / 100)),
    uvThreadpoolSize: process.env.UV_THREADPOOL_SIZE ?? null,
  };
}

/**
 * One line for a report header.
 * @param {MachineInfo} m
 */
export function machineLine(m) {
  const parts = [
    `${m.cpuModel}${m.simd ? ` (${m.simd})` : ''}, ${m.cores} cores, ${m.memoryGiB} GiB`,
    `${m.os} (kernel ${m.kernel}, ${m.arch})`,
    `Node ${m.node} (V8 ${m.v8})${m.execArgv?.length ? ` with \`${m.execArgv.join(' ')}\`` : ''}`,
    m.rustc ?? 'rustc: not found',
    m.gitCommit ? `commit ${m.gitCommit}${m.gitDirty ? ' (dirty)' : ''}` : 'not a git checkout',
    `load ${m.loadAverage.join(' / ')} at start`,
    m.date,
  ];
  if (m.uvThreadpoolSize) parts.push(`UV_THREADPOOL_SIZE=${m.uvThreadpoolSize}`);
  return parts.join(' · ');
}
