// tasks-transports.test.mjs: a module that takes 300 ms to import, so a call to it is
// still waiting on its worker when the call's abort arrives there.
await new Promise((resolve) => setTimeout(resolve, 300));
export function hog(ms) {
  const end = Date.now() + ms;
  while (Date.now() < end);
  return 'hogged';
}
export const add = (a, b) => a + b;
