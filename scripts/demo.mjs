// `npm start` (until the HTTP service lands): a short π demo that prints each
// backend's result and speed, and shows the event loop staying free during async work.
import { backendInfo, pi } from 'offthread';
import { piVariants } from 'offthread/internal';

const samples = 1e7;
console.log(`offthread π demo: ${samples.toExponential()} samples, seed 1 (backend: ${backendInfo().active})\n`);
console.log('variant        inside      estimate   time (ms)   Msamples/s');

function row(variant, r, ms) {
  const rate = samples / ms / 1e3;
  console.log(
    `${variant.padEnd(14)} ${String(r.inside).padEnd(11)} ${r.estimate.toFixed(6).padEnd(10)} ${ms.toFixed(1).padStart(9)}   ${rate.toFixed(1).padStart(10)}`,
  );
}

// The paper's variants are research (offthread/internal); the product call is last.
for (const variant of piVariants.syncVariants) {
  const t0 = performance.now();
  const r = piVariants.estimateSync(samples, variant, { seed: 1 });
  row(variant, r, performance.now() - t0);
}
for (const variant of ['nativeAsync', 'nativeChunked', 'parallelAsync']) {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  const t0 = performance.now();
  const r = await piVariants.estimate(samples, variant, { seed: 1 });
  const ms = performance.now() - t0;
  clearInterval(timer);
  row(variant, r, ms);
  console.log(`${''.padEnd(14)} (the event loop ran ${ticks} timer ticks meanwhile)`);
}
const big = await pi.estimate(1e9, { seed: 1 });
console.log(`\npi.estimate(1e9) → ${big.estimate} via ${big.variant} (inside ${big.inside})`);
