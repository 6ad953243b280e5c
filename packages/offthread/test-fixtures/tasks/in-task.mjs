// A browser task module that reads its call (browser-tasks.test.mjs): the page's server
// serves the browser entry under /offthread/, which the worker imports for currentTask.
import { currentTask } from '/offthread/offthread.js';

export function progress(steps) {
  const ctx = currentTask();
  for (let i = 1; i <= steps; i++) ctx.progress({ step: i, of: steps });
  return steps;
}
/** A CPU loop that polls its signal (never awaits): stops when aborted (shared memory only). */
export function cooperative(ms) {
  const { signal } = currentTask();
  const end = Date.now() + ms;
  while (Date.now() < end) if (signal.aborted) return 'stopped';
  return 'ran out';
}
/** An async task that stops on the signal's abort event (both transports). */
export function waitForAbort() {
  const { signal } = currentTask();
  // Aborted before the task read its signal: the 'abort' event has been and gone.
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
}
export const outside = () => {
  try {
    currentTask();
    return 'in a task';
  } catch (err) {
    return err.code;
  }
};
