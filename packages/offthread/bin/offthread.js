#!/usr/bin/env node
// `offthread doctor` / `offthread info`: which backend is active, and why.
// `offthread worker --redis URL [--concurrency N] [--threads T] [--tasks ./work.js …]
// [--guest ./app.wasm …]`: a BullMQ worker running offthread/queue's jobs (the kernels, the
// exports of each task module and the interfaces of each guest given) on an offthread Pool
// (docs/queue.md); SIGTERM/SIGINT finish the running jobs, then exit 0 (1 when Redis
// stayed away and their outcomes went unrecorded).
// `offthread schema build <file.km> --ts <dir> --rust <dir> --rust-guest <dir>` /
// `offthread schema check <file.km>`: the schema compiler as WebAssembly
// (wasm/offthread-schema.wasm, the Rust compiler's own code): no cargo, any platform, the
// same files and diagnostics as the Rust CLI (--rust-guest: a guest's bindings, docs/guests.md).
const { mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join, parse, resolve, sep } = require('node:path');

const [command = 'doctor', ...rest] = process.argv.slice(2);

const SCHEMA_USAGE =
  'usage: offthread schema check <file.km>\n' +
  '       offthread schema build <file.km> [--ts <dir>] [--rust <dir>] [--rust-guest <dir>]\n' +
  '                              [--runtime-import <specifier>] [--rust-runtime <path>] [--guest-schema <path>]';

// Options of `schema build`, with their compile() names (--ts-runtime: the Rust CLI's name).
const BUILD_FLAGS = {
  '--ts': 'ts',
  '--rust': 'rust',
  '--runtime-import': 'runtimeImport',
  '--ts-runtime': 'runtimeImport',
  '--rust-runtime': 'rustRuntime',
  '--rust-guest': 'rustGuest',
  '--guest-schema': 'guestSchema',
};

/** `{ sub, file, opts }`, or a string: the usage error. */
function schemaArgs(args) {
  const [sub, ...more] = args;
  if (sub !== 'check' && sub !== 'build') return `unknown schema command: ${sub ?? '(none)'}`;
  const opts = {};
  let file;
  for (let i = 0; i < more.length; i++) {
    const [flag, inline] = more[i].startsWith('--') ? more[i].split(/=(.*)/s, 2) : [more[i]];
    if (!flag.startsWith('--')) {
      if (file !== undefined) return `unexpected argument: ${flag}`;
      file = flag;
      continue;
    }
    const key = sub === 'build' ? BUILD_FLAGS[flag] : undefined;
    const value = inline ?? more[++i];
    if (key === undefined) return `unknown option: ${flag}`;
    if (value === undefined || value === '') return `${flag} needs a value`;
    opts[key] = value;
  }
  if (file === undefined) return 'missing <file.km>';
  if (sub === 'build' && opts.ts === undefined && opts.rust === undefined && opts.rustGuest === undefined)
    return 'build needs --ts <dir>, --rust <dir> and/or --rust-guest <dir>';
  return { sub, file, opts };
}

function schema(args) {
  const parsed = schemaArgs(args);
  if (typeof parsed === 'string') {
    console.error(`offthread schema: ${parsed}\n${SCHEMA_USAGE}`);
    return 2;
  }
  const { sub, file, opts } = parsed;
  let source;
  try {
    source = readFileSync(file, 'utf8');
  } catch (err) {
    process.stderr.write(`error: cannot read ${file}: ${err.message}\n`);
    return 1;
  }
  let out;
  try {
    out = require('../dist/index.js').schema.compile(source, {
      fileName: file,
      stem: parse(file).name || 'schema',
      ts: opts.ts !== undefined,
      rust: opts.rust !== undefined,
      ...(opts.runtimeImport === undefined ? {} : { runtimeImport: opts.runtimeImport }),
      ...(opts.rustRuntime === undefined ? {} : { rustRuntime: opts.rustRuntime }),
      rustGuest: opts.rustGuest !== undefined,
      ...(opts.guestSchema === undefined ? {} : { guestSchema: opts.guestSchema }),
    });
  } catch (err) {
    console.error(`offthread schema: ${err.code ?? 'error'}: ${err.message}`);
    // 3: the compiler failed, not the schema (1) or the command line (2).
    return err.code === 'ERR_SCHEMA_COMPILER' ? 3 : 1;
  }
  if (out.diagnostics.length > 0) {
    process.stderr.write(out.rendered);
    return 1;
  }
  if (sub === 'check') {
    console.log(`${file}: ok`);
    return 0;
  }
  for (const f of out.files) {
    const dir = { rust: opts.rust, 'rust-guest': opts.rustGuest, ts: opts.ts }[f.lang];
    mkdirSync(dir, { recursive: true });
    // Printed like the Rust CLI (Path::join, no normalisation); written through join().
    const shown = dir.endsWith(sep) || dir.endsWith('/') ? `${dir}${f.path}` : `${dir}${sep}${f.path}`;
    writeFileSync(join(dir, f.path), f.contents);
    console.log(`wrote ${shown}`);
  }
  return 0;
}

const WORKER_USAGE =
  'usage: offthread worker --redis <url> [--concurrency N] [--threads T] [--nice 0-19] [--queue NAME] [--prefix P]\n' +
  '                        [--lock-duration MS] [--stalled-interval MS] [--max-stalled N] [--redis-timeout MS]\n' +
  "                        [--tasks ./work.js]…   (each module's exports run as jobs of queue.tasks(…))\n" +
  "                        [--guest ./app.wasm]…  (each guest's interfaces run as jobs of queue.guests(…))";

const WORKER_FLAGS = {
  '--redis': ['url', 'string'],
  '--concurrency': ['concurrency', 'int'],
  '--threads': ['threads', 'int'],
  '--nice': ['nice', 'int'],
  '--queue': ['name', 'string'],
  '--prefix': ['prefix', 'string'],
  '--lock-duration': ['lockDuration', 'int'],
  '--stalled-interval': ['stalledInterval', 'int'],
  '--max-stalled': ['maxStalledCount', 'int'],
  '--redis-timeout': ['redisTimeout', 'int'],
  '--tasks': ['tasks', 'file'],
  '--guest': ['guests', 'file'],
};

/** Worker options, or a string: the usage error. */
function workerArgs(args) {
  const opts = {};
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].split(/=(.*)/s, 2);
    const spec = WORKER_FLAGS[flag];
    if (!spec) return `unknown option: ${flag}`;
    const value = inline ?? args[++i];
    if (value === undefined || value === '') return `${flag} needs a value`;
    if (spec[1] === 'int') {
      if (!/^\d+$/.test(value)) return `${flag} must be a whole number, got ${value}`;
      opts[spec[0]] = Number(value);
    } else if (spec[1] === 'file') {
      // Repeatable; relative to where the worker was started.
      opts[spec[0]] = [...(opts[spec[0]] ?? []), resolve(value)];
    } else opts[spec[0]] = value;
  }
  if (opts.url === undefined) return 'missing --redis <url>';
  return opts;
}

function worker(args) {
  const opts = workerArgs(args);
  if (typeof opts === 'string') {
    console.error(`offthread worker: ${opts}\n${WORKER_USAGE}`);
    process.exitCode = 2;
    return;
  }
  // π chunks past the first run on libuv's threads (see src/queue/worker.ts): as many as
  // the pool's, set before anything starts libuv's pool.
  if (opts.threads !== undefined && process.env.UV_THREADPOOL_SIZE === undefined) {
    process.env.UV_THREADPOOL_SIZE = String(opts.threads);
  }
  let w;
  try {
    w = require('../dist/queue/index.js').createWorker(opts);
  } catch (err) {
    console.error(`offthread worker: ${err.code ? `${err.code}: ` : ''}${err.message}`);
    process.exitCode = err.code === 'ERR_INVALID_ARG' || err.code === 'ERR_INVALID_POOL_OPTIONS' ? 2 : 1;
    return;
  }
  const say = (line) => console.error(`offthread worker: ${line}`);
  const typed = (err) => `${err?.code ? `${err.code}: ` : ''}${err?.message ?? err}`;
  // Ends the process once close() has settled: a connection BullMQ gave up on (never
  // ready) may still hold a timer, and nothing is left to finish.
  const exit = (code) => process.exit(code);
  let stopping = false;
  // The first signal always ends the process: close() is bounded whatever Redis does
  // (src/queue/worker.ts). A second one ends it at once.
  const stop = (signal) => {
    if (stopping) {
      say(`${signal} again, exiting now`);
      process.exit(1);
    }
    stopping = true;
    say(`${signal}, finishing running jobs`);
    w.close().then(
      () => {
        const s = w.stats();
        say(`stopped (${s.completed} completed, ${s.failed} failed)`);
        exit(0);
      },
      (err) => {
        say(typed(err));
        exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  const where = new URL(opts.url);
  say(`connecting to ${where.protocol}//${where.host} (pid ${process.pid})`);
  w.ready().then(
    () =>
      say(
        `ready (queue ${opts.name ?? 'offthread'}, concurrency ${w.worker.opts.concurrency}, ` +
          `${w.pool.engine} pool of ${w.pool.threads} threads, pid ${process.pid}` +
          w.tasks.map((m) => `, tasks ${m.name} ${m.hash}${m.version === undefined ? '' : ` v${m.version}`}`).join('') +
          w.guests.map((m) => `, guest ${m.name} ${m.hash}`).join('') +
          ')',
      ),
    (err) => {
      if (stopping) return; // close() decides the exit
      stopping = true;
      say(typed(err));
      w.close().then(
        () => exit(1),
        () => exit(1),
      );
    },
  );
}

function doctor(json) {
  let info;
  try {
    const api = require('../dist/index.js');
    // Guests: can a guest import an interface memory (read in place), or does each get a copy?
    info = { ...api.backendInfo(), guests: { multiMemory: api.guests.multiMemory() } };
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
  console.log(
    info.guests.multiMemory
      ? 'guests: multi-memory — interface memories can be imported and read in place'
      : 'guests: no multi-memory in this engine — each guest gets its own copy of its input',
  );
  if (hasYoungBufferRegression()) {
    console.log(
      `node ${process.version}: streams of Buffers run much better started with\n` +
        '  node --scavenger-max-new-space-capacity-mb=8 your-app.js\n' +
        '  (V8 13.6 frees short-lived Buffers with full collections: nodejs/node#61967; docs/tasks.md)',
    );
  }
  return 0;
}

/**
 * Node 24's V8 (13.6) raised scavenger_max_new_space_capacity_mb from 8 to 32, so young
 * ArrayBuffers wait for full collections (docs/task-filter-costs.md). True where this
 * Node has that flag at its new default; later V8s (Node 26) have no such flag.
 */
function hasYoungBufferRegression() {
  const [major, minor] = process.versions.v8.split('.').map(Number);
  if (major < 13 || (major === 13 && minor < 6)) return false;
  if (process.execArgv.some((a) => a.startsWith('--scavenger-max-new-space-capacity-mb'))) return false;
  const { spawnSync } = require('node:child_process');
  const probe = spawnSync(process.execPath, ['--scavenger-max-new-space-capacity-mb=8', '-e', '0'], {
    stdio: 'ignore',
    timeout: 10_000,
  });
  return probe.status === 0;
}

const USAGE = `usage: offthread <command>
  doctor                 which backend runs your calls, and why
  info                   the same as JSON
  schema build <file.km> --ts <dir> [--rust <dir>]   generate readers and writers
               [--rust-guest <dir>]                 and a Rust guest's bindings (docs/guests.md)
  schema check <file.km>                            check a schema
  worker --redis <url> [--concurrency N] [--threads T] [--tasks ./work.js]  run offthread/queue jobs (BullMQ)
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
  case 'worker':
    worker(rest);
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
