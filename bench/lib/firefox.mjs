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
    // Started here, polled below: one WebDriver BiDi call awaiting the whole run would
    // pass puppeteer's 180 s protocol timeout on a loaded machine (it did, once the page
    // had the wasmThreads variants).
    await page.evaluate((o) => {
      globalThis.runBench(o).then(
        (r) => (globalThis.benchOutcome = { result: r }),
        (e) => (globalThis.benchOutcome = { error: String(e?.stack ?? e) }),
      );
    }, options);
    let shown = '';
    let outcome = null;
    while (!outcome) {
      await new Promise((r) => setTimeout(r, 2000));
      const poll = await page.evaluate(() => ({
        status: document.getElementById('status')?.textContent ?? '',
        outcome: globalThis.benchOutcome ?? null,
      }));
      if (poll.status && poll.status !== shown) {
        shown = poll.status;
        progress(`firefox: ${poll.status}`);
      }
      outcome = poll.outcome;
    }
    if (outcome.error) throw new Error(`runBench failed in Firefox: ${outcome.error}`);
    if (errors.length) throw new Error(`page errors in Firefox: ${errors.join('; ')}`);
    return { result: outcome.result, version };
  } finally {
    await firefox.close();
  }
}
