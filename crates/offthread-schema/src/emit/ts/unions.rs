//! Unions: a plain tagged type, a reader result type, read/write/decode functions,
//! and per slice layout a reader class and a `write…` function (docs/schema-format.md §2.9).

use super::Cx;
use crate::compiler::camel_case;
use crate::compiler::ir::*;

pub(super) fn emit(cx: &Cx<'_>, id: usize, layouts: &[SliceLayout]) -> String {
    let mut out = single(cx, id);
    for layout in layouts {
        out.push('\n');
        out += &match layout {
            SliceLayout::UnionAos => aos(cx, id),
            SliceLayout::BoVoA => bov(cx, id, true),
            SliceLayout::BoVoS => bov(cx, id, false),
            _ => soa(cx, id),
        };
    }
    out
}

fn single(cx: &Cx<'_>, id: usize) -> String {
    let u = &cx.s.unions[id];
    let n = cx.union_name(id);
    let tag = u.tag.name();
    let plain: Vec<String> = u
        .variants
        .iter()
        .map(|v| {
            format!(
                "{{ tag: '{}'; value: {} }}",
                camel_case(&v.name),
                cx.name(v.struct_id)
            )
        })
        .collect();
    let refs: Vec<String> = u
        .variants
        .iter()
        .map(|v| {
            format!(
                "{{ tag: '{}'; value: {}Reader }}",
                camel_case(&v.name),
                cx.name(v.struct_id)
            )
        })
        .collect();
    let mut out = format!(
        "/** Union `{}` ({tag} tag) as a plain object. */\nexport type {n} =\n  | {};\n\n\
         /** What a reader finds in a `{}` field. */\nexport type {n}Ref =\n  | {{ tag: 'empty' }}\n  | {{ tag: 'unknown'; raw: number }}\n  | {};\n\n",
        u.name,
        plain.join("\n  | "),
        u.name,
        refs.join("\n  | ")
    );
    out += &format!(
        "export function read{n}(view: rt.StructView, off: number): {n}Ref {{\n  const [tag, ptr] = view.unionTagPtr(off, '{tag}');\n  return read{n}At(view, tag, ptr);\n}}\n\n\
         /** The value with `tag` at absolute offset `ptr`, followed from `view`. */\n\
         export function read{n}At(view: rt.StructView, tag: number, ptr: number): {n}Ref {{\n  switch (tag) {{\n    case 0:\n      return {{ tag: 'empty' }};\n"
    );
    for v in &u.variants {
        let st = &cx.s.structs[v.struct_id];
        let deref = match st.kind {
            StructKind::Dynamic => "view.derefDynamic(ptr)".to_string(),
            StructKind::Inline => format!("view.derefInline(ptr, {})", st.size),
        };
        out += &format!(
            "    case {}: {{\n      const v = {deref};\n      return v === null ? {{ tag: 'empty' }} : {{ tag: '{}', value: new {}Reader(v) }};\n    }}\n",
            v.tag,
            camel_case(&v.name),
            cx.name(v.struct_id)
        );
    }
    out += "    default:\n      return { tag: 'unknown', raw: tag };\n  }\n}\n\n";
    out += &format!(
        "/** Writes the variant's struct out of line; returns [tag, offset]. */\n\
         export function write{n}Value(b: rt.Builder, v: rt.Writable<{n}>): [number, number] {{\n  switch (v?.tag) {{\n"
    );
    for v in &u.variants {
        out += &format!(
            "    case '{}':\n      return [{}, {}Writer.alloc(b).fill(v.value).offset];\n",
            camel_case(&v.name),
            v.tag,
            cx.name(v.struct_id)
        );
    }
    // Unknown tags (untyped callers) are W0005, not a TypeError from destructuring undefined.
    out += &format!(
        "    default:\n      return rt.unknownTag('{}', v);\n",
        u.name
    );
    out += &format!(
        "  }}\n}}\n\n/** Writes the value out of line, then tag and offset at `at`. */\n\
         export function write{n}(b: rt.Builder, at: number, v: rt.Writable<{n}>): void {{\n  const [tag, ptr] = write{n}Value(b, v);\n  b.{tag}(at, tag);\n  b.u32(at + 4, ptr);\n}}\n\n\
         /** `null` for an empty union or a tag this schema does not know. */\n\
         export function decode{n}(r: {n}Ref, budget: rt.Budget): {n} | null {{\n  switch (r.tag) {{\n"
    );
    for v in &u.variants {
        let t = camel_case(&v.name);
        out += &format!(
            "    case '{t}':\n      return {{ tag: '{t}', value: r.value.toPlain(budget) }};\n"
        );
    }
    out += "    default:\n      return null;\n  }\n}\n";
    out
}

fn aos(cx: &Cx<'_>, id: usize) -> String {
    let n = cx.union_name(id);
    let tag = cx.s.unions[id].tag.name();
    let ctor = super::fields_and_ctor(&[("aos", "rt.AosView")]);
    format!(
        "/** A `#aos` slice of `{}`: (tag, offset) pairs. */\nexport class {n}AosReader {{\n{ctor}\n\
         \x20 get length(): number {{\n    return this.aos.length;\n  }}\n\n\
         \x20 get(i: number): {n}Ref | undefined {{\n    const v = this.aos.get(i);\n    return v === undefined ? undefined : read{n}(v, 0);\n  }}\n\n\
         \x20 toPlain(budget: rt.Budget = this.aos.msg.budget()): ({n} | null)[] {{\n    budget.spend(this.length);\n\
         \x20   const out: ({n} | null)[] = [];\n    for (let i = 0; i < this.length; i++) out.push(decode{n}(this.get(i)!, budget));\n    return out;\n  }}\n}}\n\n\
         /** Writes a `#aos` slice of `{}`; returns the header offset (0 when empty). */\n\
         export function write{n}Aos(b: rt.Builder, items: ReadonlyArray<rt.Writable<{n}> | null>): number {{\n\
         \x20 const [header, data] = b.aos(rt.count(items, '{}'), 8);\n\
         \x20 items.forEach((x, i) => {{\n    if (x === null) return;\n    const [tag, ptr] = write{n}Value(b, x);\n    b.{tag}(data + i * 8, tag);\n    b.u32(data + i * 8 + 4, ptr);\n  }});\n  return header;\n}}\n",
        cx.s.unions[id].name, cx.s.unions[id].name, cx.s.unions[id].name
    )
}

fn soa(cx: &Cx<'_>, id: usize) -> String {
    let n = cx.union_name(id);
    let u = &cx.s.unions[id];
    let tag = u.tag.name();
    let size = u.tag.size();
    let arr = super::typed_array(u.tag);
    let ctor = super::fields_and_ctor(&[
        ("view", "rt.StructView"),
        ("tags", arr),
        ("ptrs", "Uint32Array"),
    ]);
    format!(
        "/** A `#soa` slice of `{}`: a tag column (searchable) and an offset column. */\nexport class {n}SoaReader {{\n\
         {ctor}\n\
         \x20 get length(): number {{\n    return this.tags.length;\n  }}\n\n\
         \x20 get(i: number): {n}Ref | undefined {{\n    const tag = this.tags[i];\n    const ptr = this.ptrs[i];\n\
         \x20   return tag === undefined || ptr === undefined ? undefined : read{n}At(this.view, tag, ptr);\n  }}\n\n\
         \x20 toPlain(budget: rt.Budget = this.view.msg.budget()): ({n} | null)[] {{\n    budget.spend(this.length);\n\
         \x20   const out: ({n} | null)[] = [];\n    for (let i = 0; i < this.length; i++) out.push(decode{n}(this.get(i)!, budget));\n    return out;\n  }}\n}}\n\n\
         /** Writes a `#soa` slice of `{}`; returns the header offset (0 when empty). */\n\
         export function write{n}Soa(b: rt.Builder, items: ReadonlyArray<rt.Writable<{n}> | null>): number {{\n\
         \x20 const cols = b.unionSoa(rt.count(items, '{}'), {size});\n  if (cols === null) return 0;\n\
         \x20 items.forEach((x, i) => {{\n    if (x === null) return;\n    const [tag, ptr] = write{n}Value(b, x);\n    b.{tag}(cols.tags + i * {size}, tag);\n    b.u32(cols.ptrs + i * 4, ptr);\n  }});\n  return cols.header;\n}}\n",
        u.name, u.name, u.name
    )
}

fn bov(cx: &Cx<'_>, id: usize, aos: bool) -> String {
    let u = &cx.s.unions[id];
    let n = cx.union_name(id);
    let (kind, ann, wrapper) = if aos {
        ("Bovoa", "#bovoa", "Aos")
    } else {
        ("Bovos", "#bovos", "Soa")
    };
    let ctor = super::fields_and_ctor(&[("table", "rt.VariantTable")]);
    let mut out = format!(
        "/** A `{ann}` slice of `{}`: one array per variant (insertion order is not kept). */\nexport class {n}{kind}Reader {{\n\
         {ctor}\n  get length(): number {{\n    return this.table.length;\n  }}\n",
        u.name
    );
    for v in &u.variants {
        let sn = cx.name(v.struct_id);
        let st = &cx.s.structs[v.struct_id];
        let call = if aos {
            format!(
                "new {sn}AosReader(this.table.aos({}, {}, {}))",
                v.tag,
                st.size,
                st.kind == StructKind::Dynamic
            )
        } else {
            format!("new {sn}SoaReader(this.table.soa({}))", v.tag)
        };
        out += &format!(
            "\n  /** The `{}` items (tag {}). */\n  {}(): {sn}{wrapper}Reader {{\n    return {call};\n  }}\n",
            v.name,
            v.tag,
            super::member(&v.name)
        );
    }
    out += &format!(
        "\n  /** Every item, variant by variant in declaration order. */\n  toPlain(budget: rt.Budget = this.table.view.msg.budget()): {n}[] {{\n    return [\n"
    );
    for v in &u.variants {
        out += &format!(
            "      ...this.{}().toPlain(budget).map((value): {n} => ({{ tag: '{}', value }})),\n",
            super::member(&v.name),
            camel_case(&v.name)
        );
    }
    out += "    ];\n  }\n}\n\n";
    // Checked first: grouping by variant would silently drop an item with an unknown tag.
    let known = u
        .variants
        .iter()
        .map(|v| format!("x?.tag !== '{}'", camel_case(&v.name)))
        .collect::<Vec<_>>()
        .join(" && ");
    out += &format!(
        "/** Writes a `{ann}` slice of `{}`, grouping items by variant; returns the header offset. */\n\
         export function write{n}{kind}(b: rt.Builder, items: ReadonlyArray<rt.Writable<{n}>>): number {{\n\
         \x20 rt.count(items, '{}');\n\
         \x20 for (const x of items) if ({known}) rt.unknownTag('{}', x);\n\
         \x20 const [header, table] = b.variantTable(items.length, {});\n  if (header === 0) return 0;\n",
        u.name,
        u.name,
        u.name,
        u.variants.len()
    );
    for (k, v) in u.variants.iter().enumerate() {
        let sn = cx.name(v.struct_id);
        let t = camel_case(&v.name);
        out += &format!(
            "  {{\n    const xs = items.flatMap((x) => (x.tag === '{t}' ? [x.value] : []));\n    b.u32(table + {}, {});\n\
             \x20   b.u32(table + {}, {sn}{wrapper}Writer.alloc(b, xs.length).fill(xs).header);\n  }}\n",
            k * 8,
            v.tag,
            k * 8 + 4
        );
    }
    out += "  return header;\n}\n";
    out
}
