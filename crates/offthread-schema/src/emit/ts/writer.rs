//! Top-down `…Writer` classes: allocate the struct, then set fields or allocate
//! children (a SoA child hands out its columns as typed arrays to fill). `fill(plain)`
//! writes everything in the canonical order, so `encode…` matches the Rust writer.

use super::columns::{column_method, fill_column};
use super::{Cx, member, plus, writable_scalar_type};
use crate::compiler::camel_case;
use crate::compiler::ir::*;
use crate::compiler::pascal_case;

pub(super) fn emit_struct(cx: &Cx<'_>, id: usize) -> String {
    let s = &cx.s.structs[id];
    let n = cx.name(id);
    let alloc = match s.kind {
        StructKind::Dynamic => format!("b.dynamicStruct({})", s.used),
        StructKind::Inline => format!("b.inlineStruct({})", s.size),
    };
    let ctor = super::fields_and_ctor(&[("builder", "rt.Builder"), ("offset", "number")]);
    let mut out = format!(
        "/** Top-down writer for `{}` ({} bytes). */\nexport class {n}Writer {{\n\
         \x20 static readonly SIZE = {};\n  static readonly USED = {};\n\n\
         {ctor}\n\
         \x20 /** Allocates this struct (the root, if it is the builder's first allocation). */\n\
         \x20 static alloc(b: rt.Builder): {n}Writer {{\n    return new {n}Writer(b, {alloc});\n  }}\n\n\
         \x20 /** Starts a new message whose root is this struct. */\n\
         \x20 static create(initialCapacity?: number): {n}Writer {{\n    return {n}Writer.alloc(new rt.Builder(initialCapacity));\n  }}\n\n\
         \x20 /** The message built so far. */\n  finish(): Uint8Array {{\n    return this.builder.finish();\n  }}\n",
        s.name, s.size, s.size, s.used
    );
    for f in &s.fields {
        out += &field_methods(cx, f);
    }
    out += &fill(cx, id);
    for f in &s.fields {
        out += &resize_method(cx, f);
    }
    out += "}\n";
    out
}

/// `resizeX(bytes, count, at)` for a slice field that can be resized in place (Karmem
/// §4.3.1): scalar slices, AoS, fixed-column SoA. The work is `rt.resizeArray`.
fn resize_method(cx: &Cx<'_>, f: &Field) -> String {
    let Type::Slice {
        elem,
        layout,
        string: None,
    } = &f.ty
    else {
        return String::new();
    };
    let columns = match (&**elem, layout) {
        (Type::Scalar(_) | Type::Enum(_), _) => String::new(),
        (Type::Struct(id), SliceLayout::Soa(_)) if !cx.s.has_varlen(*id) => {
            format!(", {}SoaWriter.COLUMNS", cx.name(*id))
        }
        (Type::Struct(_), SliceLayout::Soa(_)) => return String::new(),
        (Type::Struct(_), _) => String::new(),
        _ => return String::new(),
    };
    format!(
        "\n  /**\n   * Resizes `{}` of the message in `bytes` in place to `count` items, within the capacity\n\
         \x20  * it was written with: shrinking erases the rest of the last 64-byte block, growing back\n\
         \x20  * zeroes the new items (W0010 past the capacity). `at`: this struct's offset (0: the root).\n   */\n\
         \x20 static resize{}(bytes: rt.Bytes, count: number, at = 0): void {{\n    rt.resizeArray(bytes, at + {}, count{columns});\n  }}\n",
        f.name,
        pascal_case(&f.name),
        f.offset
    )
}

fn field_methods(cx: &Cx<'_>, f: &Field) -> String {
    let m = member(&f.name);
    let p = pascal_case(&f.name);
    let at = plus("this.offset", f.offset);
    let doc = format!("\n  /** `{}` at +{}. */\n", f.name, f.offset);
    let body = match &f.ty {
        Type::Scalar(sc) => format!(
            "  set{p}(v: {}): this {{\n    this.builder.{}({at}, v);\n    return this;\n  }}\n",
            writable_scalar_type(*sc),
            sc.name()
        ),
        Type::Enum(e) => format!(
            "  set{p}(v: {}): this {{\n    this.builder.{}({at}, v);\n    return this;\n  }}\n",
            cx.enum_name(*e),
            cx.s.enums[*e].repr.name()
        ),
        Type::Fixed { len, elem } => {
            let sc = cx.leaf_scalar(elem);
            format!(
                "  set{p}(v: ReadonlyArray<{}>): this {{\n    rt.fixed(v, {len}, '{}');\n    for (let i = 0; i < {len}; i++) this.builder.{}({at} + i * {}, v[i]!);\n    return this;\n  }}\n",
                writable_scalar_type(if matches!(**elem, Type::Scalar(Scalar::Bool)) {
                    Scalar::Bool
                } else {
                    sc
                }),
                f.name,
                if matches!(**elem, Type::Scalar(Scalar::Bool)) {
                    "bool"
                } else {
                    sc.name()
                },
                sc.size()
            )
        }
        Type::Struct(id) if cx.s.structs[*id].kind == StructKind::Inline => {
            format!(
                "  {m}(): {0}Writer {{\n    return new {0}Writer(this.builder, {at});\n  }}\n",
                cx.name(*id)
            )
        }
        Type::Struct(id) => format!(
            "  /** Allocates the `{}` this field points to. */\n  new{p}(): {1}Writer {{\n    const w = {1}Writer.alloc(this.builder);\n    this.builder.u32({at}, w.offset);\n    return w;\n  }}\n",
            f.name,
            cx.name(*id)
        ),
        Type::Union(u) => format!(
            "  set{p}(v: {}): this {{\n    write{}(this.builder, {at}, v);\n    return this;\n  }}\n",
            cx.union_name(*u),
            cx.union_name(*u)
        ),
        Type::Slice {
            string: Some(k), ..
        } => {
            let f = if *k == StringKind::Utf8 {
                "utf8"
            } else {
                "utf16"
            };
            format!(
                "  set{p}(v: string): this {{\n    this.builder.u32({at}, this.builder.{f}(v));\n    return this;\n  }}\n"
            )
        }
        Type::Slice { elem, layout, .. } => match (&**elem, layout) {
            (Type::Struct(id), SliceLayout::Soa(_)) if cx.s.has_varlen(*id) => {
                let n = cx.name(*id);
                format!(
                    "  /** Allocates a SoA array of `count` items, `sizes` values per variable-length column; fill it before the next allocation. */\n\
                     \x20 {m}(count: number, sizes: ReadonlyArray<number>): {n}SoaWriter {{\n    const w = {n}SoaWriter.alloc(this.builder, count, sizes);\n    this.builder.u32({at}, w.header);\n    return w;\n  }}\n\n\
                     \x20 /** Writes plain items as a SoA array (strings UTF-8-encoded once, into the message). */\n\
                     \x20 set{p}(items: ReadonlyArray<rt.Writable<{n}>>): this {{\n    this.builder.u32({at}, {n}SoaWriter.write(this.builder, items).header);\n    return this;\n  }}\n"
                )
            }
            (Type::Struct(id), SliceLayout::Soa(_)) => {
                let n = cx.name(*id);
                format!(
                    "  /** Allocates a SoA array of `count` items; fill its columns before the next allocation. */\n\
                     \x20 {m}(count: number): {n}SoaWriter {{\n    const w = {n}SoaWriter.alloc(this.builder, count);\n    this.builder.u32({at}, w.header);\n    return w;\n  }}\n"
                )
            }
            (Type::Struct(id), _) => {
                let n = cx.name(*id);
                format!(
                    "  /** Allocates an AoS array of `count` items. */\n\
                     \x20 {m}(count: number): {n}AosWriter {{\n    const w = {n}AosWriter.alloc(this.builder, count);\n    this.builder.u32({at}, w.header);\n    return w;\n  }}\n"
                )
            }
            (Type::Union(u), layout) => {
                let n = cx.union_name(*u);
                let (suffix, item) = match layout {
                    SliceLayout::UnionAos => ("Aos", format!("{n} | null")),
                    SliceLayout::BoVoA => ("Bovoa", n.clone()),
                    SliceLayout::BoVoS => ("Bovos", n.clone()),
                    _ => ("Soa", format!("{n} | null")),
                };
                format!(
                    "  set{p}(v: ReadonlyArray<{item}>): this {{\n    this.builder.u32({at}, write{n}{suffix}(this.builder, v));\n    return this;\n  }}\n"
                )
            }
            (Type::Scalar(Scalar::Bool), _) => {
                format!(
                    "  set{p}(v: ArrayLike<boolean>): this {{\n    this.builder.u32({at}, this.builder.bools(v));\n    return this;\n  }}\n"
                )
            }
            (e, _) => {
                let sc = cx.leaf_scalar(e);
                format!(
                    "  set{p}(v: ArrayLike<{}>): this {{\n    this.builder.u32({at}, this.builder.scalars('{}', v));\n    return this;\n  }}\n",
                    writable_scalar_type(sc),
                    sc.storage().name()
                )
            }
        },
    };
    // Methods with their own doc comment get the field note folded into it.
    match body.strip_prefix("  /** ") {
        Some(rest) => format!("\n  /** `{}` at +{}: {rest}", f.name, f.offset),
        None => doc + &body,
    }
}

/// `fill(v)`: every field in declaration order, children depth first (canonical order).
fn fill(cx: &Cx<'_>, id: usize) -> String {
    let s = &cx.s.structs[id];
    let mut out = format!(
        "\n  /** Writes every field of `v`, in the canonical order. */\n  fill(v: rt.Writable<{}>): this {{\n    rt.struct(v, '{}');\n",
        cx.name(id),
        s.name
    );
    for f in &s.fields {
        let m = member(&f.name);
        let p = pascal_case(&f.name);
        let v = format!("v.{}", camel_case(&f.name));
        out += &match &f.ty {
            Type::Struct(sid) if cx.s.structs[*sid].kind == StructKind::Inline => {
                format!("    this.{m}().fill({v});\n")
            }
            Type::Struct(_) => format!("    if ({v} !== null) this.new{p}().fill({v});\n"),
            Type::Union(_) => format!("    if ({v} !== null) this.set{p}({v});\n"),
            Type::Slice {
                elem,
                layout: SliceLayout::Soa(_),
                ..
            } if matches!(**elem, Type::Struct(i) if cx.s.has_varlen(i)) => {
                format!("    this.set{p}({v});\n")
            }
            Type::Slice {
                elem, string: None, ..
            } if matches!(**elem, Type::Struct(_)) => {
                format!("    this.{m}(rt.count({v}, '{}')).fill({v});\n", f.name)
            }
            _ => format!("    this.set{p}({v});\n"),
        };
    }
    out += "    return this;\n  }\n";
    out
}

pub(super) fn emit_soa(cx: &Cx<'_>, id: usize) -> String {
    if cx.s.has_varlen(id) {
        return super::varlen::emit_soa_writer(cx, id);
    }
    let n = cx.name(id);
    let cols = cx.s.soa_columns(id);
    let list: Vec<String> = cols
        .iter()
        .map(|c| format!("[{:#010x}, {}]", c.hash, c.item_bytes()))
        .collect();
    let ctor = super::fields_and_ctor(&[
        ("builder", "rt.Builder"),
        ("header", "number"),
        ("length", "number"),
        ("columns", "ReadonlyArray<number>"),
    ]);
    let mut out = format!(
        "/** Writes a SoA array of `{}`: allocate with a count, then fill each column. */\n\
         export class {n}SoaWriter {{\n  static readonly COLUMNS: ReadonlyArray<readonly [number, number]> = [{}];\n\n\
         {ctor}\n\
         \x20 static alloc(b: rt.Builder, count: number): {n}SoaWriter {{\n\
         \x20   const a = b.soa(count, {n}SoaWriter.COLUMNS);\n\
         \x20   return new {n}SoaWriter(b, a === null ? 0 : a.header, count, a === null ? [] : a.columns);\n  }}\n",
        cx.s.structs[id].name,
        list.join(", ")
    );
    for (k, c) in cols.iter().enumerate() {
        out += &column_method(k, c);
    }
    out += &format!(
        "\n  /** Copies plain items into the columns (64-bit integers: bigint or safe-integer number). */\n  fill(items: ReadonlyArray<rt.Writable<{n}>>): this {{\n    rt.array(items, '{}', this.length);\n",
        cx.s.structs[id].name
    );
    for (k, c) in cols.iter().enumerate() {
        out += &fill_column(k, c, (k == 0).then_some(&cx.s.structs[id].name));
    }
    out += "    return this;\n  }\n}\n";
    out
}

pub(super) fn emit_aos(cx: &Cx<'_>, id: usize) -> String {
    let n = cx.name(id);
    let st = &cx.s.structs[id];
    // Dynamic items each carry a header; write them all up front (no allocation).
    let headers = match st.kind {
        StructKind::Dynamic => format!(
            "    for (let i = 0; i < count; i++) b.u32(data + i * {}, rt.dynamicHeader({}));\n",
            st.size, st.used
        ),
        StructKind::Inline => String::new(),
    };
    let ctor = super::fields_and_ctor(&[
        ("builder", "rt.Builder"),
        ("header", "number"),
        ("data", "number"),
        ("length", "number"),
    ]);
    format!(
        "/** Writes an AoS array of `{}`. */\nexport class {n}AosWriter {{\n\
         {ctor}\n\
         \x20 static alloc(b: rt.Builder, count: number): {n}AosWriter {{\n    const [header, data] = b.aos(count, {});\n{headers}\
         \x20   return new {n}AosWriter(b, header, data, count);\n  }}\n\n\
         \x20 /** Writer for item `i`. */\n  get(i: number): {n}Writer {{\n    return new {n}Writer(this.builder, this.data + i * {});\n  }}\n\n\
         \x20 fill(items: ReadonlyArray<rt.Writable<{n}>>): this {{\n    rt.items(items, '{}', this.length);\n    items.forEach((item, i) => this.get(i).fill(item));\n    return this;\n  }}\n}}\n",
        st.name, st.size, st.size, st.name
    )
}
