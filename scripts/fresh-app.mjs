#!/usr/bin/env node
// The package as a user meets it: `npm run package`'s tarballs installed into fresh apps
// outside the repo (no cargo on PATH), the README's examples run in each engine, and the
// acceptance figures of the package measured there:
//   native   both tarballs (the addon comes from offthread-linux-x64-gnu)
//   wasm     the main tarball with --omit=optional (no addon: WebAssembly on workers)
//   js       the same app with OFFTHREAD_BACKEND=js
// Usage: node scripts/fresh-app.mjs [--measure]   (prints JSON; the tests import run()).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const npmDir = join(root, 'target', 'npm');

/** PATH without any directory that holds cargo: the app must not need Rust. */
export function pathWithoutCargo() {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((d) => d && !existsSync(join(d, 'cargo')))
    .join(delimiter);
}

// The README's examples, plus what the issue asks to see: results, the engine, whether a
// timer fires while a long call runs, and (with --measure) loop delay and timeout latency.
const EXAMPLE = `
const { pi, md5, qr, Pool, all, Emitter, backendInfo, monitorLoopDelay, filters, schema } = require('offthread');
const fs = require('node:fs');
const zlib = require('node:zlib');
const { pipeline } = require('node:stream/promises');
const measure = process.argv.includes('--measure');

/** The README's streams, on files in the app's directory. */
async function streams() {
  const text = 'héllo wörld, 東京, 🙂 '.repeat(20000);
  fs.writeFileSync('in.txt', text);
  const rows = Array.from({ length: 3000 }, (_, i) => \`\${i * 1000},\${(i % 80) / 4}\`);
  fs.writeFileSync('readings.csv', \`timestamp,value\\n\${rows.join('\\n')}\\n\`);
  const transcode = filters.transcode('utf8', 'utf16le');
  await pipeline(fs.createReadStream('in.txt'), transcode, fs.createWriteStream('out.txt'));
  await pipeline(fs.createReadStream('in.txt'), filters.gzip(), fs.createWriteStream('in.txt.gz'));
  let sum = 0;
  await pipeline(
    fs.createReadStream('readings.csv'),
    filters.csv({ schema: schema.TemperatureBatchReader }),
    async (batches) => {
      for await (const batch of batches) {
        const readings = schema.TemperatureBatchReader.fromBytes(batch).readings();
        const values = readings.value();
        for (let i = 0; i < readings.length; i++) sum += values[i];
      }
    },
  );
  // The README's CSV without a schema: columns inferred from the header and first rows.
  let inferredSum = 0;
  for await (const batch of fs.createReadStream('readings.csv').pipe(filters.csv())) {
    for (const value of batch.numbers('value')) inferredSum += value;
  }
  // docs/streams.md's Nexus shape: one source, a filter, two sinks.
  const src = filters.source(filters.fileSource('in.txt'));
  src.pushFilter(filters.gzip());
  src.pipe(filters.fileSink('a.gz'), filters.fileSink('b.gz'));
  await src.resume();
  return {
    backend: transcode.backend,
    utf16: fs.readFileSync('out.txt').equals(Buffer.from(text, 'utf16le')),
    gunzips: zlib.gunzipSync(fs.readFileSync('in.txt.gz')).toString() === text,
    csvSum: sum,
    csvInferredSum: inferredSum,
    fanOut: ['a.gz', 'b.gz'].every((f) => zlib.gunzipSync(fs.readFileSync(f)).toString() === text),
  };
}

(async () => {
  const out = { active: backendInfo().active };
  out.streams = await streams().catch((e) => e.code ?? String(e));
  out.pi = (await pi.estimate(1e7, { seed: 1 })).inside;
  out.md5 = await md5.iterate('text', 2000);
  out.qr = await qr.toDataURL('hello', { size: 128, ecc: 'M' }).then((u) => u.slice(0, 22), (e) => e.code);
  const pool = new Pool({ threads: 2, maxQueue: 10000 });
  out.aborted = await pi.estimate(1e12, { pool, signal: AbortSignal.timeout(50) }).catch((e) => e.code);
  out.timedOut = await pi.estimate(1e12, { pool, timeout: 50 }).catch((e) => e.code);
  out.all = await all([(ctx) => pi.estimate(1e6, ctx), (ctx) => md5.iterate('x', 100, ctx), () => 'plain JS']).then((r) => [r[0].inside, r[1], r[2]]);
  out.emit = await new Emitter().on('upload', (file, ctx) => md5.iterate(file, 1000, ctx)).emit('upload', 'payload');
  await pool.close();
  out.engine = pool.stats().engine;
  if (measure) {
    const loop = monitorLoopDelay({ resolutionMs: 1 });
    const t0 = performance.now();
    await Promise.all([pi.estimate(1e9), md5.iterate('x', 1e7)]);
    out.heavySeconds = +((performance.now() - t0) / 1000).toFixed(2);
    const s = loop.stop();
    out.loopP99Ms = +s.p99Ms.toFixed(2);
    out.loopMaxMs = +s.maxMs.toFixed(2);
    const lat = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      await pi.estimate(1e12, { timeout: 10 }).catch(() => {});
      lat.push(performance.now() - t);
    }
    lat.sort((a, b) => a - b);
    out.timeout10msMedianMs = +lat[10].toFixed(1);
    out.timeout10msMaxMs = +lat[19].toFixed(1);
  }
  console.log(JSON.stringify(out));
})();`;

// The README's TypeScript, checked as a strict user would: no skipLibCheck, the ESM
// default import, typed fan-out results; once for Node (nodenext), once as a bundler
// sees the browser build (bundler resolution, the "browser" condition).
const TYPED = `
import offthread, { all, Emitter, md5, pi, Pool, type PiResult, type TaskContext } from 'offthread';
const pool = new Pool({ threads: 2 });
const r: PiResult = await offthread.pi.estimate(1e6, { pool });
const [p, digest, plain] = await all([
  (ctx: TaskContext) => pi.estimate(1e8, ctx),
  (ctx: TaskContext) => md5.iterate('x', 1e6, ctx),
  () => 'plain JS',
]);
const inside: number = p.inside + r.inside;
const text: string = digest + plain;
const events = new Emitter<{ upload: string }>().on('upload', (file, ctx) => md5.iterate(file, 1000, ctx));
const results: unknown[] = await events.emit('upload', 'payload');
console.log(inside, text, results.length, pool.engine satisfies 'native' | 'wasm' | 'js');
await pool.close();
`;
// The README's streams, typed: Node streams, so checked for Node only (in a browser build
// \`filters\` are the WHATWG TransformStreams).
const TYPED_NODE = `
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { type FilterTransform, filters, schema } from 'offthread';
const transcode: FilterTransform = filters.transcode('utf8', 'utf16le');
await pipeline(createReadStream('in.txt'), transcode, createWriteStream('out.txt'));
await pipeline(createReadStream('in.txt'), filters.gzip({ level: 6 }), createWriteStream('in.txt.gz'));
let sum = 0;
await pipeline(
  createReadStream('readings.csv'),
  filters.csv({ schema: schema.TemperatureBatchReader }),
  async (batches: AsyncIterable<Uint8Array>) => {
    for await (const batch of batches) {
      const readings = schema.TemperatureBatchReader.fromBytes(batch).readings();
      const values: Float32Array = readings.value();
      for (let i = 0; i < readings.length; i++) sum += values[i] ?? 0;
    }
  },
);
const src = filters.source(filters.fileSource('in.txt')).pushFilter(filters.gzip());
await src.pipe(filters.fileSink('a.gz'), filters.fileSink('b.gz')).resume();
console.log(sum, transcode.backend satisfies 'native' | 'workers' | 'wasm');
`;
// The README's task modules, typed: arguments and results inferred from the module, a
// wrong argument and a missing export refused (each @ts-expect-error must find an error).
const TYPED_TASKS_MODULE = `
export function scale(values: Float64Array, by: number): Float64Array {
  return values.map((v) => v * by);
}
export async function* rows(n: number): AsyncGenerator<{ i: number }> {
  for (let i = 0; i < n; i++) yield { i };
}
`;
const TYPED_TASKS = `
import { Pool, currentTask, tasks } from 'offthread';
const pool = new Pool({ threads: 2, cancelGrace: 100, resourceLimits: { maxOldGenerationSizeMb: 256 } });
const work = tasks<typeof import('./work-typed.mjs')>(new URL('./work-typed.mjs', import.meta.url), { pool });
const scaled: Float64Array = await work.scale(new Float64Array(4), 2);
await work.scale.with({ timeout: 50, priority: 'high', transfer: [scaled.buffer] })(scaled, 1);
// @ts-expect-error: the second argument is a number
await work.scale(new Float64Array(4), 'two');
let total = 0;
for await (const row of work.rows(3)) total += row.i;
// @ts-expect-error: the module has no such export
work.missing;
const signal: AbortSignal = currentTask().signal;
console.log(total, signal.aborted);
`;
const TSCONFIG = (extra, files) =>
  JSON.stringify({
    compilerOptions: {
      strict: true,
      noEmit: true,
      target: 'es2022',
      skipLibCheck: false,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      verbatimModuleSyntax: true,
      types: ['node'],
      typeRoots: [join(root, 'node_modules', '@types')],
      ...extra,
    },
    files,
  });

/** tsc over the README's TypeScript in `app`, for Node and for a browser bundler; '' when clean. */
function typecheck(app) {
  writeFileSync(join(app, 'check.mts'), TYPED);
  writeFileSync(join(app, 'check-node.mts'), TYPED_NODE);
  writeFileSync(join(app, 'work-typed.mts'), TYPED_TASKS_MODULE);
  writeFileSync(join(app, 'check-tasks.mts'), TYPED_TASKS);
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const out = {};
  for (const [name, extra, files] of [
    [
      'nodenext',
      { module: 'nodenext', moduleResolution: 'nodenext' },
      ['check.mts', 'check-node.mts', 'check-tasks.mts'],
    ],
    [
      'bundler+browser',
      { module: 'esnext', moduleResolution: 'bundler', customConditions: ['browser'], lib: ['es2022', 'dom'] },
      ['check.mts'],
    ],
  ]) {
    writeFileSync(join(app, 'tsconfig.json'), TSCONFIG(extra, files));
    const r = spawnSync(process.execPath, [tsc, '-p', app], { encoding: 'utf8' });
    out[name] = `${r.stdout}${r.stderr}`.trim();
  }
  return out;
}

// The README's first example run as written: its blur.mjs and server.mjs blocks, taken
// from the README installed with the package. /blur is asked for, then /ping five times
// while the blur runs; once as written (tasks()) and once with the blur called inline,
// as the server was before — the pings' wait is the figure, their order the check.
const DRIVE = `
import { spawn } from 'node:child_process';
async function serve(file) {
  const server = spawn(process.execPath, [file], { env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    server.stdout.on('data', (d) => { const m = /listening on (\\d+)/.exec(String(d)); if (m) resolve(Number(m[1])); });
    server.on('exit', (code) => reject(new Error(file + ' exited with ' + code)));
  });
  const get = async (path) => {
    const t = performance.now();
    const body = await (await fetch('http://127.0.0.1:' + port + path)).text();
    return { body, at: performance.now(), ms: performance.now() - t };
  };
  await get('/ping');
  const blurring = get('/blur');
  await new Promise((r) => setTimeout(r, 50));
  const pings = [];
  for (let i = 0; i < 5; i++) pings.push(get('/ping'));
  const done = await Promise.all(pings);
  const blur = await blurring;
  server.kill();
  return { blur: blur.body, pingsBeforeBlur: done.every((p) => p.at < blur.at), pingMaxMs: Math.round(Math.max(...done.map((p) => p.ms))), blurMs: Math.round(blur.ms) };
}
console.log(JSON.stringify({ tasks: await serve('server.mjs'), inline: await serve('server-inline.mjs') }));
`;

/** Writes the README's blur.mjs and server.mjs (and the inline variant) into `app`; runs them. */
function blockedServer(app, env) {
  const readme = readFileSync(join(app, 'node_modules', 'offthread', 'README.md'), 'utf8');
  const block = (name) => {
    const m = new RegExp(`\`\`\`js\n(// ${name.replace('.', '\\.')}[^]*?)\`\`\``).exec(readme);
    if (!m) throw new Error(`the installed README has no ${name} block`);
    return m[1];
  };
  const server = block('server.mjs');
  writeFileSync(join(app, 'blur.mjs'), block('blur.mjs'));
  writeFileSync(join(app, 'server.mjs'), server);
  const inline = server
    .replace("import { tasks } from 'offthread';", "import { blur } from './blur.mjs';")
    .replace(/const work = tasks\([^\n]*\n/, '')
    .replace('await work.blur(', 'blur(');
  writeFileSync(join(app, 'server-inline.mjs'), inline);
  writeFileSync(join(app, 'drive.mjs'), DRIVE);
  const r = spawnSync(process.execPath, ['drive.mjs'], { cwd: app, env, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) return { status: r.status, stderr: r.stderr };
  return JSON.parse(r.stdout);
}

/** Markdown `text` without fenced blocks and inline code: what is left is prose. */
function prose(text) {
  const out = [];
  let fence = null;
  for (const line of text.split('\n')) {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (open && open[1][0] === fence[0] && open[1].length >= fence.length) fence = null;
    } else if (open) fence = open[1];
    else out.push(line.replace(/(`+).*?\1/g, ''));
  }
  return out;
}

/** GitHub's anchors for the headings of a Markdown file (duplicates get -1, -2, …). */
function anchors(text) {
  const seen = new Map();
  const out = new Set();
  let fence = null;
  for (const line of text.split('\n')) {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (open && open[1][0] === fence[0] && open[1].length >= fence.length) fence = null;
      continue;
    }
    if (open) {
      fence = open[1];
      continue;
    }
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = h[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

/**
 * Relative links (and their #anchors) in the Markdown `files` under `dir` that lead
 * nowhere: [`file: target (why)`], empty when every one resolves.
 */
export function brokenLinks(dir, files) {
  const broken = [];
  for (const file of files) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const line of prose(text)) {
      for (const [, target] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const [path, anchor] = target.split('#');
        const to = path ? join(dir, dirname(file), decodeURIComponent(path)) : join(dir, file);
        if (!existsSync(to)) {
          broken.push(`${file}: ${target} (no such file)`);
        } else if (anchor !== undefined && to.endsWith('.md') && !anchors(readFileSync(to, 'utf8')).has(anchor)) {
          broken.push(`${file}: ${target} (no such heading)`);
        }
      }
    }
  }
  return broken;
}

/** The installed package's README and docs: which docs it carries, which links break. */
function installedDocs(app) {
  const dir = join(app, 'node_modules', 'offthread');
  const docs = existsSync(join(dir, 'docs')) ? readdirSync(join(dir, 'docs')).sort() : [];
  return { docs, broken: brokenLinks(dir, ['README.md', ...docs.map((f) => `docs/${f}`)]) };
}

/** Packs, installs and runs every mode; returns { mode: result }. */
export function run({ measure = false } = {}) {
  execFileSync(process.execPath, [join(root, 'scripts', 'package.mjs')], { stdio: 'ignore' });
  const env = { ...process.env, PATH: pathWithoutCargo() };
  delete env.OFFTHREAD_BACKEND;
  const apps = [];
  const install = (tarballs, flags) => {
    const app = mkdtempSync(join(tmpdir(), 'offthread-app-'));
    apps.push(app);
    writeFileSync(join(app, 'package.json'), '{"name":"app","version":"1.0.0","private":true}\n');
    writeFileSync(join(app, 'example.cjs'), EXAMPLE);
    const args = ['install', '--no-audit', '--no-fund', ...flags, ...tarballs.map((t) => join(npmDir, t))];
    execFileSync('npm', args, { cwd: app, env, stdio: 'ignore' });
    return app;
  };
  const full = install(['offthread-0.1.0.tgz', 'offthread-linux-x64-gnu-0.1.0.tgz'], []);
  const lean = install(['offthread-0.1.0.tgz'], ['--omit=optional']);
  const results = { types: typecheck(lean), server: blockedServer(full, env), docs: installedDocs(lean) };
  try {
    for (const [mode, app, extra] of [
      ['native', full, {}],
      ['wasm', lean, {}],
      ['js', lean, { OFFTHREAD_BACKEND: 'js' }],
    ]) {
      const r = spawnSync(process.execPath, ['example.cjs', ...(measure ? ['--measure'] : [])], {
        cwd: app,
        env: { ...env, ...extra },
        encoding: 'utf8',
        timeout: 600_000,
      });
      results[mode] = { status: r.status, signal: r.signal, stderr: r.stderr, ...JSON.parse(r.stdout || '{}') };
    }
  } finally {
    for (const app of apps) rmSync(app, { recursive: true, force: true });
  }
  return results;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const results = run({ measure: process.argv.includes('--measure') });
  for (const r of Object.values(results)) delete r.stderr;
  console.log(JSON.stringify(results, null, 2));
}
