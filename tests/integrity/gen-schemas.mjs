// Random, valid .km schemas for the integrity experiment (docs/guest-integrity.md):
// deterministic from (seed, index). Each schema comes with its model — the structure the
// Rust producer/consumer emitter (rust-gen.mjs) and the TS consumer (canonical.mjs) walk.
//
// Model types (`ty`): { k: 'int', t: 'u8'…'i64' } | { k: 'float', t: 'f32' | 'f64' } |
// { k: 'bool' } | { k: 'enum', name } | { k: 'fixed', n, of } (of: int/float/bool/enum) |
// { k: 'string', unit: 'u8' | 'u16' } | { k: 'slice', of } (of: int/float/bool/enum) |
// { k: 'struct', name } (embedded if inline, an offset if dynamic) |
// { k: 'structs', name, layout: 'soa' | 'aos' } | { k: 'union', name } |
// { k: 'unions', name, layout: 'soa' | 'aos' | 'bovoa' | 'bovos' }.
// The root is always `st0`, a dynamic struct.

export const INTS = ['u8', 'u16', 'u32', 'u64', 'i8', 'i16', 'i32', 'i64'];
const SCALARS = [...INTS, 'f32', 'f64', 'bool'];
const REPR_MAX = { u8: 0xff, u16: 0xffff, u32: 0xffffffff };

/** mulberry32 over a 32-bit state: small, fast, and the same on every engine. */
export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const below = (n) => Math.floor(next() * n);
  return { next, below, pick: (xs) => xs[below(xs.length)], chance: (p) => next() < p };
}

/** A per-schema seed from the run's seed and the schema's index. */
export const schemaSeed = (seed, index) => (Math.imul(seed ^ 0x5bd1e995, 0x01000193) + index * 0x9e3779b9) >>> 0;

const scalarTy = (t) => (t === 'bool' ? { k: 'bool' } : t[0] === 'f' ? { k: 'float', t } : { k: 'int', t });

/** SoA items hold only columns: scalars, enums, fixed arrays, inline structs of those, scalar slices. */
function soaOk(model, name, fixedOnly) {
  return model.structs[name].fields.every(({ ty }) => {
    if (['int', 'float', 'bool', 'enum', 'fixed'].includes(ty.k)) return true;
    if (ty.k === 'string' || ty.k === 'slice') return !fixedOnly;
    if (ty.k === 'struct') return model.structs[ty.name].kind === 'inline' && soaOk(model, ty.name, fixedOnly);
    return false;
  });
}

/**
 * The schema `index` of a run seeded `seed`: `{ name, km, model }`. `attempt` varies it
 * when the compiler refuses a draw for a reason the generator cannot foresee (E0015, two
 * column paths with the same 32-bit hash).
 */
export function generateSchema(seed, index, attempt = 0) {
  const rnd = prng(schemaSeed(seed, index) + attempt * 0x632be5ab);
  const model = { root: 'st0', enums: {}, unions: {}, structs: {} };

  const enumCount = rnd.below(3);
  for (let e = 0; e < enumCount; e++) {
    const repr = rnd.pick(['u8', 'u16', 'u32']);
    const values = new Set();
    const wanted = 1 + rnd.below(5);
    while (values.size < wanted) values.add(rnd.chance(0.5) ? values.size : rnd.below(REPR_MAX[repr] + 1));
    model.enums[`en${e}`] = { repr, values: [...values] };
  }

  // Struct kinds first: fields may point at any struct, but embed (inline) only later ones,
  // so inline structs never contain themselves.
  const structCount = 2 + rnd.below(5);
  const names = Array.from({ length: structCount }, (_, i) => `st${i}`);
  for (const [i, name] of names.entries())
    model.structs[name] = { kind: i === 0 || rnd.chance(0.55) ? 'dynamic' : 'inline', fields: [] };

  const unionCount = rnd.below(3);
  for (let u = 0; u < unionCount; u++) {
    const repr = rnd.pick(['u8', 'u16', 'u32']);
    const variants = [];
    let tag = 0;
    for (let v = 1 + rnd.below(3); v > 0; v--) {
      tag += rnd.chance(0.7) ? 1 : 1 + rnd.below(40);
      variants.push({ name: `v${variants.length}`, tag, struct: rnd.pick(names.slice(1)) });
    }
    model.unions[`un${u}`] = { repr, variants };
  }

  const enumNames = Object.keys(model.enums);
  const unionNames = Object.keys(model.unions);
  const elemTy = () =>
    enumNames.length > 0 && rnd.chance(0.15) ? { k: 'enum', name: rnd.pick(enumNames) } : scalarTy(rnd.pick(SCALARS));

  for (let i = structCount - 1; i >= 0; i--) {
    const done = new Set(names.slice(i + 1)); // fields generated already
    const later = names.slice(i + 1);
    const laterInline = later.filter((n) => model.structs[n].kind === 'inline');
    const dynamics = names.filter((n) => model.structs[n].kind === 'dynamic');
    const fieldCount = i === 0 ? 3 + rnd.below(8) : 1 + rnd.below(6);
    const fields = [];
    while (fields.length < fieldCount) {
      const roll = rnd.next();
      let ty;
      if (roll < 0.32) ty = scalarTy(rnd.pick(SCALARS));
      else if (roll < 0.4) ty = enumNames.length > 0 ? { k: 'enum', name: rnd.pick(enumNames) } : scalarTy('u16');
      else if (roll < 0.47) ty = { k: 'fixed', n: 1 + rnd.below(4), of: elemTy() };
      else if (roll < 0.56) ty = { k: 'string', unit: rnd.chance(0.8) ? 'u8' : 'u16' };
      else if (roll < 0.65) ty = { k: 'slice', of: rnd.chance(0.4) ? { k: 'int', t: 'u8' } : elemTy() };
      else if (roll < 0.73) {
        if (laterInline.length === 0) continue;
        ty = { k: 'struct', name: rnd.pick(laterInline) };
      } else if (roll < 0.8) ty = { k: 'struct', name: rnd.pick(dynamics) };
      else if (roll < 0.9) {
        const name = rnd.pick(names);
        const soa = done.has(name) && soaOk(model, name, false) && rnd.chance(0.7);
        ty = { k: 'structs', name, layout: soa ? 'soa' : 'aos' };
      } else {
        if (unionNames.length === 0) continue;
        const name = rnd.pick(unionNames);
        if (rnd.chance(0.4)) ty = { k: 'union', name };
        else {
          const variants = model.unions[name].variants;
          const bovosOk = variants.every((v) => done.has(v.struct) && soaOk(model, v.struct, true));
          const layouts = ['soa', 'aos', 'bovoa', ...(bovosOk ? ['bovos'] : [])];
          ty = { k: 'unions', name, layout: rnd.pick(layouts) };
        }
      }
      fields.push({ name: `f${fields.length}`, ty });
    }
    model.structs[names[i]].fields = fields;
  }
  // Every declaration must be reachable from the root, or its code is never exercised.
  const root = model.structs.st0.fields;
  for (let unreached = unreachable(model); unreached.length > 0; unreached = unreachable(model)) {
    const [kind, name] = unreached[0];
    let ty;
    if (kind === 'union')
      ty = rnd.chance(0.5) ? { k: 'union', name } : { k: 'unions', name, layout: rnd.pick(['soa', 'aos', 'bovoa']) };
    else if (model.structs[name].kind === 'inline' || rnd.chance(0.5)) ty = { k: 'struct', name };
    else ty = { k: 'structs', name, layout: soaOk(model, name, false) && rnd.chance(0.6) ? 'soa' : 'aos' };
    root.push({ name: `f${root.length}`, ty });
  }
  return { name: `s${index}`, km: renderKm(model, `seed ${seed}, schema ${index}, attempt ${attempt}`), model };
}

/** Structs and unions no field path from the root leads to: `[['struct' | 'union', name]]`. */
function unreachable(model) {
  const seen = new Set();
  const visit = (kind, name) => {
    if (seen.has(`${kind}:${name}`)) return;
    seen.add(`${kind}:${name}`);
    if (kind === 'union') for (const v of model.unions[name].variants) visit('struct', v.struct);
    else
      for (const { ty } of model.structs[name].fields) {
        if (ty.k === 'struct' || ty.k === 'structs') visit('struct', ty.name);
        if (ty.k === 'union' || ty.k === 'unions') visit('union', ty.name);
      }
  };
  visit('struct', model.root);
  return [
    ...Object.keys(model.structs).map((n) => ['struct', n]),
    ...Object.keys(model.unions).map((n) => ['union', n]),
  ].filter(([kind, name]) => !seen.has(`${kind}:${name}`));
}

function kmType(ty) {
  switch (ty.k) {
    case 'int':
    case 'float':
      return ty.t;
    case 'bool':
      return 'bool';
    case 'enum':
    case 'struct':
    case 'union':
      return ty.name;
    case 'fixed':
      return `[${ty.n}]${kmType(ty.of)}`;
    case 'string':
      return `[]${ty.unit} #string`;
    case 'slice':
      return `[]${kmType(ty.of)}`;
    case 'structs':
    case 'unions':
      return `[]${ty.name} #${ty.layout}`;
    default:
      throw new Error(`unknown model type ${ty.k}`);
  }
}

export function renderKm(model, origin) {
  const out = [`// Generated by tests/integrity/gen-schemas.mjs (${origin}).`];
  for (const [name, e] of Object.entries(model.enums)) {
    out.push(`enum ${name} (${e.repr}) {`, ...e.values.map((v, i) => `    v${i} = ${v};`), '}');
  }
  for (const [name, u] of Object.entries(model.unions)) {
    out.push(
      `union ${name} (dynamic, ${u.repr}) {`,
      ...u.variants.map((v) => `    ${v.name}: ${v.struct} = ${v.tag};`),
      '}',
    );
  }
  for (const [name, s] of Object.entries(model.structs)) {
    out.push(`struct ${name} (${s.kind}) {`, ...s.fields.map((f) => `    ${f.name}: ${kmType(f.ty)};`), '}');
  }
  return `${out.join('\n')}\n`;
}

/** Every `struct.field` path, in the order the digests are listed (both languages). */
export function fieldPaths(model) {
  return Object.entries(model.structs).flatMap(([s, { fields }]) => fields.map((f) => `${s}.${f.name}`));
}

/** The language features a schema uses (for the coverage table of the benchmark). */
export function features(model) {
  const out = new Set();
  const scalar = (ty) => (ty.k === 'enum' ? 'enum' : ty.k === 'bool' ? 'bool' : ty.t);
  for (const e of Object.values(model.enums)) out.add(`enum (${e.repr})`);
  for (const u of Object.values(model.unions)) out.add(`union (${u.repr} tag)`);
  for (const [name, s] of Object.entries(model.structs)) {
    out.add(`${s.kind} struct`);
    for (const { ty } of s.fields) {
      if (['int', 'float', 'bool', 'enum'].includes(ty.k)) out.add(`field ${scalar(ty)}`);
      else if (ty.k === 'fixed') out.add(`[N]${scalar(ty.of)}`);
      else if (ty.k === 'string') out.add(`[]${ty.unit} #string`);
      else if (ty.k === 'slice') out.add(`[]${scalar(ty.of)}`);
      else if (ty.k === 'struct') {
        out.add(`${model.structs[ty.name].kind} struct field`);
        if (ty.name === name) out.add('self-referencing struct');
      } else if (ty.k === 'structs') out.add(`[]struct #${ty.layout}`);
      else if (ty.k === 'union') out.add('union field');
      else if (ty.k === 'unions') out.add(`[]union #${ty.layout}`);
    }
  }
  return out;
}
