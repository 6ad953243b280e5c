/**
 * offthread for browsers (`import … from 'offthread'` in a bundler, or
 * 'offthread/browser'): the same API as Node's, on a pool of Web Workers each running
 * offthread.wasm. Built from the same sources as the Node entry; only web/ differs.
 */
import { installHost } from './host.js';
import { init, webHost } from './web/host.js';

installHost(webHost);

export * from './api.js';
export { type InitOptions, init } from './web/host.js';

/** Settles once offthread.wasm is loaded (or failed to: `backendInfo().wasm.error` says why). */
export const ready = init();
