#!/usr/bin/env node
// `npm run fuzz -- [--seconds N] [--targets a,b] [--ts-runs N] [--seed S] [--no-rust] [--no-ts]`
//
// Rust: every cargo-fuzz target in fuzz/ (libFuzzer, nightly, `cargo install cargo-fuzz`),
// seeded from the golden buffers and schemas in tests/fixtures (and every crash fixture
// in tests/fixtures/fuzz/<target>/), for N seconds each (default 60). Then the corpus is
// replayed input by input to find the slowest one. A crash, a panic, a timeout (> 2 s)
// or an allocation past 2 GB is a failure, left in fuzz/artifacts/<target>/.
// TS: packages/offthread/test/schema-fuzz.test.mjs (generated readers/writers),
// api-fuzz.test.mjs (every public function's arguments) and guest-fuzz.test.mjs (the
// guest host against malformed modules and hostile guests) with OFFTHREAD_FUZZ_RUNS runs
// per property (default 20,000; `npm test` runs them with a small fixed budget).
// Writes bench/results/fuzz.{json,md}; exits 1 on any failure.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const fuzzDir = join(root, 'fuzz');
const fixtures = join(root, 'tests', 'fixtures');

const READERS = [
  'read_kitchen_sink',
  'read_unions',
  'read_evolution',
  'read_temperature',
  'read_scooter',
  'read_records',
];
// 'filters': the stream filters (chunked = one-shot, round trips, registered error codes).
// 'guest_abi': the guest side of the guest ABI (a call's input, a guest-to-guest answer).
const ALL = [...READERS, 'compile_schema', 'filters', 'guest_abi'];
/** Golden buffers (tests/fixtures/schema/golden/<name>.hex) that seed each reader target. */
const SEEDS = {
  read_kitchen_sink: ['kitchen_sink'],
  read_unions: ['unions'],
  read_evolution: ['evolution_v1', 'evolution_v2'],
  read_temperature: ['temperature_10'],
  read_scooter: ['scooter_fleet'],
  read_records: ['records'],
  read_buffers: ['kitchen_sink', 'unions', 'evolution_v1', 'evolution_v2', 'temperature_10', 'scooter_fleet'],
};

function parseArgs(argv) {
  const o = { seconds: 60, targets: ALL, tsRuns: 20_000, seed: undefined, rust: true, ts: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`fuzz: ${a} needs a value`);
      return v;
    };
    if (a === '--seconds') o.seconds = Number(next());
    else if (a === '--targets') o.targets = next().split(',');
    else if (a === '--ts-runs') o.tsRuns = Number(next());
    else if (a === '--seed') o.seed = Number(next());
    else if (a === '--no-rust') o.rust = false;
    else if (a === '--no-ts') o.ts = false;
    else throw new Error(`fuzz: unknown argument ${a}`);
  }
  if (!(o.seconds > 0) || !(o.tsRuns > 0)) throw new Error('fuzz: --seconds and --ts-runs must be positive');
  return o;
}

const hexToBytes = (hex) => Buffer.from(hex.replace(/[^0-9a-f]/gi, ''), 'hex');

/**
 * guest_abi inputs: a selector byte (export << 5 | function << 2 | descriptor index) and
 * a message, encoded by the generated TS writers of tests/guests/guests.km (built by setup).
 */
async function guestSeeds(corpus) {
  const msg = await import('../packages/offthread/dist/schema/generated/fixtures/guests.js');
  const blobs = [0, 1, 7, 64, 1000].map((n) => msg.encodeBlob({ data: Uint8Array.from({ length: n }, (_, i) => i) }));
  const counts = [0n, 5n, 1n << 40n].map((value) => msg.encodeCount({ value }));
  const calls = { '0-0': blobs, '0-4': counts, '1-0': [new Uint8Array()], '2-0': counts, '3-0': blobs, '4-0': blobs };
  for (const [key, messages] of Object.entries(calls)) {
    const [exp, fn] = key.split('-').map(Number);
    messages.forEach((m, i) => {
      writeFileSync(
        join(corpus, `seed-${key}-${i}.bin`),
        Buffer.concat([Buffer.from([(exp << 5) | (fn << 2) | i]), m]),
      );
    });
  }
}

async function seedCorpus(target) {
  const corpus = join(fuzzDir, 'corpus', target);
  mkdirSync(corpus, { recursive: true });
  if (target === 'compile_schema') {
    const schemas = join(fixtures, 'schema');
    for (const f of readdirSync(schemas).filter((f) => f.endsWith('.km'))) {
      writeFileSync(join(corpus, `seed-${f}`), readFileSync(join(schemas, f)));
    }
    for (const dir of readdirSync(join(schemas, 'errors'))) {
      writeFileSync(join(corpus, `seed-error-${dir}.km`), readFileSync(join(schemas, 'errors', dir, 'input.km')));
    }
    const repo = join(root, 'crates', 'offthread-schema', 'schemas');
    for (const f of readdirSync(repo).filter((f) => f.endsWith('.km'))) {
      writeFileSync(join(corpus, `seed-repo-${f}`), readFileSync(join(repo, f)));
    }
  } else if (target === 'guest_abi') {
    await guestSeeds(corpus);
  } else {
    for (const name of SEEDS[target] ?? []) {
      const hex = readFileSync(join(fixtures, 'schema', 'golden', `${name}.hex`), 'utf8');
      writeFileSync(join(corpus, `seed-${name}.bin`), hexToBytes(hex));
    }
  }
  // Every crash ever found stays in the corpus: a regression shows up at once.
  const crashes = join(fixtures, 'fuzz', target);
  if (existsSync(crashes)) {
    for (const f of readdirSync(crashes)) writeFileSync(join(corpus, `fixture-${f}`), readFileSync(join(crashes, f)));
  }
  return corpus;
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28, ...opts });
  if (r.error) throw r.error;
  return r;
}

function buildRust() {
  const r = run('cargo', ['+nightly', 'fuzz', 'build', '--fuzz-dir', fuzzDir, '-a', '-s', 'none'], {
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error('fuzz: `cargo +nightly fuzz build` failed (is cargo-fuzz installed?)');
  const triple = run('rustc', ['+nightly', '-vV']).stdout.match(/host: (\S+)/)[1];
  return join(fuzzDir, 'target', triple, 'release');
}

const stat = (text, name) => Number(text.match(new RegExp(`stat::${name}:\\s+(\\d+)`))?.[1] ?? Number.NaN);

/** Replays every corpus input `reps` times each; returns the slowest (ms per run). */
function slowest(bin, corpus) {
  const files = readdirSync(corpus).map((f) => join(corpus, f));
  const reps = 100;
  let worst = { file: null, ms: 0, bytes: 0 };
  for (let i = 0; i < files.length; i += 500) {
    const batch = files.slice(i, i + 500);
    const r = run(bin, [`-runs=${reps}`, ...batch]);
    for (const m of (r.stderr ?? '').matchAll(/Executed (.+) in (\d+) ms/g)) {
      const ms = Number(m[2]) / reps;
      if (ms >= worst.ms) worst = { file: m[1], ms, bytes: statSync(m[1]).size };
    }
    if (r.status !== 0) throw new Error(`fuzz: replaying ${corpus} failed:\n${r.stderr.slice(-4000)}`);
  }
  return { ...worst, file: worst.file && basename(worst.file), inputs: files.length };
}

async function fuzzRust(bin, target, seconds) {
  const corpus = await seedCorpus(target);
  const artifacts = join(fuzzDir, 'artifacts', target);
  mkdirSync(artifacts, { recursive: true });
  const args = [
    corpus,
    `-max_total_time=${seconds}`,
    '-print_final_stats=1',
    '-timeout=2',
    '-rss_limit_mb=2048',
    '-max_len=16384',
    `-artifact_prefix=${artifacts}/`,
  ];
  if (target === 'compile_schema') args.push(`-dict=${join(fuzzDir, 'dicts', 'schema.dict')}`);
  console.error(`fuzz: ${target} for ${seconds} s`);
  const t0 = performance.now();
  const r = run(join(bin, target), args);
  const wall = (performance.now() - t0) / 1000;
  const log = r.stderr ?? '';
  const crashes = readdirSync(artifacts).filter((f) => /^(crash|timeout|oom|leak|slow-unit)-/.test(f));
  const result = {
    target,
    executions: stat(log, 'number_of_executed_units'),
    execPerSecond: stat(log, 'average_exec_per_sec'),
    peakRssMb: stat(log, 'peak_rss_mb'),
    seconds: Math.round(wall),
    exitCode: r.status,
    crashes: crashes.length,
    artifacts: crashes.map((f) => join('fuzz', 'artifacts', target, f)),
    corpusInputs: 0,
    slowest: null,
  };
  if (r.status !== 0 || crashes.length > 0) {
    result.crashes = Math.max(1, crashes.length);
    console.error(log.split('\n').slice(-60).join('\n'));
  } else {
    const s = slowest(join(bin, target), corpus);
    result.corpusInputs = s.inputs;
    result.slowest = { input: s.file, bytes: s.bytes, ms: s.ms };
  }
  console.error(
    `fuzz: ${target}: ${result.executions} executions (${result.execPerSecond}/s), ${result.crashes} crashes, ` +
      `slowest input ${result.slowest ? `${result.slowest.ms.toFixed(3)} ms (${result.slowest.bytes} B)` : '—'}`,
  );
  return result;
}

/** The fast-check suites: generated readers/writers, then every public function's arguments. */
const TS_SUITES = ['schema-fuzz.test.mjs', 'api-fuzz.test.mjs', 'guest-fuzz.test.mjs'];

function fuzzTs(runs, seed) {
  const t0 = performance.now();
  const merged = { exitCode: 0, seed, runsPerProperty: runs, executions: 0, properties: [] };
  for (const suite of TS_SUITES) {
    const stats = join(tmpdir(), `offthread-fuzz-${process.pid}-${suite}.json`);
    rmSync(stats, { force: true });
    const env = { ...process.env, OFFTHREAD_FUZZ_RUNS: String(runs), OFFTHREAD_FUZZ_STATS: stats };
    if (seed !== undefined) env.OFFTHREAD_FUZZ_SEED = String(seed);
    console.error(`fuzz: TS ${suite}, ${runs} runs per property`);
    const r = run(process.execPath, ['--test', '--test-timeout=0', join('packages', 'offthread', 'test', suite)], {
      env,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const props = existsSync(stats) ? JSON.parse(readFileSync(stats, 'utf8')) : { properties: [], executions: 0 };
    rmSync(stats, { force: true });
    merged.exitCode ||= r.status ?? 1;
    merged.seed ??= props.seed;
    merged.executions += props.executions ?? 0;
    merged.properties.push(...props.properties);
  }
  return { ...merged, seconds: Math.round((performance.now() - t0) / 1000) };
}

function markdown(report) {
  const lines = ['# Fuzzing', '', `${report.host.cpus}× ${report.host.cpu}, Node ${report.host.node}.`, ''];
  if (report.rust) {
    lines.push(
      '## Rust (cargo-fuzz, libFuzzer; `-a`: debug assertions and overflow checks on)',
      '',
      `\`${report.rust.command}\` (${report.rust.seconds} s per target), ${report.rust.date}.`,
      '',
      '| Target | Executions | Exec/s | Crashes | Corpus | Slowest input | Peak RSS |',
      '| ------ | ---------: | -----: | ------: | -----: | ------------- | -------: |',
    );
    for (const t of report.rust.targets) {
      const s = t.slowest ? `${t.slowest.ms.toFixed(3)} ms (${t.slowest.bytes} B)` : '—';
      lines.push(
        `| ${t.target} | ${t.executions.toLocaleString('en-US')} | ${t.execPerSecond.toLocaleString('en-US')} | ${t.crashes} | ${t.corpusInputs} | ${s} | ${t.peakRssMb} MB |`,
      );
    }
    lines.push(
      '',
      `Readers: **${report.rust.readerExecutions.toLocaleString('en-US')}** executions; compiler: ${report.rust.compilerExecutions.toLocaleString('en-US')}; crashes: ${report.rust.crashes}.`,
      '',
    );
  }
  if (report.ts) {
    lines.push(
      '## TS (fast-check: packages/offthread/test/schema-fuzz.test.mjs, api-fuzz.test.mjs, then guest-fuzz.test.mjs)',
      '',
      `\`${report.ts.command}\` (${report.ts.runsPerProperty} runs per property), ${report.ts.date}.`,
      '',
      '| Property | Executions | Failures | Slowest input |',
      '| -------- | ---------: | -------: | ------------- |',
    );
    for (const p of report.ts.properties) {
      lines.push(
        `| ${p.name} | ${p.executions.toLocaleString('en-US')} | ${p.failures} | ${p.slowestMs.toFixed(3)} ms${p.slowestBytes ? ` (${p.slowestBytes} B)` : ''} |`,
      );
    }
    lines.push(
      '',
      `Total: **${report.ts.executions.toLocaleString('en-US')}** executions, seed ${report.ts.seed}, ${report.ts.seconds} s, exit ${report.ts.exitCode}.`,
      '',
    );
  }
  return lines.join('\n');
}

const opts = parseArgs(process.argv.slice(2));
const report = {
  command: `npm run fuzz -- ${process.argv.slice(2).join(' ')}`.trim(),
  date: new Date().toISOString(),
  host: { cpus: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version },
};
// A run of one side (`--no-rust` / `--no-ts`) keeps the other side's last figures.
const resultsDir = join(root, 'bench', 'results');
const previous = existsSync(join(resultsDir, 'fuzz.json'))
  ? JSON.parse(readFileSync(join(resultsDir, 'fuzz.json'), 'utf8'))
  : {};
const stamp = { command: report.command, date: report.date };
let failed = false;
if (!opts.rust && previous.rust) report.rust = previous.rust;
if (!opts.ts && previous.ts) report.ts = previous.ts;
if (opts.rust) {
  const bin = buildRust();
  const targets = [];
  for (const t of opts.targets) targets.push(await fuzzRust(bin, t, opts.seconds));
  const sum = (ts) => ts.reduce((a, t) => a + (Number.isFinite(t.executions) ? t.executions : 0), 0);
  report.rust = {
    ...stamp,
    seconds: opts.seconds,
    targets,
    readerExecutions: sum(targets.filter((t) => READERS.includes(t.target))),
    compilerExecutions: sum(targets.filter((t) => t.target === 'compile_schema')),
    crashes: targets.reduce((a, t) => a + t.crashes, 0),
  };
  failed ||= report.rust.crashes > 0;
}
if (opts.ts) {
  report.ts = { ...stamp, ...fuzzTs(opts.tsRuns, opts.seed) };
  failed ||= report.ts.exitCode !== 0;
}
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, 'fuzz.json'), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(resultsDir, 'fuzz.md'), markdown(report));
console.log(markdown(report));
if (failed) {
  console.error('fuzz: FAILED (see above; crashing inputs are in fuzz/artifacts/)');
  process.exit(1);
}
