/**
 * The event loop's next turn, on every host. Node has setImmediate; browsers (and their
 * workers) post a message to themselves, because setTimeout(fn, 0) is clamped to 4 ms
 * once timers nest.
 */

/** Node's setImmediate; undefined in browsers, where spinning a turn at a time costs too much. */
export const nodeSetImmediate = (globalThis as { setImmediate?: (fn: () => void) => unknown }).setImmediate;

/** Runs `fn` on a later turn of the loop, after the I/O and messages that came meanwhile. */
export const nextTurn: (fn: () => void) => void = nodeSetImmediate ?? byMessage();

/**
 * Runs `fn` a turn after `ms` have passed, without keeping the process alive. Timers run
 * before the loop reads the workers' messages: a check at the timer alone would miss an
 * answer that came in time on a loop held up past `ms` (a loaded machine), and kill a
 * worker that had moved on to another job (seen once in CI: the next test's stream died
 * with it). A turn later, those messages have been read.
 */
export function turnAfter(ms: number, fn: () => void): void {
  const timer = setTimeout(() => nextTurn(fn), ms);
  (timer as { unref?: () => void }).unref?.();
}

function byMessage(): (fn: () => void) => void {
  const due: (() => void)[] = [];
  let channel: MessageChannel | undefined;
  return (fn) => {
    if (!channel) {
      channel = new MessageChannel();
      channel.port1.onmessage = () => {
        for (const run of due.splice(0)) run();
      };
    }
    due.push(fn);
    if (due.length === 1) channel.port2.postMessage(null);
  };
}
