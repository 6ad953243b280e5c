// The process's thread count, read from /proc/self/status, for the tests that check a
// pool's threads are gone from the process (pool-idle, pool-dropped), not merely idle.
import { readFileSync } from 'node:fs';

export const threadCount = () => Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls the process's thread count until `done(count)` holds or `within` ms pass; the last count. */
export async function waitForThreads(done, within = 10_000) {
  const end = Date.now() + within;
  let n = threadCount();
  while (!done(n) && Date.now() < end) {
    await sleep(20);
    n = threadCount();
  }
  return n;
}
export const threadsDropTo = (most, within) => waitForThreads((n) => n <= most, within);
export const threadsRiseTo = (least, within) => waitForThreads((n) => n >= least, within);
