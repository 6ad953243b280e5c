/**
 * Event-loop health: one helper so the service, the benchmarks and users report the
 * same figure (perf_hooks.monitorEventLoopDelay, reported in milliseconds).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, makeError } from '../errors.js';
import { toOptions } from '../validate.js';

export interface LoopDelaySummary {
  /** The sampling resolution used; an idle loop reads about this much. */
  resolutionMs: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
  /** Samples recorded. */
  count: number;
}

export interface LoopDelayMonitor {
  /** Figures so far (the monitor keeps running). */
  summary(): LoopDelaySummary;
  /** Clears the histogram. */
  reset(): void;
  /** Stops sampling and returns the final figures. */
  stop(): LoopDelaySummary;
}

const ms = (ns: number) => ns / 1e6;

/** The longest sampling interval accepted: a minute (Node's own limit is far larger, but a monitor that samples less often than that measures nothing useful). */
const MAX_RESOLUTION_MS = 60_000;

/** Starts sampling the event loop's delay every `resolutionMs` (default 10, 1…60,000). */
export function monitorLoopDelay(options: { resolutionMs?: number } = {}): LoopDelayMonitor {
  const resolutionMs = toOptions<{ resolutionMs: number }>(options, ['resolutionMs']).resolutionMs ?? 10;
  if (
    typeof resolutionMs !== 'number' ||
    !Number.isInteger(resolutionMs) ||
    resolutionMs < 1 ||
    resolutionMs > MAX_RESOLUTION_MS
  ) {
    throw makeError(
      'ERR_INVALID_ARG',
      `resolutionMs must be an integer from 1 to ${MAX_RESOLUTION_MS}, got ${describe(resolutionMs)}`,
    );
  }
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  const summary = (): LoopDelaySummary => ({
    resolutionMs,
    p50Ms: ms(histogram.percentile(50)),
    p95Ms: ms(histogram.percentile(95)),
    p99Ms: ms(histogram.percentile(99)),
    maxMs: ms(histogram.max),
    meanMs: ms(histogram.mean) || 0,
    count: histogram.count,
  });
  return {
    summary,
    reset: () => histogram.reset(),
    stop: () => {
      histogram.disable();
      return summary();
    },
  };
}
