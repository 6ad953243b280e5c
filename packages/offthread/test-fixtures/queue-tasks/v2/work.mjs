// The same task module under another version (another file, another content hash), for
// queue-tasks.test.mjs's version-mismatch test.
export * from '../work.mjs';
export const version = '2.0.0';
