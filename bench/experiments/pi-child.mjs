// Runs in its own process (one per variant): clean JIT state and its own peak RSS.
// Measures one π variant at ascending sizes; sync variants are timed as calls, async
// variants as one awaited call at a time (the paper's deferred benchmark).
import { pi } from 'offthread';
import { cpuMeter, peakRssMiB, progress, timeFn } from '../lib/measure.mjs';

/** Per-size time budget: long calls run a few times, tiny ones many. */
function budget(quick, samples) {
  if (samples >= 1e9) return { minTime: 0, minIterations: quick ? 1 : 2, warmup: 0 };
  if (samples >= 1e8) return { minTime: quick ? 200 : 1000, minIterations: quick ? 2 : 3, warmup: 1 };
  return { minTime: quick ? 150 : 500, minIterations: 5, warmup: 5 };
}

export async function measureVariant({ variant, sizes, quick, seed = 1 }) {
  const isAsync = pi.asyncVariants.includes(variant);
  const rows = [];
  for (const samples of sizes) {
    const call = isAsync
      ? () => pi.estimate(samples, { seed, variant })
      : () => pi.estimateSync(samples, { seed, variant });
    const { inside, variant: used } = await call();
    const meter = cpuMeter();
    meter.start();
    const t = await timeFn(call, budget(quick, samples));
    const cpu = meter.stop();
    rows.push({
      variant,
      used,
      samples,
      inside,
      opsPerSec: t.opsPerSec,
      medianNs: t.median,
      p99Ns: t.p99,
      nsPerSample: t.median / Math.max(samples, 1),
      runs: t.samples.length,
      coresUsed: cpu.coresUsed,
      peakRssMiB: peakRssMiB(),
      samplesNs: t.samples,
    });
    progress(`${variant} 1e${Math.log10(samples)}: ${t.opsPerSec.toFixed(1)} ops/s, ${cpu.coresUsed.toFixed(2)} cores`);
  }
  return rows;
}
