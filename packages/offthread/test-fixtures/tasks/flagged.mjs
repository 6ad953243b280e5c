// tasks-transports.test.mjs: a CPU loop that says it started (flag: an Int32Array on a
// SharedArrayBuffer), then ignores every abort for `ms`.
export function hog(flag, ms) {
  Atomics.store(flag, 0, 1);
  const end = Date.now() + ms;
  while (Date.now() < end);
  return 'hogged';
}
export const add = (a, b) => a + b;
