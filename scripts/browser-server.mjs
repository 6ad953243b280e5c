// A tiny static server for the browser tests and the benchmark page (node:http only).
//   /                       bench/browser/index.html (and the page's other files)
//   /offthread/…            packages/offthread/dist/browser/ (offthread.js, offthread-worker.js,
//                           offthread.wasm: the browser entry as the package ships it)
// With `isolated`, every response carries COOP/COEP, so the page is cross-origin
// isolated (SharedArrayBuffer available); without, it is not. Run by hand:
//   node scripts/browser-server.mjs [--isolated] [--port 8080]
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('../', import.meta.url));
export const MOUNTS = [
  ['/offthread/', join(root, 'packages/offthread/dist/browser')],
  ['/', join(root, 'bench/browser')],
];
export const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.ts': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
};

function resolveFile(mounts, pathname) {
  for (const [prefix, dir] of mounts) {
    if (!pathname.startsWith(prefix)) continue;
    const rel = normalize(decodeURIComponent(pathname.slice(prefix.length)) || 'index.html');
    const file = join(dir, rel);
    return file === dir || file.startsWith(dir + sep) ? file : null;
  }
  return null;
}

/**
 * Starts a server on 127.0.0.1. Resolves `{ url, close() }`; `url` ends with '/'.
 * `mounts`: [url prefix, directory] pairs, first match wins (default: the bench page
 * and the browser entry, above). `onRequest(pathname, status)` sees every response.
 * @param {{ port?: number, isolated?: boolean, mounts?: [string, string][],
 *           onRequest?: (pathname: string, status: number) => void }} [options]
 */
export async function startServer({ port = 0, isolated = false, mounts = MOUNTS, onRequest } = {}) {
  const dirs = mounts.map(([prefix, dir]) => [prefix, resolve(dir)]); // no trailing separator
  const server = createServer(async (req, res) => {
    const headers = { 'cache-control': 'no-store' };
    if (isolated) {
      headers['cross-origin-opener-policy'] = 'same-origin';
      headers['cross-origin-embedder-policy'] = 'require-corp';
      headers['cross-origin-resource-policy'] = 'same-origin';
    }
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    const file = resolveFile(dirs, pathname);
    const info = file && (await stat(file).catch(() => null));
    if (!info?.isFile() || (req.method !== 'GET' && req.method !== 'HEAD')) {
      onRequest?.(pathname, info ? 405 : 404);
      res.writeHead(info ? 405 : 404, { ...headers, 'content-type': 'text/plain' }).end(info ? 'method' : 'not found');
      return;
    }
    onRequest?.(pathname, 200);
    res.writeHead(200, {
      ...headers,
      'content-type': MIME[extname(file)] ?? 'application/octet-stream',
      'content-length': info.size,
    });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
  });
  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', ok);
  });
  const { port: actual } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${actual}/`,
    isolated,
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections?.();
        server.close(() => ok(undefined));
      }),
  };
}

export const CHROMIUM = '/usr/bin/chromium';
/** Headless Chromium flags that work on these machines (ARCHITECTURE.md, Toolchain facts). */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * `apt-get install -y <pkg>` when `found()` is null: as root only, and one install at a
 * time across processes (test files that need a browser start at once, and dpkg takes
 * one install at a time; the lock's later holders find the package there). Returns
 * `found()` after.
 * @param {string} pkg @param {() => string | null} found
 */
function aptInstalled(pkg, found) {
  if (found()) return /** @type {string} */ (found());
  if (process.getuid?.() !== 0)
    throw new Error(`${pkg} is missing and this is not root: run \`sudo apt-get install -y ${pkg}\``);
  // (`dpkg -s` alone also succeeds for a removed package whose config files remain.)
  const installed = `dpkg-query -W -f='\${Status}' ${pkg} 2>/dev/null | grep -q 'ok installed'`;
  const install = `${installed} || { apt-get update && apt-get install -y ${pkg}; }`;
  try {
    execFileSync('flock', [join(tmpdir(), 'offthread-apt.lock'), 'sh', '-c', install], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (err) {
    throw new Error(`cannot install ${pkg} (\`apt-get install -y ${pkg}\` failed: ${err.message})`);
  }
  const path = found();
  if (!path) throw new Error(`apt-get installed ${pkg} but its binary is still missing`);
  return path;
}

/** Makes sure /usr/bin/chromium exists: installs it with apt-get when root, else throws. */
export function ensureChromium() {
  return aptInstalled('chromium', () => (existsSync(CHROMIUM) ? CHROMIUM : null));
}

/**
 * Headless Chromium through playwright-core with a fresh profile under os.tmpdir().
 * Resolves `{ context, version, close() }` (close also deletes the profile).
 */
export async function launchChromium() {
  const executablePath = ensureChromium();
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch {
    throw new Error('the browser tests need the npm package playwright-core: `npm i -D playwright-core` at the root');
  }
  const profile = mkdtempSync(join(tmpdir(), 'offthread-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: CHROMIUM_FLAGS.filter((f) => f !== '--headless'), // playwright adds its own
  });
  return {
    context,
    version: context.browser()?.version() ?? null,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const FIREFOXES = ['/usr/bin/firefox-esr', '/usr/bin/firefox'];

/** Firefox's binary (OFFTHREAD_FIREFOX, else Debian's), or null when none is installed. */
export function firefoxPath() {
  return process.env.OFFTHREAD_FIREFOX ?? FIREFOXES.find((p) => existsSync(p)) ?? null;
}

/** Makes sure Firefox is installed: `apt-get install firefox-esr` when root, else throws. */
export function ensureFirefox() {
  return aptInstalled('firefox-esr', firefoxPath);
}

/**
 * Headless Firefox (the system's, ensureFirefox) over WebDriver BiDi with puppeteer-core:
 * playwright-core drives only its own patched Firefox, which no registry here serves.
 * Resolves `{ version, context, close() }` as launchChromium does; `context.newPage()`
 * gives pages with the playwright signatures the browser tests use
 * (`waitForFunction(fn, arg, options)`, console types `warning`/`error`, `locator(…)
 * .screenshot`), so one suite runs in both browsers.
 */
export async function launchFirefox() {
  const executablePath = ensureFirefox();
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath,
    headless: true,
    protocol: 'webDriverBiDi',
  });
  return {
    version: await browser.version(),
    context: { newPage: async () => playwrightShaped(await browser.newPage()) },
    close: () => browser.close(),
  };
}

/** @param {import('puppeteer-core').Page} page */
function playwrightShaped(page) {
  return {
    goto: (url) => page.goto(url),
    evaluate: (fn, arg) => page.evaluate(fn, arg),
    waitForFunction: (fn, arg, options) => page.waitForFunction(fn, options, arg),
    close: () => page.close(),
    locator: (selector) => ({
      screenshot: async (options) => Buffer.from(await (await page.waitForSelector(selector)).screenshot(options)),
    }),
    on(event, listener) {
      if (event !== 'console') return page.on(event, listener);
      // puppeteer says 'warn' where playwright (and the tests) say 'warning'.
      return page.on('console', (m) =>
        listener({ type: () => (m.type() === 'warn' ? 'warning' : m.type()), text: () => m.text() }),
      );
    },
  };
}

// (node --test runs every file under test/: only start when run directly, not as a test file.)
if (process.argv[1] === fileURLToPath(import.meta.url) && !process.env.NODE_TEST_CONTEXT) {
  const { values } = parseArgs({
    options: { isolated: { type: 'boolean', default: false }, port: { type: 'string', default: '8080' } },
  });
  const s = await startServer({ port: Number(values.port), isolated: values.isolated });
  console.log(`serving ${s.url} (${s.isolated ? 'cross-origin isolated' : 'not isolated'})`);
}
