// Issue 33 item 1: a fanout's input read in place from one shared memory. Guests read
// their input through the `offthread.input` accessors; where the engine has
// multi-memory, guests.load rewrites each accessor call into a load from the imported
// input memory (wasm-rewrite.ts), and a fanout writes its input once into that memory
// for every such exporter (shared-input.ts). Before, every exporter got its own copy
// (9 copies for 8 exporters); without multi-memory (Node 20) they still do, and the
// answers are the same.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { guests } from 'offthread';
import { I32, I64, section, sleb, str, uleb, vec } from '../../../tests/guests/wasm-encode.mjs';
import { formatSignature, INPUT_SIGNATURES } from '../dist/guests/abi.js';
import { rewriteInputAccessors } from '../dist/guests/wasm-rewrite.js';
import { readMemories } from '../dist/guests/wasm-scan.js';
import * as msg from '../dist/schema/generated/fixtures/guests.js';
import { assemble, DESCRIPTOR, LOOP, pack } from './guests-wasm.mjs';

const multi = guests.multiMemory();
const F32 = 0x7d;
const F64 = 0x7c;

const dir = new URL('../../../target/wasm32-unknown-unknown/release/', import.meta.url);
const basic = readFileSync(new URL('guest_basic.wasm', dir));
const blob = (data) => msg.encodeBlob({ data });
const countOf = (bytes) => msg.decodeCount(bytes).value;

function fnv(bytes) {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h;
}

/** A blob whose data's array header lies past its end (aligned): R0001 for any reader. */
function outOfBounds() {
  const bad = blob(Uint8Array.of(1, 2, 3));
  new DataView(bad.buffer, bad.byteOffset).setUint32(4, Math.ceil((bad.length + 64) / 64) * 64, true);
  return bad;
}

const code = (c) => (err) => err.code === c || assert.fail(`${err.code}: ${err.message}`);
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A fanout interface `scan` whose function `first` takes its input in memory `input` (`pages`). */
const scanDescriptor = (pages) =>
  JSON.stringify({
    name: 'scan',
    pattern: 'fanout',
    fingerprint: '0123456789abcdef',
    memories: [{ name: 'input', import: 'write', export: 'read', pages }],
    functions: [
      { name: 'first', fingerprint: 'fedcba9876543210', input: { memory: 'input' }, output: { memory: null } },
    ],
  });

const LOAD_U8 = { module: 'offthread.input', name: 'load_u8', type: [[I32], [I32]] };

/**
 * A hand-made exporter of `scan` answering the first byte of its input: in place
 * (bit 31 of `export`) through `offthread.input.load_u8` (function 0), otherwise from
 * its own copy in env.memory, as the ABI says a guest must.
 */
const firstByte = (pages = 4, call = null) =>
  assemble({
    descriptor: scanDescriptor(pages),
    imports: [LOAD_U8],
    body: {
      offthread_call: call ?? [
        ...[0x41, ...sleb(2048)], // the answer's address
        ...[0x20, 0x00, 0x41, 0x00, 0x48], // export < 0: bit 31, in place
        ...[0x04, I32, 0x20, 0x02, 0x10, 0x00], // if: load_u8(ptr)
        ...[0x05, 0x20, 0x02, 0x2d, 0x00, 0x00, 0x0b], // else: i32.load8_u (env.memory) ptr
        ...[0x3a, 0x00, 0x00], // i32.store8
        ...[0x42, ...sleb(pack(2048, 1))],
      ],
    },
  });

describe('the load-time rewrite of the input accessors', { skip: !multi && 'no multi-memory' }, () => {
  // One exported function per accessor, each calling it directly, plus one that
  // tail-calls load_u64 (return_call): the rewrite must leave a load then `return`.
  const ACCESSORS = [
    ['load_u8', [I32], [I32]],
    ['load_u16', [I32], [I32]],
    ['load_u32', [I32], [I32]],
    ['load_u64', [I32], [I64]],
    ['load_f32', [I32], [F32]],
    ['load_f64', [I32], [F64]],
    ['copy', [I32, I32, I32], []],
  ];
  const types = ACCESSORS.map(([, p, r]) => [0x60, ...vec(p.map((t) => [t])), ...vec(r.map((t) => [t]))]);
  const body = (b) => {
    const full = [0x00, ...b, 0x0b];
    return [...uleb(full.length), ...full];
  };
  const calls = ACCESSORS.map(([, params], i) => body([...params.flatMap((_, k) => [0x20, k]), 0x10, i]));
  const module = new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec(types)),
    ...section(
      2,
      vec([
        ...ACCESSORS.map(([name], i) => [...str('offthread.input'), ...str(name), 0x00, i]),
        [...str('env'), ...str('memory'), 0x02, 0x00, 0x01],
      ]),
    ),
    ...section(3, vec([...ACCESSORS.map((_, i) => [i]), [3]])),
    ...section(
      7,
      vec([
        ...ACCESSORS.map(([name], i) => [...str(name), 0x00, ...uleb(7 + i)]),
        [...str('tail_u64'), 0x00, ...uleb(14)],
      ]),
    ),
    ...section(10, vec([...calls, body([0x20, 0x00, 0x12, 0x03])])),
  ]);

  test('every call becomes a load from the imported shared memory; the module validates; values are right', () => {
    assert.ok(WebAssembly.validate(module), 'the hand-made module is valid before');
    const out = rewriteInputAccessors(module, 'scan.input', 1, 't');
    assert.equal(out.calls, 8);
    assert.equal(out.memoryIndex, 1);
    assert.ok(WebAssembly.validate(out.bytes), 'the rewritten module validates');
    const found = readMemories(out.bytes, 't', true);
    assert.deepEqual(found.memories[1]?.import, { module: 'offthread.memory', name: 'scan.input' });
    assert.equal(found.memories[1]?.shared, true);
    assert.equal(found.writes[1], undefined, 'nothing writes the input memory');

    const input = new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
    const own = new WebAssembly.Memory({ initial: 1 });
    const view = new DataView(input.buffer);
    view.setBigUint64(100, 0x8877665544332211n, true);
    view.setFloat32(200, 1.5, true);
    view.setFloat64(208, -2.25, true);
    // The imports are still there (no index moved) but must never be called.
    const never = Object.fromEntries(
      ACCESSORS.map(([name]) => [
        name,
        () => {
          throw new Error(`${name} was called`);
        },
      ]),
    );
    const { exports: e } = new WebAssembly.Instance(new WebAssembly.Module(out.bytes), {
      'offthread.input': never,
      env: { memory: own },
      'offthread.memory': { 'scan.input': input },
    });
    assert.equal(e.load_u8(100), 0x11);
    assert.equal(e.load_u16(101), 0x3322);
    assert.equal(e.load_u32(103) >>> 0, 0x77665544);
    assert.equal(BigInt.asUintN(64, e.load_u64(100)), 0x8877665544332211n);
    assert.equal(BigInt.asUintN(64, e.tail_u64(100)), 0x8877665544332211n);
    assert.equal(e.load_f32(200), 1.5);
    assert.equal(e.load_f64(208), -2.25);
    e.copy(16, 100, 8);
    assert.deepEqual([...new Uint8Array(own.buffer, 16, 8)], [0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]);
    assert.throws(() => e.load_u8(65_536), WebAssembly.RuntimeError, 'out of bounds is a trap');
  });

  test('an interface memory the module imports itself becomes shared, at its own index', () => {
    const bytes = assemble({
      descriptor: scanDescriptor(4),
      imports: [LOAD_U8],
      memories: [{ name: 'scan.input', min: 1, max: 4 }],
    });
    const out = rewriteInputAccessors(bytes, 'scan.input', 4, 't');
    assert.equal(out.memoryIndex, 1);
    const found = readMemories(out.bytes, 't', true);
    assert.equal(found.memories.length, 2, 'no second import of it');
    assert.deepEqual([found.memories[1]?.shared, found.memories[1]?.initial, found.memories[1]?.maximum], [true, 4, 4]);
  });
});

describe('guests.load and the input accessors', () => {
  const load = (bytes) =>
    guests.load([{ name: 'g', bytes }], { threads: 1 }).then(
      (h) => h.close({ timeout: 0 }).then(() => null),
      (err) => err,
    );

  test('an accessor import with a wrong signature is refused with ERR_GUEST_MODULE', async () => {
    const wrong = assemble({
      descriptor: scanDescriptor(4),
      imports: [{ module: 'offthread.input', name: 'load_u64', type: [[I32], [I32]] }],
    });
    const err = await load(wrong);
    assert.equal(err?.code, 'ERR_GUEST_MODULE');
    assert.match(
      err.message,
      /import offthread\.input\.load_u64 is \(i32\) -> i32, the guest ABI needs \(i32\) -> i64/,
    );
  });

  test('an accessor the host does not offer is refused', async () => {
    const err = await load(
      assemble({
        descriptor: scanDescriptor(4),
        imports: [{ module: 'offthread.input', name: 'load_i128', type: [[I32], [I64]] }],
      }),
    );
    assert.equal(err?.code, 'ERR_GUEST_MODULE');
    assert.match(err.message, /offthread\.input\.load_i128 is not an input accessor the host offers/);
  });

  test('accessors in a module that exports no input memory: it loads, and reads nothing in place', async () => {
    const host = await guests.load([assemble({ descriptor: DESCRIPTOR, imports: [LOAD_U8] })], { threads: 1 });
    try {
      assert.deepEqual([...(await host.call('raw', 'run'))], []);
      assert.equal(host.inputRegions(), 0);
    } finally {
      await host.close();
    }
  });

  test('host.stats().sharedInput: in place where the engine has multi-memory, unless sharedInput: false', async () => {
    for (const [options, expected] of [
      [{}, multi],
      [{ sharedInput: false }, false],
    ]) {
      const host = await guests.load([firstByte()], { threads: 1, ...options });
      assert.equal(host.stats().sharedInput, expected);
      await host.close();
    }
    await assert.rejects(guests.load([firstByte()], { sharedInput: 'yes' }), code('ERR_INVALID_ARG'));
  });
});

describe('fanout in place', () => {
  test('a hand-made guest reads the first byte where the host put it; one write, no copies in place', async () => {
    const host = await guests.load(
      [1, 2, 3].map((i) => ({ name: `g${i}`, bytes: firstByte() })),
      { threads: 2 },
    );
    try {
      const before = host.stats();
      const out = await host.fanout('scan', 'first', Uint8Array.of(7, 1, 2));
      assert.deepEqual(
        out.map((b) => [...b]),
        [[7], [7], [7]],
      );
      const s = host.stats();
      assert.equal(s.sharedBytes - before.sharedBytes, 3, 'written once');
      assert.equal(s.copiedIn - before.copiedIn, multi ? 0 : 9);
    } finally {
      await host.close();
    }
  });

  test('1 MiB to 8 Rust guests: checksum_in_place reads in place (1 copy), the same answers as the copies', async () => {
    const data = Uint8Array.from({ length: 1 << 20 }, (_, i) => (i * 31) & 0xff);
    const input = blob(data);
    const eight = Array.from({ length: 8 }, (_, i) => ({ name: `g${i}`, bytes: basic }));
    const expected = Array(8).fill(fnv(data));
    for (const sharedInput of [true, false]) {
      const host = await guests.load(eight, { threads: 2, sharedInput });
      try {
        const inPlace = sharedInput && multi;
        assert.equal(host.stats().sharedInput, inPlace);
        const before = host.stats();
        assert.deepEqual((await host.fanout('scan', 'checksum_in_place', input)).map(countOf), expected);
        const s = host.stats();
        const copies = (s.sharedBytes - before.sharedBytes + s.copiedIn - before.copiedIn) / input.length;
        assert.equal(copies, inPlace ? 1 : 9);
        // The generated typed reader of `checksum` reads in place too (issue 33 item 1).
        const mid = host.stats();
        assert.deepEqual((await host.fanout('scan', 'checksum', input)).map(countOf), expected);
        const t = host.stats();
        assert.equal((t.sharedBytes - mid.sharedBytes + t.copiedIn - mid.copiedIn) / input.length, inPlace ? 1 : 9);
        await settle();
        assert.equal(host.inputRegions(), 0);
      } finally {
        await host.close();
      }
    }
  });

  // A Rust guest's memory capped a few pages above what it needs at start: no room for
  // a copy of a 1 MiB input. What fits in it reads in place; what copies fails.
  const initialPages = readMemories(basic, 'basic').memories[0].initial;
  const capped = { memoryPages: initialPages + 4 };

  test('the generated typed reader reads a 1 MiB fanout in place: no copy in the host, none in the guest', async () => {
    // The only way a guest copies out of the input memory is the `copy` accessor (a
    // memory.copy once rewritten); the basic guest's readers make none, so it has none.
    const imports = WebAssembly.Module.imports(new WebAssembly.Module(basic)).map((i) => `${i.module}.${i.name}`);
    assert.ok(imports.includes('offthread.input.load_u64'), imports.join(' '));
    assert.ok(!imports.includes('offthread.input.copy'), 'no memory.copy of the input');
    const data = Uint8Array.from({ length: 1 << 20 }, (_, i) => (i * 7 + 3) & 0xff);
    const input = blob(data);
    const eight = Array.from({ length: 8 }, (_, i) => ({ name: `g${i}`, bytes: basic }));
    const expected = Array(8).fill(fnv(data));
    // In place: written once, and the guests, with no room for a copy, answer.
    if (multi) {
      const host = await guests.load(eight, { threads: 2, ...capped });
      try {
        const before = host.stats();
        assert.deepEqual((await host.fanout('scan', 'checksum', input)).map(countOf), expected);
        const s = host.stats();
        assert.equal(s.sharedBytes - before.sharedBytes, input.length, 'one write');
        assert.equal(s.copiedIn - before.copiedIn, 0, 'no copy into a guest');
      } finally {
        await host.close();
      }
    }
    // The same guests copying (Node 20, or sharedInput: false): the same answers by
    // copies, and with the cap, no room for them — what an in-place read avoids.
    for (const sharedInput of [true, false]) {
      if (multi && sharedInput) continue;
      const host = await guests.load(eight, { threads: 2, sharedInput });
      try {
        const before = host.stats();
        assert.deepEqual((await host.fanout('scan', 'checksum', input)).map(countOf), expected);
        const s = host.stats();
        assert.equal((s.sharedBytes - before.sharedBytes + s.copiedIn - before.copiedIn) / input.length, 9);
      } finally {
        await host.close();
      }
      const tight = await guests.load(eight.slice(0, 2), { threads: 1, sharedInput, ...capped });
      try {
        await assert.rejects(tight.fanout('scan', 'checksum', input), code('ERR_GUEST_MEMORY_LIMIT'));
      } finally {
        await tight.close();
      }
    }
  });

  test('a typed read in place refuses a malformed message with the R code of the slice reader', async () => {
    const host = await guests.load([{ name: 'a', bytes: basic }], { threads: 1 });
    try {
      const bad = outOfBounds();
      for (const fn of ['checksum', 'scribble']) {
        await assert.rejects(host.fanout('scan', fn, bad), (err) => {
          assert.equal(err.code, 'ERR_GUEST_FAILED');
          assert.match(err.message, /invalid input: R0001/);
          return true;
        });
      }
      assert.deepEqual(await host.call('echo', 'echo', bad).catch((e) => e.message.match(/R\d{4}/)?.[0]), 'R0001');
    } finally {
      await host.close();
    }
  });

  test('concurrent fanouts of different inputs each read their own', async () => {
    const host = await guests.load(
      [
        { name: 'a', bytes: basic },
        { name: 'b', bytes: basic },
      ],
      { threads: 2 },
    );
    try {
      const inputs = [1, 2, 3, 4, 5].map((k) =>
        Uint8Array.from({ length: 100_000 + k * 4099 }, (_, i) => (i * k) & 0xff),
      );
      const out = await Promise.all(inputs.map((d) => host.fanout('scan', 'checksum_in_place', blob(d))));
      assert.deepEqual(
        out.map((r) => r.map(countOf)),
        inputs.map((d) => [fnv(d), fnv(d)]),
      );
      await settle();
      assert.equal(host.inputRegions(), 0, 'every region freed');
    } finally {
      await host.close();
    }
  });

  test('with no room in the input memory a fanout copies instead of waiting', async () => {
    // One page of input memory: two 40 KiB inputs cannot both be in it.
    const host = await guests.load([firstByte(1)], { threads: 1 });
    try {
      const [a, b] = [5, 6].map((k) => new Uint8Array(40_000).fill(k));
      const before = host.stats();
      const both = Promise.all([host.fanout('scan', 'first', a), host.fanout('scan', 'first', b)]);
      assert.equal(host.inputRegions(), multi ? 1 : 0, 'the first holds the memory');
      assert.deepEqual(
        (await both).map((r) => [...r[0]]),
        [[5], [6]],
      );
      const s = host.stats();
      assert.equal(s.copiedIn - before.copiedIn, multi ? 40_000 : 80_000, 'the second was copied');
      await settle();
      assert.equal(host.inputRegions(), 0);
    } finally {
      await host.close();
    }
  });

  test('the region is freed after a timeout, an abort and the workers stopping', {
    skip: !multi && 'no multi-memory',
  }, async () => {
    const spinner = firstByte(4, LOOP);
    const host = await guests.load([{ name: 'spin', bytes: spinner }], { threads: 1 });
    try {
      const timedOut = host.fanout('scan', 'first', Uint8Array.of(1), { timeout: 50 });
      assert.equal(host.inputRegions(), 1);
      await assert.rejects(timedOut, code('ERR_TIMEOUT'));
      await settle();
      assert.equal(host.inputRegions(), 0, 'freed after the timeout');
      const ac = new AbortController();
      const aborted = host.fanout('scan', 'first', Uint8Array.of(1), { signal: ac.signal });
      assert.equal(host.inputRegions(), 1);
      setTimeout(() => ac.abort(), 20);
      await assert.rejects(aborted, code('ERR_ABORTED'));
      await settle();
      assert.equal(host.inputRegions(), 0, 'freed after the abort');
      // Its workers stopped under it (destroy): the call fails, the region is freed.
      const stopped = host.fanout('scan', 'first', Uint8Array.of(1));
      assert.equal(host.inputRegions(), 1);
      host.destroy();
      await assert.rejects(stopped, code('ERR_POOL_CLOSED'));
      await settle();
      assert.equal(host.inputRegions(), 0, 'freed after the workers stopped');
    } finally {
      await host.close({ timeout: 0 });
    }
  });

  test('a fanout whose guests fail, trap or lose their worker frees its region; the next fanouts run', async () => {
    // 64 KiB fits the capped memory below even as a copy (Node 20); 1 MiB does not.
    const data = Uint8Array.from({ length: 1 << 16 }, (_, i) => (i * 13) & 0xff);
    const good = blob(data);
    const big = blob(new Uint8Array(1 << 20).fill(9));
    const bad = outOfBounds();
    const four = Array.from({ length: 4 }, (_, i) => ({ name: `g${i}`, bytes: basic }));
    // Capped memory: `scribble` in place copies the data to write over it, and traps
    // when that copy does not fit.
    const host = await guests.load(four, { threads: 2, ...capped });
    const next = async () => {
      // A fanout rejects at its first failure; its region is freed once every exporter
      // has settled. Wait for that (an event, not a time: 10 s means it never came).
      for (let i = 0; i < 2000 && host.inputRegions() > 0; i++) await new Promise((r) => setTimeout(r, 5));
      assert.equal(host.inputRegions(), 0, 'the region is freed');
      assert.deepEqual((await host.fanout('scan', 'checksum', good)).map(countOf), Array(4).fill(fnv(data)));
      await settle();
      assert.equal(host.inputRegions(), 0);
    };
    try {
      // 1. Every exporter calls offthread.fail (an invalid message).
      const failed = host.fanout('scan', 'checksum', bad);
      assert.equal(host.inputRegions(), multi ? 1 : 0, 'held while the exporters run');
      await assert.rejects(failed, code('ERR_GUEST_FAILED'));
      await next();
      // 2. Every exporter traps, out of memory (in place: its own copy of 1 MiB; copied:
      //    the host's copy does not fit either).
      const trapped = host.fanout('scan', 'scribble', big);
      assert.equal(host.inputRegions(), multi ? 1 : 0);
      await assert.rejects(trapped, code('ERR_GUEST_MEMORY_LIMIT'));
      await next();
      // 3. The workers are stopped under the fanout: one spins until its timeout
      //    terminates it; the fanout queued behind it is held, then runs or fails.
      const spin = host.call('echo', 'spin', null, { timeout: 100, exporter: 'g0' });
      const spin2 = host.call('echo', 'spin', null, { timeout: 100, exporter: 'g1' });
      const queued = host.fanout('scan', 'checksum', good);
      assert.equal(host.inputRegions(), multi ? 1 : 0);
      await assert.rejects(spin, code('ERR_TIMEOUT'));
      await assert.rejects(spin2, code('ERR_TIMEOUT'));
      assert.deepEqual((await queued).map(countOf), Array(4).fill(fnv(data)));
      assert.ok(host.stats().replaced >= 1, 'a worker was replaced');
      await next();
    } finally {
      await host.close();
    }
  });

  test('a replacement worker gets the input memory too', async () => {
    const host = await guests.load([{ name: 'a', bytes: basic }], { threads: 1 });
    try {
      await assert.rejects(host.call('echo', 'spin', null, { timeout: 50 }), code('ERR_TIMEOUT'));
      const data = Uint8Array.from({ length: 5000 }, (_, i) => i & 0xff);
      const before = host.stats();
      assert.deepEqual((await host.fanout('scan', 'checksum_in_place', blob(data))).map(countOf), [fnv(data)]);
      assert.equal(host.stats().copiedIn - before.copiedIn, multi ? 0 : blob(data).length);
      assert.equal(host.stats().replaced >= 1, true);
    } finally {
      await host.close();
    }
  });
});

test('docs/guest-abi.md lists every input accessor with the type the host checks', () => {
  const page = readFileSync(new URL('../../../docs/guest-abi.md', import.meta.url), 'utf8');
  for (const [name, signature] of Object.entries(INPUT_SIGNATURES)) {
    const row = page.split('\n').find((l) => l.startsWith(`| \`${name}\``));
    assert.ok(row, `${name} has a row`);
    const type = row.split('|')[2].trim().replace(/`/g, '').replace(/\w+: /g, '');
    assert.equal(type, formatSignature(signature), `${name} in the docs`);
  }
});
