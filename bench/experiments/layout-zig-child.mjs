// `layout-zig`'s measurements: Karmem's Zig layout code (bench/zig-layout/layout.zig, from
// the paper's Figures 20–29) as wasm32 in V8 and as a native shared library (koffi), and
// the Rust build's same variants (layout-child.mjs), in one process.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { progress, timeFn } from '../lib/measure.mjs';

const require = createRequire(import.meta.url);
export const VARIANTS = ['native', 'fixed', 'stride', 'fixedSimd', 'soa', 'soaSimd', 'aop'];

/** The Zig module's exports, from wasm (V8) or a shared library (koffi). */
async function load(kind, path) {
  if (kind === 'wasm') {
    const { instance } = await WebAssembly.instantiate(readFileSync(path), {});
    return instance.exports;
  }
  const koffi = require('koffi');
  const lib = koffi.load(path);
  return {
    init: lib.func('uint32_t init(uint32_t, uint32_t)'),
    checksum: lib.func('uint32_t checksum(uint32_t)'),
    run_reps: lib.func('void run_reps(uint32_t, uint32_t, uint32_t)'),
  };
}

export async function measure({ builds, n, reps, minTime }) {
  const rows = [];
  for (const { name, kind, path } of builds) {
    const x = await load(kind, path);
    if (x.init(n, 2) !== 0) throw new Error(`${name}: init failed`);
    // Every variant adds `speed` to every distance of its layout (0 AoS: native, fixed,
    // stride, fixed+SIMD; 1 SoA: soa, soaSimd; 2 AoP): the layout's sum grows by n × speed.
    for (let v = 0; v < VARIANTS.length; v++) {
      const layout = v < 4 ? 0 : v < 6 ? 1 : 2;
      const before = x.checksum(layout);
      x.run_reps(v, 1, 3);
      if (x.checksum(layout) !== (before + 3 * n) >>> 0) throw new Error(`${name} ${VARIANTS[v]}: wrong result`);
    }
    for (const [v, variant] of VARIANTS.entries()) {
      let speed = 1;
      const call = () => {
        speed = (speed % 7) + 1;
        x.run_reps(v, reps, speed);
      };
      const t = await timeFn(call, { minTime, minIterations: 10 });
      rows.push({ build: name, variant, nsPerUpdate: t.median / (n * reps) });
      progress(`${name} ${variant}: ${(t.median / (n * reps)).toFixed(3)} ns/update`);
    }
  }
  return rows;
}
