// Event-loop delay: how late the loop runs a timer, i.e. how long JS callbacks were kept
// waiting. Wraps perf_hooks.monitorEventLoopDelay, which samples every `resolution` ms;
// an idle loop reads about the resolution, so every reading states it.

import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * @typedef {object} LoopDelay
 * @property {number} resolutionMs  sampling interval used (the floor of an idle reading)
 * @property {number} p50Ms
 * @property {number} p95Ms
 * @property {number} p99Ms
 * @property {number} maxMs
 * @property {number} meanMs
 * @property {number} minMs
 * @property {number} count         how many delays were recorded. 0 means the loop never
 *   ran the monitor's timer (blocked the whole time, or stopped at once): every figure is
 *   then NaN (null in JSON, '–' in tables), never a reassuring 0.
 */

/**
 * Start recording the event-loop delay of this thread.
 * @param {{ resolutionMs?: number }} [opts]
 * @returns {{ stop(): LoopDelay }} stop() ends the recording and summarises it (ms)
 */
export function startLoopDelay({ resolutionMs = 1 } = {}) {
  if (!(Number.isInteger(resolutionMs) && resolutionMs >= 1)) {
    throw new RangeError(`startLoopDelay: resolutionMs must be an integer ≥ 1, got ${resolutionMs}`);
  }
  const h = monitorEventLoopDelay({ resolution: resolutionMs });
  h.enable();
  let stopped = false;
  return {
    stop() {
      if (stopped) throw new Error('startLoopDelay: stop() called twice');
      stopped = true;
      h.disable();
      const count = h.count;
      const ms = (/** @type {number} */ ns) => (count > 0 ? ns / 1e6 : Number.NaN);
      return {
        resolutionMs,
        p50Ms: ms(h.percentile(50)),
        p95Ms: ms(h.percentile(95)),
        p99Ms: ms(h.percentile(99)),
        maxMs: ms(h.max),
        meanMs: ms(h.mean),
        minMs: ms(h.min),
        count,
      };
    },
  };
}
