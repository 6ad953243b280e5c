// tasks() in a bundled app: the package as a user gets it (`npm pack`, installed into an
// app outside the repo), a page whose task module (src/work.js: the portable fixture
// plus a helper import and `exposeTasks`) is found and emitted by the bundler, loaded
// in headless Chromium and Firefox ESR. Each route's results equal Node's for the same
// module and calls (browser-task-cases.mjs):
//   esbuild     the task module as a second entry point; `new URL('./work.js', import.meta.url)`
//   vite build  `import workUrl from './work.js?worker&url'` (bundled as a worker entry)
//   vite dev    the same source, served by the dev server
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launchChromium, launchFirefox, startServer } from '../../../scripts/browser-server.mjs';
import { portableCases } from './browser-task-cases.mjs';

const require = createRequire(import.meta.url);
const node = require('offthread');
const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const portable = fileURLToPath(new URL('../test-fixtures/tasks/portable.mjs', import.meta.url));

// The task module: its own import (bundled with it) and the portable exports, also exposed
// by side effect for Vite (whose worker bundles drop an entry's exports).
const WORK = `import { exposeTasks } from 'offthread';
import * as portable from './portable.js';
import { tag } from './helper.js';

export * from './portable.js';
export const tagged = (x) => tag(x);
exposeTasks({ ...portable, tagged });
`;
const HELPER = `export const tag = (x) => \`<\${x}>\`;\n`;

/** The page's script; `locate` is the statement that sets `url` (each bundler's way). */
const main = (imports, locate) => `import * as o from 'offthread';
${imports}
const portableCases = ${portableCases.toString()};

async function run() {
  await o.ready;
  ${locate}
  const results = await portableCases(o, url);
  const pool = new o.Pool({ threads: 1 });
  const tagged = await o.tasks(url, { pool }).tagged('x');
  await pool.close();
  return { results, tagged, url: String(url) };
}
run().then(
  (value) => {
    globalThis.result = value;
  },
  (err) => {
    globalThis.result = { error: String(err?.stack ?? err), code: err?.code };
  },
);
`;
const ESBUILD_MAIN = main('', "const url = new URL('./work.js', import.meta.url);");
const VITE_MAIN = main("import workUrl from './work.js?worker&url';", 'const url = workUrl;');

const page = (script) => `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><link rel="icon" href="data:," /><title>offthread tasks app</title></head>
  <body><script type="module" src="${script}"></script></body>
</html>
`;

function npm(args, cwd) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  return execFileSync('npm', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

let tmp;
let app;
let nodeResults;
const browsers = {};

before(async () => {
  nodeResults = await portableCases(node, new URL(`file://${portable}`));
  tmp = mkdtempSync(join(tmpdir(), 'offthread-bundlers-tasks-'));
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', tmp], pkgDir));
  app = join(tmp, 'app');
  mkdirSync(join(app, 'src'), { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  npm(['install', '--offline', '--no-audit', '--no-fund', join(tmp, packed.filename)], app);
  copyFileSync(portable, join(app, 'src', 'portable.js'));
  writeFileSync(join(app, 'src', 'helper.js'), HELPER);
  writeFileSync(join(app, 'src', 'work.js'), WORK);
  writeFileSync(join(app, 'src', 'main-esbuild.js'), ESBUILD_MAIN);
  writeFileSync(join(app, 'src', 'main-vite.js'), VITE_MAIN);
  writeFileSync(join(app, 'index.html'), page('/src/main-vite.js'));
  browsers.Chromium = await launchChromium();
  browsers.Firefox = await launchFirefox();
});

after(async () => {
  for (const b of Object.values(browsers)) await b.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function loadURL(browser, url) {
  const tab = await browser.context.newPage();
  const errors = [];
  tab.on('pageerror', (e) => errors.push(e.message));
  try {
    await tab.goto(url);
    await tab.waitForFunction(() => globalThis.result !== undefined, null, { timeout: 60_000 });
    return { result: await tab.evaluate(() => globalThis.result), errors };
  } finally {
    await tab.close();
  }
}

async function load(browser, dir, isolated) {
  const server = await startServer({ isolated, mounts: [['/', dir]] });
  try {
    return await loadURL(browser, server.url);
  } finally {
    await server.close();
  }
}

function check({ result, errors }) {
  assert.equal(result.error, undefined, result.error);
  assert.deepEqual(Object.keys(result.results), Object.keys(nodeResults));
  // The app's module has one more export (tagged), and Vite's URL is a path the page resolves.
  const exportError = (r) => ({
    ...r.err,
    message: r.err.message.replace(/task module \S+/, 'task module <url>').replace(/ \(its functions: .*\)$/, ''),
  });
  for (const key of Object.keys(nodeResults)) {
    if (key === 'no such export') {
      assert.deepEqual(exportError(result.results[key]), exportError(nodeResults[key]), key);
      assert.match(result.results[key].err.message, /its functions: .*\btagged\b/);
    } else assert.deepEqual(result.results[key], nodeResults[key], key);
  }
  assert.equal(result.tagged, '<x>', 'the helper module was bundled with the task module');
  assert.deepEqual(errors, []);
}

describe('esbuild: the task module as a second entry point', () => {
  let out;
  before(async () => {
    const { build } = await import('esbuild');
    out = join(tmp, 'esbuild-out');
    await build({
      absWorkingDir: app,
      entryPoints: { main: 'src/main-esbuild.js', work: 'src/work.js' },
      bundle: true,
      platform: 'browser',
      format: 'esm',
      outdir: out,
      logLevel: 'silent',
    });
    const appRequire = createRequire(join(app, 'package.json'));
    for (const f of ['offthread-worker.js', 'offthread-task-worker.js', 'offthread.wasm']) {
      copyFileSync(appRequire.resolve(`offthread/browser/${f}`), join(out, f));
    }
    writeFileSync(join(out, 'index.html'), page('./main.js'));
  });

  test('the task module is emitted bundled (its imports inlined)', () => {
    const work = readFileSync(join(out, 'work.js'), 'utf8');
    assert.doesNotMatch(work, /from\s*["']\.\/helper\.js["']/);
    assert.match(work, /export\s*{/);
  });

  for (const name of ['Chromium', 'Firefox']) {
    for (const isolated of [false, true]) {
      test(`${name}, ${isolated ? 'COOP/COEP' : 'not isolated'}: results equal Node's`, async () => {
        check(await load(browsers[name], out, isolated));
      });
    }
  }
});

describe('Vite (vite build): ?worker&url', () => {
  let out;
  before(async () => {
    const { build } = await import('vite');
    out = join(tmp, 'vite-out');
    await build({ root: app, configFile: false, logLevel: 'silent', build: { outDir: out, emptyOutDir: true } });
  });

  test('emits the task worker and the task module as assets', () => {
    const assets = readdirSync(join(out, 'assets'));
    assert.ok(
      assets.some((f) => /^offthread-task-worker.*\.js$/.test(f)),
      assets.join(', '),
    );
    const work = assets.find((f) => /^work.*\.js$/.test(f));
    assert.ok(work, assets.join(', '));
    // Vite bundles a worker entry without its exports: exposeTasks is what names them.
    const code = readFileSync(join(out, 'assets', work), 'utf8');
    assert.doesNotMatch(code, /\bexport\s*{/);
    assert.doesNotMatch(code, /from\s*["']\.\/helper\.js["']/);
  });

  for (const name of ['Chromium', 'Firefox']) {
    for (const isolated of [false, true]) {
      test(`${name}, ${isolated ? 'COOP/COEP' : 'not isolated'}: results equal Node's`, async () => {
        check(await load(browsers[name], out, isolated));
      });
    }
  }
});

describe('Vite dev server', () => {
  for (const name of ['Chromium', 'Firefox']) {
    test(`${name}: the dev page's results equal Node's`, async () => {
      const { createServer } = await import('vite');
      const server = await createServer({
        root: app,
        configFile: false,
        logLevel: 'silent',
        server: { host: '127.0.0.1', port: 0, strictPort: false },
      });
      await server.listen();
      try {
        check(await loadURL(browsers[name], server.resolvedUrls?.local[0]));
      } finally {
        await server.close();
      }
    });
  }
});
