// The streams experiment's child processes (bench/experiments/streams.mjs starts each with
// runInChild, so every variant has its own peak RSS and loop delay): transcoding, gzip,
// many small gzips, the per-chunk round trip, CSV/NDJSON parsing, a TCP acceptor.
import { transcode } from 'node:buffer';
import { spawn } from 'node:child_process';
import { createHash, pbkdf2 as pbkdf2Callback } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream, readFileSync, rmSync } from 'node:fs';
import { connect, createServer as createTcpServer } from 'node:net';
import { join } from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { startLoopDelay } from '../lib/loop-delay.mjs';
import { cpuMeter, peakRssMiB, progress } from '../lib/measure.mjs';
import { CSV_COLUMNS, smallTexts } from './_streams-data.mjs';

export const CHUNK = 64 * 1024;

/** Where a UTF-8 sequence the chunk may not finish starts (the Rust filter's rule, in JS). */
function utf8Boundary(b) {
  const n = b.length;
  for (let back = 1; back <= Math.min(3, n); back++) {
    const lead = b[n - back];
    if ((lead & 0xc0) !== 0x80) {
      const needs = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
      return needs > back ? n - back : n;
    }
  }
  return n;
}

/**
 * The disk's share at the conversion's write volume: UTF-16LE output is about twice the
 * UTF-8 input, so this row reads the input and writes every chunk twice.
 */
export const DISK_X2 = 'copy ×2 (disk only, output volume)';
const writeTwice = () =>
  new Transform({
    transform(chunk, _e, cb) {
      this.push(chunk);
      cb(null, chunk);
    },
  });

/** The in-loop transcoders: each a Transform factory. */
const LOOP_TRANSCODERS = {
  'buffer.transcode': () => {
    let carry = Buffer.alloc(0);
    return new Transform({
      transform(chunk, _e, cb) {
        const all = carry.length ? Buffer.concat([carry, chunk]) : chunk;
        const at = utf8Boundary(all);
        carry = Buffer.from(all.subarray(at));
        cb(null, transcode(all.subarray(0, at), 'utf8', 'utf16le'));
      },
      flush(cb) {
        cb(null, carry.length ? transcode(carry, 'utf8', 'utf16le') : undefined);
      },
    });
  },
  'TextDecoder stream': () => {
    const decoder = new TextDecoder('utf-8');
    return new Transform({
      transform(chunk, _e, cb) {
        cb(null, Buffer.from(decoder.decode(chunk, { stream: true }), 'utf16le'));
      },
      flush(cb) {
        cb(null, Buffer.from(decoder.decode(), 'utf16le'));
      },
    });
  },
  'StringDecoder + Buffer.from': () => {
    const decoder = new StringDecoder('utf8');
    return new Transform({
      transform(chunk, _e, cb) {
        cb(null, Buffer.from(decoder.write(chunk), 'utf16le'));
      },
      flush(cb) {
        cb(null, Buffer.from(decoder.end(), 'utf16le'));
      },
    });
  },
};

/**
 * The pool offthread's rows run on: nice 0, like libuv's threads that zlib uses (the
 * default pool's nice-10 workers lose every tie to the other processes on a shared
 * machine; the HTTP service makes the same choice, POOL_NICE=0).
 */
async function benchPool() {
  const { Pool } = await import('offthread');
  return new Pool({ nice: 0 });
}

/** Child: `files` conversions of `input` at once, each into its own output file. */
export async function transcodeChild(method, input, outDir, files) {
  const { filters } = await import('offthread');
  const iconv = method === 'iconv-lite' ? (await import('iconv-lite')).default : null;
  const pool = await benchPool();
  const loop = startLoopDelay({ resolutionMs: 1 });
  const meter = cpuMeter();
  meter.start();
  const outputs = Array.from({ length: files }, (_, i) => join(outDir, `${method.replace(/\W+/g, '_')}-${i}.utf16`));
  await Promise.all(
    outputs.map((out) => {
      const src = createReadStream(input, { highWaterMark: CHUNK });
      const sink = createWriteStream(out);
      if (method === 'offthread') return pipeline(src, filters.transcode('utf8', 'utf16le', { pool }), sink);
      if (method === 'copy (disk only)') return pipeline(src, sink);
      if (method === DISK_X2) return pipeline(src, writeTwice(), sink);
      if (iconv) return pipeline(src, iconv.decodeStream('utf8'), iconv.encodeStream('utf16le'), sink);
      return pipeline(src, LOOP_TRANSCODERS[method](), sink);
    }),
  );
  const cpu = meter.stop();
  const hashes = outputs.map((o) => createHash('sha256').update(readFileSync(o)).digest('hex'));
  for (const o of outputs) rmSync(o);
  return { ...cpu, loop: loop.stop(), hashes, peakRssMiB: peakRssMiB() };
}

/**
 * Child: one conversion of `input` piped to `files` output files — the Nexus.js shape,
 * `filters.source(…).pushFilter(…).pipe(sink, sink, …)` — with offthread's transcode
 * filter or iconv-lite's two streams as the filter.
 */
export async function fanOutChild(method, input, outDir, files) {
  const { filters } = await import('offthread');
  const iconv = method === 'iconv-lite' ? (await import('iconv-lite')).default : null;
  const pool = iconv ? null : await benchPool();
  const loop = startLoopDelay({ resolutionMs: 1 });
  const meter = cpuMeter();
  meter.start();
  const outputs = Array.from({ length: files }, (_, i) => join(outDir, `fanout-${method}-${i}.utf16`));
  const src = filters.source(filters.fileSource(input, { highWaterMark: CHUNK }));
  if (iconv) src.pushFilter(iconv.decodeStream('utf8')).pushFilter(iconv.encodeStream('utf16le'));
  else src.pushFilter(filters.transcode('utf8', 'utf16le', { pool }));
  src.pipe(...outputs.map((o) => filters.fileSink(o)));
  await src.resume();
  const cpu = meter.stop();
  await pool?.close();
  const hashes = outputs.map((o) => createHash('sha256').update(readFileSync(o)).digest('hex'));
  for (const o of outputs) rmSync(o);
  return { ...cpu, loop: loop.stop(), hashes, peakRssMiB: peakRssMiB() };
}

/** Child: K gzip streams of `input` at once; the bytes are discarded after counting. */
export async function gzipChild(method, input, k) {
  const { filters } = await import('offthread');
  const pool = await benchPool();
  const loop = startLoopDelay({ resolutionMs: 1 });
  const meter = cpuMeter();
  meter.start();
  const firstOut = [];
  let outBytes = 0;
  await Promise.all(
    Array.from({ length: k }, (_, i) =>
      pipeline(
        createReadStream(input, { highWaterMark: CHUNK }),
        method === 'offthread' ? filters.gzip({ pool }) : zlib.createGzip(),
        new Writable({
          write(c, _e, cb) {
            outBytes += c.length;
            if (i === 0) firstOut.push(c);
            cb();
          },
        }),
      ),
    ),
  );
  const cpu = meter.stop();
  const roundTrip = createHash('sha256')
    .update(zlib.gunzipSync(Buffer.concat(firstOut)))
    .digest('hex');
  return { ...cpu, loop: loop.stop(), outBytes, roundTrip, peakRssMiB: peakRssMiB() };
}

/**
 * Child: `n` gzip streams of `bytes`-byte inputs started at once (each written and
 * ended before any output is read), the way a server answering `n` requests at once
 * would. Peak RSS above the inputs' baseline; every output must gunzip to its input.
 */
export async function gzipManyChild(method, n, bytes) {
  const { filters } = await import('offthread');
  const pool = method === 'offthread' ? await benchPool() : null;
  const inputs = smallTexts(n, bytes);
  const baseRssMiB = process.memoryUsage.rss() / 2 ** 20;
  // The longest stall of the loop, from a 1 ms interval: here the loop may not reach its
  // timers phase at all for seconds, and monitorEventLoopDelay then records no sample.
  let last = performance.now();
  let stallMs = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 1);
  const meter = cpuMeter();
  meter.start();
  const outputs = await Promise.all(
    inputs.map(async (input) => {
      const z = method === 'offthread' ? filters.gzip({ pool }) : zlib.createGzip();
      const chunks = [];
      z.on('data', (c) => chunks.push(c));
      z.end(input);
      await once(z, 'end');
      return Buffer.concat(chunks);
    }),
  );
  const cpu = meter.stop();
  clearInterval(tick);
  stallMs = Math.max(stallMs, performance.now() - last);
  const peak = peakRssMiB();
  let gunzipped = 0;
  for (let i = 0; i < n; i++) if (zlib.gunzipSync(outputs[i]).equals(inputs[i])) gunzipped++;
  return { ...cpu, stallMs, gunzipped, baseRssMiB, peakRssMiB: peak };
}

/** CPU time of the calling thread in ns (Linux: /proc/thread-self/schedstat), else null. */
function threadCpuNs() {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}

/**
 * Child: per-chunk cost of one round trip, one chunk in flight, all through the same
 * harness (write, wait for the callback or 'drain', a sink that takes every chunk):
 * Transforms that run in the loop (a pass-through doing nothing, one copying the chunk:
 * latin1 → latin1's work), offthread's filters (latin1 → latin1, UTF-8 → UTF-16LE
 * on ASCII) and Node's own off-loop Transform doing a copy's work (zlib's raw deflate at
 * level 0 — stored blocks — on libuv's pool, its output buffer large enough for one pass
 * per chunk). Wall time and the event-loop thread's CPU time per chunk; the offload cost
 * is a Transform's wall time minus the in-loop pass-through's (the stream's own cost is
 * not the offload's).
 */
export async function offloadChild(chunks) {
  const { filters } = await import('offthread');
  const pool = await benchPool();
  const result = {};
  /** Times `run()` (n rounds of something): wall and event-loop CPU per round, as `usPer<key>` and `loopCpuUsPer<key>`. */
  const timed = async (key, n, run) => {
    const cpu0 = threadCpuNs();
    const t0 = performance.now();
    await run();
    result[`usPer${key}`] = ((performance.now() - t0) * 1000) / n;
    const cpu1 = threadCpuNs();
    result[`loopCpuUsPer${key}`] = cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / 1000 / n;
  };
  /**
   * Pipes `t` into a sink taking every chunk, warms it with `warm` chunks, then times
   * `n` chunks sent by `send(t, count)`: wall and event-loop CPU per chunk, as
   * `usPerChunk<key>` and `loopCpuUsPerChunk<key>`.
   */
  const perChunk = async (key, t, send, warm, n) => {
    const out = new Writable({ write: (_c, _e, cb) => cb(), highWaterMark: 1 });
    t.pipe(out);
    await send(t, warm);
    await timed(`Chunk${key}`, n, () => send(t, n));
    t.end();
    await once(out, 'finish');
  };
  const repeat = async (call, n) => {
    for (let i = 0; i < n; i++) await call();
  };
  // One chunk in flight: each write waits for its callback (or 'drain').
  const ascii = Buffer.alloc(CHUNK, 0x61);
  const oneAtATime = async (t, n) => {
    for (let i = 0; i < n; i++) await new Promise((resolve) => (t.write(ascii) ? resolve() : t.once('drain', resolve)));
  };
  const transforms = {
    NoOp: () => new Transform({ transform: (c, _e, cb) => cb(null, c) }),
    Copy: () =>
      new Transform({
        transform(c, _e, cb) {
          const out = Buffer.allocUnsafeSlow(c.length);
          c.copy(out);
          cb(null, out);
        },
      }),
    '': () => filters.transcode('latin1', 'latin1', { inFlight: 1, pool }),
    Utf16: () => filters.transcode('utf8', 'utf16le', { inFlight: 1, pool }),
    // 128 KiB of output room: zlib's default 16 KiB would take 4 trips to the pool a chunk.
    ZlibStored: () => zlib.createDeflateRaw({ level: 0, chunkSize: 128 * 1024 }),
  };
  for (const [key, make] of Object.entries(transforms)) await perChunk(key, make(), oneAtATime, 500, chunks);
  // gzip, chunks written as a producer does (until write() says wait, then 'drain'):
  // the event loop's CPU per 64 KiB chunk, offthread's filter against zlib.createGzip
  // (which offloads to libuv's pool). Text, so the deflate is the usual kind of work.
  const text = Buffer.from('Lorem ipsum dolor sit amet, ünïcödé, 東京, 🙂 — consectetur. '.repeat(2000)).subarray(
    0,
    CHUNK,
  );
  const asProducer = async (t, n) => {
    for (let i = 0; i < n; i++) if (!t.write(text)) await once(t, 'drain');
  };
  const gzips = { GzipOurs: () => filters.gzip({ pool }), GzipZlib: () => zlib.createGzip() };
  const gzChunks = Math.max(200, Math.round(chunks / 10));
  for (const [key, make] of Object.entries(gzips)) await perChunk(key, make(), asProducer, 50, gzChunks);
  // What one offloaded call costs the event loop when the loop sleeps while the work runs
  // (≈ 80 µs of work, one call at a time, no data): offthread's pool (π) against Node's own
  // libuv pool (crypto.pbkdf2), the same harness. The floor of any per-chunk figure here.
  const { pi } = await import('offthread');
  const pbkdf2 = promisify(pbkdf2Callback);
  const lone = {
    WakeOurs: () => pi.estimate(20_000, { pool }),
    WakeLibuv: () => pbkdf2('password', 'salt', 60, 32, 'sha256'),
  };
  for (const [key, call] of Object.entries(lone)) {
    const n = Math.max(500, Math.round(chunks / 5));
    await repeat(call, 200);
    await timed(key, n, () => repeat(call, n));
  }
  // The pool's bare round trip (a job returning a number), for scale.
  const echo = () => pool.echo(1);
  await repeat(echo, 500);
  await timed('Echo', chunks, () => repeat(echo, chunks));
  return result;
}

/** Child: parse a CSV or NDJSON file read `readBytes` at a time, counting rows. */
export async function parseChild(method, input, readBytes = CHUNK) {
  // Every library (and our pool, whose first use loads the addon: ≈ 7 ms) is loaded
  // before the clock starts: the rows time parsing, not a process's one-time start.
  const { filters, Pool } = await import('offthread');
  // A pool with the defaults, as the default pool a user's filters get: nice 10, so the
  // loop's thread wins a core when it wakes, and feeds the pool sooner (docs/streams.md).
  const pool = method.startsWith('offthread') ? new Pool() : null;
  const udsv = method === 'uDSV typed' ? await import('udsv') : null;
  const csvParse = method === 'csv-parse' ? (await import('csv-parse')).parse : null;
  const Papa = method === 'papaparse' ? (await import('papaparse')).default : null;
  const readline = method === 'JSON.parse per line' ? await import('node:readline') : null;
  const loop = startLoopDelay({ resolutionMs: 1 });
  const meter = cpuMeter();
  meter.start();
  let rows = 0;
  let check = 0; // sum of ids: the parsers must agree
  const src = () => createReadStream(input, { highWaterMark: readBytes });
  const count = (objectMode, each) =>
    new Writable({
      objectMode,
      write(x, _e, cb) {
        each(x);
        cb();
      },
    });
  if (method === 'offthread csv' || method === 'offthread ndjson') {
    const f =
      method === 'offthread csv'
        ? filters.csv({ columns: CSV_COLUMNS, pool })
        : filters.ndjson({ columns: CSV_COLUMNS, pool });
    await pipeline(
      src(),
      f,
      count(true, (batch) => {
        // Read the id column in place: root struct, rows at +4, SoA header → column table.
        const view = new DataView(batch.buffer, batch.byteOffset, batch.byteLength);
        const soa = view.getUint32(4, true);
        const n = view.getUint32(soa, true);
        const table = view.getUint32(soa + 12, true);
        const idCol = view.getUint32(table + 64, true) * 64; // column 0's block index
        const ids = new Uint32Array(batch.buffer, batch.byteOffset + idCol, n);
        for (let i = 0; i < n; i++) check += ids[i];
        rows += n;
      }),
    );
  } else if (method.startsWith('offthread csv, no schema')) {
    // The schema-less path: RecordBatch objects, the id column read by name (a typed
    // array over the batch). Declared: the same types as CSV_COLUMNS; inferred: from
    // the header and the first rows (id is then f64).
    const declared = Object.fromEntries(CSV_COLUMNS.map((c) => [c.name, c.type]));
    const f = method.endsWith('(inferred)') ? filters.csv({ pool }) : filters.csv({ columns: declared, pool });
    await pipeline(
      src(),
      f,
      count(true, (batch) => {
        const ids = batch.column('id');
        for (let i = 0; i < ids.length; i++) check += ids[i];
        rows += batch.length;
      }),
    );
  } else if (method === 'uDSV typed') {
    // uDSV's streaming example (its README): schema inferred from the first chunk, typed
    // rows handed to a reducer, nothing accumulated. Text decoded by the stream (a
    // multi-byte character may be cut between chunks).
    const { inferSchema, initParser } = udsv;
    let parser = null;
    const reducer = (row) => {
      rows++;
      check += row[0];
    };
    for await (const text of createReadStream(input, { highWaterMark: readBytes, encoding: 'utf8' })) {
      parser ??= initParser(inferSchema(text));
      parser.chunk(text, parser.typedArrs, reducer);
    }
    parser.end();
  } else if (method === 'csv-parse') {
    await pipeline(
      src(),
      csvParse({ from_line: 2 }),
      count(true, (r) => {
        rows++;
        check += Number(r[0]);
      }),
    );
  } else if (method === 'papaparse') {
    await pipeline(
      src(),
      Papa.parse(Papa.NODE_STREAM_INPUT, { header: false, skipEmptyLines: true }),
      count(true, (r) => {
        if (r[0] === 'id') return;
        rows++;
        check += Number(r[0]);
      }),
    );
  } else if (method === 'JSON.parse per line') {
    for await (const line of readline.createInterface({ input: src(), crlfDelay: Number.POSITIVE_INFINITY })) {
      if (!line) continue;
      const o = JSON.parse(line);
      rows++;
      check += o.id;
    }
  }
  const cpu = meter.stop();
  return { ...cpu, loop: loop.stop(), rows, check, peakRssMiB: peakRssMiB() };
}

/** Child: a TCP hello-world acceptor (Nexus's first server benchmark); runs until killed. */
export async function serverChild(port) {
  const server = createTcpServer((s) => s.end('hello world\n'));
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  progress(`streams: TCP server on ${port}`);
  await new Promise(() => {}); // until the parent kills the child
}

export async function startServer(port) {
  const child = spawn(
    process.execPath,
    ['-e', `import(${JSON.stringify(import.meta.url)}).then((m) => m.serverChild(${port}))`],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const ok = await new Promise((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return child;
  }
  child.kill();
  throw new Error('the TCP server did not start');
}

/** Opens `total` connections, `concurrency` at a time, reading each answer to its end. */
export async function tcpLoad(port, total, concurrency) {
  let started = 0;
  let failed = 0;
  const codes = {}; // why connections failed (EADDRNOTAVAIL: ephemeral ports in TIME_WAIT)
  const lat = [];
  const one = () =>
    new Promise((resolve) => {
      const t0 = performance.now();
      const s = connect(port, '127.0.0.1');
      s.resume();
      s.on('end', () => {
        lat.push(performance.now() - t0);
        resolve();
      });
      s.on('error', (e) => {
        failed++;
        codes[e.code] = (codes[e.code] ?? 0) + 1;
        resolve();
      });
    });
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < total) {
        started++;
        await one();
      }
    }),
  );
  const wall = performance.now() - t0;
  lat.sort((a, b) => a - b);
  return {
    connsPerSec: (total / wall) * 1000,
    failed,
    codes,
    p50Ms: lat[lat.length >> 1],
    p99Ms: lat[Math.floor(lat.length * 0.99)],
  };
}
