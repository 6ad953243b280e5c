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
