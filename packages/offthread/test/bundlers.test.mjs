// The package as a user gets it (`npm pack` of packages/offthread, installed into an app
// in a temp dir outside the repo), imported by its bare name from a small page and
// built by a bundler — esbuild (platform 'browser'), Vite (`vite build`, and its dev
// server) — then loaded in headless Chromium. The bundler must pick the `browser` export condition and
// the page must find offthread-worker.js and offthread.wasm: π on wasm workers equals
// Node's `inside`, the QR data URL decodes (jsQR) to its text, a `filters.gzip()`
// TransformStream's output gunzips (DecompressionStream) to its input, and there is no
// 404, no console warning or error and no page error.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { launchChromium, startServer } from '../../../scripts/browser-server.mjs';

const require = createRequire(import.meta.url);
const node = require('offthread');
const pkgDir = fileURLToPath(new URL('..', import.meta.url));

const SAMPLES = 1_000_003;
const SEED = 7;
const TEXT = 'offthread, bundled: π, QR and a gzip stream';

const MAIN = `import { backendInfo, filters, Pool, pi, qr, ready } from 'offthread';

/** gzip through the bundled filter (its steps on a worker), gunzipped by the browser. */
async function gzipRoundTrip(pool) {
  const input = new TextEncoder().encode(${JSON.stringify(TEXT)}.repeat(20000));
  const gunzipped = await new Response(
    new Blob([input]).stream().pipeThrough(filters.gzip({ pool })).pipeThrough(new DecompressionStream('gzip')),
  ).arrayBuffer();
  const out = new Uint8Array(gunzipped);
  return out.length === input.length && out.every((b, i) => b === input[i]);
}

async function main() {
  await ready;
  const pool = new Pool({ threads: 2 });
  const estimate = await pi.estimate(${SAMPLES}, { seed: ${SEED}, pool });
  const url = await qr.toDataURL(${JSON.stringify(TEXT)}, { pool });
  const gunzips = await gzipRoundTrip(pool);
  const stats = pool.stats();
  await pool.close();
  return { info: backendInfo(), estimate, url, gunzips, engine: pool.engine, stats };
}

main().then(
  (value) => {
    globalThis.result = value;
  },
  (err) => {
    globalThis.result = { error: String(err?.stack ?? err), code: err?.code };
  },
);
`;

const page = (script) => `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><link rel="icon" href="data:," /><title>offthread app</title></head>
  <body><script type="module" src="${script}"></script></body>
</html>
`;

/** npm without the npm_* variables a parent `npm test` sets (they would point it at the repo). */
function npm(args, cwd) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  return execFileSync('npm', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function decodeQR(dataURL) {
  assert.match(dataURL, /^data:image\/png;base64,/);
  const image = PNG.sync.read(Buffer.from(dataURL.slice('data:image/png;base64,'.length), 'base64'));
  return jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data;
}

let tmp;
let app;
let browser;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'offthread-bundlers-'));
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', tmp], pkgDir));
  app = join(tmp, 'app');
  mkdirSync(join(app, 'src'), { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  npm(['install', '--offline', '--no-audit', '--no-fund', join(tmp, packed.filename)], app);
  writeFileSync(join(app, 'src', 'main.js'), MAIN);
  writeFileSync(join(app, 'index.html'), page('/src/main.js'));
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Serves `dir` on loopback, loads its index.html, waits for the app's result. */
async function load(dir, isolated) {
  const server = await startServer({ isolated, mounts: [['/', dir]] });
  try {
    return await loadURL(server.url);
  } finally {
    await server.close();
  }
}

/** Loads `url`, waits for the app's result; every response status, console message and page error. */
async function loadURL(url) {
  const tab = await browser.context.newPage();
  const responses = [];
  const messages = [];
  const errors = [];
  tab.on('response', (r) => responses.push([new URL(r.url()).pathname, r.status()]));
  tab.on('console', (m) => messages.push([m.type(), m.text()]));
  tab.on('pageerror', (e) => errors.push(e.message));
  try {
    await tab.goto(url);
    await tab.waitForFunction(() => globalThis.result !== undefined, null, { timeout: 30_000 });
    const result = await tab.evaluate(() => globalThis.result);
    return { result, responses, messages, errors, coi: await tab.evaluate(() => globalThis.crossOriginIsolated) };
  } finally {
    await tab.close();
  }
}

function check(got, isolated) {
  const { result } = got;
  assert.equal(result.error, undefined, result.error);
  assert.equal(got.coi, isolated);
  assert.equal(result.info.runtime, 'browser');
  assert.equal(result.info.wasm.loaded, true, result.info.wasm.error);
  assert.equal(result.info.active, 'wasm');
  assert.equal(result.engine, 'wasm');
  assert.equal(result.stats.transport, isolated ? 'shared' : 'message');
  const want = node.pi.estimateSync(SAMPLES, { seed: SEED });
  assert.equal(result.estimate.inside, want.inside);
  assert.equal(result.estimate.variant, 'wasmWorkers');
  assert.equal(decodeQR(result.url), TEXT);
  assert.equal(result.gunzips, true, 'the bundled gzip filter gunzips to its input');
  // Every response succeeded, and the worker and the wasm were among them.
  assert.deepEqual(
    got.responses.filter(([, status]) => status >= 400),
    [],
  );
  assert.ok(
    got.responses.some(([path, status]) => /\.wasm$/.test(path) && status === 200),
    JSON.stringify(got.responses),
  );
  assert.ok(
    got.responses.some(([path, status]) => /offthread-worker[^/]*\.js$/.test(path) && status === 200),
    JSON.stringify(got.responses),
  );
  assert.deepEqual(
    got.messages.filter(([type, text]) => type === 'warning' || type === 'error' || /offthread/i.test(text)),
    [],
  );
  assert.deepEqual(got.errors, []);
}

describe('esbuild (platform browser, esm)', () => {
  let out;
  let metafile;
  before(async () => {
    const { build } = await import('esbuild');
    out = join(tmp, 'esbuild-out');
    const result = await build({
      absWorkingDir: app,
      entryPoints: ['src/main.js'],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      outfile: join(out, 'main.js'),
      metafile: true,
      logLevel: 'silent',
    });
    metafile = result.metafile;
    // As docs/browser.md says: the worker and the wasm beside the bundle.
    const appRequire = createRequire(join(app, 'package.json'));
    for (const f of ['offthread-worker.js', 'offthread.wasm']) {
      copyFileSync(appRequire.resolve(`offthread/browser/${f}`), join(out, f));
    }
    writeFileSync(join(out, 'index.html'), page('./main.js'));
  });

  test("resolves 'offthread' to the browser build (no Node entry, no node: imports)", () => {
    const inputs = Object.keys(metafile.inputs);
    assert.ok(inputs.includes('node_modules/offthread/dist/browser/offthread.js'), inputs.join('\n'));
    assert.ok(!inputs.some((f) => f.includes('offthread/dist/index')), inputs.join('\n'));
    const bundle = readFileSync(join(out, 'main.js'), 'utf8');
    assert.doesNotMatch(bundle, /["']node:/);
    assert.match(bundle, /new URL\("\.\/offthread-worker\.js", import\.meta\.url\)/);
  });

  for (const isolated of [false, true]) {
    test(`the bundle computes π and QR and gzips a stream on wasm workers (${isolated ? 'COOP/COEP' : 'not isolated'})`, async () => {
      check(await load(out, isolated), isolated);
    });
  }
});

describe('Vite (vite build)', () => {
  let out;
  before(async () => {
    const { build } = await import('vite');
    out = join(tmp, 'vite-out');
    await build({
      root: app,
      configFile: false,
      logLevel: 'silent',
      build: { outDir: out, emptyOutDir: true },
    });
  });

  test('emits the worker and the wasm as assets of the build', () => {
    const assets = readdirSync(join(out, 'assets'));
    assert.ok(
      assets.some((f) => /^offthread-worker.*\.js$/.test(f)),
      assets.join(', '),
    );
    assert.ok(
      assets.some((f) => /^offthread.*\.wasm$/.test(f)),
      assets.join(', '),
    );
  });

  for (const isolated of [false, true]) {
    test(`the built page computes π and QR and gzips a stream on wasm workers (${isolated ? 'COOP/COEP' : 'not isolated'})`, async () => {
      check(await load(out, isolated), isolated);
    });
  }
});

describe('Vite dev server (dependency pre-bundling)', () => {
  test('the page served by `vite` (dev) computes π and QR and gzips a stream on wasm workers', async () => {
    const { createServer } = await import('vite');
    const server = await createServer({
      root: app,
      configFile: false,
      logLevel: 'silent',
      server: { host: '127.0.0.1', port: 0, strictPort: false },
    });
    await server.listen();
    try {
      const url = server.resolvedUrls?.local[0];
      assert.match(url ?? '', /^http:\/\/127\.0\.0\.1:\d+\/$/);
      const got = await loadURL(url);
      check(got, false);
      // Served from the installed package, not copied: the wasm sits beside the entry there.
      assert.match(got.result.info.wasm.path, /\/node_modules\/offthread\/dist\/browser\/offthread\.wasm$/);
    } finally {
      await server.close();
    }
  });
});
