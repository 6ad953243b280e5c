// Issue 31 item 12: guest ABI exports and imports are checked against docs/guest-abi.md
// at load (a mistyped export used to load, then fail every call with "Cannot convert 0
// to a BigInt"; an i64 offthread_abi was refused as "ABI version 1, this host speaks 1"),
// and host.close() is bounded when a call loops without a timeout.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { guests } from 'offthread';
import { I32, I64 } from '../../../tests/guests/wasm-encode.mjs';
import { assemble, constant, DESCRIPTOR, LOOP, pack } from './guests-wasm.mjs';

const DOCUMENTED = {
  offthread_abi: ['()', 'i32'],
  offthread_init: ['()', 'i32'],
  offthread_export: ['(i32)', 'i64'],
  offthread_import: ['(i32)', 'i64'],
  offthread_alloc: ['(i32)', 'i32'],
  offthread_call: ['(i32, i32, i32, i32)', 'i64'],
};
// The imports the host offers (abi.ts IMPORT_SIGNATURES).
const DOCUMENTED_IMPORTS = {
  'offthread.fail': ['(i32, i32)', '()'],
  'offthread.oom': ['(i32)', '()'],
  'offthread.invoke': ['(i32, i32, i32, i32, i32)', 'i64'],
  'offthread.module_index': ['()', 'i32'],
  'offthread.invoke_at': ['(i32, i32, i32, i32, i32, i32)', 'i64'],
  'offthread.exporters': ['(i32, i32)', 'i32'],
  'offthread.exporter_index': ['(i32, i32, i32, i32)', 'i32'],
};

/** A guest whose `name` export has type `[params, results]` (a body that fits it). */
const mistyped = (name, type) =>
  assemble({ descriptor: DESCRIPTOR, types: { [name]: type }, body: { [name]: constant(type[1]) } });

async function refusal(bytes) {
  const err = await guests.load([{ name: 'g', bytes }], { threads: 1 }).then(
    async (host) => {
      await host.close({ timeout: 0 });
      return null;
    },
    (e) => e,
  );
  assert.ok(err, 'the module was loaded');
  assert.equal(err.code, 'ERR_GUEST_MODULE', err.message);
  return err.message;
}

// The docs' table is what the host checks: read it from the page.
test('docs/guest-abi.md lists the signatures the host checks', () => {
  const page = readFileSync(new URL('../../../docs/guest-abi.md', import.meta.url), 'utf8');
  for (const [name, [params, result]] of Object.entries({ ...DOCUMENTED, ...DOCUMENTED_IMPORTS })) {
    const row = page.split('\n').find((l) => l.startsWith(`| \`${name}\``));
    assert.ok(row, `${name} has a row`);
    const type = row.split('|')[2].trim().replace(/`/g, '');
    const bare = type.replace(/\w+: /g, ''); // `(index: i32) -> i64` → `(i32) -> i64`
    assert.equal(bare, `${params} -> ${result}`, `${name} in the docs`);
  }
});

describe('ABI exports with the wrong type are refused at load, naming the export', () => {
  test('offthread_call with i64 parameters (every call trapped "Cannot convert 0 to a BigInt")', async () => {
    const message = await refusal(mistyped('offthread_call', [[I64, I64, I64, I64], [I64]]));
    assert.equal(
      message,
      'g: export offthread_call is (i64, i64, i64, i64) -> i64, the guest ABI needs (i32, i32, i32, i32) -> i64 (docs/guest-abi.md)',
    );
  });

  test('an i64 offthread_abi returning 1 is a type error, not "ABI version 1, this host speaks 1"', async () => {
    const bytes = assemble({
      descriptor: DESCRIPTOR,
      types: { offthread_abi: [[], [I64]] },
      body: { offthread_abi: [0x42, 0x01] },
    });
    const message = await refusal(bytes);
    assert.equal(message, 'g: export offthread_abi is () -> i64, the guest ABI needs () -> i32 (docs/guest-abi.md)');
  });

  // Each export: a wrong result, a wrong parameter list, no result.
  for (const [name, [params]] of Object.entries(DOCUMENTED)) {
    const arity = params === '()' ? 0 : params.split(',').length;
    const variants = {
      'f64 results': [Array(arity).fill(I32), [0x7c]],
      'one parameter too many': [
        Array(arity + 1).fill(I32),
        name === 'offthread_call' || name.endsWith('port') ? [I64] : [I32],
      ],
      'no result': [Array(arity).fill(I32), []],
    };
    for (const [what, type] of Object.entries(variants)) {
      test(`${name} with ${what}`, async () => {
        const body = type[1][0] === 0x7c ? [0x44, ...new Array(8).fill(0)] : constant(type[1]);
        const bytes = assemble({ descriptor: DESCRIPTOR, types: { [name]: type }, body: { [name]: body } });
        const message = await refusal(bytes);
        assert.ok(message.startsWith(`g: export ${name} is (`), message);
        assert.ok(message.includes(`needs ${params} -> ${DOCUMENTED[name][1]}`), message);
      });
    }
  }

  test('several wrong exports are all named in one message', async () => {
    const bytes = assemble({
      descriptor: DESCRIPTOR,
      types: { offthread_alloc: [[I64], [I64]], offthread_export: [[I32], [I32]] },
      body: { offthread_alloc: [0x42, 0x00], offthread_export: [0x41, 0x00] },
    });
    const message = await refusal(bytes);
    assert.ok(message.includes('export offthread_export is (i32) -> i32, the guest ABI needs (i32) -> i64'), message);
    assert.ok(message.includes('export offthread_alloc is (i64) -> i64, the guest ABI needs (i32) -> i32'), message);
  });
});

describe('offthread.* imports with the wrong type are refused at load', () => {
  test('offthread.fail taking i64s (JS imports link whatever type is declared)', async () => {
    const bytes = assemble({ descriptor: DESCRIPTOR, imports: [{ name: 'fail', type: [[I64, I64], []] }] });
    const message = await refusal(bytes);
    assert.equal(
      message,
      'g: import offthread.fail is (i64, i64) -> (), the guest ABI needs (i32, i32) -> () (docs/guest-abi.md)',
    );
  });

  test('offthread.invoke returning i32', async () => {
    const bytes = assemble({
      descriptor: DESCRIPTOR,
      imports: [{ name: 'invoke', type: [[I32, I32, I32, I32, I32], [I32]] }],
    });
    const message = await refusal(bytes);
    assert.ok(
      message.includes(
        'import offthread.invoke is (i32, i32, i32, i32, i32) -> i32, the guest ABI needs (i32, i32, i32, i32, i32) -> i64',
      ),
      message,
    );
  });

  test('the documented imports, correctly typed, load and the guest answers', async () => {
    const bytes = assemble({
      descriptor: DESCRIPTOR,
      call: pack(1024, 4),
      imports: [
        { name: 'fail', type: [[I32, I32], []] },
        { name: 'oom', type: [[I32], []] },
        { name: 'invoke', type: [[I32, I32, I32, I32, I32], [I64]] },
        { name: 'module_index', type: [[], [I32]] },
        { name: 'invoke_at', type: [[I32, I32, I32, I32, I32, I32], [I64]] },
        { name: 'exporters', type: [[I32, I32], [I32]] },
        { name: 'exporter_index', type: [[I32, I32, I32, I32], [I32]] },
      ],
    });
    const host = await guests.load([{ name: 'g', bytes }], { threads: 1 });
    try {
      const out = await host.call('raw', 'run', null, { timeout: 5_000 });
      assert.equal(new TextDecoder().decode(out), DESCRIPTOR.slice(0, 4));
    } finally {
      await host.close();
    }
  });
});

// A hang guard, not a timing assertion: without the bound close() never settles.
function settles(promise, what) {
  let timer;
  const guard = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within 30 s`)), 30_000);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer));
}

describe('close() is bounded when a call loops without a timeout', () => {
  const looping = () => assemble({ descriptor: DESCRIPTOR, body: { offthread_call: LOOP } });

  test('close({ timeout }) stops the call (ERR_POOL_CLOSED, saying why) and resolves', async () => {
    const host = await guests.load([{ name: 'g', bytes: looping() }], { threads: 1, mailbox: false });
    const call = host.call('raw', 'run').then(
      () => null,
      (e) => e,
    );
    await settles(host.close({ timeout: 50 }), 'close({ timeout: 50 })');
    const err = await call;
    assert.equal(err?.code, 'ERR_POOL_CLOSED');
    assert.match(err.message, /still running 50 ms after close/);
    await assert.rejects(host.call('raw', 'run'), { code: 'ERR_POOL_CLOSED' });
  });

  test('close() without options resolves too (the default bound, 5 s), through the mailbox', async () => {
    const host = await guests.load([{ name: 'g', bytes: looping() }], { threads: 1 });
    const call = host.call('raw', 'run').catch((e) => e);
    await settles(host.close(), 'close()');
    assert.equal((await call).code, 'ERR_POOL_CLOSED');
  });

  test('close() waits for a call that finishes within the bound', async () => {
    const bytes = assemble({ descriptor: DESCRIPTOR, call: pack(1024, 4) });
    const host = await guests.load([{ name: 'g', bytes }], { threads: 1 });
    const call = host.call('raw', 'run');
    await host.close({ timeout: 60_000 });
    assert.equal((await call).length, 4);
  });

  test('close options are checked', async () => {
    const host = await guests.load([{ name: 'g', bytes: assemble({ descriptor: DESCRIPTOR }) }], { threads: 1 });
    await assert.rejects(host.close({ timeout: -1 }), { code: 'ERR_INVALID_ARG' });
    await assert.rejects(host.close({ timeout: 1.5 }), { code: 'ERR_INVALID_ARG' });
    await assert.rejects(host.close({ wait: 1 }), { code: 'ERR_INVALID_ARG' });
    await host.close();
  });
});
