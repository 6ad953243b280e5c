// The browser suite (browser-suite.mjs) in headless Chromium: playwright-core driving
// /usr/bin/chromium (installed with apt-get when missing).
import { launchChromium } from '../../../scripts/browser-server.mjs';
import { browserSuite } from './browser-suite.mjs';

browserSuite({ name: 'Chromium', launch: launchChromium, artifact: 'browser' });
