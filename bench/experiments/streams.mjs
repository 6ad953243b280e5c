// Streams off the loop (issue 14, the Nexus.js benchmarks): offthread's filters against
// Node's own ways of doing the same work on the event loop or on libuv's pool.
//
//   node bench/run.mjs streams [--quick] [--full] [--no-http] [--only SECTION,…]
//
// SECTION: transcode (and the per-chunk cost), nexus (one conversion piped to 4 files),
// gzip (K streams and the per-chunk cost),
// gzip-many (10,000 small gzips at once), csv, ndjson, http. `--only ndjson` runs just
// the NDJSON rows.
//
// 1. UTF-8 → UTF-16LE of a generated multilingual text (see _streams-data.mjs), one file
//    and 4 files at once, vs buffer.transcode in a Transform, TextDecoder streaming and
//    iconv-lite; every output checked byte-identical with `iconv -f UTF-8 -t UTF-16LE`;
//    the disk alone (copy, and copy writing every chunk twice: the output's volume).
//    Per-chunk offload cost at 64 KiB (wall and event-loop CPU per chunk).
// 1c. The Nexus.js example's own shape: one conversion piped to 4 files
//    (filters.source(…).pushFilter(transcode).pipe(4 sinks)) against 4 conversions, with
//    offthread and with iconv-lite.
// 2. gzip of K streams at once vs zlib.createGzip (libuv pool), peak RSS, loop delay.
// 3. CSV / NDJSON → batches vs csv-parse, papaparse and JSON.parse per line.
// 4. A hello-world TCP acceptor. The static page over a new connection per request (ab
//    -c 100 -n 10000 without keep-alive, 1,000 new connections per second) on node:http,
//    fastify and the service is the http-conn experiment's.
// Each variant runs in its own child process (its own peak RSS and loop delay):
// _streams-children.mjs.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { medianRun, runInChild, summarize } from '../lib/measure.mjs';
import { CHUNK, DISK_X2, startServer, tcpLoad } from './_streams-children.mjs';
import { writeCsv, writeText } from './_streams-data.mjs';

/** The module whose exports the children run (runInChild imports it in each child). */
const CHILDREN = new URL('./_streams-children.mjs', import.meta.url).href;

/** Runs of each transcoding method (the row is the median). */
const TRANSCODE_ROUNDS = 3;
/**
 * Runs of each gzip row (the row is the median): K=2 / K=1 is a ratio of two rows, and a
 * single run of each read 1.93× in one run of the experiment and 1.67× in the next (the
 * K=1 run 1.82 s, then 1.59 s).
 */
const GZIP_ROUNDS = 3;

/**
 * Runs of each Nexus-shape variant (the row is the median): at load 17–20 on 2 cores one
 * variant's three runs read 742, 1,890 and 1,989 ms.
 */
const NEXUS_ROUNDS = 5;

/**
 * Runs of each CSV / NDJSON parser (the row is the median): a parse of 100 MiB takes
 * 0.4 s, and single runs of the same build read 3.29× and 2.96× uDSV minutes apart.
 */
const PARSE_ROUNDS = 5;
/**
 * The second read size of the parse rows: a file stream reads one chunk at a time, each a
 * round trip through libuv's threads, and 100 MiB read 64 KiB at a time took 126–205 ms
 * here with nothing else to do (256 KiB: 58–71 ms) — a parser on the pool waits on that.
 * 256 KiB, not more: at 1 MiB the CSV ran faster still (176 against 230 ms in a probe)
 * but the loop stalled 4–11 ms ten times a run (a chunk's inference, GC of 1 MiB Buffers).
 */
const BIG_READ = 256 * 1024;
const BIG_READ_LABEL = '256 KiB reads';

/** Runs of the per-chunk child (each figure is the median of its runs). */
const OFFLOAD_ROUNDS = 3;

/**
 * Each numeric figure's median over `runs` (offloadChild's results); the offload
 * differences are taken from those medians, with every run's offload cost in
 * `offloadUsRuns`.
 * @param {Record<string, number | null>[]} runs
 */
function medianFigures(runs) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const key of Object.keys(runs[0] ?? {})) {
    const values = runs.map((r) => r[key]).filter((v) => typeof v === 'number');
    out[key] = values.length === runs.length ? summarize(values).p50 : null;
  }
  out.offloadUs = out.usPerChunk - out.usPerChunkNoOp;
  out.offloadOverCopyUs = out.usPerChunk - out.usPerChunkCopy;
  out.zlibOffloadUs = out.usPerChunkZlibStored - out.usPerChunkNoOp;
  out.offloadUsRuns = runs.map((r) => Number(r.usPerChunk) - Number(r.usPerChunkNoOp));
  return out;
}

const loopCols = [
  { key: 'loopP99Ms', label: 'loop p99', format: 'ms' },
  { key: 'loopMaxMs', label: 'loop max', format: 'ms' },
  { key: 'peakRssMiB', label: 'peak RSS', format: 'mib' },
  { key: 'coresUsed', label: 'cores used', format: 'sig3' },
];

const SECTIONS = ['transcode', 'nexus', 'gzip', 'gzip-many', 'csv', 'ndjson', 'http'];

/** The sections `--only a,b` (or `--only=a,b`) asks for; all when absent. */
function sections(argv) {
  const at = argv.findIndex((a) => a === '--only' || a.startsWith('--only='));
  if (at < 0) return new Set(argv.includes('--no-http') ? SECTIONS.filter((s) => s !== 'http') : SECTIONS);
  const list = (argv[at].includes('=') ? argv[at].split('=')[1] : (argv[at + 1] ?? '')).split(',');
  const unknown = list.filter((s) => !SECTIONS.includes(s));
  if (unknown.length > 0 || list.length === 0)
    throw new Error(`--only takes some of ${SECTIONS.join(', ')}; got ${unknown.join(', ') || 'nothing'}`);
  return new Set(list);
}

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const want = sections(ctx.argv);
  const dir = mkdtempSync(join(tmpdir(), 'offthread-streams-'));
  const textMb = ctx.quick ? 8 : 100;
  const gzipMb = ctx.quick ? 4 : 28;
  const gzipK = ctx.full ? [1, 2, 4, 8, 32] : ctx.quick ? [1, 2, 4] : [1, 2, 4, 8];
  const csvMb = ctx.quick ? 8 : ctx.full ? 500 : 100;
  const notes = [];
  const ratios = [];
  try {
    let offload;
    // 1. Transcoding.
    const transcodeRows = [];
    if (want.has('transcode')) {
      const text = join(dir, 'text.utf8');
      ctx.progress(`streams: writing ${textMb} MiB of text`);
      await writeText(text, textMb);
      const bytes = statSync(text).size;
      const reference = createHash('sha256')
        .update(execFileSync('iconv', ['-f', 'UTF-8', '-t', 'UTF-16LE', text], { maxBuffer: 1 << 30 }))
        .digest('hex');
      const methods = [
        'offthread',
        'buffer.transcode',
        'TextDecoder stream',
        'StringDecoder + Buffer.from',
        'iconv-lite',
        'copy (disk only)',
        DISK_X2,
      ];
      // Each method runs in TRANSCODE_ROUNDS rounds, the order rotated every round, and the
      // row is its median run: a run's system time depends on the page cache the run
      // before it left (the first run after the outputs of another was deleted paid up to
      // twice the kernel time), and a fixed order gave that cost to the same method.
      const rounds = ctx.quick ? 1 : TRANSCODE_ROUNDS;
      for (const files of [1, 4]) {
        const runs = new Map(methods.map((m) => [m, []]));
        for (let round = 0; round < rounds; round++) {
          for (const method of [
            ...methods.slice(round % methods.length),
            ...methods.slice(0, round % methods.length),
          ]) {
            ctx.progress(`streams: transcode ${method} × ${files} (round ${round + 1})`);
            runs.get(method).push((await runInChild(CHILDREN, 'transcodeChild', [method, text, dir, files])).value);
          }
        }
        for (const method of methods) {
          const all = runs.get(method);
          const v = medianRun(all);
          transcodeRows.push({
            method,
            files,
            wallMs: v.wallMs,
            wallEach: all.map((r) => r.wallMs),
            mbPerSec: (files * bytes) / 2 ** 20 / (v.wallMs / 1000),
            identical: method.startsWith('copy')
              ? '–'
              : all.every((r) => r.hashes.every((h) => h === reference))
                ? 'yes'
                : 'NO',
            loopP99Ms: v.loop.p99Ms,
            loopMaxMs: v.loop.maxMs,
            peakRssMiB: v.peakRssMiB,
            coresUsed: v.coresUsed,
          });
        }
      }
      const tr = (m, f) => transcodeRows.find((r) => r.method === m && r.files === f);
      const fastestLoop4 = Math.min(
        ...['buffer.transcode', 'TextDecoder stream', 'StringDecoder + Buffer.from'].map((m) => tr(m, 4).wallMs),
      );
      ratios.push(
        {
          label: '4 files: offthread / iconv-lite throughput',
          value: tr('iconv-lite', 4).wallMs / tr('offthread', 4).wallMs,
          target: 3,
        },
        {
          // No method can beat the disk at the output's volume: when this is below 3,
          // the ratio above is out of reach on this disk, whatever the conversion costs.
          label: "4 files: ceiling of that ratio, the disk alone at the output's volume / iconv-lite",
          value: tr('iconv-lite', 4).wallMs / tr(DISK_X2, 4).wallMs,
          target: 3,
        },
        {
          label: '4 files: offthread / fastest in-loop method throughput',
          value: fastestLoop4 / tr('offthread', 4).wallMs,
          target: 0.9,
        },
        {
          label: '4 files: offthread loop-delay p99',
          value: tr('offthread', 4).loopP99Ms,
          target: 5,
          op: '<=',
          unit: 'ms',
        },
      );
      notes.push(
        `Transcoding rows: each method ran ${rounds} times per file count, the order of methods rotated each round; a row is its median run, with every run's wall time. The kernel's share of a run (page-cache allocation and writeback for 200 MiB of output a file) depends on what the run before left behind, and moved one method's 4-file wall time by up to 1.5× between runs.`,
      );
    }

    // 1c. The Nexus shape: Nexus.js's example converts its input once and pipes the result
    // to 4 files; the rows above convert 4 times. Both, with offthread and iconv-lite.
    const nexusRows = [];
    if (want.has('nexus')) {
      const text = join(dir, 'nexus.utf8');
      ctx.progress(`streams: writing ${textMb} MiB of text (nexus)`);
      await writeText(text, textMb);
      const converted = execFileSync('iconv', ['-f', 'UTF-8', '-t', 'UTF-16LE', text], { maxBuffer: 1 << 30 });
      const reference = createHash('sha256').update(converted).digest('hex');
      const outBytes = converted.length;
      const variants = [
        { shape: 'one conversion → 4 files (Nexus shape)', method: 'offthread', child: 'fanOutChild', files: 4 },
        { shape: '4 conversions, one per file', method: 'offthread', child: 'transcodeChild', files: 4 },
        { shape: 'one conversion → 4 files (Nexus shape)', method: 'iconv-lite', child: 'fanOutChild', files: 4 },
        { shape: '4 conversions, one per file', method: 'iconv-lite', child: 'transcodeChild', files: 4 },
        { shape: 'one conversion → 1 file', method: 'offthread', child: 'fanOutChild', files: 1 },
      ];
      const rounds = ctx.quick ? 1 : NEXUS_ROUNDS;
      const runs = variants.map(() => []);
      for (let round = 0; round < rounds; round++) {
        for (let j = 0; j < variants.length; j++) {
          const i = (j + round) % variants.length;
          const v = variants[i];
          ctx.progress(`streams: nexus ${v.method}, ${v.shape} (round ${round + 1})`);
          runs[i].push((await runInChild(CHILDREN, v.child, [v.method, text, dir, v.files])).value);
        }
      }
      for (const [i, v] of variants.entries()) {
        const all = runs[i];
        const m = medianRun(all);
        nexusRows.push({
          method: v.method,
          shape: v.shape,
          files: v.files,
          wallMs: m.wallMs,
          wallEach: all.map((r) => r.wallMs),
          wallMinMs: Math.min(...all.map((r) => r.wallMs)),
          cpuMs: m.cpuMs,
          outMbPerSec: (v.files * outBytes) / 2 ** 20 / (m.wallMs / 1000),
          identical: all.every((r) => r.hashes.every((h) => h === reference)) ? 'yes' : 'NO',
          loopP99Ms: m.loop.p99Ms,
          loopMaxMs: m.loop.maxMs,
          peakRssMiB: m.peakRssMiB,
          coresUsed: m.coresUsed,
        });
      }
      const nx = (method, shape) => nexusRows.find((r) => r.method === method && r.shape.startsWith(shape));
      const fan = nx('offthread', 'one conversion → 4');
      ratios.push(
        {
          label: 'Nexus shape: offthread, 4 conversions / one conversion → 4 files (wall time)',
          value: nx('offthread', '4 conversions').wallMs / fan.wallMs,
        },
        {
          label: 'Nexus shape: offthread, 4 conversions / one conversion → 4 files (process CPU, all threads)',
          value: nx('offthread', '4 conversions').cpuMs / fan.cpuMs,
        },
        {
          label:
            'Nexus shape: iconv-lite, 4 conversions / offthread one conversion → 4 files (wall time); blog (seed 004, Nexus.js, 4 × 100 MB: Node 6.4 s / Nexus 1.8 s): 3.56',
          value: nx('iconv-lite', '4 conversions').wallMs / fan.wallMs,
        },
        {
          label: 'Nexus shape: iconv-lite one conversion → 4 files / offthread the same (wall time)',
          value: nx('iconv-lite', 'one conversion → 4').wallMs / fan.wallMs,
        },
        {
          label: 'Nexus shape: offthread one conversion → 4 files, loop-delay p99',
          value: fan.loopP99Ms,
          target: 5,
          op: '<=',
          unit: 'ms',
        },
        {
          label: `offthread one conversion of ${textMb} MiB → 1 file, wall; blog (seed 004, Nexus.js, one conversion of 100 MB): 0.569 s`,
          value: nx('offthread', 'one conversion → 1').wallMs / 1000,
          unit: 's',
        },
      );
      notes.push(
        `Nexus shape rows: the same ${textMb} MiB of generated text as the transcoding rows, read in 64 KiB chunks. "one conversion → N files" is filters.source(filters.fileSource(input)).pushFilter(filter).pipe(N × filters.fileSink(…)) and await resume() (docs/streams.md): the input is converted once and every sink gets every chunk; the filter is offthread's transcode on a nice-0 pool, or iconv-lite's decodeStream + encodeStream. "4 conversions" are the transcoding rows' method: 4 pipelines at once, each reading and converting the input. Every output file byte-identical to iconv's (checked). Each variant ran ${rounds === 1 ? 'once' : `${rounds} times`}, the order rotated each round; a row is its median run. MiB/s written counts every output file (${(outBytes / 2 ** 20).toFixed(1)} MiB each). Process CPU: user + system time of the child, every thread (the pool's, libuv's) included, in its median-wall run — the work a shape costs, which waiting for a core on a loaded machine does not change.`,
      );
    }

    // 1b. The per-chunk round trip (with --only transcode or gzip).
    if (want.has('transcode') || want.has('gzip')) {
      // OFFLOAD_ROUNDS children, each figure their median: one child's per-chunk figures
      // moved by up to 25 % between runs of the same hour (31.7 and 39.5 µs).
      const offloadRuns = [];
      for (let round = 0; round < (ctx.quick ? 1 : OFFLOAD_ROUNDS); round++) {
        ctx.progress(`streams: per-chunk round trip (round ${round + 1})`);
        offloadRuns.push((await runInChild(CHILDREN, 'offloadChild', [ctx.quick ? 2000 : 20000])).value);
      }
      offload = medianFigures(offloadRuns);
      ratios.push(
        {
          label:
            'per-chunk offload cost at 64 KiB (offthread latin1 → latin1 Transform − in-loop pass-through Transform)',
          value: offload.offloadUs,
          target: 10,
          op: '<=',
          unit: 'µs',
        },
        {
          label: 'per-chunk round trip at 64 KiB through the offthread Transform',
          value: offload.usPerChunk,
          unit: 'µs',
        },
        {
          label:
            'per-chunk: offthread latin1 → latin1 − in-loop copying Transform (the same fresh 64 KiB output, made in the loop)',
          value: offload.offloadOverCopyUs,
          unit: 'µs',
        },
        {
          label:
            "per-chunk offload cost at 64 KiB of Node's own off-loop Transform (zlib deflateRaw at level 0, stored blocks: a copy's work on libuv's pool − in-loop pass-through)",
          value: offload.zlibOffloadUs,
          unit: 'µs',
        },
        {
          label: "per-chunk offload cost: offthread latin1 → latin1 / Node's zlib at level 0 (same harness)",
          value: offload.offloadUs / offload.zlibOffloadUs,
        },
        {
          label: "gzip, event-loop CPU per 64 KiB chunk: offthread's filter / zlib.createGzip (libuv's pool)",
          value: offload.loopCpuUsPerChunkGzipOurs / offload.loopCpuUsPerChunkGzipZlib,
          target: 1,
          op: '<=',
        },
        {
          label:
            'event-loop CPU of one offloaded call of ≈ 80 µs, one at a time (the loop sleeps meanwhile): offthread pool (π)',
          value: offload.loopCpuUsPerWakeOurs,
          unit: 'µs',
        },
        {
          label: 'the same through Node’s own libuv pool (crypto.pbkdf2, 60 iterations)',
          value: offload.loopCpuUsPerWakeLibuv,
          unit: 'µs',
        },
      );
      const us = (k) =>
        `${offload[`usPerChunk${k}`].toFixed(1)} µs wall, ${offload[`loopCpuUsPerChunk${k}`]?.toFixed(1) ?? '?'} µs of event-loop CPU`;
      notes.push(
        `Per-chunk round trip at 64 KiB, one chunk in flight, one harness, each figure the median of ${offload.offloadUsRuns.length} runs of it in fresh processes (the offload cost of each run: ${offload.offloadUsRuns.map((/** @type {number} */ x) => x.toFixed(1)).join(' / ')} µs): in-loop pass-through Transform ${us('NoOp')}; in-loop copying Transform ${us('Copy')}; offthread latin1 → latin1 ${us('')}; offthread UTF-8 → UTF-16LE (ASCII) ${us('Utf16')}; Node's zlib deflateRaw at level 0 (stored blocks, on libuv's pool) ${us('ZlibStored')}; the pool's bare round trip (\`pool.echo\`) ${offload.usPerEcho.toFixed(1)} µs. The offload cost is the offthread pass-through's wall time minus the in-loop pass-through's: what moving the chunk to the pool and back adds to a stream. It holds a copy of the chunk into a fresh 64 KiB Buffer (the in-loop copying Transform's whole cost: the chunk must be copied, since a caller may reuse or transfer it while the job runs) and the bare round trip; the target of 10 µs is below the sum of those two here. Node's own off-loop Transform pays the same kind of cost in the same harness: zlib at level 0 does a copy's work on libuv's pool, and its offload cost is in the ratios above. Reading the caller's chunk from the pool's thread instead of copying it (as zlib does) gave no lower wall time a chunk here (ARCHITECTURE.md, stream filters).`,
        `gzip at 64 KiB chunks of text, written until write() asks to wait: offthread ${us('GzipOurs')}; zlib.createGzip ${us('GzipZlib')} (wall per chunk: the deflate's pace).`,
        `One offloaded call at a time, ≈ 80 µs of work and no data: offthread's pool (\`pi.estimate(20000)\`) ${offload.usPerWakeOurs.toFixed(1)} µs wall, ${offload.loopCpuUsPerWakeOurs?.toFixed(1) ?? '?'} µs of event-loop CPU; Node's libuv pool (\`crypto.pbkdf2\`, 60 iterations) ${offload.usPerWakeLibuv.toFixed(1)} µs wall, ${offload.loopCpuUsPerWakeLibuv?.toFixed(1) ?? '?'} µs. When the loop sleeps while the work runs, waking it costs this machine (a VM whose idle vCPU is halted) tens of µs of CPU per call, whichever pool does the work: no per-chunk figure for work long enough that the loop sleeps can go below it here. With the loop awake (\`pool.echo\`, the job done within µs) a round trip costs ${offload.usPerEcho.toFixed(1)} µs.`,
      );
    }

    // 2. gzip.
    const gzipRows = [];
    if (want.has('gzip')) {
      const gzIn = join(dir, 'gzip.in');
      await writeText(gzIn, gzipMb);
      const gzBytes = statSync(gzIn).size;
      const gzRef = createHash('sha256').update(readFileSync(gzIn)).digest('hex');
      // Rounds over every K, the two methods' order swapped each round.
      const gzMethods = ['offthread', 'zlib.createGzip'];
      const rounds = ctx.quick ? 1 : GZIP_ROUNDS;
      const runs = new Map(gzipK.flatMap((k) => gzMethods.map((m) => [`${m} ${k}`, []])));
      for (let round = 0; round < rounds; round++) {
        for (const k of gzipK) {
          for (const method of round % 2 ? [...gzMethods].reverse() : gzMethods) {
            ctx.progress(`streams: gzip ${method} K=${k} (round ${round + 1})`);
            runs.get(`${method} ${k}`).push((await runInChild(CHILDREN, 'gzipChild', [method, gzIn, k])).value);
          }
        }
      }
      for (const k of gzipK) {
        for (const method of gzMethods) {
          const all = runs.get(`${method} ${k}`);
          const v = medianRun(all);
          gzipRows.push({
            method,
            k,
            wallMs: v.wallMs,
            wallEach: all.map((r) => r.wallMs),
            mbPerSec: (k * gzBytes) / 2 ** 20 / (v.wallMs / 1000),
            ratio: v.outBytes / (k * gzBytes),
            gunzips: all.every((r) => r.roundTrip === gzRef) ? 'yes' : 'NO',
            loopP99Ms: v.loop.p99Ms,
            loopMaxMs: v.loop.maxMs,
            peakRssMiB: v.peakRssMiB,
            coresUsed: v.coresUsed,
          });
        }
      }
      notes.push(
        `gzip rows: every K and method ran ${rounds === 1 ? 'once' : `${rounds} times`}, rounds over all K in turn, the two methods' order swapped each round; a row is its median run, with every run's wall time.`,
      );
      const gz = (m, k) => gzipRows.find((r) => r.method === m && r.k === k);
      ratios.push({
        label: 'gzip K=2 / K=1 throughput (offthread)',
        value: gz('offthread', 2).mbPerSec / gz('offthread', 1).mbPerSec,
        target: 1.8,
      });
    }

    // 2b. Many small gzips at once: zlib allocates a deflate state per stream up front
    // (unbounded concurrency is its known failure); offthread holds small inputs back
    // and deflates each in one job, so at most a pool's worth of states exist.
    const manyRows = [];
    const many = { n: ctx.quick ? 2000 : 10000, bytes: 4096 };
    if (want.has('gzip-many')) {
      for (const method of ['offthread', 'zlib.createGzip']) {
        ctx.progress(`streams: ${many.n} gzips of ${many.bytes} B at once, ${method}`);
        const v = (await runInChild(CHILDREN, 'gzipManyChild', [method, many.n, many.bytes])).value;
        manyRows.push({
          method,
          streams: many.n,
          wallMs: v.wallMs,
          gunzips: v.gunzipped === many.n ? 'all' : `${v.gunzipped} of ${many.n}`,
          baseRssMiB: v.baseRssMiB,
          peakRssMiB: v.peakRssMiB,
          extraRssMiB: v.peakRssMiB - v.baseRssMiB,
          stallMs: v.stallMs,
          coresUsed: v.coresUsed,
        });
      }
    }

    // 3. CSV / NDJSON.
    const csv = join(dir, 'data.csv');
    const nd = join(dir, 'data.ndjson');
    const parseRows = [];
    const parsers = [];
    let expectedRows = 0;
    if (want.has('csv')) {
      ctx.progress(`streams: writing ${csvMb} MiB of CSV`);
      expectedRows = await writeCsv(csv, csvMb);
      parsers.push(
        ...[
          'offthread csv',
          'offthread csv, no schema (declared)',
          'offthread csv, no schema (inferred)',
          'uDSV typed',
          'csv-parse',
          'papaparse',
        ].map((m) => [m, m, csv, CHUNK]),
        ...['offthread csv, no schema (inferred)', 'uDSV typed'].map((m) => [
          `${m}, ${BIG_READ_LABEL}`,
          m,
          csv,
          BIG_READ,
        ]),
      );
    }
    if (want.has('ndjson')) {
      ctx.progress(`streams: writing ${csvMb} MiB of NDJSON`);
      await writeCsv(nd, csvMb, { ndjson: true });
      parsers.push(
        ...['offthread ndjson', 'JSON.parse per line'].map((m) => [m, m, nd, CHUNK]),
        ...['offthread ndjson', 'JSON.parse per line'].map((m) => [`${m}, ${BIG_READ_LABEL}`, m, nd, BIG_READ]),
      );
    }
    // Rounds, the order rotated each round; a row is its median run.
    const parseRounds = ctx.quick ? 1 : PARSE_ROUNDS;
    const parseRuns = new Map(parsers.map(([label]) => [label, []]));
    for (let round = 0; round < parseRounds; round++) {
      const k = round % parsers.length;
      for (const [label, method, file, readBytes] of [...parsers.slice(k), ...parsers.slice(0, k)]) {
        ctx.progress(`streams: parse ${label} (round ${round + 1})`);
        parseRuns.get(label).push((await runInChild(CHILDREN, 'parseChild', [method, file, readBytes])).value);
      }
    }
    for (const [method, , file] of parsers) {
      const v = medianRun(parseRuns.get(method));
      parseRows.push({
        method,
        mb: statSync(file).size / 2 ** 20,
        rows: v.rows,
        wallMs: v.wallMs,
        mbPerSec: statSync(file).size / 2 ** 20 / (v.wallMs / 1000),
        idSum: v.check,
        loopP99Ms: v.loop.p99Ms,
        loopMaxMs: v.loop.maxMs,
        peakRssMiB: v.peakRssMiB,
        coresUsed: v.coresUsed,
        runsWallMs: parseRuns
          .get(method)
          .map((r) => Math.round(r.wallMs))
          .join(' / '),
      });
    }
    const pr = (m) => parseRows.find((r) => r.method === m);
    const agree = (ms, ref) => ms.every((m) => pr(m).rows === pr(ref).rows && pr(m).idSum === pr(ref).idSum);
    if (want.has('csv')) {
      notes.push(
        `CSV: ${expectedRows} rows; offthread (every path), uDSV and papaparse saw the same rows and id sum as csv-parse: ${agree(['offthread csv', 'offthread csv, no schema (declared)', 'offthread csv, no schema (inferred)', 'uDSV typed', 'papaparse'], 'csv-parse') && pr('csv-parse').rows === expectedRows ? 'yes' : 'NO'}.`,
        "CSV paths: 'offthread csv' writes the .km route's batch (the schema format's message, columns given as an array; the id column read at its offset), 'no schema' emits RecordBatch objects (`batch.column('id')`), declared as `{ id: 'u32', … }` or inferred from the header; uDSV typed is its README's streaming parser (inferSchema on the first chunk, typedArrs, a reducer).",
        'Each run is a fresh process that loads its parser (and, for offthread, makes its pool: the addon loads then) before the clock starts.',
        `Reads: every parser reads the file with fs.createReadStream, ${CHUNK / 1024} KiB at a time (its default); rows marked "${BIG_READ_LABEL}" pass highWaterMark: ${BIG_READ} (docs/streams.md, Performance: the stream reads one chunk at a time, and a parser on the pool waits on each read).`,
      );
      ratios.push(
        {
          label: 'CSV: offthread / csv-parse throughput',
          value: pr('offthread csv').mbPerSec / pr('csv-parse').mbPerSec,
          target: 3,
        },
        {
          label: 'CSV: offthread loop-delay p99',
          value: pr('offthread csv').loopP99Ms,
          target: 5,
          op: '<=',
          unit: 'ms',
        },
        ...[CHUNK, BIG_READ].flatMap((readBytes) => {
          const at = (m) => (readBytes === CHUNK ? m : `${m}, ${BIG_READ_LABEL}`);
          const reads = `${readBytes / 1024} KiB reads`;
          const inferred = pr(at('offthread csv, no schema (inferred)'));
          return [
            {
              label: `CSV: offthread without a schema (inferred) / uDSV typed throughput, ${reads}`,
              value: inferred.mbPerSec / pr(at('uDSV typed')).mbPerSec,
              target: 3,
            },
            {
              label: `CSV: offthread without a schema (inferred) loop-delay p99, ${reads}`,
              value: inferred.loopP99Ms,
              target: 5,
              op: '<=',
              unit: 'ms',
            },
            {
              label: `CSV: offthread without a schema (inferred), cores busy (process CPU / wall), ${reads}`,
              value: inferred.coresUsed,
              target: 1.8,
              unit: 'cores',
            },
          ];
        }),
      );
    }
    if (want.has('ndjson')) {
      notes.push(
        `NDJSON: ${pr('JSON.parse per line').rows} rows; offthread agrees with JSON.parse: ${agree(['offthread ndjson'], 'JSON.parse per line') ? 'yes' : 'NO'}.`,
      );
      // Issue 32's acceptance: ≥ 3× JSON.parse per line.
      ratios.push(
        {
          label: `NDJSON: offthread / JSON.parse per line throughput, ${CHUNK / 1024} KiB reads`,
          value: pr('offthread ndjson').mbPerSec / pr('JSON.parse per line').mbPerSec,
          target: 3,
        },
        {
          label: `NDJSON: offthread / JSON.parse per line throughput, ${BIG_READ / 1024} KiB reads`,
          value:
            pr(`offthread ndjson, ${BIG_READ_LABEL}`).mbPerSec / pr(`JSON.parse per line, ${BIG_READ_LABEL}`).mbPerSec,
          target: 3,
        },
      );
    }

    // 4. Servers.
    const serverRows = [];
    if (want.has('http')) {
      const tcp = await startServer(18081);
      try {
        ctx.progress('streams: TCP acceptor');
        const t = await tcpLoad(18081, ctx.quick ? 2000 : 10000, 100);
        serverRows.push({
          tool: 'TCP hello world (own client, 100 at once)',
          reqPerSec: t.connsPerSec,
          failed: t.failed,
          p50Ms: t.p50Ms,
          p99Ms: t.p99Ms,
        });
        if (t.failed > 0) notes.push(`TCP acceptor: failed connections by code: ${JSON.stringify(t.codes)}.`);
      } finally {
        tcp.kill();
      }
      notes.push(
        'The static page over a new connection per request (ab -c 100 -n 10000 without keep-alive, an open-loop 1,000 connections/s run) on node:http, fastify and the service: `npm run bench -- http-conn` (bench/results/http-conn.md).',
      );
    }

    notes.push(
      `Text: ${textMb} MiB generated deterministically (_streams-data.mjs): a 4 MiB block of ~85 % ASCII words and markup and ~5 % multi-byte words (2-, 3- and 4-byte UTF-8: Latin-1, Greek, Cyrillic, CJK, Devanagari, Hangul, emoji, Gothic), repeated. enwik8 cannot be fetched here.`,
      `4 files = 4 independent conversions of the same input at once, each written to its own file ('copy (disk only)' is the same without conversion; '${DISK_X2}' writes every chunk twice, the output's volume: the disk's share).`,
      'Byte identity: sha256 of every output against `iconv -f UTF-8 -t UTF-16LE`.',
      'Loop delay sampled at 1 ms resolution in each child (an idle loop reads ≈1 ms).',
      "offthread rows use a pool with nice 0 (as libuv, which zlib uses; the default pool runs at nice 10), except CSV/NDJSON, whose rows use a pool with the defaults, as a user's filters do: the parsers they race run on the main thread, and the main thread feeds the pool.",
      'The machine has 2 cores shared with other jobs: compare rows of this run, not absolute figures.',
    );
    return {
      title: 'Streams off the loop: transcoding, gzip, CSV/NDJSON, servers',
      params: { sections: [...want], textMb, gzipMb, gzipK, csvMb, chunk: CHUNK, many },
      notes,
      tables: [
        {
          title: `UTF-8 → UTF-16LE, ${textMb} MiB per file`,
          columns: [
            { key: 'method', label: 'method' },
            { key: 'files', label: 'files', format: 'int' },
            { key: 'wallMs', label: 'wall (median run)', format: 'ms' },
            { key: 'wallEach', label: 'each run, ms', format: 'msEach' },
            { key: 'mbPerSec', label: 'MiB/s (input)', format: 'sig3' },
            { key: 'identical', label: 'identical to iconv' },
            ...loopCols,
          ],
          rows: transcodeRows,
        },
        {
          title: `Nexus shape: UTF-8 → UTF-16LE of ${textMb} MiB, one conversion piped to 4 files vs 4 conversions`,
          columns: [
            { key: 'method', label: 'filter' },
            { key: 'shape', label: 'shape' },
            { key: 'wallMs', label: 'wall (median run)', format: 'ms' },
            { key: 'wallEach', label: 'each run, ms', format: 'msEach' },
            { key: 'wallMinMs', label: 'fastest run', format: 'ms' },
            { key: 'cpuMs', label: 'process CPU (median run)', format: 'ms' },
            { key: 'outMbPerSec', label: 'MiB/s written', format: 'sig3' },
            { key: 'identical', label: '= iconv' },
            ...loopCols,
          ],
          rows: nexusRows,
        },
        {
          title: `gzip, K streams of ${gzipMb} MiB at once`,
          columns: [
            { key: 'method', label: 'method' },
            { key: 'k', label: 'K', format: 'int' },
            { key: 'wallMs', label: 'wall (median run)', format: 'ms' },
            { key: 'wallEach', label: 'each run, ms', format: 'msEach' },
            { key: 'mbPerSec', label: 'MiB/s (input)', format: 'sig3' },
            { key: 'ratio', label: 'size ratio', format: 'sig3' },
            { key: 'gunzips', label: 'gunzips to input' },
            ...loopCols,
          ],
          rows: gzipRows,
        },
        {
          title: `${many.n} gzip streams of ${many.bytes} B started at once`,
          columns: [
            { key: 'method', label: 'method' },
            { key: 'streams', label: 'streams', format: 'int' },
            { key: 'wallMs', label: 'wall', format: 'ms' },
            { key: 'gunzips', label: 'gunzip to inputs' },
            { key: 'baseRssMiB', label: 'RSS before', format: 'mib' },
            { key: 'peakRssMiB', label: 'peak RSS', format: 'mib' },
            { key: 'extraRssMiB', label: 'peak − before', format: 'mib' },
            { key: 'stallMs', label: 'longest loop stall', format: 'ms' },
            { key: 'coresUsed', label: 'cores used', format: 'sig3' },
          ],
          rows: manyRows,
        },
        {
          title: 'CSV / NDJSON → rows',
          columns: [
            { key: 'method', label: 'method' },
            { key: 'mb', label: 'MiB', format: 'sig3' },
            { key: 'rows', label: 'rows', format: 'int' },
            { key: 'wallMs', label: 'wall', format: 'ms' },
            { key: 'mbPerSec', label: 'MiB/s', format: 'sig3' },
            ...loopCols,
            { key: 'runsWallMs', label: 'each run, ms' },
          ],
          rows: parseRows,
        },
        {
          title: 'Servers (new connection per request)',
          columns: [
            { key: 'tool', label: 'load' },
            { key: 'reqPerSec', label: 'req/s', format: 'sig3' },
            { key: 'failed', label: 'failed', format: 'int' },
            { key: 'p50Ms', label: 'p50', format: 'ms' },
            { key: 'p99Ms', label: 'p99', format: 'ms' },
          ],
          rows: serverRows,
        },
      ].filter((t) => t.rows.length > 0),
      charts: [
        {
          title: 'UTF-8 → UTF-16LE throughput',
          subtitle: 'MiB/s of input; higher is better',
          x: { field: 'files', label: 'files at once' },
          y: { field: 'mbPerSec', label: 'MiB/s' },
          series: 'method',
          data: transcodeRows,
        },
        {
          suffix: 'gzip',
          title: 'gzip throughput by parallel streams',
          subtitle: 'MiB/s of input; higher is better',
          x: { field: 'k', label: 'streams at once (K)' },
          y: { field: 'mbPerSec', label: 'MiB/s' },
          series: 'method',
          data: gzipRows,
        },
      ].filter((c) => c.data.length > 0),
      ratios,
      raw: { transcodeRows, nexusRows, gzipRows, manyRows, parseRows, serverRows, offload },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
