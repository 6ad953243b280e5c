// nexus-tasks' ceiling row: a plain worker_threads worker running the same listener
// function, no pool, no offthread — what two threads of this machine do at best.
import { parentPort } from 'node:worker_threads';
import { burn } from './_nexus-work.mjs';

parentPort?.on('message', ({ n, k }) => {
  const out = [];
  for (let i = 0; i < k; i++) out.push(burn(n));
  parentPort?.postMessage(out);
});
