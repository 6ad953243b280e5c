#!/usr/bin/env node
// The package's types as a new user's `tsc` meets them (issue 30): `npm pack` of
// packages/offthread installed into a fresh app outside the repo, then type-checked with
// skipLibCheck off and strict on, once per project shape:
//   nodenext     a Node app (module/moduleResolution nodenext), lib without DOM
//   bundler      Vite's default tsconfig for Node-side code (tsconfig.node.json: bundler
//                resolution, no customConditions, lib ES2023 without DOM)
//   bundler+DOM  Vite's default tsconfig for the app (tsconfig.app.json: bundler
//                resolution, lib DOM), which also imports the browser entry
// Every app imports offthread, offthread/schema and offthread/queue, uses qr.toPNG's
// Buffer and narrows err.code through `instanceof OffthreadError`; each
// @ts-expect-error must find its error, so wrong types fail as surely as missing ones.
// Usage: node scripts/typecheck-apps.mjs   (prints { shape: tsc output }, '' when clean;
// exits 1 if any is not). The test imports run().
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkgDir = join(root, 'packages', 'offthread');

/** Node-side code: the main entry, schema and queue, run or bundled for Node. */
const NODE_APP = `
import {
  type ErrorCode,
  errorRegistry,
  OffthreadError,
  OffthreadRangeError,
  pi,
  Pool,
  qr,
  ready,
  tasks,
} from 'offthread';
import { type QueueClient, createQueue } from 'offthread/queue';
import { SchemaReadError } from 'offthread/schema';

// What runs in Node: a Buffer, with Buffer's methods.
const png: Buffer = await qr.toPNG('hello', { size: 64 });
const sync: Buffer = qr.toPNGSync('hello');
console.log(png.toString('base64'), sync.readUInt32BE(0));
// The browser entry's \`ready\` exists here too (a bundler's check sees these types).
console.log((await ready).active);

/** The registry's code of any error offthread raised, or null. */
function codeOf(err: unknown): ErrorCode | null {
  if (!(err instanceof OffthreadError)) return null;
  const code: ErrorCode = err.code;
  // @ts-expect-error: code is the registry's union, not any string
  if (err.code === 'ERR_NOT_A_CODE') return null;
  return errorRegistry[code].status > 0 ? code : null;
}
try {
  await pi.estimate(-1, { pool: new Pool({ threads: 1 }) });
} catch (err) {
  if (err instanceof OffthreadRangeError && err instanceof OffthreadError) console.log(err.code);
  console.log(codeOf(err), err instanceof SchemaReadError ? err.code : '');
}
// Transfer lists take ArrayBuffers without the DOM's Transferable.
const work = tasks<{ scale(v: Float64Array, by: number): Float64Array }>(new URL('./work.mjs', import.meta.url));
const values = new Float64Array(4);
console.log(await work.scale.with({ transfer: [values.buffer] })(values, 2));
const queue: QueueClient = createQueue({ url: 'redis://127.0.0.1:6379' });
const digest: string = await queue.md5.iterate('x', 10);
console.log(digest);
await queue.close();
`;

/**
 * Without the DOM lib, the stand-ins for its WebAssembly and Transferable types are not
 * `any` (with it they are the DOM's own, whose empty interfaces take nearly anything).
 */
const NO_DOM = `
import { schema, tasks } from 'offthread';

const work = tasks<{ echo(v: unknown): unknown }>(new URL('./work.mjs', import.meta.url));
// @ts-expect-error: a string is not transferable
work.echo.with({ transfer: ['x'] });
// @ts-expect-error: a number is not a WebAssembly.Module
schema.compileWith(5, 'struct A { x: u8 }');
`;

/** A browser app: the browser entry's own types (filters are TransformStreams). */
const BROWSER_APP = `
import { filters, init, OffthreadError, qr, ready } from 'offthread/browser';

const info = await ready;
console.log(info.active, (await init()).active);
const png: Uint8Array = await qr.toPNG('hello');
const gzip: TransformStream<Uint8Array, Uint8Array> = filters.gzip();
console.log(png.length, gzip.writable.locked);
try {
  await qr.toSVG('x', { size: 0 });
} catch (err) {
  if (err instanceof OffthreadError && err.code === 'ERR_INVALID_QR_OPTIONS') console.log(err.message);
}
`;

// The shared options of Vite's templates (create-vite 7, tsconfig.app.json and
// tsconfig.node.json), minus \`types: ["vite/client"]\` (no vite here) and with
// skipLibCheck turned off: the library's .d.ts are checked too.
const VITE = {
  module: 'ESNext',
  moduleResolution: 'bundler',
  allowImportingTsExtensions: true,
  verbatimModuleSyntax: true,
  moduleDetection: 'force',
  noEmit: true,
  strict: true,
  noUnusedLocals: true,
  noUnusedParameters: true,
  erasableSyntaxOnly: true,
  noFallthroughCasesInSwitch: true,
  noUncheckedSideEffectImports: true,
  skipLibCheck: false,
};

export const SHAPES = {
  nodenext: {
    options: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022'], strict: true },
    files: ['node-app.mts', 'no-dom.mts'],
  },
  bundler: { options: { ...VITE, target: 'ES2023', lib: ['ES2023'] }, files: ['node-app.mts', 'no-dom.mts'] },
  'bundler+DOM': {
    options: { ...VITE, target: 'ES2022', useDefineForClassFields: true, lib: ['ES2022', 'DOM', 'DOM.Iterable'] },
    files: ['node-app.mts', 'browser-app.mts'],
  },
};

/** Packs and installs the package into a fresh app; returns the app's directory. */
export function freshApp() {
  const app = mkdtempSync(join(tmpdir(), 'offthread-types-'));
  execFileSync('npm', ['pack', '--silent', '--pack-destination', app], { cwd: pkgDir, stdio: 'ignore' });
  const tarball = readdirSync(app).find((f) => f.endsWith('.tgz'));
  writeFileSync(join(app, 'package.json'), '{"name":"app","version":"1.0.0","private":true,"type":"module"}\n');
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', '--omit=optional', `./${tarball}`], {
    cwd: app,
    stdio: 'ignore',
  });
  // offthread/queue's types name bullmq's and ioredis' (optional peers, which an app that
  // uses the queue installs): the repo's copies stand in, as @types/node does.
  for (const dep of ['bullmq', 'ioredis', '@types']) {
    symlinkSync(join(root, 'node_modules', dep), join(app, 'node_modules', dep), 'dir');
  }
  writeFileSync(join(app, 'node-app.mts'), NODE_APP);
  writeFileSync(join(app, 'no-dom.mts'), NO_DOM);
  writeFileSync(join(app, 'browser-app.mts'), BROWSER_APP);
  return app;
}

/** tsc over each shape in `app`; returns { shape: output } ('' when clean). */
export function typecheck(app, shapes = SHAPES) {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const out = {};
  for (const [name, { options, files }] of Object.entries(shapes)) {
    const compilerOptions = { ...options, skipLibCheck: false, noEmit: true, types: ['node'] };
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, files }, null, 2));
    const r = spawnSync(process.execPath, [tsc, '-p', app], { cwd: app, encoding: 'utf8' });
    out[name] = `${r.stdout}${r.stderr}`.trim();
  }
  return out;
}

/** Packs, installs, checks every shape, removes the app. */
export function run() {
  const app = freshApp();
  try {
    return typecheck(app);
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const results = run();
  console.log(JSON.stringify(results, null, 2));
  process.exitCode = Object.values(results).every((r) => r === '') ? 0 : 1;
}
