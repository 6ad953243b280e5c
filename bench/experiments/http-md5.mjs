// Experiment `http-md5` (docs/experiments.md): sync vs async vs language, after "Node vs. JS".
// Every implementation of the MD5 loop (200,000 rounds per request) behind
// GET /md5/:impl of the service (services/http, its own process), at 1, 2 and 4
// concurrent users (autocannon connections, closed loop; the mixed row also at 3, as in
// the blog's table), plus ns/round in-process and the blog's model for the mixed row:
// response ≈ T + (N−1)·S·W. Then the blog's request timelines (one bar per request, 1/2/4
// users, a sync row and offloaded rows). The blog's "MD5-like" loop is experiment md5-like.
import { runInChild, timeFn } from '../lib/measure.mjs';
import { startServer } from './http-server.mjs';

const LOAD = new URL('./http-load.mjs', import.meta.url);
const ROUNDS = 200_000;
const USERS = [1, 2, 4];
/** The blog's mixed-request table has a 3-user row too. */
const MIXED_USERS = [1, 2, 3, 4];
const usersFor = (/** @type {string} */ impl) => (impl === 'mixed' ? MIXED_USERS : USERS);
/** Timeline rows: the loop on the event loop (blocking), on the pool, and the mixed row. */
const TIMELINE_IMPLS = ['native', 'native-async', 'mixed'];
const TIMELINE_LABELS = {
  native: 'native loop, sync (blocks the loop)',
  'native-async': 'native loop, async (pool)',
  mixed: 'mixed async/sync',
};
const TIMELINE_USERS = [1, 2, 4];
/** Rows in the blog's order, then the two Node answers. */
const ROWS = [
  ['js', '1. JS loop, JS MD5 (blueimp) — sync'],
  ['js-native', '2. JS loop, native MD5 per round — sync'],
  ['js-native-async', '3. JS loop, native MD5 per round — async'],
  ['native', '4. native loop — sync'],
  ['native-async', '5. native loop — async (pool)'],
  ['mixed', '6. mixed: async, sync, async, sync (50k each)'],
  ['crypto', "node:crypto createHash('md5') loop — sync"],
  ['piscina', 'piscina worker running row 1'],
];
const TEXT = 'hello';

/** ns per round of every implementation, in one process (a child of the runner). */
export async function nsPerRound(/** @type {{ minTime: number }} */ timing) {
  const { default: offthread } = await import('offthread');
  const { hash } = await import('node:crypto');
  const { md5Impls, md5Loop } = await import('../../services/http/src/kernels.mjs');
  if (typeof offthread.md5?.iterate !== 'function') throw new Error('offthread has no md5 kernel: merge main');
  const { Piscina } = await import('piscina');
  const piscina = new Piscina({
    filename: new URL('../../services/http/src/md5-worker.mjs', import.meta.url).href,
    minThreads: 1,
    maxThreads: 1,
  });
  const kernels = { md5: offthread.md5 };
  const ctx = { piscina: async () => piscina };
  const call = { pool: offthread.defaultPool() };
  const rows = [];
  try {
    for (const [impl, label] of ROWS) {
      const rounds = impl === 'js-native-async' ? 2_000 : 20_000;
      const t = await timeFn(() => md5Impls[impl].run(kernels, TEXT, rounds, call, ctx), timing);
      rows.push({ impl, label, rounds, nsPerRound: t.median / rounds });
    }
    if (typeof hash === 'function') {
      const t = await timeFn(() => md5Loop((/** @type {string} */ s) => hash('md5', s), TEXT, 20_000), timing);
      rows.push({
        impl: 'crypto.hash',
        label: "node:crypto one-shot hash('md5') loop (in-process only)",
        rounds: 20_000,
        nsPerRound: t.median / 20_000,
      });
    }
  } finally {
    await piscina.destroy();
  }
  return rows;
}

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const base = ctx.quick ? 3 : 15;
  const timing = { minTime: ctx.quick ? 200 : 1000, minIterations: 5 };

  ctx.progress('ns per round, in-process');
  const perRound = (await runInChild(import.meta.url, 'nsPerRound', [timing], { timeoutMs: 300_000 })).value;

  const server = await startServer({ mode: 'offload', env: { EXPERIMENT_ROUTES: '1' } });
  const http = [];
  /** @type {Record<string, unknown>[]} */
  const timeline = [];
  const perUser = ctx.quick ? 3 : 6;
  try {
    for (const [impl, label] of ROWS) {
      // --quick: the per-round async row at a tenth of the rounds (it costs a pool round trip per round).
      const rounds = ctx.quick && impl === 'js-native-async' ? ROUNDS / 10 : ROUNDS;
      const url = `${server.url}/md5/${impl}?text=${TEXT}&rounds=${rounds}`;
      const t0 = performance.now();
      const warm = await fetch(url);
      if (!warm.ok) throw new Error(`${impl}: ${warm.status} ${await warm.text()}`);
      await warm.text();
      // Expected single-request time: the larger of ns/round × rounds and the warm-up
      // request. When `users` requests would not fit in the duration, send a fixed number
      // instead (autocannon drops requests in flight when a timed run stops).
      const warmS = (performance.now() - t0) / 1000;
      const singleS = Math.max(warmS, (perRound.find((r) => r.impl === impl).nsPerRound * rounds) / 1e9);
      for (const users of usersFor(impl)) {
        const byAmount = 1.5 * singleS * users > base;
        const load = byAmount
          ? { amount: users * Math.max(1, Math.floor(base / (singleS * users))) }
          : { duration: base };
        ctx.progress(`${impl}: ${users} user(s), ${byAmount ? `${load.amount} requests` : `${base} s`}`);
        const { value: r, coresUsed } = await runInChild(
          LOAD,
          'autocannonLoad',
          [{ url, connections: users, ...load, timeout: 120 }],
          { timeoutMs: 300_000 },
        );
        http.push({
          impl,
          label,
          users,
          rounds,
          durationS: r.autocannon?.duration ?? r.durationS,
          requests: r.ok,
          errors: r.errors + r.non2xx,
          avgMs: r.latencyMs.mean,
          minMs: r.latencyMs.min,
          maxMs: r.latencyMs.max,
          stddevMs: r.latencyMs.stddev,
          reqPerSec: r.reqPerSec,
          generatorCores: coresUsed,
        });
      }
    }
    for (const impl of TIMELINE_IMPLS) {
      const label = TIMELINE_LABELS[/** @type {keyof TIMELINE_LABELS} */ (impl)];
      const url = `${server.url}/md5/${impl}?text=${TEXT}&rounds=${ROUNDS}`;
      for (const users of TIMELINE_USERS) {
        ctx.progress(`timeline ${impl}: ${users} user(s) × ${perUser} requests`);
        const { value } = await runInChild(LOAD, 'closedLoopTimeline', [{ url, users, perUser }], {
          timeoutMs: 300_000,
        });
        for (const r of value) timeline.push({ impl, label, users: `${users} user${users > 1 ? 's' : ''}`, ...r });
      }
    }
  } finally {
    await server.stop();
  }

  const ns = (/** @type {string} */ impl) => perRound.find((r) => r.impl === impl)?.nsPerRound ?? Number.NaN;
  const row = (/** @type {string} */ impl, /** @type {number} */ users) =>
    http.find((r) => r.impl === impl && r.users === users);
  // The blog's model for the mixed row: T (1 user) + (N−1)·S·W, S = one sync segment, W = 2 per request.
  const T = row('mixed', 1)?.avgMs ?? Number.NaN;
  const S = (ns('native') * (ROUNDS / 4)) / 1e6;
  const W = 2;
  const model = MIXED_USERS.map((n) => {
    const predicted = T + (n - 1) * S * W;
    const measured = row('mixed', n)?.avgMs ?? Number.NaN;
    return {
      users: n,
      T,
      S,
      W,
      predictedMs: predicted,
      measuredMs: measured,
      error: Math.abs(measured - predicted) / predicted,
    };
  });
  const worstModel = Math.max(...model.filter((m) => m.users > 1).map((m) => m.error));
  const scale2 = (row('native-async', 2)?.reqPerSec ?? 0) / (row('native-async', 1)?.reqPerSec ?? 1);

  return {
    title: 'http-md5: the MD5 loop (200,000 rounds) per request — sync vs async vs language',
    params: {
      rounds: ROUNDS,
      text: TEXT,
      users: USERS,
      mixedUsers: MIXED_USERS,
      durationS: base,
      timing,
      quick: ctx.quick,
      timeline: { impls: TIMELINE_IMPLS, users: TIMELINE_USERS, perUser },
    },
    notes: [
      'Server: services/http in its own process, offload mode (GET /md5/:impl picks the row; offthread pool and piscina: one thread per core); autocannon in another process, `connections` = users, closed loop.',
      `Each cell runs ${base} s; when 1.5 × (expected single-request time) × users exceeds that, it sends a fixed number of requests instead (a multiple of users), because autocannon does not count requests in flight when a timed run stops.` +
        (ctx.quick
          ? ` --quick: the per-round async row runs ${ROUNDS / 10} rounds per request (see the rounds column).`
          : ''),
      'Latency stats from each response in fractional ms (autocannon rounds to whole ms). Throughput = 2xx responses / autocannon duration.',
      `Mixed-row model (the blog's): response ≈ T + (N−1)·S·W with T the 1-user mean, S one sync segment (${ROUNDS / 4} native rounds, from ns/round in-process: ${S.toFixed(2)} ms) and W = ${W} sync segments per request.`,
      `Request timelines: for each of ${TIMELINE_IMPLS.join(', ')} (${ROUNDS.toLocaleString('en-US')} rounds) and ${TIMELINE_USERS.join('/')} users, each user sends ${perUser} requests one after another over its own keep-alive connection (http-load.mjs closedLoopTimeline); one bar per request from when it was sent to when its response ended, coloured by user, ms since the first request. A sync row serves one request at a time, so with N users the bars queue end to end; offloaded rows overlap.`,
      'ns/round in-process: tinybench (bench/lib timeFn) median per call / rounds; 20,000 rounds per call (per-round async: 2,000). blog (seed 002, 4 cores): JS 610 ms/req; native sync 78 ms; native async 80/82/91 ms at 1/2/4 users; per-round async 2,994 ms.',
    ],
    tables: [
      {
        title: 'HTTP, per implementation and users',
        columns: [
          { key: 'label', label: 'implementation' },
          { key: 'users', label: 'users', format: 'int' },
          { key: 'rounds', label: 'rounds', format: 'int' },
          { key: 'requests', label: 'requests', format: 'int' },
          { key: 'errors', label: 'errors', format: 'int' },
          { key: 'avgMs', label: 'avg ms', format: 'sig3' },
          { key: 'minMs', label: 'min ms', format: 'sig3' },
          { key: 'maxMs', label: 'max ms', format: 'sig3' },
          { key: 'stddevMs', label: 'stddev ms', format: 'sig3' },
          { key: 'reqPerSec', label: 'req/s', format: 'sig3' },
          { key: 'durationS', label: 's', format: 'sig3' },
        ],
        rows: http,
      },
      {
        title: 'ns per round, in-process',
        columns: [
          { key: 'label', label: 'implementation' },
          { key: 'nsPerRound', label: 'ns/round', format: 'sig3' },
          { key: 'rounds', label: 'rounds per call', format: 'int' },
        ],
        rows: perRound,
      },
      {
        title: 'Mixed row: the blog model vs measured',
        columns: [
          { key: 'users', label: 'users (N)', format: 'int' },
          { key: 'predictedMs', label: 'predicted ms', format: 'sig3' },
          { key: 'measuredMs', label: 'measured ms', format: 'sig3' },
          { key: 'error', label: 'error', format: 'percent' },
        ],
        rows: model,
      },
    ],
    charts: [
      {
        title: 'Throughput by concurrent users',
        subtitle: `${ROUNDS.toLocaleString('en-US')} MD5 rounds per request`,
        x: { field: 'users', label: 'concurrent users' },
        y: { field: 'reqPerSec', label: 'requests/s', log: true },
        series: 'impl',
        data: http,
      },
      {
        kind: 'timeline',
        suffix: 'timeline',
        title: 'Request timelines: one bar per request',
        subtitle: `${ROUNDS.toLocaleString('en-US')} MD5 rounds per request; each user sends ${perUser} requests back to back`,
        x: { field: 'startMs', label: 'ms since the first request' },
        x2: { field: 'endMs' },
        y: { field: 'seq', label: 'request' },
        series: 'user',
        facet: { row: 'label', column: 'users' },
        data: timeline,
      },
    ],
    ratios: [
      { label: 'native loop vs blueimp-md5 loop (ns/round)', value: ns('js') / ns('native'), target: 10 },
      { label: "native loop vs createHash('md5') loop (ns/round)", value: ns('crypto') / ns('native'), target: 3.5 },
      {
        label: "native loop vs one-shot crypto.hash('md5') loop (ns/round)",
        value: ns('crypto.hash') / ns('native'),
        target: 1.5,
      },
      { label: 'native async throughput, 2 users / 1 user', value: scale2, target: 1.8 },
      {
        label: 'mixed-row model, worst error at 2, 3 and 4 users',
        value: worstModel,
        target: 0.15,
        op: '<=',
        unit: '',
      },
    ],
    raw: { perRound, http, model, timeline },
  };
}
