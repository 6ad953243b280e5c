// zstd and brotli streams (issue 32 item 5): offthread's filters against Node's own
// zlib streams (libuv's pool), both directions, on the streams experiment's text.
//
//   node bench/run.mjs compress [--quick] [--node 24]
//
// Each row is one stream of the whole text through `filters.*` or `zlib.create*`
// in a child process of its own (its own loop delay and peak RSS): MiB/s of
// uncompressed bytes, loop-delay p99, cores used. Decompression reads Node's output
// (zstd at its default level 3, brotli at quality 5), the common case of bytes made
// elsewhere; where Node has no zstd (before 22.15) the zstd rows use ours and say so.
// Every output is checked: a round trip must give the input's sha256.

import { createHash } from 'node:crypto';
import { createReadStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { startLoopDelay } from '../lib/loop-delay.mjs';
import { cpuMeter, medianRun, peakRssMiB, runInChild } from '../lib/measure.mjs';
import { CHUNK } from './_streams-children.mjs';
import { writeText } from './_streams-data.mjs';

const NODE_ZSTD = typeof zlib.createZstdCompress === 'function';
/** Brotli quality of every brotli row, ours and Node's (Node's default, 11, is ~1 MiB/s). */
const BROTLI_QUALITY = 5;

/** The streams a row runs: [format, direction, method] → a Transform factory. */
async function makeTransform(format, direction, method, pool) {
  if (method === 'offthread') {
    const { filters } = await import('offthread');
    if (format === 'zstd')
      return direction === 'compress' ? filters.zstdCompress({ pool }) : filters.zstdDecompress({ pool });
    return direction === 'compress'
      ? filters.brotliCompress({ pool, quality: BROTLI_QUALITY })
      : filters.brotliDecompress({ pool });
  }
  if (format === 'zstd') {
    const level = method === 'zlib level 1' ? 1 : 3;
    return direction === 'compress'
      ? zlib.createZstdCompress({ params: { [zlib.constants.ZSTD_c_compressionLevel]: level } })
      : zlib.createZstdDecompress();
  }
  return direction === 'compress'
    ? zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } })
    : zlib.createBrotliDecompress();
}

/** Child: one stream of `input` through the row's Transform; output hashed or kept. */
export async function compressChild(format, direction, method, input, keepAs) {
  const { Pool } = await import('offthread');
  // nice 0, like libuv's threads that zlib uses (the streams experiment's choice).
  const pool = method === 'offthread' ? new Pool({ nice: 0 }) : undefined;
  const transform = await makeTransform(format, direction, method, pool);
  const hash = createHash('sha256');
  const kept = [];
  let outBytes = 0;
  const loop = startLoopDelay({ resolutionMs: 1 });
  const meter = cpuMeter();
  meter.start();
  await pipeline(
    createReadStream(input, { highWaterMark: CHUNK }),
    transform,
    new Writable({
      write(c, _e, cb) {
        outBytes += c.length;
        if (keepAs) kept.push(c);
        else hash.update(c);
        cb();
      },
    }),
  );
  const cpu = meter.stop();
  const loopDelay = loop.stop();
  await pool?.close();
  let sha256 = null;
  if (keepAs) {
    // Compressed output: decompressed here (after the measured part) with Node's zlib
    // where it can, else kept for our decompressor's row.
    const packed = Buffer.concat(kept);
    writeFileSync(keepAs, packed);
    const back =
      format === 'brotli' ? zlib.brotliDecompressSync(packed) : NODE_ZSTD ? zlib.zstdDecompressSync(packed) : null;
    sha256 = back && createHash('sha256').update(back).digest('hex');
  } else sha256 = hash.digest('hex');
  return { ...cpu, loop: loopDelay, outBytes, sha256, peakRssMiB: peakRssMiB() };
}

/** @param {import('../run.mjs').ExperimentContext} ctx */
export async function run(ctx) {
  const dir = mkdtempSync(join(tmpdir(), 'offthread-compress-'));
  const textMb = ctx.quick ? 8 : 100;
  const rounds = ctx.quick ? 1 : 3;
  const notes = [];
  const rows = [];
  try {
    const text = join(dir, 'text.utf8');
    ctx.progress(`compress: writing ${textMb} MiB of text`);
    await writeText(text, textMb);
    const bytes = statSync(text).size;
    const want = createHash('sha256').update(readFileSync(text)).digest('hex');
    const mib = bytes / (1 << 20);

    const zstdNode = ['zlib level 1', 'zlib level 3'];
    const plan = [
      ['zstd', 'compress', ['offthread', ...(NODE_ZSTD ? zstdNode : [])]],
      ['brotli', 'compress', ['offthread', 'zlib']],
      ['zstd', 'decompress', ['offthread', ...(NODE_ZSTD ? ['zlib'] : [])]],
      ['brotli', 'decompress', ['offthread', 'zlib']],
    ];
    // Decompression inputs: Node's output (zstd level 3, brotli at BROTLI_QUALITY),
    // else (no Node zstd) ours.
    const packedOf = { zstd: join(dir, 'text.zst'), brotli: join(dir, 'text.br') };
    for (const [format, direction, methods] of plan) {
      const runs = new Map(methods.map((m) => [m, []]));
      for (let round = 0; round < rounds; round++) {
        for (const method of [...methods.slice(round % methods.length), ...methods.slice(0, round % methods.length)]) {
          ctx.progress(`compress: ${format} ${direction} ${method} (round ${round + 1})`);
          const compressing = direction === 'compress';
          const source = compressing ? text : packedOf[format];
          // The compressed file the decompress rows read: Node's default (level 3 / q5),
          // or ours where Node has no zstd.
          const keeper =
            compressing &&
            round === 0 &&
            ((format === 'zstd' && method === (NODE_ZSTD ? 'zlib level 3' : 'offthread')) ||
              (format === 'brotli' && method === 'zlib'));
          const keepAs = compressing ? (keeper ? packedOf[format] : join(dir, 'scratch')) : null;
          const r = (await runInChild(import.meta.url, 'compressChild', [format, direction, method, source, keepAs]))
            .value;
          runs.get(method).push(r);
        }
      }
      for (const method of methods) {
        const all = runs.get(method);
        const v = medianRun(all);
        rows.push({
          format,
          direction,
          method,
          wallMs: v.wallMs,
          wallEach: all.map((r) => r.wallMs),
          mbPerSec: mib / (v.wallMs / 1000),
          ratio: (direction === 'compress' ? v.outBytes : statSync(packedOf[format]).size) / bytes,
          roundTrip: all.every((r) => r.sha256 === null) ? 'n/a (no Node zstd)' : all.every((r) => r.sha256 === want),
          loopP99Ms: v.loop.p99Ms,
          loopMaxMs: v.loop.maxMs,
          peakRssMiB: v.peakRssMiB,
          coresUsed: v.coresUsed,
        });
      }
    }
    const row = (format, direction, method) =>
      rows.find((r) => r.format === format && r.direction === direction && r.method === method);
    const ratios = [];
    for (const [format, direction, node] of [
      ['zstd', 'compress', 'zlib level 1'],
      ['zstd', 'compress', 'zlib level 3'],
      ['zstd', 'decompress', 'zlib'],
      ['brotli', 'compress', 'zlib'],
      ['brotli', 'decompress', 'zlib'],
    ]) {
      const ours = row(format, direction, 'offthread');
      const theirs = row(format, direction, node);
      if (!ours || !theirs) continue;
      ratios.push({
        label: `${format} ${direction}: offthread / ${node} throughput`,
        value: ours.mbPerSec / theirs.mbPerSec,
      });
    }
    for (const r of rows.filter((r) => r.method === 'offthread'))
      ratios.push({ label: `${r.format} ${r.direction}: offthread loop-delay p99`, value: r.loopP99Ms, unit: 'ms' });
    notes.push(
      `Text: ${textMb} MiB from the streams experiment's generator (_streams-data.mjs: a 4 MiB block of mostly ASCII words and markup with multi-byte words, repeated), read in ${CHUNK / 1024} KiB chunks.`,
      'MiB/s of uncompressed bytes (input when compressing, output when decompressing); each row the median of its runs, the order rotated each round.',
      'size ratio: compressed / uncompressed bytes (decompress rows: of the file they read).',
      `brotli at quality ${BROTLI_QUALITY} on both sides (Node's default 11 runs at ~1 MiB/s), window 22 (both defaults).`,
      "offthread's zstd has one level (ruzstd's fastest, about zstd -1, 128 KiB window, a frame per MiB): compare it with zlib level 1; level 3 is Node's default.",
      NODE_ZSTD
        ? "Decompress rows read Node's zstd level-3 and brotli q5 output; round trips decompress our output with Node's zlib."
        : `Node ${process.version} has no zlib zstd: zstd rows are ours only, the decompress row reads our own output.`,
      'Loop delay sampled at 1 ms resolution in each child (an idle loop reads ≈1 ms). The machine has 2 cores shared with other jobs: compare rows of this run.',
    );
    return {
      title: 'zstd and brotli streams: offthread filters vs Node zlib',
      params: { textMb, rounds, chunk: CHUNK, brotliQuality: BROTLI_QUALITY, nodeZstd: NODE_ZSTD },
      notes,
      tables: [
        {
          title: `${textMb} MiB of text, one stream`,
          columns: [
            { key: 'format', label: 'format' },
            { key: 'direction', label: 'direction' },
            { key: 'method', label: 'method' },
            { key: 'wallMs', label: 'wall (median run)', format: 'ms' },
            { key: 'wallEach', label: 'each run, ms', format: 'msEach' },
            { key: 'mbPerSec', label: 'MiB/s', format: 'sig3' },
            { key: 'ratio', label: 'size ratio', format: 'sig3' },
            { key: 'roundTrip', label: 'round trip' },
            { key: 'loopP99Ms', label: 'loop p99', format: 'ms' },
            { key: 'loopMaxMs', label: 'loop max', format: 'ms' },
            { key: 'peakRssMiB', label: 'peak RSS', format: 'mib' },
            { key: 'coresUsed', label: 'cores used', format: 'sig3' },
          ],
          rows,
        },
      ],
      charts: [],
      ratios,
      raw: { rows },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
