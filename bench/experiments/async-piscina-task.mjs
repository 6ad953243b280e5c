// The trivial task in JS: π with 1 sample (the same work as the native rows).
import { createRequire } from 'node:module';

const { countInsideJsBitwise, stateAt } = createRequire(import.meta.url)('offthread/internal');

export default function task(seed) {
  return countInsideJsBitwise(stateAt((seed % 1000) + 1, 0), 1);
}
