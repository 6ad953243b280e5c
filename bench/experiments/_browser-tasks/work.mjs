// The browser-tasks experiment's task module (no imports: it runs as is on a Web Worker).
/** CPU-bound: how many primes are below `n` (trial division). */
export function primes(n) {
  let count = 0;
  for (let i = 2; i < n; i++) {
    let prime = true;
    for (let d = 2; d * d <= i; d++) {
      if (i % d === 0) {
        prime = false;
        break;
      }
    }
    if (prime) count++;
  }
  return count;
}
