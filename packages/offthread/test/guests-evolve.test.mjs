// Evolving interfaces and a live host (docs/guest-abi.md, "Evolving interfaces" and
// "A live host"): modules built from v1 and v2 of one interface load together, each
// callable for what it exports; modules come and go while calls run.
//
// The descriptors are the schema compiler's own (v1 and v2 of one schema, compiled
// here); the modules around them are hand-assembled (guests-wasm.mjs): function `fn` of
// a module tagged `tag` answers the one byte `tag * 16 + fn`, so every answer says who
// gave it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { guests, schema } from 'offthread';
import { I32, I64, sleb as sleb64 } from '../../../tests/guests/wasm-encode.mjs';
import { assemble } from './guests-wasm.mjs';

const V1 = `
struct blob (dynamic) { data: []u8; }
interface store (dynamic, direct) {
    get: (blob) -> (blob);
}
interface scan (dynamic, fanout) {
    input: memory (import: write, export: read, 16);
    sum: (blob @ input) -> (blob);
}
`;
// v2 appends a function to store, and a memory and a function to scan.
const V2 = `
struct blob (dynamic) { data: []u8; }
interface store (dynamic, direct) {
    get: (blob) -> (blob);
    put: (blob) -> (blob);
}
interface scan (dynamic, fanout) {
    input: memory (import: write, export: read, 16);
    out: memory (import: read, export: write, 1);
    sum: (blob @ input) -> (blob);
    size: (blob @ input) -> (blob @ out);
}
`;

/** Each interface's descriptor, as the generated Rust guest code carries it. */
function descriptors(km) {
  const r = schema.compile(km, { fileName: 'evolve.km', ts: false, rust: false, rustGuest: true });
  assert.equal(r.rendered, '');
  const code = r.files.find((f) => f.lang === 'rust-guest').contents;
  const out = {};
  for (const [, text] of code.matchAll(/pub const DESCRIPTOR: &str = r#"(.*?)"#;/g)) {
    out[JSON.parse(text).name] = text;
  }
  return out;
}

const v1 = descriptors(V1);
const v2 = descriptors(V2);

// offthread_call(export, fn, ptr, len) -> pack(2048 + fn, 1): the tag byte of function fn.
const ANSWER = [0x20, 0x01, 0xad, 0x42, 0x80, 0x10, 0x7c, 0x42, 0x80, 0x80, 0x80, 0x80, 0x10, 0x84];

/** A guest exporting (or, with `imports`, importing) `descriptor`, answering with `tag`. */
function guest(descriptor, tag, { imports = false } = {}) {
  const len = new TextEncoder().encode(descriptor).length;
  const packed = (BigInt(len) << 32n) | 1024n;
  const body = { offthread_call: ANSWER };
  if (imports) {
    body.offthread_init = [0x41, ...sleb64(1 << 16)]; // one import, no export
    body.offthread_export = [0x42, 0x7f];
    body.offthread_import = [0x42, ...sleb64(packed)];
  }
  return assemble({
    descriptor,
    body,
    data: [{ offset: 2048, bytes: Array.from({ length: 16 }, (_, fn) => tag * 16 + fn) }],
  });
}

const mod = (name, descriptor, tag, opts) => ({ name, bytes: guest(descriptor, tag, opts) });

const code = (c) => (err) => err.code === c || assert.fail(`${err.code}: ${err.message}`);
const byte = (bytes) => [...bytes];

describe('evolving interfaces', () => {
  test('the compiler gives v2 the same function fingerprints for the functions v1 has', () => {
    const fns = (d) => JSON.parse(d).functions.map((f) => f.fingerprint);
    assert.notEqual(JSON.parse(v1.store).fingerprint, JSON.parse(v2.store).fingerprint);
    assert.deepEqual(fns(v2.store).slice(0, 1), fns(v1.store));
    assert.deepEqual(fns(v2.scan).slice(0, 1), fns(v1.scan));
  });

  test('v1 and v2 modules of one interface load together; each answers what it exports', async () => {
    for (const order of [
      ['old', 'new'],
      ['new', 'old'],
    ]) {
      const made = { old: mod('old', v1.store, 1), new: mod('new', v2.store, 2) };
      const host = await guests.load(
        order.map((n) => made[n]),
        { threads: 1 },
      );
      try {
        const store = host.interfaces.find((i) => i.name === 'store');
        assert.deepEqual(store.functions, ['get', 'put'], 'the newest version');
        assert.equal(store.fingerprint, JSON.parse(v2.store).fingerprint);
        assert.deepEqual(store.exportersOf, { get: order, put: ['new'] });
        const input = new Uint8Array(8);
        assert.deepEqual(byte(await host.call('store', 'get', input, { exporter: 'old' })), [0x10]);
        assert.deepEqual(byte(await host.call('store', 'get', input, { exporter: 'new' })), [0x20]);
        // Without `exporter`: the first module that has the function.
        assert.deepEqual(byte(await host.call('store', 'put', input)), [0x21]);
        await assert.rejects(
          host.call('store', 'put', input, { exporter: 'old' }),
          (err) => code('ERR_GUEST_NO_FUNCTION')(err) && /older version of store, without put/.test(err.message),
        );
        // The old module still works after that.
        assert.deepEqual(byte(await host.call('store', 'get', input, { exporter: 'old' })), [0x10]);
      } finally {
        await host.close();
      }
    }
  });

  test('a fanout of an appended function reaches the exporters that have it', async () => {
    const host = await guests.load([mod('a', v1.scan, 1), mod('b', v2.scan, 2), mod('c', v1.scan, 3)], {
      threads: 2,
    });
    try {
      const input = new Uint8Array(100);
      assert.deepEqual((await host.fanout('scan', 'sum', input)).map(byte), [[0x10], [0x20], [0x30]]);
      assert.deepEqual((await host.fanout('scan', 'size', input)).map(byte), [[0x21]]);
      assert.deepEqual(host.interfaces[0].exportersOf, { sum: ['a', 'b', 'c'], size: ['b'] });
    } finally {
      await host.close();
    }
  });

  test('a function no module present has is ERR_GUEST_NO_FUNCTION', async () => {
    // A v2 importer makes v2 the interface's version; the only exporter is v1.
    const host = await guests.load([mod('old', v1.store, 1), mod('caller', v2.store, 9, { imports: true })], {
      threads: 1,
    });
    try {
      assert.deepEqual(host.interfaces[0].exportersOf, { get: ['old'], put: [] });
      await assert.rejects(host.call('store', 'put', new Uint8Array(1)), code('ERR_GUEST_NO_FUNCTION'));
      assert.deepEqual(byte(await host.call('store', 'get', new Uint8Array(1))), [0x10]);
    } finally {
      await host.close();
    }
  });

  test('a guest calling a guest reaches an exporter whose version has the function', async () => {
    // "relay" (hand-written descriptor) imports store v2; its function k calls store's k.
    const relay = JSON.stringify({
      name: 'relay',
      pattern: 'direct',
      fingerprint: '0123456789abcdef',
      memories: [],
      functions: [
        { name: 'get', input: null, output: { memory: null } },
        { name: 'put', input: null, output: { memory: null } },
      ],
    });
    const enc = new TextEncoder();
    const store = enc.encode(v2.store);
    const name = enc.encode('store');
    const i32 = (v) => [0x41, ...sleb64(v)];
    const importer = assemble({
      descriptor: relay,
      imports: [{ name: 'invoke', type: [[I32, I32, I32, I32, I32], [I64]] }],
      body: {
        offthread_init: i32((1 << 16) | 1),
        offthread_import: [0x42, ...sleb64((BigInt(store.length) << 32n) | 2560n)],
        // offthread.invoke("store", fn, 0, 0): the answer, or -1.
        offthread_call: [...i32(3584), ...i32(name.length), 0x20, 0x01, ...i32(0), ...i32(0), 0x10, 0x00],
      },
      data: [
        { offset: 2560, bytes: store },
        { offset: 3584, bytes: name },
      ],
    });
    const host = await guests.load(
      [mod('old', v1.store, 1), { name: 'relay', bytes: importer }, mod('new', v2.store, 2)],
      {
        threads: 1,
      },
    );
    try {
      assert.deepEqual(byte(await host.call('relay', 'get')), [0x10], 'get: the first exporter');
      assert.deepEqual(byte(await host.call('relay', 'put')), [0x21], 'put: not old, which lacks it');
    } finally {
      await host.close();
    }
  });

  test('modules that are not versions of one another are refused at load', async () => {
    const changed = descriptors(V1.replace('get: (blob) -> (blob);', 'get: (blob) -> ();'));
    const pooled = descriptors(V2.replace('(dynamic, direct)', '(dynamic, pool)'));
    for (const [a, b, why] of [
      [v2.store, changed.store, /function #0 \(get\) differs/],
      [v1.store, pooled.store, /pattern is direct in one and pool in the other/],
    ]) {
      await assert.rejects(
        guests.load([mod('x', a, 1), mod('y', b, 2)], { threads: 1 }),
        (err) => code('ERR_GUEST_MODULE')(err) && why.test(err.message) && /not a version/.test(err.message),
      );
    }
  });

  test('one adding a memory, another a function: both are prefixes of one line, and load', async () => {
    const memOnly = descriptors(V1.replace('sum:', 'out: memory (import: read, export: write, 1);\n    sum:'));
    const fnOnly = descriptors(
      V1.replace('sum: (blob @ input) -> (blob);', 'sum: (blob @ input) -> (blob);\n    more: (blob @ input) -> ();'),
    );
    assert.deepEqual(
      [memOnly.scan, fnOnly.scan].map((d) => [JSON.parse(d).memories.length, JSON.parse(d).functions.length]),
      [
        [2, 1],
        [1, 2],
      ],
    );
    const host = await guests.load([mod('m', memOnly.scan, 1), mod('f', fnOnly.scan, 2), mod('v1', v1.scan, 3)], {
      threads: 1,
    });
    try {
      const scan = host.interfaces[0];
      assert.deepEqual(scan.exportersOf, { sum: ['m', 'f', 'v1'], more: ['f'] });
      // Removing any of them leaves a set that is still one line.
      await host.remove('f');
      assert.deepEqual(host.interfaces[0].exportersOf, { sum: ['m', 'v1'] });
      assert.deepEqual((await host.fanout('scan', 'sum', new Uint8Array(1))).map(byte), [[0x10], [0x30]]);
    } finally {
      await host.close();
    }
  });

  test('a module whose descriptor predates function fingerprints loads with its own version only', async () => {
    // What the compiler wrote before: no "fingerprint" per function, the same interface's.
    const legacy = (d) => d.replace(/"fingerprint":"[0-9a-f]{16}","input"/g, '"input"');
    assert.doesNotMatch(JSON.stringify(JSON.parse(legacy(v1.store)).functions), /fingerprint/);
    const same = await guests.load([mod('old', legacy(v1.store), 1), mod('new', v1.store, 2)], { threads: 1 });
    assert.deepEqual(byte(await same.call('store', 'get', new Uint8Array(1), { exporter: 'old' })), [0x10]);
    await same.close();
    await assert.rejects(
      guests.load([mod('old', legacy(v1.store), 1), mod('new', v2.store, 2)], { threads: 1 }),
      (err) => code('ERR_GUEST_MODULE')(err) && /rebuild it/.test(err.message),
    );
  });
});

describe('a live host', () => {
  test('add: a module joins the running host; calls and fanouts that start afterwards reach it', async () => {
    const host = await guests.load([mod('a', v1.scan, 1)], { threads: 2 });
    try {
      const input = new Uint8Array(4);
      const before = host.fanout('scan', 'sum', input);
      const added = host.add([mod('b', v2.scan, 2), { bytes: guest(v1.scan, 3) }]);
      assert.deepEqual(await added, ['b', 'guest2']);
      assert.deepEqual((await before).map(byte), [[0x10]], 'a fanout reaches the exporters present when it starts');
      assert.deepEqual((await host.fanout('scan', 'sum', input)).map(byte), [[0x10], [0x20], [0x30]]);
      assert.deepEqual((await host.fanout('scan', 'size', input)).map(byte), [[0x21]]);
      assert.deepEqual(host.modules, ['a', 'b', 'guest2']);
      await assert.rejects(host.add(mod('b', v1.scan, 4)), code('ERR_INVALID_ARG'));
      const fork = descriptors(V1.replace('sum: (blob @ input) -> (blob);', 'sum: (blob @ input) -> ();'));
      await assert.rejects(host.add(mod('d', fork.scan, 4)), code('ERR_GUEST_MODULE'));
      await assert.rejects(host.add({ name: 'e', bytes: new Uint8Array([0, 1, 2]) }), code('ERR_GUEST_MODULE'));
      assert.deepEqual(host.modules, ['a', 'b', 'guest2'], 'a refused module leaves the host as it was');
    } finally {
      await host.close();
    }
  });

  test('bad arguments to add and remove are typed errors; after close, add is ERR_POOL_CLOSED', async () => {
    const host = await guests.load([mod('a', v1.store, 1)], { threads: 1 });
    await assert.rejects(host.add([]), code('ERR_INVALID_ARG'));
    await assert.rejects(host.add('x'), code('ERR_INVALID_ARG'));
    await assert.rejects(host.remove(7), code('ERR_INVALID_ARG'));
    await assert.rejects(host.remove('nobody'), code('ERR_INVALID_ARG'));
    await host.close();
    await assert.rejects(host.add(mod('b', v1.store, 2)), code('ERR_POOL_CLOSED'));
  });

  test('remove waits for the calls already running or queued on the module', async () => {
    // One worker: the second call waits in the host's queue while the first runs. Were
    // the module dropped from the workers at once, the queued call would find it gone.
    const host = await guests.load([mod('a', v1.store, 1), mod('b', v1.store, 2)], { threads: 1 });
    try {
      const input = new Uint8Array(4);
      const first = host.call('store', 'get', input, { exporter: 'a' });
      const queued = host.call('store', 'get', input, { exporter: 'a' });
      const removed = host.remove('a');
      assert.deepEqual(host.modules, ['b'], 'new calls no longer choose it');
      await assert.rejects(host.call('store', 'get', input, { exporter: 'a' }), code('ERR_INVALID_ARG'));
      assert.deepEqual(byte(await host.call('store', 'get', input)), [0x20], 'the default is the next exporter');
      assert.deepEqual([byte(await first), byte(await queued)], [[0x10], [0x10]]);
      await removed;
      await assert.rejects(host.remove('a'), code('ERR_INVALID_ARG'));
      // The name is free again: a new module, with a new index.
      assert.deepEqual(await host.add(mod('a', v2.store, 3)), ['a']);
      assert.deepEqual(byte(await host.call('store', 'put', input)), [0x31]);
      await host.remove('b');
      await host.remove('a');
      await assert.rejects(host.call('store', 'get', input), code('ERR_INVALID_ARG'));
    } finally {
      await host.close();
    }
  });

  test('under load: calls, fanouts, adds and removes together; every call settles, none is lost', {
    timeout: 120_000,
  }, async () => {
    const host = await guests.load([mod('s0', v1.scan, 1), mod('d0', v1.store, 1)], { threads: 2 });
    try {
      const input = new Uint8Array(64);
      const settle = (p) =>
        p.then(
          (value) => ({ status: 'fulfilled', value }),
          (reason) => ({ status: 'rejected', reason }),
        );
      const calls = [];
      const sums = [];
      const removals = [];
      const present = { scan: ['s0'], store: ['d0'] };
      for (let next = 1; next <= 40; next++) {
        for (let k = 0; k < 10; k++) {
          const pick = present.store[k % present.store.length];
          // Settled as they go: allSettled at the end would see early rejections unhandled.
          calls.push(settle(host.call('store', k % 2 ? 'put' : 'get', input, k % 3 ? { exporter: pick } : {})));
          const fanout = settle(host.fanout('scan', k % 2 ? 'size' : 'sum', input));
          calls.push(fanout);
          if (k % 2 === 0) sums.push(fanout);
        }
        // While those run: the oldest pair leaves, waiting for its calls among them, and a
        // v1 or v2 pair joins (its describe queues behind them on the workers).
        if (present.scan.length === 3) {
          removals.push(host.remove(present.scan.shift()), host.remove(present.store.shift()));
        }
        const v = next % 2 ? v2 : v1;
        const tag = (next % 14) + 1;
        const names = await host.add([mod(`s${next}`, v.scan, tag), mod(`d${next}`, v.store, tag)]);
        present.scan.push(names[0]);
        present.store.push(names[1]);
      }
      await Promise.all(removals);
      const settled = await Promise.all(calls);
      const allowed = new Set(['ERR_INVALID_ARG', 'ERR_GUEST_NO_FUNCTION']);
      let answered = 0;
      const tags = new Set();
      const rejected = {};
      for (const s of settled) {
        if (s.status === 'rejected') {
          assert.ok(allowed.has(s.reason.code), `${s.reason.code}: ${s.reason.message}`);
          rejected[s.reason.code] = (rejected[s.reason.code] ?? 0) + 1;
          continue;
        }
        answered++;
        for (const bytes of Array.isArray(s.value) ? s.value : [s.value]) {
          assert.equal(bytes.length, 1);
          assert.ok(bytes[0] >> 4 >= 1 && (bytes[0] & 0xf) <= 1, `an answer from a guest: ${bytes[0]}`);
          tags.add(bytes[0] >> 4);
        }
      }
      assert.equal(settled.length, 800);
      assert.ok(answered > 0, `no call was answered: ${JSON.stringify(rejected)}`);
      // There is always a scan exporter present: every fanout of sum is answered.
      assert.deepEqual(new Set((await Promise.all(sums)).map((r) => r.status)), new Set(['fulfilled']));
      assert.ok(tags.size > 1, 'modules added while calls ran answered some of them');
      assert.equal(host.modules.length, 6);
    } finally {
      await host.close();
    }
  });
});

describe('guests calling guests (Karmem §4.3.2)', () => {
  const enc = new TextEncoder();
  const i32 = (v) => [0x41, ...sleb64(v)];
  const call = (n) => [0x10, ...sleb64(n)];
  const direct = (name, fns, pattern = 'direct') =>
    JSON.stringify({
      name,
      pattern,
      fingerprint: '0123456789abcdef',
      memories: [],
      functions: fns.map((f) => ({ name: f, input: null, output: { memory: null } })),
    });
  // The optional imports, as function 0, 1, 2 of the importers below.
  const LINKS = [
    { name: 'invoke_at', type: [[I32, I32, I32, I32, I32, I32], [I64]] },
    { name: 'exporters', type: [[I32, I32], [I32]] },
    { name: 'exporter_index', type: [[I32, I32, I32, I32], [I32]] },
    { name: 'invoke', type: [[I32, I32, I32, I32, I32], [I64]] },
  ];
  /** A guest exporting `exports` and importing `imported` (a descriptor), with `offthread_call` = `call`. */
  function importer(exports, imported, body, strings) {
    const desc = enc.encode(imported);
    return assemble({
      descriptor: exports,
      imports: LINKS,
      body: {
        offthread_init: i32((1 << 16) | 1),
        offthread_import: [0x42, ...sleb64((BigInt(desc.length) << 32n) | 2560n)],
        offthread_call: body,
      },
      data: [{ offset: 2560, bytes: desc }, ...strings.map(([offset, text]) => ({ offset, bytes: enc.encode(text) }))],
    });
  }

  test('the importer picks the exporter by index or by name, and counts them', async () => {
    const NAME = [3584, 'store'];
    const NEW = [3600, 'new'];
    const store = [...i32(NAME[0]), ...i32(5)];
    // relay fn 0, 1: store.get on exporter #fn; fn 2: on the one named "new"; fn 3: how
    // many exporters there are (a byte at 2048). A guest's fanout is a loop over these
    // (offthread_guest::fanout).
    const body = [
      0x20,
      0x01,
      ...i32(2),
      0x46,
      0x04,
      0x7e, // if fn == 2
      ...store,
      ...store,
      ...i32(NEW[0]),
      ...i32(3),
      ...call(2),
      ...i32(0),
      ...i32(0),
      ...i32(0),
      ...call(0),
      0x05,
      0x20,
      0x01,
      ...i32(3),
      0x46,
      0x04,
      0x7e, // else if fn == 3
      ...i32(2048),
      ...store,
      ...call(1),
      0x3a,
      0x00,
      0x00,
      0x42,
      ...sleb64((1n << 32n) | 2048n),
      0x05,
      ...store,
      0x20,
      0x01,
      ...i32(0),
      ...i32(0),
      ...i32(0),
      ...call(0), // else invoke_at(fn)
      0x0b,
      0x0b,
    ];
    const relay = importer(direct('relay', ['first', 'second', 'named', 'count']), v2.store, body, [NAME, NEW]);
    const host = await guests.load(
      [mod('old', v1.store, 1), { name: 'relay', bytes: relay }, mod('new', v2.store, 2), mod('third', v2.store, 3)],
      { threads: 1 },
    );
    try {
      assert.deepEqual(byte(await host.call('relay', 'first')), [0x10]);
      assert.deepEqual(byte(await host.call('relay', 'second')), [0x20]);
      assert.deepEqual(byte(await host.call('relay', 'named')), [0x20]);
      assert.deepEqual(byte(await host.call('relay', 'count')), [3]);
      await host.remove('old');
      assert.deepEqual(byte(await host.call('relay', 'first')), [0x20], 'indices follow the modules present');
      assert.deepEqual(byte(await host.call('relay', 'count')), [2]);
    } finally {
      await host.close();
    }
  });

  test('single: one instance for the host and every importing guest, its state shared', async () => {
    // tally.next: a byte at 2048, incremented per call, is the answer.
    const next = [
      ...i32(2048),
      ...i32(2048),
      0x2d,
      0x00,
      0x00,
      ...i32(1),
      0x6a,
      0x3a,
      0x00,
      0x00,
      0x42,
      ...sleb64((1n << 32n) | 2048n),
    ];
    const tallyDesc = direct('tally', ['next'], 'singleton');
    const tally = assemble({ descriptor: tallyDesc, body: { offthread_call: next } });
    // relay.next: offthread.invoke("tally", 0, 0, 0).
    const viaGuest = [...i32(3584), ...i32(5), ...i32(0), ...i32(0), ...i32(0), ...call(3)];
    const relay = importer(direct('relay', ['next']), tallyDesc, viaGuest, [[3584, 'tally']]);
    const host = await guests.load(
      [
        { name: 'tally', bytes: tally },
        { name: 'relay', bytes: relay },
      ],
      { threads: 2 },
    );
    try {
      const seen = [byte(await host.call('tally', 'next'))[0]];
      const both = await Promise.all(Array.from({ length: 8 }, (_, k) => host.call(k % 2 ? 'tally' : 'relay', 'next')));
      seen.push(...both.map((b) => b[0]));
      seen.push(byte(await host.call('tally', 'next'))[0]);
      assert.deepEqual(seen, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    } finally {
      await host.close();
    }
  });
});
