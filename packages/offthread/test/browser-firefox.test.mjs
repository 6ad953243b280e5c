// The browser suite (browser-suite.mjs) in headless Firefox ESR: Debian's firefox-esr
// (installed with apt-get when missing) over WebDriver BiDi with puppeteer-core.
import { launchFirefox } from '../../../scripts/browser-server.mjs';
import { browserSuite } from './browser-suite.mjs';

browserSuite({ name: 'Firefox', launch: launchFirefox, artifact: 'browser-firefox' });
