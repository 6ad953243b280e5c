// Guests (docs/guest-abi.md): users' own WebAssembly modules on the worker pool —
// every pattern, guest-to-guest calls, and guests that misbehave: each misbehaviour is
// a typed rejection and the next call still works.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { guests } from 'offthread';
import * as msg from '../dist/schema/generated/fixtures/guests.js';
import { assemble, DESCRIPTOR, LOOP, pack } from './guests-wasm.mjs';

const dir = new URL('../../../target/wasm32-unknown-unknown/release/', import.meta.url);
const basic = readFileSync(new URL('guest_basic.wasm', dir));
const relay = readFileSync(new URL('guest_relay.wasm', dir));

const blob = (data) => msg.encodeBlob({ data });
const count = (value) => msg.encodeCount({ value });
const countOf = (bytes) => msg.decodeCount(bytes).value;

function fnv(bytes) {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h;
}

const rejects = (promise, code) =>
  assert.rejects(promise, (err) => err.code === code || assert.fail(`${err.code}: ${err.message}`));

describe('guests', () => {
  let host;
  before(async () => {
    host = await guests.load(
      [
        { name: 'a', bytes: basic },
        { name: 'relay', bytes: relay },
        { name: 'b', bytes: basic },
        { name: 'c', bytes: basic },
      ],
      { threads: 2, memoryPages: 64 },
    );
  });
  after(() => host.close());

  test('lists the interfaces the modules export, with their patterns and exporters', () => {
    const byName = Object.fromEntries(host.interfaces.map((i) => [i.name, i]));
    assert.deepEqual(Object.fromEntries(Object.values(byName).map((i) => [i.name, i.pattern])), {
      echo: 'direct',
      counter: 'singleton',
      crunch: 'pool',
      scan: 'fanout',
      relay: 'direct',
    });
    assert.deepEqual(byName.scan.exporters, ['a', 'b', 'c']);
    assert.deepEqual(byName.echo.functions, ['echo', 'empty', 'spin', 'trap', 'grow']);
  });

  test('direct: a message goes in and its answer comes out, on the chosen exporter', async () => {
    const data = Uint8Array.from({ length: 65_536 }, (_, i) => (i * 7) & 0xff);
    const out = await host.call('echo', 'echo', blob(data), { exporter: 'b' });
    assert.deepEqual(new Uint8Array(msg.decodeBlob(out).data), data);
    assert.equal((await host.call('echo', 'empty')).length, 0);
  });

  test('single: one instance serves every caller, calls in order', async () => {
    const first = countOf(await host.call('counter', 'next'));
    const next = await Promise.all(Array.from({ length: 20 }, () => host.call('counter', 'next')));
    assert.deepEqual(
      next.map(countOf),
      Array.from({ length: 20 }, (_, i) => first + BigInt(i + 1)),
    );
  });

  test('pool: concurrent calls all answer correctly', async () => {
    const rounds = [1, 10, 1000, 100_000];
    const out = await Promise.all(rounds.map((n) => host.call('crunch', 'work', count(BigInt(n)))));
    const expect = (n) => {
      let x = 0x9e3779b97f4a7c15n;
      for (let i = 0; i < n; i++) {
        x = BigInt.asUintN(64, x ^ (x << 13n));
        x ^= x >> 7n;
        x = BigInt.asUintN(64, x ^ (x << 17n));
      }
      return x;
    };
    assert.deepEqual(out.map(countOf), rounds.map(expect));
  });

  test('fanout: every exporter reads one shared copy of the input; results in load order', async () => {
    const data = Uint8Array.from({ length: 1 << 20 }, (_, i) => (i * 31) & 0xff);
    const before = host.stats();
    const out = await host.fanout('scan', 'checksum', blob(data));
    assert.deepEqual(out.map(countOf), [fnv(data), fnv(data), fnv(data)]);
    const s = host.stats();
    assert.ok(s.sharedBytes - before.sharedBytes < data.length + 1024, 'the input is written once');
  });

  test('a guest that writes over its read-only input changes nobody else’s view of it', async () => {
    const data = Uint8Array.from({ length: 4096 }, (_, i) => i & 0xff);
    const scribbled = await host.fanout('scan', 'scribble', blob(data));
    assert.deepEqual(scribbled.map(countOf), Array(3).fill(fnv(new Uint8Array(4096).fill(0xee))));
    const clean = await host.fanout('scan', 'checksum', blob(data));
    assert.deepEqual(clean.map(countOf), Array(3).fill(fnv(data)));
  });

  test('guests call guests through the host', async () => {
    const data = enc('guest to guest');
    const out = await host.call('relay', 'relay', blob(data));
    assert.deepEqual(new Uint8Array(msg.decodeBlob(out).data), data);
  });

  test('a trap rejects with ERR_GUEST_TRAP; the next call works', async () => {
    await rejects(host.call('echo', 'trap'), 'ERR_GUEST_TRAP');
    assert.equal((await host.call('echo', 'empty')).length, 0);
  });

  test('a guest looping forever is stopped at its timeout; the pool keeps serving', async () => {
    const replaced = host.stats().replaced;
    await rejects(host.call('echo', 'spin', null, { timeout: 50 }), 'ERR_TIMEOUT');
    const ac = new AbortController();
    const spinning = host.call('echo', 'spin', null, { signal: ac.signal });
    setTimeout(() => ac.abort(), 20);
    await rejects(spinning, 'ERR_ABORTED');
    const data = enc('still here');
    const out = await host.call('echo', 'echo', blob(data));
    assert.deepEqual(new Uint8Array(msg.decodeBlob(out).data), data);
    assert.ok(host.stats().replaced - replaced >= 1, 'the stuck worker was replaced');
  });

  test('memory past the limit is refused while the guest runs (ERR_GUEST_MEMORY_LIMIT)', async () => {
    // 64 pages = 4 MiB per instance: 1 MiB fits, 8 MiB cannot.
    assert.equal(countOf(await host.call('echo', 'grow', count(1n << 20n), { exporter: 'c' })), 1n << 20n);
    await rejects(host.call('echo', 'grow', count(8n << 20n), { exporter: 'c' }), 'ERR_GUEST_MEMORY_LIMIT');
    assert.equal(countOf(await host.call('echo', 'grow', count(1024n), { exporter: 'c' })), 1024n);
    // An input that cannot fit the memory the schema puts it in (scan.input: 256 pages).
    await rejects(host.fanout('scan', 'checksum', blob(new Uint8Array(17 << 20))), 'ERR_GUEST_MEMORY_LIMIT');
  });

  test('bad arguments are typed errors', async () => {
    await rejects(host.call('nope', 'x'), 'ERR_INVALID_ARG');
    await rejects(host.call('echo', 'nope'), 'ERR_INVALID_ARG');
    await rejects(host.call('echo', 'echo', 'text'), 'ERR_INVALID_ARG');
    await rejects(host.call('echo', 'empty', null, { timeot: 5 }), 'ERR_INVALID_ARG');
    await rejects(host.call('scan', 'checksum', blob(enc('x'))), 'ERR_INVALID_ARG');
    await rejects(host.fanout('echo', 'echo', blob(enc('x'))), 'ERR_INVALID_ARG');
    await rejects(host.call('echo', 'echo', blob(enc('x')), { exporter: 'relay' }), 'ERR_INVALID_ARG');
    // A message that is not a blob: the guest's reader refuses it.
    await rejects(host.call('echo', 'echo', new Uint8Array([1, 2, 3])), 'ERR_GUEST_FAILED');
  });
});

const enc = (s) => new TextEncoder().encode(s);

describe('guests that break the ABI', () => {
  test('a result outside guest memory is ERR_GUEST_ABI; the next call works', async () => {
    const oob = assemble({ descriptor: DESCRIPTOR, call: pack(0xffff_0000, 100) });
    const ok = assemble({ descriptor: DESCRIPTOR.replace('"raw"', '"fine"'), call: pack(1024, 4) });
    const host = await guests.load([oob, ok], { threads: 1 });
    try {
      await rejects(host.call('raw', 'run'), 'ERR_GUEST_ABI');
      assert.deepEqual([...(await host.call('fine', 'run'))], [...enc('{"na')]);
      await rejects(host.call('raw', 'run'), 'ERR_GUEST_ABI');
    } finally {
      await host.close();
    }
  });

  test('modules that cannot be guests are refused at load with ERR_GUEST_MODULE', async () => {
    const cases = {
      'not wasm': enc('not a wasm module'),
      truncated: basic.subarray(0, 100),
      'no memory import': assemble({ descriptor: DESCRIPTOR, memory: false }),
      'missing export': assemble({ descriptor: DESCRIPTOR, omit: ['offthread_alloc'] }),
      'wrong ABI version': assemble({ descriptor: DESCRIPTOR, abi: 2 }),
      'bad descriptor': assemble({ descriptor: '{"name": 5}' }),
      'init never returns': assemble({
        descriptor: DESCRIPTOR,
        body: { offthread_init: [...LOOP.slice(0, 5), 0x41, 0x00] },
      }),
      'mismatched interfaces': null,
    };
    for (const [what, bytes] of Object.entries(cases)) {
      const mods = bytes
        ? [bytes]
        : [assemble({ descriptor: DESCRIPTOR }), assemble({ descriptor: DESCRIPTOR.replace('0123', '3210') })];
      await assert.rejects(guests.load(mods, { threads: 1, loadTimeout: 200 }), (err) => {
        assert.equal(err.code, 'ERR_GUEST_MODULE', `${what}: ${err.message}`);
        return true;
      });
    }
    await rejects(guests.load([]), 'ERR_INVALID_ARG');
    await rejects(guests.load('basic.wasm'), 'ERR_INVALID_ARG');
    const throwing = {
      get bytes() {
        throw new Error('boom');
      },
    };
    await rejects(guests.load([throwing]), 'ERR_INVALID_ARG');
    const { proxy, revoke } = Proxy.revocable([], {});
    revoke();
    await rejects(guests.load(proxy), 'ERR_INVALID_ARG');
    await rejects(guests.load([basic], { threads: 0 }), 'ERR_INVALID_ARG');
    await rejects(guests.load([basic], { memoryPages: 4 }), 'ERR_GUEST_MEMORY_LIMIT');
  });
});

// Calls with small inputs go through a shared-memory mailbox per worker (guests/mailbox.ts);
// `mailbox: false` keeps a message each way. Both must answer alike.
describe('guests: the mailbox and the message path', () => {
  let boxed;
  let posted;
  before(async () => {
    const modules = [{ name: 'a', bytes: basic }];
    boxed = await guests.load(modules, { threads: 2, memoryPages: 64 });
    posted = await guests.load(modules, { threads: 2, memoryPages: 64, mailbox: false });
  });
  after(() => Promise.all([boxed.close(), posted.close()]));

  const outcome = (promise) =>
    promise.then(
      (bytes) => ({ ok: Array.from(bytes) }),
      (err) => ({ code: err.code, message: err.message }),
    );

  test('the two paths give identical results and errors (inputs and results over the box size too)', async () => {
    assert.equal(boxed.stats().mailbox, true);
    assert.equal(posted.stats().mailbox, false);
    const big = new Uint8Array(300_000).map((_, i) => i * 7);
    const cases = [
      ['echo', 'empty', null],
      ['echo', 'echo', blob(new Uint8Array(0))],
      ['echo', 'echo', blob(enc('through the box'))],
      ['echo', 'echo', blob(new Uint8Array(130_000).fill(3))], // result just around the box size
      ['echo', 'echo', blob(big)],
      ['echo', 'echo', new Uint8Array([1, 2, 3])], // ERR_GUEST_FAILED
      ['echo', 'trap', null],
      ['echo', 'grow', count(1n << 20n)],
      ['echo', 'grow', count(8n << 20n)], // ERR_GUEST_MEMORY_LIMIT
    ];
    for (const [iface, fn, input] of cases) {
      const a = await outcome(boxed.call(iface, fn, input));
      const b = await outcome(posted.call(iface, fn, input));
      assert.deepEqual(a, b, `${iface}.${fn}`);
    }
  });

  test('many concurrent calls, small and large, each get their own answer', async () => {
    const inputs = Array.from({ length: 400 }, (_, i) =>
      i % 50 === 0 ? new Uint8Array(200_000).fill(i & 255) : enc(`call ${i}`),
    );
    const outs = await Promise.all(inputs.map((data) => boxed.call('echo', 'echo', blob(data))));
    for (const [i, out] of outs.entries()) assert.deepEqual(new Uint8Array(msg.decodeBlob(out).data), inputs[i]);
  });

  test('a wake-up that is not the answer (a late notify of the previous call) does not lose the call', async () => {
    // The worker's notify for call k can land after call k was collected and wake call
    // k+1's waiter while k+1 still runs. Made here on purpose: a spurious notify on DONE
    // (slot 4 of the header) while a long call runs. The waiter must wait again.
    const [header] = boxed.mailboxHeaders();
    const long = Promise.all([
      boxed.call('crunch', 'work', count(300_000_000n)),
      boxed.call('crunch', 'work', count(300_000_000n)),
    ]);
    let woken = 0;
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 5));
      woken += Atomics.notify(header, 4);
    }
    assert.ok(woken > 0, 'a waiter was there to wake');
    const settled = await Promise.race([long, new Promise((r) => setTimeout(() => r('hung'), 20_000))]);
    assert.notEqual(settled, 'hung', 'the call was lost to a spurious wake-up');
    assert.equal(settled.length, 2);
  });

  test('a timeout stops a guest whose worker was spinning, and one whose worker slept', async () => {
    await boxed.call('echo', 'empty'); // the worker now watches its box
    await rejects(boxed.call('echo', 'spin', null, { timeout: 30 }), 'ERR_TIMEOUT');
    assert.equal((await boxed.call('echo', 'empty')).length, 0);
    await new Promise((r) => setTimeout(r, 50)); // long enough for the worker to sleep in Atomics.wait
    await rejects(boxed.call('echo', 'spin', null, { timeout: 30 }), 'ERR_TIMEOUT');
    const data = enc('after two timeouts');
    assert.deepEqual(new Uint8Array(msg.decodeBlob(await boxed.call('echo', 'echo', blob(data))).data), data);
  });

  test('a process with a host, closed or left idle, exits by itself', () => {
    const script = (close) => `
      const { guests } = require('offthread');
      const bytes = require('node:fs').readFileSync(${JSON.stringify(new URL('guest_basic.wasm', dir).pathname)});
      guests.load([bytes], { threads: 2 }).then(async (h) => {
        for (let i = 0; i < 100; i++) await h.call('echo', 'empty');
        ${close ? 'await h.close();' : ''}
        console.log('done');
      });`;
    for (const close of [true, false]) {
      const r = spawnSync(process.execPath, ['-e', script(close)], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 0, `close: ${close}: ${r.stderr}`);
      assert.equal(r.stdout.trim(), 'done');
    }
  });
});
