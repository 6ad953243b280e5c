#!/usr/bin/env node
// The package as a user meets it: `npm run package`'s tarballs installed into fresh apps
// outside the repo (no cargo on PATH), the README's examples run in each engine, and the
// acceptance figures of the package measured there:
//   native   both tarballs (the addon comes from offthread-linux-x64-gnu)
//   wasm     the main tarball with --omit=optional (no addon: WebAssembly on workers)
//   js       the same app with OFFTHREAD_BACKEND=js
// Usage: node scripts/fresh-app.mjs [--measure]   (prints JSON; the tests import run()).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const npmDir = join(root, 'target', 'npm');

/** PATH without the directory that holds cargo: the app must not need Rust. */
function pathWithoutCargo() {
  const cargo = spawnSync('sh', ['-c', 'command -v cargo'], { encoding: 'utf8' }).stdout.trim();
  return process.env.PATH.split(delimiter)
    .filter((d) => !cargo || d !== dirname(cargo))
    .join(delimiter);
}

// The README's examples, plus what the issue asks to see: results, the engine, whether a
// timer fires while a long call runs, and (with --measure) loop delay and timeout latency.
const EXAMPLE = `
const { pi, md5, qr, Pool, all, Emitter, backendInfo, monitorLoopDelay } = require('offthread');
const measure = process.argv.includes('--measure');
(async () => {
  const out = { active: backendInfo().active };
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
  const results = {};
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
