/**
 * `offthread/internal` for browsers: the whole browser entry plus the research handles
 * a page can use (the paper's π variants). One bundle (dist/browser/
 * offthread-internal.js) so the variants share the entry's host and default pool; a page
 * loads this instead of offthread.js. Not part of the stable API.
 */
export * from './browser.js';
export * as piVariants from './kernels/pi-variants.js';
