#!/usr/bin/env node
// Builds the package from src/ (one source for both hosts):
//   dist/*.js, dist/node/*.js   Node: CommonJS (tsc), index.mjs wraps it for `import`
//   dist/*.d.ts                  types of both entries (tsc; the browser pass has no Node types)
//   dist/browser/offthread.js    the browser entry, bundled (esbuild, ESM)
//   dist/browser/offthread-worker.js  the Web Worker, bundled (one file: copy it anywhere)
//   dist/browser/offthread.wasm  copied from wasm/ so all three sit side by side
// Run by scripts/setup.mjs after the wasm build; `node scripts/build.mjs` on its own too.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(pkg, '..', '..', 'node_modules', '.bin', 'tsc');

rmSync(join(pkg, 'dist'), { recursive: true, force: true });
execFileSync(tsc, ['-p', join(pkg, 'tsconfig.json')], { stdio: 'inherit' });
execFileSync(tsc, ['-p', join(pkg, 'tsconfig.browser.json')], { stdio: 'inherit' });
for (const f of ['index.mjs', 'index.d.mts', 'schema/runtime.mjs', 'schema/runtime.d.mts']) {
  copyFileSync(join(pkg, 'src', f), join(pkg, 'dist', f)); // ESM wrappers over the CJS build
}

const out = join(pkg, 'dist', 'browser');
mkdirSync(out, { recursive: true });
const common = {
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  legalComments: 'none',
  logLevel: 'warning',
  // Bundlers must still see `new URL('./offthread-worker.js', import.meta.url)`.
  supported: { 'import-meta': true },
};
await build({ ...common, entryPoints: [join(pkg, 'src', 'browser.ts')], outfile: join(out, 'offthread.js') });
await build({
  ...common,
  entryPoints: [join(pkg, 'src', 'web', 'worker.ts')],
  outfile: join(out, 'offthread-worker.js'),
  minify: true,
});
const wasm = join(pkg, 'wasm', 'offthread.wasm');
if (existsSync(wasm)) copyFileSync(wasm, join(out, 'offthread.wasm'));
