// Headless Firefox for the browser experiment: the system binary (`apt-get install
// firefox-esr`; no browser download) driven over WebDriver BiDi by puppeteer-core.
import { existsSync } from 'node:fs';

const CANDIDATES = ['/usr/bin/firefox-esr', '/usr/bin/firefox'];

/** The Firefox binary, or null when none is installed. */
export function firefoxPath() {
  return process.env.OFFTHREAD_FIREFOX ?? CANDIDATES.find((p) => existsSync(p)) ?? null;
}

/**
 * Opens `url` in headless Firefox and resolves `globalThis.runBench(options)` there.
 * @returns {Promise<{ result: any, version: string }>}
 */
export async function runPageInFirefox(url, options, progress) {
  const executablePath = firefoxPath();
  if (!executablePath) throw new Error('no Firefox: apt-get install firefox-esr (or set OFFTHREAD_FIREFOX)');
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath,
    headless: true,
    protocol: 'webDriverBiDi',
  });
  try {
    const version = await browser.version();
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForFunction(() => globalThis.benchReady === true, { timeout: 60_000 });
    let shown = '';
    const timer = setInterval(async () => {
      const s = await page.evaluate(() => document.getElementById('status')?.textContent ?? '').catch(() => '');
      if (s && s !== shown) {
        shown = s;
        progress(`firefox: ${s}`);
      }
    }, 2000);
    let result;
    try {
      result = await page.evaluate((o) => globalThis.runBench(o), options);
    } finally {
      clearInterval(timer);
    }
    if (errors.length) throw new Error(`page errors in Firefox: ${errors.join('; ')}`);
    return { result, version };
  } finally {
    await browser.close();
  }
}
