// Jobs that count themselves while they run (test/budget.test.mjs): `live[0]` is how
// many run now, `live[1]` the most that ever ran at once, `log` the order they started in.

/** Busy for `ms` of CPU, counted in `live` while it runs; returns `tag`. */
export function busy(live, ms, tag = 0, log = null) {
  const now = Atomics.add(live, 0, 1) + 1;
  for (let max = Atomics.load(live, 1); now > max; max = Atomics.load(live, 1)) {
    if (Atomics.compareExchange(live, 1, max, now) === max) break;
  }
  if (log) log[Atomics.add(log, 0, 1) + 1] = tag;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spin: a thread running work
  }
  Atomics.sub(live, 0, 1);
  return tag;
}
