// Headless Firefox for the browser experiment: the system binary (`apt-get install
// firefox-esr`; no browser download) driven over WebDriver BiDi by puppeteer-core, as the
// browser tests launch it (scripts/browser-server.mjs).
import { firefoxPath, launchFirefox } from '../../scripts/browser-server.mjs';

export { firefoxPath };

/**
 * Opens `url` in headless Firefox and resolves `globalThis.runBench(options)` there.
 * @returns {Promise<{ result: any, version: string }>}
 */
export async function runPageInFirefox(url, options, progress) {
  if (!firefoxPath()) throw new Error('no Firefox: apt-get install firefox-esr (or set OFFTHREAD_FIREFOX)');
  const firefox = await launchFirefox();
  try {
    const { version } = firefox;
    const page = await firefox.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForFunction(() => globalThis.benchReady === true, null, { timeout: 60_000 });
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
    await firefox.close();
  }
}
