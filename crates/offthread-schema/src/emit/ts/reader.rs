//! `…Reader` classes: methods read straight from the message; SoA columns come back
//! as typed-array views over the same buffer.

use super::{Cx, column_member, member, scalar_type, typed_array};
use crate::compiler::camel_case;
use crate::compiler::ir::*;

pub(super) fn emit_struct(cx: &Cx<'_>, id: usize) -> String {
    let s = &cx.s.structs[id];
    let n = cx.name(id);
    let root = match s.kind {
        StructKind::Dynamic => "rt.StructView.rootDynamic(bytes, opts)".to_string(),
        StructKind::Inline => format!("rt.StructView.rootInline(bytes, {}, opts)", s.size),
    };
    let ctor = super::fields_and_ctor(&[("view", "rt.StructView")]);
    let mut out = format!(
        "/** Zero-copy reader for `{}`. */\nexport class {n}Reader {{\n\
         {ctor}\n\
         \x20 /** Opens a message whose root (offset 0) is this struct. */\n\
         \x20 static fromBytes(bytes: rt.Bytes, opts?: rt.ReadOptions): {n}Reader {{\n\
         \x20   return new {n}Reader({root});\n  }}\n",
        s.name
    );
    for f in &s.fields {
        let (ret, body) = accessor(cx, &f.ty, f.offset);
        out += &format!(
            "\n  /** `{}` at +{}. */\n  {}(): {ret} {{\n    {body}\n  }}\n",
            f.name,
            f.offset,
            member(&f.name)
        );
    }
    out += &to_plain(cx, id);
    out += "}\n";
    out
}

fn accessor(cx: &Cx<'_>, ty: &Type, off: usize) -> (String, String) {
    match ty {
        Type::Scalar(sc) => (
            scalar_type(*sc).into(),
            format!("return this.view.{}({off});", sc.name()),
        ),
        Type::Enum(e) => (
            cx.enum_name(*e),
            format!("return this.view.{}({off});", cx.s.enums[*e].repr.name()),
        ),
        Type::Fixed { len, elem } => {
            let sc = match **elem {
                Type::Enum(e) => cx.s.enums[e].repr,
                Type::Scalar(sc) => sc,
                _ => unreachable!("fixed arrays hold scalars or enums"),
            };
            let step = sc.size();
            (
                cx.plain_type(ty),
                format!(
                    "return Array.from({{ length: {len} }}, (_, i) => this.view.{}({off} + i * {step}));",
                    sc.name()
                ),
            )
        }
        Type::Struct(id) => {
            let n = cx.name(*id);
            let st = &cx.s.structs[*id];
            if st.kind == StructKind::Inline {
                (
                    format!("{n}Reader"),
                    format!(
                        "return new {n}Reader(this.view.inline({off}, {}));",
                        st.size
                    ),
                )
            } else {
                (
                    format!("{n}Reader | null"),
                    format!(
                        "const v = this.view.dynamic({off});\n    return v === null ? null : new {n}Reader(v);"
                    ),
                )
            }
        }
        Type::Union(u) => {
            let n = cx.union_name(*u);
            (
                format!("{n}Ref"),
                format!("return read{n}(this.view, {off});"),
            )
        }
        Type::Slice {
            string: Some(StringKind::Utf8),
            ..
        } => ("string".into(), format!("return this.view.utf8({off});")),
        Type::Slice {
            string: Some(StringKind::Utf16),
            ..
        } => ("string".into(), format!("return this.view.utf16({off});")),
        Type::Slice { elem, layout, .. } => match (&**elem, layout) {
            (Type::Struct(id), SliceLayout::Soa(_)) => {
                let n = cx.name(*id);
                (
                    format!("{n}SoaReader"),
                    format!("return new {n}SoaReader(this.view.soa({off}));"),
                )
            }
            (Type::Struct(id), _) => {
                let n = cx.name(*id);
                let st = &cx.s.structs[*id];
                let evolving = st.kind == StructKind::Dynamic;
                (
                    format!("{n}AosReader"),
                    format!(
                        "return new {n}AosReader(this.view.aos({off}, {}, {evolving}));",
                        st.size
                    ),
                )
            }
            (Type::Union(u), layout) => {
                let n = cx.union_name(*u);
                let tag = cx.s.unions[*u].tag.name();
                match layout {
                    SliceLayout::UnionAos => (
                        format!("{n}AosReader"),
                        format!("return new {n}AosReader(this.view.aos({off}, 8, false));"),
                    ),
                    SliceLayout::BoVoA => (
                        format!("{n}BovoaReader"),
                        format!(
                            "return new {n}BovoaReader(rt.VariantTable.read(this.view, {off}));"
                        ),
                    ),
                    SliceLayout::BoVoS => (
                        format!("{n}BovosReader"),
                        format!(
                            "return new {n}BovosReader(rt.VariantTable.read(this.view, {off}));"
                        ),
                    ),
                    _ => (
                        format!("{n}SoaReader"),
                        format!(
                            "const [tags, ptrs] = rt.unionSoa(this.view, {off}, '{tag}');\n    return new {n}SoaReader(this.view, tags, ptrs);"
                        ),
                    ),
                }
            }
            (e, _) => {
                let sc = cx.leaf_scalar(e);
                (
                    typed_array(sc).into(),
                    format!(
                        "return this.view.scalars({off}, '{}');",
                        sc.storage().name()
                    ),
                )
            }
        },
    }
}

/// `toPlain(budget)`: copies everything into plain objects, spending the budget.
fn to_plain(cx: &Cx<'_>, id: usize) -> String {
    let s = &cx.s.structs[id];
    let n = cx.name(id);
    let mut pre = String::new();
    let mut fields = String::new();
    for (i, f) in s.fields.iter().enumerate() {
        let m = member(&f.name);
        let value = match &f.ty {
            Type::Scalar(_) | Type::Enum(_) | Type::Fixed { .. } => format!("this.{m}()"),
            Type::Struct(sid) if cx.s.structs[*sid].kind == StructKind::Inline => {
                format!("this.{m}().toPlain(budget)")
            }
            Type::Struct(_) => {
                pre += &format!("    const f{i} = this.{m}();\n");
                format!("f{i} === null ? null : f{i}.toPlain(budget)")
            }
            Type::Union(u) => format!("decode{}(this.{m}(), budget)", cx.union_name(*u)),
            Type::Slice {
                string: Some(_), ..
            } => {
                pre += &format!("    const f{i} = this.{m}();\n    budget.spend(f{i}.length);\n");
                format!("f{i}")
            }
            Type::Slice { elem, layout, .. } => match (&**elem, layout) {
                (Type::Struct(_) | Type::Union(_), _) => format!("this.{m}().toPlain(budget)"),
                (Type::Scalar(Scalar::Bool), _) => {
                    pre +=
                        &format!("    const f{i} = this.{m}();\n    budget.spend(f{i}.length);\n");
                    format!("Array.from(f{i}, (x) => x !== 0)")
                }
                _ => {
                    pre +=
                        &format!("    const f{i} = this.{m}();\n    budget.spend(f{i}.length);\n");
                    format!("f{i}.slice()")
                }
            },
        };
        fields += &format!("      {}: {value},\n", camel_case(&f.name));
    }
    format!(
        "\n  /** Copies this struct and everything it points to into plain objects. */\n\
         \x20 toPlain(budget: rt.Budget = this.view.msg.budget()): {n} {{\n    budget.spend(1);\n{pre}    return {{\n{fields}    }};\n  }}\n"
    )
}

pub(super) fn emit_soa(cx: &Cx<'_>, id: usize) -> String {
    let n = cx.name(id);
    let cols = cx.s.soa_columns(id);
    let ctor = super::fields_and_ctor(&[("soa", "rt.SoaView")]);
    let mut out = format!(
        "/** Struct-of-arrays of `{}`: each column a typed-array view (zeros if the writer's schema lacked it). */\n\
         export class {n}SoaReader {{\n{ctor}\n\
         \x20 get length(): number {{\n    return this.soa.length;\n  }}\n",
        cx.s.structs[id].name
    );
    for c in cols {
        if c.varlen {
            out += &var_accessor(c);
            continue;
        }
        let per = if c.per_item > 1 {
            format!(", {} values per item", c.per_item)
        } else {
            String::new()
        };
        out += &format!(
            "\n  /** Column `{}`{per} (path {:?}). */\n  {}(): {} {{\n    return this.soa.column({:#010x}, '{}', {});\n  }}\n",
            c.names.join("."),
            c.path,
            column_member(&c.names),
            typed_array(c.scalar),
            c.hash,
            c.scalar.storage().name(),
            c.per_item
        );
    }
    // toPlain: rebuild items from the columns.
    out += &format!(
        "\n  toPlain(budget: rt.Budget = this.soa.msg.budget()): {n}[] {{\n    budget.spend(this.length);\n"
    );
    for (k, c) in cols.iter().enumerate() {
        out += &format!("    const c{k} = this.{}();\n", column_member(&c.names));
        if c.varlen {
            let raw = if c.string.is_some() { ".raw" } else { "" };
            out += &format!("    budget.spend(c{k}{raw}.values.length);\n");
        }
    }
    let mut next = 0;
    let lit = item_literal(cx, id, &mut next, 3);
    out += &format!(
        "    const out: {n}[] = [];\n    for (let i = 0; i < this.length; i++) {{\n      out.push({lit});\n    }}\n    return out;\n  }}\n}}\n"
    );
    out
}

fn item_literal(cx: &Cx<'_>, id: usize, next: &mut usize, depth: usize) -> String {
    let pad = "  ".repeat(depth + 1);
    let mut out = "{\n".to_string();
    for f in &cx.s.structs[id].fields {
        let value = match &f.ty {
            Type::Struct(inner) => item_literal(cx, *inner, next, depth + 1),
            ty => {
                let k = *next;
                *next += 1;
                let conv = |e: &Type, x: String| match e {
                    Type::Scalar(Scalar::Bool) => format!("{x} !== 0"),
                    _ => x,
                };
                match ty {
                    Type::Slice {
                        string: Some(_), ..
                    } => format!("c{k}.get(i)!"),
                    Type::Slice { elem, .. } => match **elem {
                        Type::Scalar(Scalar::Bool) => {
                            format!("Array.from(c{k}.get(i)!, (x) => x !== 0)")
                        }
                        _ => format!("c{k}.get(i)!.slice()"),
                    },
                    Type::Fixed { len, elem } => {
                        format!(
                            "Array.from({{ length: {len} }}, (_, j) => {})",
                            conv(elem, format!("c{k}[i * {len} + j]!"))
                        )
                    }
                    _ => conv(ty, format!("c{k}[i]!")),
                }
            }
        };
        out += &format!("{pad}{}: {value},\n", camel_case(&f.name));
    }
    out += &format!("{}}}", "  ".repeat(depth));
    out
}

/// A variable-length column: a `StringColumn` (`#string`) or a `VarColumn`.
fn var_accessor(c: &SoaColumn) -> String {
    let (ty, open) = match c.string {
        Some(StringKind::Utf8) => (
            "rt.StringColumn".to_string(),
            format!("stringColumn({:#010x}, 'utf8')", c.hash),
        ),
        Some(StringKind::Utf16) => (
            "rt.StringColumn".to_string(),
            format!("stringColumn({:#010x}, 'utf16')", c.hash),
        ),
        None => {
            let k = c.scalar.storage().name();
            (
                format!("rt.VarColumn<'{k}'>"),
                format!("varColumn({:#010x}, '{k}')", c.hash),
            )
        }
    };
    format!(
        "\n  /** Column `{}`: variable length, offsets + values (path {:?}). */\n  {}(): {ty} {{\n    return this.soa.{open};\n  }}\n",
        c.names.join("."),
        c.path,
        column_member(&c.names),
    )
}

pub(super) fn emit_aos(cx: &Cx<'_>, id: usize) -> String {
    let n = cx.name(id);
    let ctor = super::fields_and_ctor(&[("aos", "rt.AosView")]);
    format!(
        "/** `{}` items stored one after another. */\nexport class {n}AosReader {{\n\
         {ctor}\n\
         \x20 get length(): number {{\n    return this.aos.length;\n  }}\n\n\
         \x20 get(i: number): {n}Reader | undefined {{\n    const v = this.aos.get(i);\n    return v === undefined ? undefined : new {n}Reader(v);\n  }}\n\n\
         \x20 *[Symbol.iterator](): IterableIterator<{n}Reader> {{\n\
         \x20   for (let i = 0; i < this.aos.length; i++) yield new {n}Reader(this.aos.get(i)!);\n  }}\n\n\
         \x20 toPlain(budget: rt.Budget = this.aos.msg.budget()): {n}[] {{\n\
         \x20   budget.spend(this.length);\n\
         \x20   const out: {n}[] = [];\n\
         \x20   for (const r of this) out.push(r.toPlain(budget));\n    return out;\n  }}\n}}\n",
        cx.s.structs[id].name
    )
}
