// The `layout` experiment's measurements: each variant's `run(variant, n, reps, speed)`
// timed from JS in the native build (napi) and in the WASM build, in one process.
import { createRequire } from 'node:module';
import { progress, timeFn } from '../lib/measure.mjs';

const require = createRequire(import.meta.url);
const { nativeBinding, wasmKernels } = require('offthread/internal');

export const VARIANTS = ['native', 'fixed', 'stride', 'fixedSimd', 'soa', 'soaSimd', 'aop'];

export async function measure({ n, reps, quick }) {
  const native = nativeBinding();
  const w = wasmKernels().x;
  const builds = {
    native: (v, speed) => native.layoutRunSync(v, n, reps, speed),
    wasm: (v, speed) => w.layout_run(v, n, reps, speed),
  };
  const expected = builds.native(0, 3);
  const rows = [];
  for (const [build, fn] of Object.entries(builds)) {
    for (const [v, variant] of VARIANTS.entries()) {
      if (fn(v, 3) !== expected) throw new Error(`${build} ${variant}: wrong checksum`);
      // A speed that changes per call, so nothing can be hoisted out of the timing loop.
      let speed = 1;
      const call = () => {
        speed = (speed % 7) + 1;
        return fn(v, speed);
      };
      const t = await timeFn(call, { minTime: quick ? 200 : 800, minIterations: 10 });
      rows.push({ build, variant, medianNs: t.median, nsPerUpdate: t.median / (n * reps) });
      progress(`${build} ${variant}: ${(t.median / (n * reps)).toFixed(3)} ns/update`);
    }
  }
  return rows;
}

/**
 * Table 4 (run-to-run variation): `rounds` rounds; in each, every (build, variant) pair
 * once, in a new random order (a seeded shuffle), each timed by its median call over
 * `minTime` ms. Returns one row per pair and round.
 */
export async function measureRounds({ n, reps, rounds, minTime, seed }) {
  const native = nativeBinding();
  const w = wasmKernels().x;
  const builds = {
    native: (v, speed) => native.layoutRunSync(v, n, reps, speed),
    wasm: (v, speed) => w.layout_run(v, n, reps, speed),
  };
  const pairs = Object.keys(builds).flatMap((build) => VARIANTS.map((variant, v) => ({ build, variant, v })));
  let state = seed >>> 0 || 1;
  const random = () => {
    // xorshift32: a fixed seed gives the same orders on a re-run.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const rows = [];
  for (let round = 0; round < rounds; round++) {
    const order = [...pairs];
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (const [position, { build, variant, v }] of order.entries()) {
      let speed = 1;
      const fn = builds[build];
      const call = () => {
        speed = (speed % 7) + 1;
        return fn(v, speed);
      };
      const t = await timeFn(call, { minTime, minIterations: 5, warmup: 20 });
      rows.push({ round, position, build, variant, nsPerUpdate: t.median / (n * reps) });
    }
    progress(`round ${round + 1}/${rounds}`);
  }
  return rows;
}
