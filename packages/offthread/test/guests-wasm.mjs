// A tiny WebAssembly assembler for hand-made guests: modules that break the guest ABI
// on purpose (docs/guest-abi.md), which no guest built with offthread-guest would.
import { I32, I64, section, sleb, str, uleb, vec } from '../../../tests/guests/wasm-encode.mjs';

const enc = new TextEncoder();

const TYPES = [
  [[], [I32]], // 0: () -> i32
  [[I32], [I64]], // 1: (i32) -> i64
  [[I32], [I32]], // 2: (i32) -> i32
  [[I32, I32, I32, I32], [I64]], // 3: (i32 × 4) -> i64
];
const FUNCS = {
  offthread_abi: 0,
  offthread_init: 0,
  offthread_export: 1,
  offthread_import: 1,
  offthread_alloc: 2,
  offthread_call: 3,
};

export const pack = (ptr, len) => BigInt.asIntN(64, (BigInt(len) << 32n) | BigInt(ptr));

/**
 * A guest whose every ABI export returns a constant. `body` overrides one export with
 * raw instruction bytes (without `end`); `descriptor` is placed at offset 1024.
 * `types` gives an export another type (`[params, results]`: its body must then fit,
 * see `constant`); `imports` adds function imports (`{ module, name, type }`); `data`
 * adds bytes to memory (`{ offset, bytes, memory }`: memory index, default 0); `memories`
 * adds memory imports after `env.memory` (memory 1, 2, …: `{ module, name, min, max }`,
 * module `offthread.memory` by default), which needs an engine with multi-memory;
 * `memoriesFirst` puts them before `env.memory` (memory 0, 1, … then `env.memory`).
 */
export function assemble({
  abi = 1,
  descriptor,
  call = pack(0, 0),
  omit = [],
  memory = true,
  body = {},
  types = {},
  imports: functionImports = [],
  data: segments = [],
  memories = [],
  memoriesFirst = false,
}) {
  const desc = enc.encode(descriptor);
  const consts = {
    offthread_abi: [0x41, ...sleb(abi)],
    offthread_init: [0x41, ...sleb(1)],
    offthread_export: [0x42, ...sleb(pack(1024, desc.length))],
    offthread_import: [0x42, ...sleb(-1)],
    offthread_alloc: [0x41, ...sleb(4096)],
    offthread_call: [0x42, ...sleb(call)],
  };
  const names = Object.keys(FUNCS);
  const typeList = [...TYPES];
  const addType = (t) => typeList.push(t) - 1;
  const typeOf = Object.fromEntries(names.map((n) => [n, types[n] ? addType(types[n]) : FUNCS[n]]));
  const importList = functionImports.map(({ module = 'offthread', name, type }) => [
    ...str(module),
    ...str(name),
    0x00,
    ...uleb(addType(type)),
  ]);
  const own = memory ? [[...str('env'), ...str('memory'), 0x02, 0x00, ...uleb(1)]] : [];
  const more = memories.map(({ module = 'offthread.memory', name, min = 1, max }) => {
    const limits = max === undefined ? [0x00, ...uleb(min)] : [0x01, ...uleb(min), ...uleb(max)];
    return [...str(module), ...str(name), 0x02, ...limits];
  });
  importList.push(...(memoriesFirst ? [...more, ...own] : [...own, ...more]));
  const typeSection = section(
    1,
    vec(typeList.map(([p, r]) => [0x60, ...vec(p.map((t) => [t])), ...vec(r.map((t) => [t]))])),
  );
  const imports = importList.length > 0 ? section(2, vec(importList)) : [];
  const defined = memory ? [] : section(5, vec([[0x00, ...uleb(1)]]));
  const funcs = section(3, vec(names.map((n) => uleb(typeOf[n]))));
  // Imported functions come first in the function index space.
  const first = functionImports.length;
  const exports = section(
    7,
    vec(names.flatMap((n, i) => (omit.includes(n) ? [] : [[...str(n), 0x00, ...uleb(first + i)]]))),
  );
  const code = section(
    10,
    vec(
      names.map((n) => {
        const b = [0x00, ...(body[n] ?? consts[n]), 0x0b];
        return [...uleb(b.length), ...b];
      }),
    ),
  );
  const data = section(
    11,
    vec(
      // The descriptor goes into env.memory, wherever it is in the memory index space.
      [{ offset: 1024, bytes: desc, memory: memoriesFirst ? memories.length : 0 }, ...segments].map(
        ({ offset, bytes, memory: index = 0 }) => [
          ...(index === 0 ? [0x00] : [0x02, ...uleb(index)]),
          0x41,
          ...sleb(offset),
          0x0b,
          ...uleb(bytes.length),
          ...bytes,
        ],
      ),
    ),
  );
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...typeSection,
    ...imports,
    ...funcs,
    ...defined,
    ...exports,
    ...code,
    ...data,
  ]);
}

/** A body that returns zero of the results `[]`, `[I32]` or `[I64]` (for `types`). */
export const constant = (results) => (results[0] === I64 ? [0x42, 0x00] : results[0] === I32 ? [0x41, 0x00] : []);

export const LOOP = [0x03, 0x40, 0x0c, 0x00, 0x0b, 0x42, 0x00]; // loop br 0 end; i64.const 0

export const DESCRIPTOR = JSON.stringify({
  name: 'raw',
  pattern: 'direct',
  fingerprint: '0123456789abcdef',
  memories: [],
  functions: [{ name: 'run', input: null, output: { memory: null } }],
});
