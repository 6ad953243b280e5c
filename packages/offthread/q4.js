const { pi } = require('offthread');
for (let k = 0; k < 2; k++)
  for (const v of ['nativeBitwise', 'wasm', 'jsBitwise']) {
    const n = 3e7;
    const t = performance.now();
    const r = pi.estimateSync(n, { variant: v });
    const dt = performance.now() - t;
    console.log(v, r.inside, ((dt * 1e6) / n).toFixed(3), 'ns/sample');
  }
