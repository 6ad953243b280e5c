#!/usr/bin/env node
// node bench/run.mjs <experiment> [--quick] [--full] [--out DIR] [experiment flags…]
//
// Imports bench/experiments/<experiment>.mjs, calls its `run(ctx)`, and writes the
// report (bench/results/<experiment>.{json,md,svg} unless --out says otherwise).

import { spawnSync } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { machineInfo } from './lib/machine.mjs';
import { progress } from './lib/measure.mjs';
import { DEFAULT_OUT_DIR, ratioLine, writeReport } from './lib/report.mjs';

const EXPERIMENTS_DIR = fileURLToPath(new URL('./experiments/', import.meta.url));

/**
 * What every experiment's `export async function run(ctx)` receives.
 * @typedef {object} ExperimentContext
 * @property {boolean} quick  CI-sized run: the whole experiment in under two minutes
 * @property {boolean} full   the largest sizes (e.g. π at 10¹⁰)
 * @property {(msg: string) => void} progress  one line per step to stderr, with elapsed time
 * @property {string[]} argv  the command line after the experiment's name, for its own flags
 */

const USAGE = `usage: node bench/run.mjs <experiment> [--quick] [--full] [--out DIR] [--node MAJOR]
                                         [--node-flags "FLAGS"]

  --quick       CI-sized run (under two minutes)
  --full        largest sizes
  --out DIR     where to write <experiment>.{json,md,svg} (default: bench/results, or
                bench/results/node<MAJOR> with --node)
  --node MAJOR  run it on Node MAJOR (22, 24, 26): Node's own binary from the npm
                registry (scripts/node-lines.mjs, cached), child processes included
  --node-flags  Node or V8 flags for the process that runs the experiment (its report
                names them), e.g. "--v8-pool-size=1"; children an experiment starts
                get only the flags it gives them

Flags the runner does not know are left to the experiment (ctx.argv).`;

/** Other names an experiment is asked for by (issue 14 calls http-conn `http-ab`). */
const ALIASES = { 'http-ab': 'http-conn' };

/** @returns {Promise<string[]>} experiment names, sorted */
export async function listExperiments() {
  const files = await readdir(EXPERIMENTS_DIR).catch(() => []);
  return files
    .filter((f) => f.endsWith('.mjs') && !f.startsWith('_'))
    .map((f) => f.slice(0, -'.mjs'.length))
    .sort();
}

/**
 * Runs this command again on Node `major` (or this Node when undefined) with `flags`:
 * every child an experiment starts uses process.execPath, so the whole run is on that
 * line. Its report goes beside the machine Node's, under bench/results/node<major>/,
 * unless --out says otherwise.
 * @param {string | undefined} major @param {string | undefined} flags
 * @param {string[]} args @param {unknown} out
 */
async function rerun(major, flags, args, out) {
  if (major !== undefined && !/^\d+$/.test(major)) {
    console.error(`--node needs a major version (22, 24, 26), got ${major}`);
    return 2;
  }
  const bin =
    major === undefined ? process.execPath : (await import('../scripts/node-lines.mjs')).nodeBinary(Number(major));
  const ours = ['--node', '--node-flags'];
  const rest = args.filter(
    (a, i) => !ours.includes(a) && !ours.includes(args[i - 1]) && !ours.some((o) => a.startsWith(`${o}=`)),
  );
  const outArgs =
    typeof out === 'string' || major === undefined ? [] : ['--out', path.join(DEFAULT_OUT_DIR, `node${major}`)];
  const nodeArgs = (flags ?? '').split(/\s+/).filter(Boolean);
  const r = spawnSync(bin, [...nodeArgs, fileURLToPath(import.meta.url), ...rest, ...outArgs], { stdio: 'inherit' });
  return r.status ?? 1;
}

/** @param {string[]} args */
async function main(args) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: false,
    options: {
      quick: { type: 'boolean', default: false },
      full: { type: 'boolean', default: false },
      out: { type: 'string' },
      node: { type: 'string' },
      'node-flags': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const flags = values['node-flags'];
  if (values.node !== undefined || flags !== undefined) {
    if (typeof flags === 'boolean') {
      console.error('--node-flags needs the flags, e.g. --node-flags "--v8-pool-size=1"');
      return 2;
    }
    return rerun(/** @type {string | undefined} */ (values.node), flags, args, values.out);
  }
  const available = await listExperiments();
  const list = `available experiments: ${available.join(', ') || '(none)'} (http-ab: http-conn)`;
  if (values.help) {
    console.log(`${USAGE}\n\n${list}`);
    return 0;
  }
  const asked = positionals[0];
  const name = ALIASES[/** @type {keyof typeof ALIASES} */ (asked)] ?? asked;
  if (!name) {
    console.error(`${USAGE}\n\n${list}`);
    return 2;
  }
  if (!available.includes(name)) {
    console.error(`unknown experiment '${name}'; ${list}`);
    return 2;
  }
  if (values.quick && values.full) {
    console.error('--quick and --full exclude each other');
    return 2;
  }
  if (values.out !== undefined && typeof values.out !== 'string') {
    console.error('--out needs a directory');
    return 2;
  }

  const machine = machineInfo();
  const cpuBusy = machine.loadAverage[0] / machine.cores;
  if (cpuBusy > 0.5) {
    progress(`warning: load average ${machine.loadAverage[0]} on ${machine.cores} cores — results will be noisy`);
  }
  const mod = await import(pathToFileURL(path.join(EXPERIMENTS_DIR, `${name}.mjs`)).href);
  if (typeof mod.run !== 'function') {
    console.error(`bench/experiments/${name}.mjs does not export run(ctx)`);
    return 2;
  }
  /** @type {ExperimentContext} */
  const ctx = {
    quick: values.quick === true,
    full: values.full === true,
    progress,
    argv: args.slice(args.indexOf(name) + 1),
  };
  progress(`${name}: start${ctx.quick ? ' (--quick)' : ''}${ctx.full ? ' (--full)' : ''}`);
  const t0 = performance.now();
  const result = await mod.run(ctx);
  const durationMs = performance.now() - t0;

  const outDir = typeof values.out === 'string' ? values.out : DEFAULT_OUT_DIR;
  const command = ['node bench/run.mjs', ...args].join(' ');
  const paths = await writeReport(name, result, outDir, { machine, command, durationMs });
  progress(`${name}: done in ${(durationMs / 1000).toFixed(1)} s`);
  for (const r of result.ratios ?? []) console.log(ratioLine(r));
  for (const p of [paths.md, paths.json, ...paths.svg]) console.log(`wrote ${path.relative(process.cwd(), p) || p}`);
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exitCode = 1;
    },
  );
}
