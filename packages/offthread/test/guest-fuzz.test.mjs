// Fuzzing the host's side of the guest ABI (docs/guest-abi.md; issue 11 "fuzzing … plus
// the guest ABI", issue 13 §4), with fast-check:
// - malformed modules: the real test guests' bytes (and the hostile guest's) with byte
//   flips, truncations, section sizes that lie, sections inserted or removed, ABI names
//   renamed, import kinds and types changed → `guests.load` loads a host that answers
//   every call with a result or a registry code, or refuses with ERR_GUEST_MODULE
//   (ERR_GUEST_MEMORY_LIMIT for a valid module that needs more pages than allowed);
// - lying modules: the hostile guest (tests/guests/hostile) with a fuzzed ABI version,
//   init counts, descriptors (mutated JSON, buffers outside memory), exports and import
//   types → loads and works, or ERR_GUEST_MODULE;
// - hostile calls: the hostile guest runs a fuzzed program per call (arbitrary results,
//   fail messages, memory growth, traps, stores, writes over its input, lying allocs).
//   With one worker its state is known, so a model predicts every answer exactly (bytes,
//   code, message); the next call on the same host works, the caller's input is intact;
//   with guest-to-guest calls added, every call is typed and no guest is ever re-entered;
// - malicious producers: crafted `blob` messages (bad offsets, huge counts, self-pointers,
//   truncation) from a producer guest, read by Rust consumer guests (tests/guests/basic,
//   over one shared input) → the TS reader's value, or ERR_GUEST_FAILED with its R code.
// Never a hang (a call not settled after HANG_MS fails), a crash or an untyped error.
//
// `npm test` runs a small fixed-seed budget; `npm run fuzz` (scripts/fuzz.mjs) sets
// OFFTHREAD_FUZZ_RUNS, OFFTHREAD_FUZZ_SEED and OFFTHREAD_FUZZ_STATS. Loading starts a
// worker, so the load properties run RUNS / LOAD_SHARE cases (see `budget`).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { errorRegistry, guests } from 'offthread';
import { ABI_EXPORTS, H, HF, hostile, INPUT, instr, OPS } from '../../../tests/guests/hostile/hostile.mjs';
import { uleb } from '../../../tests/guests/wasm-encode.mjs';
import * as msg from '../dist/schema/generated/fixtures/guests.js';
import { fuzzStats } from './fuzz-stats.mjs';

const RUNS = Number(process.env.OFFTHREAD_FUZZ_RUNS ?? 40);
const SEED = Number(process.env.OFFTHREAD_FUZZ_SEED ?? 0x6e57);
/** Generous: a loaded CI machine must not make a slow-but-settling call look like a hang. */
const HANG_MS = 20_000;
/** A load starts a worker (tens of ms): these properties run 1 case per LOAD_SHARE runs. */
const LOAD_SHARE = 10;
const PAGE = 65_536;
const MAX_PAGES = 4;

const dir = new URL('../../../target/wasm32-unknown-unknown/release/', import.meta.url);
const basic = new Uint8Array(readFileSync(new URL('guest_basic.wasm', dir)));
const relay = new Uint8Array(readFileSync(new URL('guest_relay.wasm', dir)));
const dec = new TextDecoder('utf-8', { fatal: false });

// ---- statistics, for `npm run fuzz` (the shape schema-fuzz writes) ------------------------

const stats = fuzzStats({ seed: SEED, runs: RUNS, blank: { slowestBytes: 0 } });
const record = (prop, ms, bytes) => stats.record(prop, ms, { slowestBytes: bytes });
async function check(prop, property, runs = RUNS) {
  const r = await fc.check(property, { numRuns: runs, seed: SEED });
  if (r.failed) {
    stats.failed(prop);
    throw new Error(`${fc.defaultReportMessage(r)}\n${r.errorInstance?.message ?? ''}`);
  }
}
const budget = () => Math.max(8, Math.ceil(RUNS / LOAD_SHARE));

/** Settles `promise` or fails the property after HANG_MS: {value} or {error}. */
async function settle(promise, what) {
  let timer;
  const hang = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not settled after ${HANG_MS} ms (a hang)`)), HANG_MS);
  });
  try {
    return { value: await Promise.race([promise, hang]) };
  } catch (error) {
    if (error?.message?.endsWith('(a hang)')) throw error;
    return { error };
  } finally {
    clearTimeout(timer);
  }
}
const typed = (err, what) =>
  assert.ok(
    err instanceof Error && typeof err.code === 'string' && err.code in errorRegistry,
    `${what}: an untyped error: ${err?.code} ${err?.message ?? err}`,
  );

// ---- malformed modules --------------------------------------------------------------------

/** The sections of `bytes` as far as they parse: [{ id, start, body, end }]. */
function sections(bytes) {
  const out = [];
  let at = 8;
  while (at < bytes.length) {
    const start = at;
    const id = bytes[at++];
    let size = 0;
    for (let shift = 0; at < bytes.length && shift < 35; shift += 7) {
      const b = bytes[at++];
      size += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) break;
    }
    if (at + size > bytes.length) break;
    out.push({ id, start, body: at, end: at + size });
    at += size;
  }
  return out;
}
const cat = (...parts) => new Uint8Array(parts.flatMap((p) => [...p]));
const ascii = (s) => [...s].map((c) => c.charCodeAt(0));
function occurrences(bytes, needle) {
  const out = [];
  for (let i = bytes.indexOf(needle[0]); i >= 0 && i < bytes.length; i = bytes.indexOf(needle[0], i + 1)) {
    if (needle.every((b, k) => bytes[i + k] === b)) out.push(i);
  }
  return out;
}

/** One mutation; `r` picks positions (an integer from fast-check). */
const MUTATIONS = {
  flip: (b, r, x) => {
    const out = b.slice();
    out[r % out.length] ^= x & 0xff || 1;
    return out;
  },
  truncate: (b, r) => b.slice(0, r % b.length),
  sizeLie: (b, r, x) => {
    const s = sections(b);
    if (s.length === 0) return b;
    const t = s[r % s.length];
    const size = t.end - t.body;
    const lie = [size + 1, Math.max(0, size - 1), 0, size + (x % 4096), x >>> 0, 2 ** 32 - 1][x % 6];
    return cat(b.subarray(0, t.start + 1), uleb(lie), b.subarray(t.body));
  },
  insert: (b, r, x) => {
    const s = sections(b);
    const at = s.length ? s[r % s.length].start : b.length;
    const copy = s.length ? b.subarray(s[x % s.length].start, s[x % s.length].end) : [];
    const junk = [x % 14, 4, x & 0xff, (x >> 8) & 0xff, 0x7f, 0x0b];
    return cat(b.subarray(0, at), x % 2 ? copy : junk, b.subarray(at));
  },
  remove: (b, r) => {
    const s = sections(b);
    if (s.length === 0) return b;
    const t = s[r % s.length];
    return cat(b.subarray(0, t.start), b.subarray(t.end));
  },
  rename: (b, r, x) => {
    const at = occurrences(b, ascii('offthread'));
    if (at.length === 0) return b;
    const out = b.slice();
    out[(at[r % at.length] ?? 0) + 3 + (x % 8)] ^= 0x20;
    return out;
  },
  memoryImport: (b, r, x) => {
    // `memory` then its kind and limits flags: another kind, a max, shared, memory64.
    const at = occurrences(b, [...ascii('memory'), 0x02]);
    if (at.length === 0) return b;
    const out = b.slice();
    const p = (at[r % at.length] ?? 0) + 6;
    if (x % 2) out[p] = x % 5;
    else out[p + 1] = [0x01, 0x03, 0x04, 0x05][(x >> 1) % 4];
    return out;
  },
  importType: (b, r, x) => {
    // The type index of one `offthread.*` function import.
    const at = [...occurrences(b, [4, ...ascii('fail'), 0]), ...occurrences(b, [6, ...ascii('invoke'), 0])];
    if (at.length === 0) return b;
    const out = b.slice();
    const p = at[r % at.length] ?? 0;
    out[p + out[p] + 2] = x % 12;
    return out;
  },
};
const BASES = { basic, relay, hostile: hostile() };
/** Weighted towards mutations that can leave a valid module (so more of them load). */
const WEIGHTS = { flip: 2, truncate: 1, sizeLie: 1, insert: 2, remove: 1, rename: 2, memoryImport: 1, importType: 2 };
const mutation = fc.record({
  kind: fc.oneof(...Object.entries(WEIGHTS).map(([k, weight]) => ({ weight, arbitrary: fc.constant(k) }))),
  r: fc.nat(),
  x: fc.nat(),
});

/** A loaded host works: the safe functions of its interfaces answer or fail typed, then close. */
async function exercise(host, what) {
  const safe = ['empty', 'echo', 'next', 'checksum', 'relay', 'run'];
  for (const i of host.interfaces) {
    for (const fn of i.functions.filter((f) => safe.includes(f))) {
      const input = fn === 'empty' || fn === 'next' ? null : new Uint8Array(16);
      // A mutated module may loop: its timeout is a typed answer too (ERR_TIMEOUT).
      const opts = { timeout: 2000 };
      const call = i.pattern === 'fanout' ? host.fanout(i.name, fn, input, opts) : host.call(i.name, fn, input, opts);
      const r = await settle(call, `${what}: ${i.name}.${fn}`);
      if (r.error) typed(r.error, `${what}: ${i.name}.${fn}`);
    }
  }
  await host.close();
}

test('malformed modules: load refuses them with ERR_GUEST_MODULE, or what loads works', async () => {
  const prop = 'guests.load(mutated module)';
  await check(
    prop,
    fc.asyncProperty(
      fc.constantFrom(...Object.keys(BASES)),
      fc.array(mutation, { minLength: 1, maxLength: 3 }),
      async (base, muts) => {
        const bytes = muts.reduce((b, m) => MUTATIONS[m.kind](b, m.r, m.x), BASES[base]);
        const what = `${base} + ${muts.map((m) => m.kind).join(', ')}`;
        const t0 = performance.now();
        const r = await settle(guests.load([bytes], { threads: 1, memoryPages: 64, loadTimeout: 2000 }), what);
        if (r.error) {
          assert.ok(
            ['ERR_GUEST_MODULE', 'ERR_GUEST_MEMORY_LIMIT'].includes(r.error.code),
            `${what}: ${r.error.code}: ${r.error.message}`,
          );
        } else await exercise(r.value, what);
        record(prop, performance.now() - t0, bytes.length);
      },
    ),
    budget(),
  );
});

// ---- lying modules ----------------------------------------------------------------------

const word = fc.oneof(fc.constantFrom(0, 1, -1, 2, 0x10001, 0x7fffffff, -0x80000000), fc.integer());
const packed = fc.oneof(
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  fc.tuple(fc.nat({ max: 70_000 }), fc.nat({ max: 70_000 })).map(([p, l]) => (BigInt(l) << 32n) | BigInt(p)),
  fc.constantFrom(-1n, 0n, (1n << 32n) | 0xffff_ffffn, 0xffff_ffffn << 32n),
);
/** A descriptor: valid, with one field replaced by any JSON value, or not JSON at all. */
const lyingDescriptor = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(H, HF) },
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        fc.constantFrom(H, HF),
        fc.constantFrom(
          'name',
          'pattern',
          'fingerprint',
          'memories',
          'functions',
          'functions.0',
          'memories.0',
          'functions.0.input',
          'memories.0.pages',
          'functions.0.name',
        ),
        fc.jsonValue({ maxDepth: 2 }),
      )
      .map(([text, path, value]) => {
        const d = JSON.parse(text);
        const keys = path.split('.');
        let o = d;
        for (const k of keys.slice(0, -1)) o = o?.[k];
        if (o && typeof o === 'object') o[keys.at(-1)] = value;
        return JSON.stringify(d);
      }),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 64, unit: 'binary' }) },
  { weight: 1, arbitrary: packed },
);

test('lying modules: any ABI version, init counts, descriptors, exports, import types', async () => {
  const prop = 'guests.load(lying guest)';
  await check(
    prop,
    fc.asyncProperty(
      // Each lie on its own mostly (several at once rarely get past the first check).
      fc.record({
        abi: fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: word }),
        exports: fc.array(lyingDescriptor, { maxLength: 3 }),
        imports: fc.array(lyingDescriptor, { maxLength: 2 }),
        init: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: word }),
        omit: fc.oneof({ weight: 6, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.subarray(ABI_EXPORTS) }),
        extra: fc.boolean(),
        importTypes: fc.tuple(fc.constantFrom(4, 4, 8), fc.constantFrom(5, 5, 8), fc.constantFrom(6, 6, 8)),
      }),
      async (cfg) => {
        const bytes = hostile(cfg);
        const t0 = performance.now();
        const r = await settle(
          guests.load([bytes, hostile({ imports: [H], id: 1 })], { threads: 1, loadTimeout: 2000 }),
          'load',
        );
        if (r.error) {
          assert.equal(r.error.code, 'ERR_GUEST_MODULE', r.error.message);
        } else {
          const host = r.value;
          for (const i of host.interfaces) {
            assert.match(i.name, /^[A-Za-z_][A-Za-z0-9_]*$/);
            assert.ok(
              i.functions.every((f) => typeof f === 'string' && /^[A-Za-z_]\w*$/.test(f)),
              i.functions.join(),
            );
          }
          await exercise(
            host,
            JSON.stringify(cfg, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)),
          );
        }
        record(prop, performance.now() - t0, bytes.length);
      },
    ),
    budget(),
  );
});

// ---- hostile calls, with a model of the guest ---------------------------------------------

const u32 = fc.oneof(
  fc.nat(64),
  fc.nat(0x20000),
  fc.integer({ min: INPUT, max: INPUT + 256 }),
  fc.constantFrom(0, 1, 255, 256, PAGE - 4, PAGE, MAX_PAGES * PAGE - 4, MAX_PAGES * PAGE, 2 ** 31, 2 ** 32 - 1),
  fc.nat({ max: 2 ** 32 - 1 }),
);
const opName = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...OPS) }, { weight: 1, arbitrary: fc.nat(255) });
const program = (ops = opName, maxLength = 8) =>
  fc
    .tuple(
      fc.array(fc.tuple(ops, u32, u32), { maxLength }),
      // Padding past the program: none, or a length that makes the guest's alloc lie.
      fc.oneof(
        { weight: 8, arbitrary: fc.constant(0) },
        { weight: 1, arbitrary: fc.integer({ min: 30_001, max: 40_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: 40_001, max: 70_000 }) },
      ),
    )
    .map(([ops, pad]) => {
      const code = cat(...ops.map(([op, a, b]) => instr(op, a, b)));
      return pad > code.length ? cat(code, new Uint8Array(pad - code.length)) : code;
    });

const UNKNOWN = Symbol('unknown');

/**
 * What the host must answer when module `m` (id `m`) runs `input` — the hostile guest's
 * interpreter and the host's checks, in JS: { bytes | length } or { code, message? }.
 * `model.pages[m]` is that instance's memory (1 page after a trap: a new instance).
 */
function predict(model, m, input, outputLimit) {
  const name = `h${m}`;
  const size = () => model.pages[m] * PAGE;
  const len = input.length;
  let ptr = 0;
  if (len > 0) {
    ptr = len > 40_000 ? Math.imul(len, -1640531535) >>> 0 : len > 30_000 ? 0 : INPUT;
    if (ptr === 0) return { code: 'ERR_GUEST_MEMORY_LIMIT' };
    if (ptr + len > size()) return { code: 'ERR_GUEST_ABI' };
  }
  const mem = input.slice(); // the input region, ptr..ptr+len
  const within = (a, n) => a >= ptr && a + n <= ptr + len;
  const at = (a) => mem[a - ptr];
  const word = (a) => (at(a) | (at(a + 1) << 8) | (at(a + 2) << 16) | (at(a + 3) << 24)) >>> 0;
  let failure = null;
  let oom = null;
  const text = (a, b) => {
    if (a + b > size()) return 'an error message outside the guest memory';
    const n = Math.min(b, 1024);
    return within(a, n) ? dec.decode(mem.subarray(a - ptr, a - ptr + n)) : UNKNOWN;
  };
  const result = (p, l) => {
    if (p + l > size()) return { code: 'ERR_GUEST_ABI' };
    if (outputLimit !== null && l > outputLimit) return { code: 'ERR_GUEST_MEMORY_LIMIT' };
    return within(p, l) ? { bytes: mem.slice(p - ptr, p - ptr + l) } : { length: l };
  };
  const failed = () => ({
    code: 'ERR_GUEST_FAILED',
    message: failure === UNKNOWN ? UNKNOWN : `${name}: ${failure ?? 'the call failed without a message'}`,
  });
  const trap = () => {
    const atLimit = oom !== null || model.pages[m] >= MAX_PAGES;
    model.pages[m] = 1;
    return { code: atLimit ? 'ERR_GUEST_MEMORY_LIMIT' : 'ERR_GUEST_TRAP' };
  };
  for (let pc = ptr; pc + 9 <= ptr + len; ) {
    const op = OPS[at(pc) % OPS.length];
    const a = word(pc + 1);
    const b = word(pc + 5);
    pc += 9;
    if (op === 'ret') return result(a, b);
    if (op === 'retIn') return result((ptr + a) >>> 0, b);
    if (op === 'fail' || op === 'failOn') {
      failure = text(a, b);
      if (op === 'fail') return failed();
    }
    if (op === 'grow' && model.pages[m] + (a & 255) <= MAX_PAGES) model.pages[m] += a & 255;
    if (op === 'trap') return trap();
    if (op === 'scribble' && ((a >>> 8) & 1) === m) mem.fill(a & 255);
    if (op === 'store') {
      if (a + 4 > size()) return trap();
      for (let k = 0; k < 4; k++) if (within(a + k, 1)) mem[a + k - ptr] = (b >>> (8 * k)) & 0xff;
    }
    if (op === 'oom') oom = a;
    if (op === 'neg') return failed();
    if (op === 'reentries') return result(0, 0); // never re-entered without invoke
    // spin: no effect; invoke: these modules import nothing, so the host answers -1.
  }
  return result(0, 0);
}

function agrees(got, want, what) {
  if (want.code) {
    assert.ok(got.error, `${what}: expected ${want.code}, got a ${got.value?.length}-byte result`);
    typed(got.error, what);
    assert.equal(got.error.code, want.code, `${what}: ${got.error.message}`);
    if (want.message !== undefined && want.message !== UNKNOWN) assert.equal(got.error.message, want.message, what);
    return;
  }
  assert.ok(!got.error, `${what}: expected a result, got ${got.error?.code}: ${got.error?.message}`);
  assert.ok(got.value instanceof Uint8Array, what);
  if (want.bytes) assert.deepEqual([...got.value], [...want.bytes], what);
  else assert.equal(got.value.length, want.length, what);
}

describe('hostile guests', () => {
  let host;
  let model;
  before(async () => {
    host = await guests.load(
      [
        { name: 'h0', bytes: hostile({ id: 0 }) },
        { name: 'h1', bytes: hostile({ id: 1 }) },
      ],
      { threads: 1, memoryPages: MAX_PAGES },
    );
    model = { pages: [1, 1] };
  });
  after(() => host.close());

  test('every call answers exactly as the model says; the next call works', async () => {
    const prop = 'hostile guest call';
    await check(
      prop,
      fc.asyncProperty(program(), fc.constantFrom('h0', 'h1', 'fanout'), async (input, target) => {
        const sent = input.slice();
        const t0 = performance.now();
        if (target === 'fanout') {
          const want = [0, 1].map((m) =>
            input.length > PAGE ? { code: 'ERR_GUEST_MEMORY_LIMIT' } : predict(model, m, input, PAGE),
          );
          const got = await settle(host.fanout('hf', 'run', input, { timeout: HANG_MS }), 'fanout');
          if (want.every((w) => !w.code)) {
            assert.ok(!got.error, `fanout: ${got.error?.code}: ${got.error?.message}`);
            for (const [m, w] of want.entries()) agrees({ value: got.value[m] }, w, `fanout h${m}`);
          } else {
            // Promise.all: the first failure; both ran (the model stepped both).
            typed(got.error, 'fanout');
            assert.ok(
              want.some((w) => w.code === got.error.code),
              `fanout: ${got.error.code}, expected one of ${want.map((w) => w.code)}`,
            );
          }
        } else {
          const m = Number(target[1]);
          const want = predict(model, m, input, null);
          agrees(
            await settle(host.call('h', 'run', input, { exporter: target, timeout: HANG_MS }), target),
            want,
            target,
          );
        }
        record(prop, performance.now() - t0, input.length);
        assert.deepEqual(input, sent, "the caller's input is intact");
        // The next call on each module works: a slice of its input back.
        for (const m of [0, 1]) {
          const probe = cat(instr('retIn', 0, 9), [m, 7, 7]);
          const r = await settle(host.call('h', 'run', probe, { exporter: `h${m}` }), 'probe');
          agrees(r, predict(model, m, probe, null), `the call after, on h${m}`);
        }
      }),
    );
  });

  test('guest-to-guest calls: every call is typed, no guest is re-entered', async () => {
    const prop = 'hostile guest-to-guest call';
    const pair = await guests.load(
      [
        { name: 'h0', bytes: hostile({ id: 0, imports: [H] }) },
        { name: 'h1', bytes: hostile({ id: 1, imports: [H] }) },
      ],
      { threads: 1, memoryPages: MAX_PAGES },
    );
    try {
      // No spin, at most 3 invokes a program: nested calls multiply the work.
      const ops = fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...OPS.filter((o) => o !== 'spin')) },
        { weight: 2, arbitrary: fc.constant('invoke') },
      );
      await check(
        prop,
        fc.asyncProperty(
          program(ops, 6).filter((p) => occurrences(p, [OPS.indexOf('invoke')]).length <= 3),
          fc.constantFrom('h0', 'h1'),
          async (input, target) => {
            const t0 = performance.now();
            const r = await settle(pair.call('h', 'run', input, { exporter: target, timeout: HANG_MS }), target);
            if (r.error) typed(r.error, target);
            else assert.ok(r.value instanceof Uint8Array);
            record(prop, performance.now() - t0, input.length);
            for (const m of ['h0', 'h1']) {
              const seen = await settle(pair.call('h', 'run', instr('reentries'), { exporter: m }), m);
              assert.equal(seen.value?.length, 0, `${m} was re-entered ${seen.value?.length} times`);
            }
          },
        ),
      );
    } finally {
      await pair.close();
    }
  });
});

// ---- malicious producers (issue 13 §5.2.3) ------------------------------------------------

/** A `blob` message made hostile: words overwritten (offsets, counts, self-pointers), cut, extended. */
const crafted = fc
  .tuple(
    fc.uint8Array({ maxLength: 200 }),
    fc.array(
      fc.oneof(
        fc.record({
          at: fc.oneof(
            fc.constantFrom(0, 4, 64, 68, 72, 76),
            fc.nat(400).map((n) => n & ~3),
          ),
          value: fc.oneof(
            fc.constantFrom(0, 1, 8, 63, 64, 128, 0x7fffffff, 0x1fffffff, 0xffffffff, 0xe0000001),
            fc.nat({ max: 2 ** 32 - 1 }),
          ),
          self: fc.boolean(),
        }),
        fc.record({ cut: fc.nat(400) }),
        fc.record({ extend: fc.uint8Array({ maxLength: 64 }) }),
      ),
      { maxLength: 3 },
    ),
  )
  .map(([data, edits]) => {
    let b = msg.encodeBlob({ data });
    for (const e of edits) {
      if ('cut' in e) b = b.slice(0, e.cut % (b.length + 1));
      else if ('extend' in e) b = cat(b, e.extend);
      else if (e.at + 4 <= b.length) {
        // `self`: a pointer to itself (or, as an offset, to the root): a cycle.
        new DataView(b.buffer, b.byteOffset).setUint32(e.at, e.self ? e.at : e.value, true);
      }
    }
    return b;
  });

function fnv(bytes) {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h;
}

test('malicious producers: crafted messages through Rust consumer guests are read or refused with an R code', async () => {
  const prop = 'crafted message → Rust consumers';
  // The producer is the hostile guest (it answers the bytes it is given); the
  // consumers are tests/guests/basic's scan.checksum (Rust, zero-copy reader), fanned
  // out over one shared input, and its echo.echo (owned copy); the TS reader is the
  // reference: the same value, or the same R code.
  const host = await guests.load(
    [
      { name: 'producer', bytes: hostile() },
      { name: 'a', bytes: basic },
      { name: 'b', bytes: basic },
    ],
    { threads: 2 },
  );
  try {
    await check(
      prop,
      fc.asyncProperty(crafted, async (bytes) => {
        const t0 = performance.now();
        const made = await settle(host.call('h', 'run', cat(instr('retIn', 9, bytes.length), bytes)), 'producer');
        assert.deepEqual([...made.value], [...bytes], "the producer's message arrives intact");
        let want;
        try {
          const data = new Uint8Array(msg.decodeBlob(made.value).data);
          want = { data, sum: fnv(data) };
        } catch (err) {
          assert.match(err.code, /^R\d{4}$/, err.message);
          want = { code: err.code };
        }
        const opts = { timeout: HANG_MS };
        const got = await settle(host.fanout('scan', 'checksum', made.value, opts), 'consumers');
        const echo = await settle(host.call('echo', 'echo', made.value, { ...opts, exporter: 'b' }), 'echo');
        if (want.data) {
          // basic's checksum wants the zero-copy slice, which an absent (null) column has
          // not: it refuses that one valid message as "unaligned input" (a test-guest quirk).
          const absent = want.data.length === 0 && /unaligned input/.test(got.error?.message);
          assert.ok(!got.error || absent, `TS read it, a consumer refused: ${got.error?.message}`);
          if (!absent)
            assert.deepEqual(
              got.value.map((c) => msg.decodeCount(c).value),
              [want.sum, want.sum],
            );
          assert.ok(!echo.error, `TS read it, echo refused: ${echo.error?.message}`);
          assert.deepEqual(new Uint8Array(msg.decodeBlob(echo.value).data), want.data);
        } else {
          for (const r of [got, echo]) {
            assert.ok(r.error, `TS refused it (${want.code}), a consumer read it`);
            assert.equal(r.error.code, 'ERR_GUEST_FAILED', r.error.message);
            assert.match(r.error.message, new RegExp(`invalid input: ${want.code}`));
          }
        }
        record(prop, performance.now() - t0, bytes.length);
      }),
    );
  } finally {
    await host.close();
  }
});

// ---- regressions (bugs this fuzzer found) -------------------------------------------------

test('a guest is never re-entered: A → B → A is refused (-1 to B)', async () => {
  const pair = await guests.load(
    [
      { name: 'h0', bytes: hostile({ id: 0, imports: [H] }) },
      { name: 'h1', bytes: hostile({ id: 1, imports: [H] }) },
    ],
    { threads: 1 },
  );
  try {
    // h0 invokes h1, which invokes h — the only other exporter is h0, which is running.
    const out = await pair.call('h', 'run', cat(instr('invoke'), instr('reentries')), { exporter: 'h0' });
    assert.equal(out.length, 0, `a guest was re-entered ${out.length} times`);
  } finally {
    await pair.close();
  }
});

test('descriptor functions and memories need string names', async () => {
  const d = JSON.parse(H);
  const cases = [
    { ...d, functions: [{ input: null, output: null }] },
    { ...d, functions: [null] },
    { ...d, memories: [{ import: 'read', export: 'read', pages: 1 }] },
  ];
  for (const c of cases) {
    await assert.rejects(guests.load([hostile({ exports: [JSON.stringify(c)] })], { threads: 1 }), (err) => {
      assert.equal(err.code, 'ERR_GUEST_MODULE', err.message);
      assert.match(err.message, /malformed (function|memory)/);
      return true;
    });
  }
});

test('a malformed module is ERR_GUEST_MODULE even when its memory import asks for too much', async () => {
  const bytes = hostile();
  const at = occurrences(bytes, [...ascii('memory'), 0x02, 0x00, 0x01])[0];
  const big = bytes.slice(0, -3);
  big[at + 8] = 0x7f; // 127 pages, and the data section cut short
  await assert.rejects(guests.load([big], { threads: 1, memoryPages: 16 }), (err) => {
    assert.equal(err.code, 'ERR_GUEST_MODULE', err.message);
    return true;
  });
});
