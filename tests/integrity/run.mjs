// The integrity experiment (docs/guest-integrity.md), shared by the benchmark
// (bench/experiments/guests-integrity.mjs) and the test (guest-integrity.test.mjs).
//
// Per schema: the producer guest makes `values` messages from their entropy; the Rust
// consumer guest, the C consumer guest (when zig is here: both exporters of one fanout
// over one shared input) and the TS consumer on the host read each one; every path
// digest must equal the producer's. Then `malicious` mutants of those messages go to
// every consumer in batches: each must answer what the TS reader does — the same
// digest, or a typed read error — and never trap or hang.
import { readFileSync } from 'node:fs';
import { guests } from 'offthread';
import { compileSchema, interfaceModule, prepareBatches, prepareCBatch } from './build.mjs';
import { consumeTs } from './canonical.mjs';
import { features, fieldPaths, generateSchema } from './gen-schemas.mjs';
import { mutate } from './mutate.mjs';

const hex = (bytes) => Buffer.from(bytes).toString('hex');
const codeName = (code) => (code === 0 ? 'read' : `R${String(code).padStart(4, '0')}`);
const same = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;
/** `npm test`'s shortened run (and what `npm run setup` builds for it). */
export const TEST_RUN = { seed: 13, schemas: 12, batchSize: 12, values: 3, malicious: 400 };

/** A consumer call carries at most this many message bytes (its input memory is 16 MiB). */
const CHUNK_BYTES = 2 << 20;

/** Schema `index` of `seed`, redrawn while the compiler reports a column-hash collision (E0015). */
export function validSchema(seed, index) {
  for (let attempt = 0; ; attempt++) {
    const s = generateSchema(seed, index, attempt);
    try {
      compileSchema(s);
      return s;
    } catch (err) {
      if (!err.diagnostics?.every((d) => d.code === 'E0015') || attempt > 20) throw err;
    }
  }
}

/** The producer's entropy for value `v` of schema `index`. */
export const entropyOf = (seed, index, v) =>
  BigInt.asUintN(64, (BigInt(seed) + 1n) * 0x9e3779b97f4a7c15n + BigInt(index) * 0x100000001b3n + BigInt(v));

export function newStats() {
  return {
    schemas: 0,
    values: 0,
    pathsHashed: 0,
    mismatches: 0,
    malicious: 0,
    // Consumer guests beside the TS reader, in load order; why the C one is missing, if it is.
    consumers: [],
    cMissing: null,
    /** Malicious messages each guest consumer answered (compared with the TS reader). */
    maliciousByConsumer: {},
    /** Refused messages where two guests gave different R codes (the C reader checks as Rust's does). */
    guestCodesDiffer: 0,
    maliciousRead: 0,
    maliciousRefused: 0,
    refusedByCode: {},
    differentCodes: {},
    byKind: {},
    crashes: 0,
    hangs: 0,
    slowestTsReadMs: 0,
    failures: [],
  };
}

function fail(stats, what) {
  if (stats.failures.length < 20) stats.failures.push(what);
}

/**
 * Runs one prepared batch. `values` messages per schema, `malicious` mutants per schema,
 * `timeout` ms per guest call (past it: a hang). Adds to `stats`.
 */
export async function runBatch(batch, { seed, values, malicious, timeout, firstIndex, iface, stats, wasm }) {
  const modules = [{ name: 'integrity', bytes: wasm ?? readFileSync(batch.wasmPath) }];
  // The C consumer exports `consumer` too: one fanout reaches both, in this order.
  if (batch.cWasmPath) modules.push({ name: 'integrity-c', bytes: readFileSync(batch.cWasmPath) });
  const names = ['Rust', ...(batch.cWasmPath ? ['C'] : [])];
  for (const n of names) if (!stats.consumers.includes(n)) stats.consumers.push(n);
  const host = await guests.load(modules, { threads: 1, memoryPages: 1024 });
  try {
    for (const [i, s] of batch.schemas.entries()) {
      const index = firstIndex + i;
      const decode = batch.decoders[i];
      const messages = await checkValues(host, iface, { s, i, index, decode, names, seed, values, timeout, stats });
      if (messages.length > 0 && malicious > 0)
        await checkMalicious(host, iface, { s, i, index, decode, names, messages, malicious, timeout, stats });
      stats.schemas++;
    }
  } finally {
    await host.close();
  }
}

/**
 * A consumer call to every consumer guest (one fanout): `{ verdicts: [per consumer] }`; a
 * failure of the whole call is a crash or a hang, returned as `{ error }`.
 */
async function consume(host, iface, { i, full, messages, timeout }) {
  const input = iface.encodeConsumerInput({ schema: i, full, messages: messages.map((bytes) => ({ bytes })) });
  try {
    const outs = await host.fanout('consumer', 'consume', input, { timeout });
    return { verdicts: outs.map((out) => iface.decodeConsumerOutput(out).verdicts) };
  } catch (error) {
    return { error };
  }
}

function callFailed(stats, error, where) {
  if (error.code === 'ERR_TIMEOUT') stats.hangs++;
  else stats.crashes++;
  fail(stats, `${where}: ${error.code}: ${error.message}`);
}

async function checkValues(host, iface, { s, i, index, decode, names, seed, values, timeout, stats }) {
  const paths = fieldPaths(s.model);
  const made = [];
  for (let v = 0; v < values; v++) {
    try {
      const out = await host.call(
        'producer',
        'produce',
        iface.encodeProducerInput({ schema: i, entropy: entropyOf(seed, index, v) }),
        { timeout },
      );
      const p = iface.decodeProduced(out);
      made.push({ v, message: new Uint8Array(p.message), paths: new Uint8Array(p.paths) });
    } catch (error) {
      callFailed(stats, error, `${s.name} value ${v}: producer`);
    }
  }
  const guestsSaid = await consume(host, iface, { i, full: true, messages: made.map((m) => m.message), timeout });
  if (guestsSaid.error) callFailed(stats, guestsSaid.error, `${s.name}: ${names.join(' + ')} consumer`);
  for (const [k, m] of made.entries()) {
    stats.values++;
    const ts = consumeTs(s.model, decode, m.message);
    const consumers = [['TS', ts.code, ts.paths ? Buffer.concat(ts.paths) : null]];
    if (!guestsSaid.error) {
      for (const [g, verdicts] of guestsSaid.verdicts.entries())
        consumers.push([names[g], verdicts[k].code, new Uint8Array(verdicts[k].paths)]);
    }
    for (const [who, code, got] of consumers) {
      if (code !== 0) {
        stats.mismatches++;
        fail(
          stats,
          `${s.name} value ${m.v}: the ${who} consumer refused a valid message: R${String(code).padStart(4, '0')}`,
        );
        continue;
      }
      for (const [p, path] of paths.entries()) {
        stats.pathsHashed++;
        const want = m.paths.subarray(p * 32, p * 32 + 32);
        const have = got.subarray(p * 32, p * 32 + 32);
        if (!same(want, have)) {
          stats.mismatches++;
          fail(stats, `${s.name} value ${m.v} ${path}: ${who} ${hex(have)} ≠ producer ${hex(want)}`);
        }
      }
    }
  }
  return made.map((m) => m.message);
}

async function checkMalicious(host, iface, { s, i, index, decode, names, messages, malicious, timeout, stats }) {
  // Mutant m of schema `index` is a function of (index, m): enough to replay it.
  const where = (c) => `${s.name} mutant ${c.m} (${c.kind}, ${c.bytes.length} bytes)`;
  let m = 0;
  while (m < malicious) {
    const chunk = [];
    let bytes = 0;
    for (; m < malicious && bytes < CHUNK_BYTES; m++) {
      const mutant = mutate(messages[m % messages.length], (Math.imul(index + 1, 0x9e3779b1) ^ m) >>> 0);
      chunk.push({ ...mutant, m });
      bytes += mutant.bytes.length + 64;
    }
    // The guests read on their workers while the host's TS consumer reads here.
    const guestCall = consume(host, iface, { i, full: false, messages: chunk.map((c) => c.bytes), timeout });
    const ts = chunk.map((c) => {
      const t0 = performance.now();
      try {
        return consumeTs(s.model, decode, c.bytes);
      } catch (error) {
        return { error };
      } finally {
        stats.slowestTsReadMs = Math.max(stats.slowestTsReadMs, performance.now() - t0);
      }
    });
    const said = await guestCall;
    // verdicts[g][k]: consumer g's answer to message k (null: its call failed, counted).
    let verdicts = said.error ? null : said.verdicts;
    if (said.error) {
      // Find the culprits: one call per message.
      verdicts = names.map(() => []);
      for (const c of chunk) {
        const r = await consume(host, iface, { i, full: false, messages: [c.bytes], timeout });
        if (r.error) callFailed(stats, r.error, `${where(c)}: ${names.join(' + ')} consumer`);
        for (const g of names.keys()) verdicts[g].push(r.error ? null : r.verdicts[g][0]);
      }
    }
    for (const [k, c] of chunk.entries()) {
      stats.malicious++;
      stats.byKind[c.kind] ??= { messages: 0, refused: 0 };
      const kind = stats.byKind[c.kind];
      kind.messages++;
      const t = ts[k];
      if (t.error) {
        stats.crashes++;
        fail(stats, `${where(c)}: the TS consumer threw ${t.error.stack}`);
        continue;
      }
      let agreed = true;
      for (const [g, who] of names.entries()) {
        const r = verdicts[g][k];
        if (r === null) {
          agreed = false; // counted above
          continue;
        }
        stats.maliciousByConsumer[who] = (stats.maliciousByConsumer[who] ?? 0) + 1;
        // Agreement: both read it with the same digest, or both refused it with a typed read
        // error (which check fires first may differ between the readers: counted apart).
        const agree = t.code === 0 ? r.code === 0 && same(t.digest, r.digest) : r.code !== 0;
        if (!agree) {
          agreed = false;
          stats.mismatches++;
          fail(stats, `${where(c)}: TS ${codeName(t.code)} ≠ ${who} ${codeName(r.code)}`);
        } else if (t.code !== 0 && t.code !== r.code) {
          const pair = `TS ${codeName(t.code)}, ${who} ${codeName(r.code)}`;
          stats.differentCodes[pair] = (stats.differentCodes[pair] ?? 0) + 1;
        }
      }
      if (!agreed) continue;
      if (t.code === 0) stats.maliciousRead++;
      else {
        // Only agreed refusals: a mismatch or a failed call is counted above, not here.
        if (new Set(names.map((_, g) => verdicts[g][k]?.code)).size > 1) stats.guestCodesDiffer++;
        stats.maliciousRefused++;
        kind.refused++;
        stats.refusedByCode[codeName(t.code)] = (stats.refusedByCode[codeName(t.code)] ?? 0) + 1;
      }
    }
  }
}

/**
 * The whole experiment: `schemas` random schemas of `seed` in batches of `batchSize`.
 * Returns `{ stats, coverage, compileMs, built, runMs }` (coverage: schemas per language feature).
 */
export async function runIntegrity({
  seed,
  schemas,
  batchSize,
  values,
  malicious,
  timeout = 60_000,
  jobs = 1,
  cConsumer = true,
  log = () => {},
}) {
  const all = Array.from({ length: schemas }, (_, index) => validSchema(seed, index));
  const coverage = {};
  for (const s of all) for (const f of features(s.model)) coverage[f] = (coverage[f] ?? 0) + 1;
  const groups = [];
  for (let at = 0; at < all.length; at += batchSize)
    groups.push({ schemas: all.slice(at, at + batchSize), firstIndex: at });
  const { batches, compileMs, built } = await prepareBatches(groups, { jobs, log });
  const iface = await interfaceModule();
  const stats = newStats();
  // The C consumer beside the Rust one (zig cc); without zig the run says why and goes on.
  for (const batch of cConsumer ? batches : []) {
    const c = prepareCBatch(batch.schemas, { log, compiled: batch.compiled });
    if (c.missing) {
      stats.cMissing = c.missing;
      log(`integrity: no C consumer: ${c.missing}`);
      break;
    }
    batch.cWasmPath = c.wasmPath;
  }
  const t0 = performance.now();
  for (const [b, batch] of batches.entries()) {
    await runBatch(batch, { seed, values, malicious, timeout, firstIndex: groups[b].firstIndex, iface, stats });
    log(
      `integrity: batch ${b + 1}/${batches.length}: ${stats.schemas} schemas, ${stats.malicious} malicious, ${stats.mismatches} mismatches`,
    );
  }
  return { stats, coverage, compileMs, built, runMs: performance.now() - t0 };
}
