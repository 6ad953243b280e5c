// Issue 31, items 3 and 5: what a generated writer writes its reader reads (the column
// limit is checked when the schema compiles), and the wasm compiler against hostile
// sources: each a located diagnostic within 1 s, a valid schema compiling right after,
// and a failure of the compiler itself typed (ERR_SCHEMA_COMPILER) without leaving the
// instance unusable. The limits: docs/schema-format.md §4.1.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { schema } from 'offthread';

const require = createRequire(import.meta.url);
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const bin = join(repo, 'packages/offthread/bin/offthread.js');
const VALID = readFileSync(join(repo, 'tests/fixtures/schema/kitchen_sink.km'), 'utf8');

const lines = (n, f) => Array.from({ length: n }, (_, i) => f(i)).join('\n');
/** A `#soa` slice of a row of `n` u8 columns; the slice's type is at 304:11 for n = 300. */
const soaRow = (n) =>
  `struct row (inline) {\n${lines(n, (i) => `    c${i}: u8;`)}\n}\nstruct batch (dynamic) {\n    rows: []row #soa;\n}\n`;

/** `[code, line, column]` of the first diagnostic, after checking nothing was generated. */
function located(result) {
  assert.equal(result.files.length, 0);
  assert.ok(result.diagnostics.length >= 1);
  const [d] = result.diagnostics;
  assert.match(result.rendered, new RegExp(`error\\[${d.code}\\]`));
  return [d.code, d.line, d.column];
}

test('item 3: a #soa row past the readers 256 columns is E0018 at compile time; 256 round-trip', async () => {
  // Before: 300 columns compiled and encoded, then decodeBatch threw R0005.
  assert.deepEqual(located(schema.compile(soaRow(300))), ['E0018', 304, 11]);
  assert.deepEqual(located(schema.compile(soaRow(257))), ['E0018', 261, 11]);

  // At the limit, the generated writer's bytes are read back with default options.
  const runtime = pathToFileURL(require.resolve('offthread/schema')).href;
  const out = schema.compile(soaRow(256), { fileName: 'wide.km', rust: false, runtimeImport: runtime });
  assert.deepEqual(out.diagnostics, []);
  const { transformSync } = require('amaro');
  const dir = mkdtempSync(join(tmpdir(), 'offthread-wide-'));
  try {
    writeFileSync(join(dir, 'wide.mjs'), transformSync(out.files[0].contents, { mode: 'strip-only' }).code);
    const wide = await import(pathToFileURL(join(dir, 'wide.mjs')).href);
    const row = (k) => Object.fromEntries(Array.from({ length: 256 }, (_, i) => [`c${i}`, (i + k) & 0xff]));
    const value = { rows: [row(0), row(1), row(2)] };
    assert.deepEqual(wide.decodeBatch(wide.encodeBatch(value)), value);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('item 3: a #bovoa / #bovos slice of a union past 256 variants is E0018', () => {
  const union = (n, layout) =>
    `struct s (inline) { x: u8; }\nunion u (dynamic, u16) {\n${lines(n, (i) => `    v${i}: s;`)}\n}\nstruct r (dynamic) { xs: []u #${layout}; }\n`;
  for (const layout of ['bovoa', 'bovos']) {
    assert.deepEqual(located(schema.compile(union(257, layout))), ['E0018', 261, 26]);
    assert.deepEqual(schema.compile(union(256, layout), { rust: false }).diagnostics, []);
  }
});

/** The hostile sources of issue 31 item 5 (and neighbours), with the diagnostic each gets. */
const HOSTILE = [
  ['`[]` nested 100,000 times', () => `struct a (dynamic) {\n  x: ${'[]'.repeat(100_000)}u8;\n}\n`, ['E0019', 2, 22]],
  [
    'a chain of 10,000 inline structs',
    () => lines(10_000, (i) => `struct s${i} (inline) { x: ${i === 9_999 ? 'u32' : `s${i + 1}`}; }`),
    ['E0019', 33, 26],
  ],
  [
    'a 685-byte SoA item flattening to 65,536 columns',
    () =>
      `struct root (dynamic) { items: []l0; }\n${lines(16, (i) => `struct l${i} (inline) { a: l${i + 1}; b: l${i + 1}; }`)}\nstruct l16 (inline) { x: u8; }\n`,
    ['E0018', 1, 32],
  ],
  [
    'one flattening to 2^22 columns (157 s to a crash before)',
    () =>
      `struct root (dynamic) { items: []l0; }\n${lines(22, (i) => `struct l${i} (inline) { a: l${i + 1}; b: l${i + 1}; }`)}\nstruct l22 (inline) { x: u8; }\n`,
    ['E0018', 1, 32],
  ],
  [
    '5,000 unknown types on one line',
    () => `struct a (dynamic) { ${lines(5_000, (i) => `f${i}: t${i};`).replaceAll('\n', ' ')} }\n`,
    ['E0004', 1, 26],
  ],
  ['20,000 structs (689 KB)', () => lines(20_000, (i) => `struct s${i} (inline) { x: u32; }`), ['E0020', 15_298, 4]],
  [
    '12,000 structs: 40 MB of code',
    () => lines(12_000, (i) => `struct s${i} (inline) { x: u32; }`),
    // The struct whose code crosses the limit: 5,829 before the readers took a byte
    // source (typed guest readers in place), whose generic accessors add ≈ 19 % a struct.
    ['E0021', 4_869, 8],
  ],
  [
    '8,200 fields of [65536]u64 (wrapped usize on wasm32 before)',
    () => `struct big (dynamic) {\n${lines(8_200, (i) => `f${i}: [65536]u64;`)}\n}\n`,
    ['E0008', 1, 8],
  ],
  ['a 300,000-byte name', () => `struct ${'n'.repeat(300_000)} (inline) { x: u8; }\n`, ['E0020', 1, 8]],
];

for (const [name, source, expected] of HOSTILE) {
  test(`item 5: ${name} is a located diagnostic within 1 s; a valid schema compiles right after`, () => {
    const src = source();
    const t0 = performance.now();
    const result = schema.compile(src, { fileName: 'hostile.km' });
    const ms = performance.now() - t0;
    assert.deepEqual(located(result), expected);
    assert.ok(ms < 1000, `${ms.toFixed(0)} ms`);
    assert.ok(result.diagnostics.length <= 100);
    assert.ok(result.rendered.length < 100_000, `${result.rendered.length} bytes of diagnostics`);
    const after = schema.compile(VALID);
    assert.deepEqual(after.diagnostics, []);
    assert.equal(after.files.length, 2);
  });
}

test("item 5: the compiler's wasm memory cannot pass 256 MiB", () => {
  const wasm = readFileSync(join(repo, 'packages/offthread/wasm/offthread-schema.wasm'));
  const { memory } = new WebAssembly.Instance(new WebAssembly.Module(wasm), {}).exports;
  const page = 64 * 1024;
  assert.throws(() => memory.grow((256 * 1024 * 1024) / page - memory.buffer.byteLength / page + 1), RangeError);
});

// A stand-in for the compiler with the same C-ABI exports: `compile` of the 4-byte
// source "trap" poisons its state (as a stack overflow leaves the real one's stack
// pointer) and traps; on a poisoned instance every call traps.
function trappingCompiler() {
  const json = Buffer.from('{"files":[],"diagnostics":[],"rendered":""}');
  const vec = (items) => [items.length, ...items.flat()];
  const str = (s) => vec([...Buffer.from(s)]);
  const section = (id, body) => [id, body.length, ...body];
  const i32 = 0x7f;
  const body = (code) => [code.length + 1, 0, ...code]; // no locals
  const bytes = [
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(
      1,
      vec([
        [0x60, 1, i32, 1, i32],
        [0x60, 2, i32, i32, 0],
        [0x60, 4, i32, i32, i32, i32, 1, i32],
        [0x60, 0, 1, i32],
      ]),
    ),
    ...section(3, vec([[0], [1], [2], [3]])),
    ...section(5, vec([[0x00, 1]])),
    ...section(6, vec([[i32, 1, 0x41, 0, 0x0b]])),
    ...section(
      7,
      vec([
        [...str('memory'), 2, 0],
        [...str('alloc'), 0, 0],
        [...str('dealloc'), 0, 1],
        [...str('compile'), 0, 2],
        [...str('result_ptr'), 0, 3],
      ]),
    ),
    ...section(
      10,
      vec([
        body([0x41, 0x80, 0x08, 0x0b]), // alloc: 1024
        body([0x0b]), // dealloc
        body([
          ...[0x23, 0, 0x04, 0x40, 0x00, 0x0b], // poisoned: unreachable
          ...[0x20, 1, 0x41, 4, 0x46, 0x04, 0x40, 0x41, 1, 0x24, 0, 0x00, 0x0b], // len 4: poison, trap
          ...[0x41, json.length, 0x0b], // else the empty result
        ]),
        body([0x41, 0x80, 0x10, 0x0b]), // result_ptr: 2048
      ]),
    ),
    ...section(11, vec([[0, 0x41, 0x80, 0x10, 0x0b, ...vec([...json])]])),
  ];
  return new WebAssembly.Module(Uint8Array.from(bytes));
}

test('item 5: a trap is ERR_SCHEMA_COMPILER and the next compile runs on a fresh instance', () => {
  const module = trappingCompiler();
  assert.deepEqual(schema.compileWith(module, 'ok'), { files: [], diagnostics: [], rendered: '' });
  // Before: a bare RuntimeError, then every later call failed on the poisoned instance.
  assert.throws(() => schema.compileWith(module, 'trap'), { code: 'ERR_SCHEMA_COMPILER', name: 'OffthreadError' });
  assert.deepEqual(schema.compileWith(module, 'ok'), { files: [], diagnostics: [], rendered: '' });
  assert.throws(() => schema.compileWith(module, 'trap'), { code: 'ERR_SCHEMA_COMPILER' });
  assert.deepEqual(schema.compileWith(module, 'ok').diagnostics, []);
});

test('item 5: the CLI exits 1 on a limit (a schema error) and 3 when the compiler itself fails', () => {
  const dir = mkdtempSync(join(tmpdir(), 'offthread-cli-limits-'));
  try {
    const km = join(dir, 'deep.km');
    writeFileSync(km, HOSTILE[0][1]());
    const limit = spawnSync(process.execPath, [bin, 'schema', 'check', km], { encoding: 'utf8' });
    assert.equal(limit.status, 1, limit.stderr);
    assert.match(limit.stderr, /error\[E0019\]: type nested more than 8 levels deep\n *--> .*deep\.km:2:22/);

    // Every compile traps: the compiler instance is swapped for one whose compile throws.
    const hook = join(dir, 'trap.cjs');
    writeFileSync(
      hook,
      `const Real = WebAssembly.Instance;
WebAssembly.Instance = function (module, imports) {
  const real = new Real(module, imports);
  if (!WebAssembly.Module.exports(module).some((e) => e.name === 'result_ptr')) return real;
  const compile = () => { throw new WebAssembly.RuntimeError('unreachable'); };
  return { exports: { ...real.exports, compile } };
};\n`,
    );
    writeFileSync(km, VALID);
    const trap = spawnSync(process.execPath, ['--require', hook, bin, 'schema', 'check', km], { encoding: 'utf8' });
    assert.equal(trap.status, 3, trap.stderr);
    assert.match(trap.stderr, /ERR_SCHEMA_COMPILER: schema\.compile: the compiler failed \(unreachable\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
