// Issue 33 item 1 (part): read-only by construction. A guest may import an interface
// memory (`offthread.memory` `<interface>.<memory>`, docs/guest-abi.md) where the engine
// has multi-memory; `guests.load` reads every instruction of such a guest and refuses
// one that writes a memory its interface declares read-only for it. Before, nothing
// refused such a store (permissions held only because each guest got a private copy).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { guests } from 'offthread';
import { sleb, uleb } from '../../../tests/guests/wasm-encode.mjs';
import { readMemories } from '../dist/guests/wasm-scan.js';
import { READONLY_CASES, scanDescriptor } from './guests-readonly-cases.mjs';
import { assemble } from './guests-wasm.mjs';

const multi = WebAssembly.validate(
  new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x05, 0x05, 0x02, 0x00, 0x00, 0x00, 0x00]),
);

/** Loads `bytes`; resolves to null (loaded, closed) or the refusal. */
async function load(bytes) {
  try {
    const host = await guests.load([{ name: 'g', bytes }], { threads: 1 });
    await host.close({ timeout: 0 });
    return null;
  } catch (err) {
    return err;
  }
}

describe('multi-memory detection', () => {
  test('guests.multiMemory() and host.stats().multiMemory say what WebAssembly.validate says', async () => {
    // Node 20's V8 has no multi-memory; Node 22, 24 and 26 have it.
    const major = Number(process.versions.node.split('.')[0]);
    assert.equal(guests.multiMemory(), major >= 22);
    assert.equal(guests.multiMemory(), multi);
    const host = await guests.load([assemble({ descriptor: scanDescriptor('read'), body: {} })], { threads: 1 });
    try {
      assert.equal(host.stats().multiMemory, multi);
    } finally {
      await host.close();
    }
  });

  test('offthread doctor and info report it', () => {
    const bin = new URL('../bin/offthread.js', import.meta.url).pathname;
    const run = (cmd) => spawnSync(process.execPath, [bin, cmd], { encoding: 'utf8' });
    const doctor = run('doctor');
    assert.equal(doctor.status, 0, doctor.stderr);
    assert.match(doctor.stdout, multi ? /^guests: multi-memory —/m : /^guests: no multi-memory in this engine/m);
    assert.equal(JSON.parse(run('info').stdout).guests.multiMemory, multi);
  });

  test('without multi-memory, a guest importing an interface memory is refused, saying so', {
    skip: multi,
  }, async () => {
    const err = await load(READONLY_CASES.find((c) => c.name === 'loads from memory 1').bytes());
    assert.equal(err?.code, 'ERR_GUEST_MODULE');
    assert.match(err.message, /has 2 memories, and this engine has no multi-memory/);
  });
});

describe('read-only interface memories are refused at load', { skip: !multi && 'no multi-memory' }, () => {
  for (const c of READONLY_CASES) {
    test(c.name, async () => {
      const err = await load(c.bytes());
      if (c.refused === null) assert.equal(err, null, err?.message);
      else {
        assert.equal(err?.code, 'ERR_GUEST_MODULE', `expected a refusal, got ${err?.message ?? 'a load'}`);
        assert.match(err.message, c.refused);
      }
    });
  }

  test('a guest reading its read-only input memory loads and answers', async () => {
    const bytes = READONLY_CASES.find((c) => c.name === 'loads from memory 1').bytes();
    const host = await guests.load([{ name: 'reader', bytes }], { threads: 1 });
    try {
      assert.deepEqual([...(await host.fanout('scan', 'checksum', new Uint8Array(8)))[0]], []);
    } finally {
      await host.close();
    }
  });

  test('the message locates the write: function, byte offset, opcode, memory', async () => {
    const bytes = READONLY_CASES.find((c) => c.name === 'i32.store to memory 1').bytes();
    const err = await load(bytes);
    const at = Number(/at byte (\d+)/.exec(err.message)?.[1]);
    // offthread_call is function #5; the byte there is the store's opcode.
    assert.match(
      err.message,
      /^g: function #5 writes memory offthread\.memory\.scan\.input \(memory 1\) with i32\.store/,
    );
    assert.equal(bytes[at], 0x36);
    assert.match(err.message, /declares input read-only for its exporters/);
  });
});

describe('the instruction reader', () => {
  const dir = new URL('../../../target/wasm32-unknown-unknown/release/', import.meta.url);
  const built = readdirSync(dir).filter((f) => f.endsWith('.wasm'));

  test('reads every function of the Rust guests and wasm modules built here', () => {
    assert.ok(built.includes('guest_basic.wasm') && built.includes('game_player.wasm'), built.join());
    for (const file of built) {
      const bytes = readFileSync(new URL(file, dir));
      const found = readMemories(bytes, file, true);
      assert.equal(found.scanned, true);
      // Each writes its one memory (its stack, at least), and no other.
      assert.ok(found.writes[0], `${file}: no write of memory 0 found`);
      assert.equal(found.writes.length, 1, file);
    }
  });

  test('the existing Rust guests still load (one memory, nothing to scan)', async () => {
    const bytes = readFileSync(new URL('guest_basic.wasm', dir));
    assert.equal(readMemories(bytes, 'basic').scanned, false);
    const host = await guests.load(
      [
        { name: 'basic', bytes },
        { name: 'relay', bytes: readFileSync(new URL('guest_relay.wasm', dir)) },
      ],
      { threads: 1 },
    );
    await host.close();
  });

  test('one module with every kind of immediate decodes to its end', { skip: !multi && 'no multi-memory' }, () => {
    // call_indirect, br_table, select t, f64.const, v128.const, shuffle, lanes, atomics,
    // bulk ops, sign extension: a wrong immediate width would desynchronise the reader,
    // and the store after them to memory 1 would be missed or misplaced.
    const { bytes, storeAt } = READONLY_CASES.find((c) => c.name === 'every immediate, then a store to memory 1');
    const b = bytes();
    assert.ok(WebAssembly.validate(b));
    const found = readMemories(b, 'g', true);
    assert.equal(found.writes[1]?.offset, storeAt(b));
    assert.equal(found.writes[1]?.op, 'i32.store');
  });
});

describe('the instruction reader against a model', { skip: !multi && 'no multi-memory' }, () => {
  // Random stack-neutral programs over memories 0 and 1 whose first write of each memory
  // is known by construction (offset in the body): the reader must find exactly those.
  // A wrong immediate width anywhere before a write misplaces or misses it.
  // memarg: alignment flags (bit 6: a memory index follows), [memory], offset.
  const memarg = (m, offset, align = 2) => [...(m ? [0x40 | align, ...uleb(m)] : [align]), ...uleb(offset)];
  const STATEMENTS = [
    (r) => [0x41, 0x00, 0x28, ...memarg(r.mem(), r.int(1 << 20)), 0x1a], // i32.load; drop
    (r) => [0x41, ...sleb(r.int(2 ** 31) - 2 ** 30), 0x1a],
    (r) => [0x42, ...sleb(BigInt(r.int(2 ** 31)) * BigInt(r.int(2 ** 31)) - 2n ** 60n), 0x1a],
    (r) => [0x44, ...r.bytes(8), 0x1a],
    (r) => [0xfd, 0x0c, ...r.bytes(16), 0xfd, 0x16, r.int(16), 0x1a], // v128.const; i8x16.extract_lane_u
    (r) => [0x3f, ...uleb(r.mem()), 0x1a], // memory.size
    (r) => [0x41, 0x00, 0xfd, 0x5c, ...memarg(r.mem(), r.int(300)), 0x1a], // v128.load32_zero
    (r) => [0x41, 0x00, 0xfe, 0x10, ...memarg(r.mem(), 4 * r.int(100)), 0x1a], // i32.atomic.load
    () => [0x02, 0x40, 0x41, 0x00, 0x0e, 0x03, 0x00, 0x00, 0x00, 0x00, 0x0b], // block; br_table
  ];
  const WRITES = [
    (r, m) => ({ bytes: [0x41, 0x00, 0x41, 0x07, 0x36, ...memarg(m, r.int(1000))], at: 4, op: 'i32.store' }),
    (r, m) => ({ bytes: [0x41, 0x00, 0x42, 0x07, 0x3c, ...memarg(m, r.int(9), 0)], at: 4, op: 'i64.store8' }),
    (_r, m) => ({ bytes: [0x41, 0x00, 0x41, 0x00, 0x41, 0x00, 0xfc, 0x0b, ...uleb(m)], at: 6, op: 'memory.fill' }),
    // memory.copy writes its destination m and reads 1 - m
    (_r, m) => ({
      bytes: [0x41, 0x00, 0x41, 0x00, 0x41, 0x00, 0xfc, 0x0a, ...uleb(m), ...uleb(1 - m)],
      at: 6,
      op: 'memory.copy',
    }),
    (_r, m) => ({ bytes: [0x41, 0x00, 0x40, ...uleb(m), 0x1a], at: 2, op: 'memory.grow' }),
    (r, m) => ({
      bytes: [0x41, 0x00, 0xfd, 0x0c, ...r.bytes(16), 0xfd, 0x5b, ...memarg(m, 0, 3), r.int(2)],
      at: 20,
      op: 'v128.store64_lane',
    }),
  ];

  test('200 random programs: the first write of each memory, where it is', () => {
    let seed = Number(process.env.OFFTHREAD_FUZZ_SEED ?? 33);
    const next = () => {
      seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
      return (seed >>> 0) / 2 ** 32;
    };
    const r = {
      int: (n) => Math.floor(next() * n),
      mem: () => (next() < 0.5 ? 0 : 1),
      bytes: (n) => Array.from({ length: n }, () => Math.floor(next() * 256)),
    };
    for (let run = 0; run < 200; run++) {
      const body = [];
      const first = [];
      for (let k = 0, n = 1 + r.int(30); k < n; k++) {
        if (r.int(4) === 0) {
          const m = r.mem();
          const w = WRITES[r.int(WRITES.length)](r, m);
          first[m] ??= { at: body.length + w.at, op: w.op };
          body.push(...w.bytes);
        } else body.push(...STATEMENTS[r.int(STATEMENTS.length)](r));
      }
      const b = assemble({
        descriptor: scanDescriptor('readwrite'),
        memories: [{ name: 'scan.input', min: 1, max: 4 }],
        body: { offthread_call: [...body, 0x42, 0x00] },
      });
      assert.ok(WebAssembly.validate(b), `run ${run}: the generated module is invalid`);
      const start = indexOfBody(b, body);
      const found = readMemories(b, 'g', true);
      for (const m of [0, 1]) {
        const got = found.writes[m];
        // Unwritten by the code, memory 0 is still written by assemble's descriptor segment.
        const want = first[m]
          ? { func: 5, offset: start + first[m].at, op: first[m].op }
          : m === 0
            ? { func: -1, offset: got?.offset, op: 'an active data segment' }
            : undefined;
        assert.deepEqual(got && { func: got.func, offset: got.offset, op: got.op }, want, `run ${run}, memory ${m}`);
      }
    }
  });
});

function indexOfBody(hay, needle) {
  for (let i = hay.length - needle.length; i >= 0; i--) {
    let j = 0;
    while (j < needle.length && hay[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  throw new Error('body not found');
}
