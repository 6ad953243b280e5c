// Types of the ESM entry (index.mjs): the CommonJS build's, plus the default export.
import * as offthread from './index.js';

export * from './index.js';
export default offthread;
