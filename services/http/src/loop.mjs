// Event-loop delay as the service reports it: offthread's monitorLoopDelay (perf_hooks)
// in short windows for the live chart, plus one cumulative monitor since the last reset
// for load tests (GET /loop, POST /loop/reset).
import offthread from 'offthread';

/**
 * @param {{ resolutionMs?: number, windowMs?: number, keep?: number }} [opts]
 */
export function createLoopWatch({ resolutionMs = 1, windowMs = 500, keep = 240 } = {}) {
  const windowed = offthread.monitorLoopDelay({ resolutionMs });
  const total = offthread.monitorLoopDelay({ resolutionMs });
  let since = Date.now();
  /** @type {{ t: number, p50Ms: number, p95Ms: number, p99Ms: number, maxMs: number, meanMs: number, count: number }[]} */
  const recent = [];
  const timer = setInterval(() => {
    const { p50Ms, p95Ms, p99Ms, maxMs, meanMs, count } = windowed.summary();
    windowed.reset();
    recent.push({ t: Date.now(), p50Ms, p95Ms, p99Ms, maxMs, meanMs, count });
    if (recent.length > keep) recent.shift();
  }, windowMs);
  timer.unref();
  return {
    resolutionMs,
    windowMs,
    /** Recent windows (oldest first) and the figures since the last reset. */
    snapshot: () => ({ resolutionMs, windowMs, since, total: total.summary(), recent: recent.slice() }),
    /** The cumulative figures since the last reset. */
    total: () => total.summary(),
    reset() {
      total.reset();
      since = Date.now();
    },
    stop() {
      clearInterval(timer);
      windowed.stop();
      total.stop();
    },
  };
}
