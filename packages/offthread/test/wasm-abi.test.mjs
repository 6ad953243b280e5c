// The one WASM client (src/wasm-client.ts) against the built offthread.wasm: its export
// list is the module's, with the arity its types declare; its error table is the Rust
// ErrorCode::ALL in order; and every failure the module can be made to return decodes
// to the registry code the module itself names in its message.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';

const require = createRequire(import.meta.url);
const { WASM_ERRORS, WASM_EXPORTS, WasmKernels } = require('offthread/internal');
/** The module's one import (crates/offthread-wasm/src/registry.rs): never interrupted here. */
const imports = { offthread: { interrupted: () => 0 } };
const { errorRegistry } = require('offthread');

const file = (path) => new URL(`../${path}`, import.meta.url);
const bytes = readFileSync(file('wasm/offthread.wasm'));
const module = new WebAssembly.Module(bytes);
/** Symbols wasm-ld exports from every module; no client calls them. */
const LINKER_GLOBALS = ['__data_end', '__heap_base'];

test('the browser build ships the same offthread.wasm', () => {
  assert.ok(readFileSync(file('dist/browser/offthread.wasm')).equals(bytes));
});

test('WASM_EXPORTS equals the exports of the built offthread.wasm', () => {
  const exports = WebAssembly.Module.exports(module);
  const used = exports.filter((e) => !LINKER_GLOBALS.includes(e.name));
  assert.deepEqual(
    exports.filter((e) => LINKER_GLOBALS.includes(e.name)).map((e) => e.kind),
    LINKER_GLOBALS.map(() => 'global'),
  );
  assert.deepEqual(used.map((e) => e.name).sort(), [...WASM_EXPORTS].sort());
  for (const e of used) assert.equal(e.kind, e.name === 'memory' ? 'memory' : 'function', e.name);
  assert.deepEqual(WebAssembly.Module.imports(module), [
    { module: 'offthread', name: 'interrupted', kind: 'function' },
  ]);
});

test('each export takes the parameters WasmExports declares', () => {
  // The interface as tsc emitted it: `name(a: number, b: number): number;`.
  const dts = readFileSync(file('dist/kernels/wasm-client.d.ts'), 'utf8');
  const body = dts.match(/interface WasmExports \{([^}]*)\}/)?.[1];
  assert.ok(body, 'WasmExports not found in dist/kernels/wasm-client.d.ts');
  const declared = Object.fromEntries(
    [...body.matchAll(/^\s*(\w+)\(([^)]*)\)/gm)].map(([, name, params]) => [
      name,
      params.trim() ? params.split(',').length : 0,
    ]),
  );
  const instance = new WebAssembly.Instance(module, imports);
  const functions = WASM_EXPORTS.filter((n) => n !== 'memory');
  assert.deepEqual(Object.keys(declared).sort(), [...functions].sort());
  for (const name of functions) assert.equal(instance.exports[name].length, declared[name], name);
  assert.ok(instance.exports.memory instanceof WebAssembly.Memory);
});

test('WASM_ERRORS is the Rust ErrorCode::ALL, in order, and every code is in the registry', () => {
  const rust = readFileSync(new URL('../../../crates/offthread-core/src/error.rs', import.meta.url), 'utf8');
  const all = rust.match(/ALL: &'static \[ErrorCode\] = &\[([^\]]*)\]/)?.[1];
  assert.ok(all, 'ErrorCode::ALL not found');
  const names = Object.fromEntries(
    [...rust.matchAll(/ErrorCode::(\w+) => "(ERR_\w+)"/g)].map(([, variant, code]) => [variant, code]),
  );
  const order = [...all.matchAll(/ErrorCode::(\w+)/g)].map(([, variant]) => names[variant]);
  assert.deepEqual([...WASM_ERRORS], order);
  for (const code of WASM_ERRORS) assert.ok(code in errorRegistry, code);
});

/** A fresh instance, and helpers to put bytes in its memory. */
function fresh() {
  const k = WasmKernels.fromModule(module);
  const x = k.x;
  const put = (data) => {
    const input = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    const ptr = x.alloc(input.length + 64);
    new Uint8Array(x.memory.buffer).set(input, ptr);
    return [ptr, input.length, ptr + input.length]; // pointer, length, 64 spare bytes after
  };
  /** A registry kernel's number: its line in kernel_names. */
  const index = (name) => {
    const n = x.kernel_names();
    const names = new TextDecoder().decode(new Uint8Array(x.memory.buffer, x.kernel_out_ptr(), n)).split('\n');
    assert.ok(names.includes(name), name);
    return names.indexOf(name);
  };
  const lastError = () => {
    const len = x.last_error_len();
    return new TextDecoder().decode(new Uint8Array(x.memory.buffer, x.last_error_ptr(), len));
  };
  return { k, x, put, index, lastError };
}

test('every failure the module can return decodes to the code its message names', () => {
  const { x, put, index, lastError } = fresh();
  const text = (s) => put(s).slice(0, 2);
  /** [expected code, call returning the raw result, whether the module writes a message] */
  const cases = [
    ['ERR_INVALID_SAMPLES', () => x.kernel_call(index('pi.range'), 0, 0, 0, -1, 1), true],
    ['ERR_INVALID_SAMPLES', () => x.kernel_call(index('pi.rangeReference'), 0, 0, 0.5, 10, 1), true],
    ['ERR_INVALID_SEED', () => x.kernel_call(index('pi.range'), 0, 0, 0, 10, 2 ** 60), true],
    ['ERR_INVALID_ARG', () => x.kernel_call(index('md5.hex'), 0, 5, 0, 0, 0), true],
    ['ERR_INVALID_ARG', () => x.kernel_call(99, 0, 0, 0, 0, 0), true],
    ['ERR_INVALID_ROUNDS', () => x.kernel_call(index('md5.iterate'), ...text('abc'), -1, 0, 0), true],
    ['ERR_INVALID_ROUNDS', () => x.kernel_call(index('md5.iterate'), ...text('x'.repeat(35)), 1.5, 32, 0), true],
    [
      'ERR_INVALID_TEXT',
      () => x.kernel_call(index('qr.dataURL'), ...text(new Uint8Array([0xff, 0xfe, 0x41])), 1, 128, 4),
      true,
    ],
    ['ERR_TEXT_TOO_LONG', () => x.kernel_call(index('qr.png'), ...text('a'.repeat(3000)), 1, 128, 4), true],
    ['ERR_INVALID_QR_OPTIONS', () => x.kernel_call(index('qr.svg'), ...text('hello'), 9, 128, 4), true],
    ['ERR_INVALID_BUFFER', () => x.kernel_call(index('stats.temperature'), ...text('not a batch'), 0, 0, 0), true],
  ];
  const seen = new Set();
  for (const [code, call, hasMessage] of cases) {
    const ret = call();
    assert.ok(ret < 0 && Number.isInteger(ret), `${code}: returned ${ret}`);
    assert.equal(WASM_ERRORS[-ret - 1], code, `${code}: returned ${ret}`);
    if (hasMessage) assert.match(lastError(), new RegExp(`^${code}: .+`), code);
    seen.add(code);
  }
  // ERR_ABORTED: the host's cancel flag, read through the module's one import.
  const stopped = new WebAssembly.Instance(module, { offthread: { interrupted: () => 1 } }).exports;
  const ret = stopped.kernel_call(index('md5.iterate'), 0, 0, 1e6, 0, 0);
  assert.equal(WASM_ERRORS[-ret - 1], 'ERR_ABORTED');
  seen.add('ERR_ABORTED');
  // What the module never returns: a timeout is the pool's (it raises the cancel flag).
  const unreachable = WASM_ERRORS.filter((c) => !seen.has(c));
  assert.deepEqual(unreachable, ['ERR_TIMEOUT']);
  const source = ['abi.rs', 'lib.rs', 'registry.rs', 'layout.rs', 'pi_simd.rs']
    .map((f) => readFileSync(new URL(`../../../crates/offthread-wasm/src/${f}`, import.meta.url), 'utf8'))
    .join('\n');
  assert.doesNotMatch(source, /ErrorCode::Timeout/);
});

test('the client turns those returns into registry errors with the module message', () => {
  const { k } = fresh();
  const failures = [
    ['ERR_INVALID_SAMPLES', () => k.call('pi.range', undefined, 0, -1, 1)],
    ['ERR_INVALID_SEED', () => k.call('pi.range', undefined, 0, 10, 2 ** 60)],
    ['ERR_INVALID_ROUNDS', () => k.call('md5.iterate', 'abc', 1.5)], // (md5.ts validates rounds before this)
    ['ERR_INVALID_TEXT', () => k.call('qr.dataURL', new Uint8Array([0xff, 0xfe]), 1, 128, 4)],
    ['ERR_TEXT_TOO_LONG', () => k.call('qr.png', 'a'.repeat(3000), 1, 128, 4)],
    ['ERR_INVALID_QR_OPTIONS', () => k.call('qr.svg', 'x', 1, 0, 4)],
    ['ERR_INVALID_BUFFER', () => k.call('stats.temperature', new TextEncoder().encode('not a batch'))],
  ];
  for (const [code, call] of failures) {
    assert.throws(call, (err) => {
      assert.equal(err.code, code);
      assert.equal(err.name, errorRegistry[code].kind === 'Error' ? 'OffthreadError' : errorRegistry[code].kind);
      assert.ok(err.message.length > 0);
      assert.ok(!err.message.startsWith(`${code}:`), `the code prefix is stripped: ${err.message}`);
      return true;
    });
  }
  // The instance goes on after each failure.
  assert.equal(k.call('pi.range', undefined, 0, 100_000, 1), 78463);
  assert.equal(k.call('pi.rangeReference', undefined, 5e6, 100_000, 1), k.call('pi.range', undefined, 5e6, 100_000, 1));
  assert.equal(k.call('md5.hex', 'abc'), '900150983cd24fb0d6963f7d28e17f72');
});

test('a π failure after another failure does not carry the other message', () => {
  const { k } = fresh();
  assert.throws(() => k.call('qr.svg', 'x', 1, 0, 4), { code: 'ERR_INVALID_QR_OPTIONS' });
  assert.throws(
    () => k.call('pi.range', undefined, 0, -1, 1),
    (err) => err.code === 'ERR_INVALID_SAMPLES' && !/QR|size/.test(err.message),
  );
});
