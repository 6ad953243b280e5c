// Side-by-side of the facade path on two checkouts (issue 35 item 2): in one process per
// checkout, `pool.echo` and the π facade at 1 sample, K in flight, alternating rounds,
// so a row is read against `pool.echo` in the same process. Run it for each checkout in
// turn (the machine is shared: only ratios within one run mean anything). Each figure is
// the best round's tasks/s, then (main-thread / whole-process CPU µs per task; the first
// on Node ≥ 23 only): CPU per task moves less than tasks/s on a loaded machine.
//   node bench/experiments/async-facade-ab.mjs /work/wt-old /work/wt-new [rounds] [inFlight]
// A checkout is measured through its built packages/offthread/dist, with whichever π entry
// it has: `piVariants.estimate(1, 'parallelAsync')` (offthread/internal) or the old
// `pi.estimate(1, { variant: 'parallelAsync' })`.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { keepInFlight } from '../lib/measure.mjs';

const TOTAL = 300_000;
const CAP_MS = 1500;

async function child(checkout, inFlight) {
  const dist = path.join(checkout, 'packages/offthread/dist');
  const off = await import(pathToFileURL(path.join(dist, 'index.mjs')).href);
  let variants = null;
  try {
    variants = (await import(pathToFileURL(path.join(dist, 'internal.js')).href)).piVariants ?? null;
  } catch {}
  const pool = new off.Pool();
  const def = off.defaultPool ? off.defaultPool() : null;
  const rows = {
    echo: (i) => pool.echo(i),
    piVariant: variants
      ? () => variants.estimate(1, 'parallelAsync', { pool })
      : () => off.pi.estimate(1, { pool, variant: 'parallelAsync' }),
    piVariantDefault: variants
      ? () => variants.estimate(1, 'parallelAsync')
      : () => off.pi.estimate(1, { variant: 'parallelAsync' }),
  };
  void def;
  const out = {};
  const cpu = {};
  for (const k of Object.keys(rows)) await keepInFlight(rows[k], Math.min(inFlight, 100), 20_000, 500); // warm-up
  for (let round = 0; round < 3; round++) {
    for (const [name, fn] of Object.entries(rows)) {
      // Node ≥ 23: the main thread's own CPU per task, which the pool threads' share of a
      // loaded machine does not blur (the main thread is the bottleneck here).
      const c0 = process.threadCpuUsage?.();
      const p0 = process.cpuUsage();
      const r = await keepInFlight(fn, inFlight, TOTAL, CAP_MS);
      const c = c0 && process.threadCpuUsage(c0);
      const p = process.cpuUsage(p0);
      out[name] ??= [];
      cpu[name] ??= [];
      out[name].push(Math.round(r.tasksPerSec));
      cpu[name].push([c ? (c.user + c.system) / r.tasks : Number.NaN, (p.user + p.system) / r.tasks]);
    }
  }
  out.cpu = cpu;
  await pool.close();
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.exit(0);
}

function main(checkouts, rounds, inFlight) {
  const self = fileURLToPath(import.meta.url);
  const best = (xs) => Math.max(...xs);
  for (let r = 0; r < rounds; r++) {
    for (const c of checkouts) {
      const res = spawnSync(process.execPath, [self, '--child', c, String(inFlight)], { encoding: 'utf8' });
      if (res.status !== 0) throw new Error(`${c}: ${res.stderr}`);
      const { cpu, ...out } = JSON.parse(res.stdout.trim().split('\n').pop());
      const line = Object.entries(out)
        .map(([k, v]) => {
          // Lowest of the rounds: main thread's CPU µs per task / the whole process's.
          const low = (i) => Math.min(...cpu[k].map((x) => x[i])).toFixed(2);
          const us = ` (${low(0)}/${low(1)} µs)`;
          return `${k} ${(best(v) / 1000).toFixed(0)}k/s${us}`;
        })
        .join('  ');
      const ratio = (best(out.piVariant) / best(out.echo)).toFixed(2);
      console.log(`round ${r} ${path.basename(c).padEnd(16)} ×${inFlight}: ${line}  facade/echo ${ratio}`);
    }
  }
}

const argv = process.argv.slice(2);
if (argv[0] === '--child') await child(argv[1], Number(argv[2]));
else {
  const nums = argv.filter((a) => /^\d+$/.test(a)).map(Number);
  const dirs = argv.filter((a) => !/^\d+$/.test(a));
  main(dirs, nums[0] ?? 3, nums[1] ?? 1000);
}
