// The canonical stringification of the integrity experiment and the TS consumer that
// applies it to a value decoded by the generated TS reader (docs/guest-integrity.md).
// rust-gen.mjs emits the same walk in Rust; both must agree byte for byte.
//
// Each field path (`struct.field`) has one SHA-256 over its tokens in traversal order
// (depth first, fields in declaration order). A token is `<byte length>:<bytes>`:
// integers and enums in decimal, floats as their IEEE bits in lower-case hex (8 or 16
// digits; every NaN as the quiet NaN), bools `true`/`false`, strings their UTF-8 bytes; a slice first gives its count,
// a dynamic struct `1`/`0` (present/absent), a union its tag (`0`: empty).
import { hash } from 'node:crypto';
import { fieldPaths } from './gen-schemas.mjs';

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);
const f64 = new Float64Array(1);
const f64Bits = new BigUint64Array(f64.buffer);

/** The generated TS names of a snake_case schema name (fields camelCase, types PascalCase). */
export const camel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
export const pascal = (name) => camel(name).replace(/^[a-z]/, (c) => c.toUpperCase());

function scalarToken(ty, x) {
  switch (ty.k) {
    case 'int':
    case 'enum':
      return String(x);
    case 'bool':
      return x ? 'true' : 'false';
    case 'float':
      // Any NaN as the quiet one (a JS number does not keep NaN payloads).
      if (Number.isNaN(x)) return ty.t === 'f32' ? '7fc00000' : '7ff8000000000000';
      if (ty.t === 'f32') {
        f32[0] = x;
        return f32Bits[0].toString(16).padStart(8, '0');
      }
      f64[0] = x;
      return f64Bits[0].toString(16).padStart(16, '0');
    default:
      throw new Error(`not a scalar: ${ty.k}`);
  }
}

const indexes = new WeakMap();
/** `struct.field` → its position in the digest list. */
function pathIndex(model) {
  let index = indexes.get(model);
  if (!index) {
    index = new Map(fieldPaths(model).map((p, i) => [p, i]));
    indexes.set(model, index);
  }
  return index;
}

/** Per-path digests of `value` (a plain value of the model's root): 32 bytes each, in path order. */
export function digestPaths(model, value) {
  const index = pathIndex(model);
  // Tokens as JS strings, hashed as UTF-8 once per path: the decoded strings are valid
  // Unicode (the reader refuses lone surrogates, R0008), so this is their UTF-8 bytes.
  const tokens = Array.from({ length: index.size }, () => []);
  const push = (id, text) => tokens[id].push(`${Buffer.byteLength(text, 'utf8')}:`, text);
  const unionItem = (id, union, item) => {
    if (item === null) return push(id, '0');
    const variant = union.variants.find((v) => camel(v.name) === item.tag);
    if (!variant) throw new Error(`union item with tag ${item.tag} is none of the variants`);
    push(id, String(variant.tag));
    walk(variant.struct, item.value);
  };
  function walk(structName, v) {
    for (const { name, ty } of model.structs[structName].fields) {
      const id = index.get(`${structName}.${name}`);
      const x = v[camel(name)];
      switch (ty.k) {
        case 'int':
        case 'float':
        case 'bool':
        case 'enum':
          push(id, scalarToken(ty, x));
          break;
        case 'fixed':
          for (const e of x) push(id, scalarToken(ty.of, e));
          break;
        case 'string':
          push(id, x);
          break;
        case 'slice':
          push(id, String(x.length));
          for (let i = 0; i < x.length; i++) push(id, scalarToken(ty.of, x[i]));
          break;
        case 'struct':
          if (model.structs[ty.name].kind === 'inline') walk(ty.name, x);
          else {
            push(id, x === null ? '0' : '1');
            if (x !== null) walk(ty.name, x);
          }
          break;
        case 'structs':
          push(id, String(x.length));
          for (const item of x) walk(ty.name, item);
          break;
        case 'union':
          unionItem(id, model.unions[ty.name], x);
          break;
        case 'unions':
          push(id, String(x.length));
          for (const item of x) unionItem(id, model.unions[ty.name], item);
          break;
        default:
          throw new Error(`unknown model type ${ty.k}`);
      }
    }
  }
  walk(model.root, value);
  return tokens.map((chunks) => hash('sha256', chunks.join(''), 'buffer'));
}

/** The combined digest: SHA-256 of the path digests, concatenated in path order. */
export const combine = (digests) => hash('sha256', Buffer.concat(digests), 'buffer');

/**
 * The TS consumer: a verdict for `bytes` read with the schema's generated `decode…`:
 * `{ code: 0, digest, paths }`, or `{ code: n }` for read error Rn (R0001 is 1). Anything
 * but a typed read error is thrown: that is a crash of the reader.
 */
export function consumeTs(model, decode, bytes) {
  let value;
  try {
    value = decode(bytes);
  } catch (err) {
    const m = /^R(\d{4})$/.exec(err?.code ?? '');
    if (!m) throw err;
    return { code: Number(m[1]) };
  }
  const paths = digestPaths(model, value);
  return { code: 0, digest: combine(paths), paths };
}
