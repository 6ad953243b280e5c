//! Top-down `…Writer` classes: allocate the struct, then set fields or allocate
//! children (a SoA child hands out its columns as typed arrays to fill). `fill(plain)`
//! writes everything in the canonical order, so `encode…` matches the Rust writer.

use super::{Cx, column_member, member, plus, typed_array, writable_scalar_type};
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
    out += "}\n";
    out
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
                "  set{p}(v: ReadonlyArray<{}>): this {{\n    for (let i = 0; i < {len}; i++) this.builder.{}({at} + i * {}, v[i]!);\n    return this;\n  }}\n",
                writable_scalar_type(if matches!(**elem, Type::Scalar(Scalar::Bool)) {
                    Scalar::Bool
                } else {
                    sc
                }),
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
        "\n  /** Writes every field of `v`, in the canonical order. */\n  fill(v: rt.Writable<{}>): this {{\n",
        cx.name(id)
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
                format!("    this.{m}({v}.length).fill({v});\n")
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
        "\n  /** Copies plain items into the columns (64-bit integers: bigint or safe-integer number). */\n  fill(items: ReadonlyArray<rt.Writable<{n}>>): this {{\n"
    );
    for c in cols {
        out += &fill_column(c);
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
         \x20 fill(items: ReadonlyArray<rt.Writable<{n}>>): this {{\n    items.forEach((item, i) => this.get(i).fill(item));\n    return this;\n  }}\n}}\n",
        st.name, st.size, st.size
    )
}

/// `fill`'s statement for fixed column `c` (scalars, enums, bools, fixed arrays).
pub(super) fn fill_column(c: &SoaColumn) -> String {
    let path: Vec<String> = c.names.iter().map(|x| camel_case(x)).collect();
    let v = format!("items[i]!.{}", path.join("."));
    let col = column_member(&c.names);
    let index = |i: &str| {
        if c.per_item == 1 {
            i.to_string()
        } else {
            format!("i * {} + j", c.per_item)
        }
    };
    let elem = if c.per_item == 1 {
        v.clone()
    } else {
        format!("{v}[j]!")
    };
    let stmt = match c.scalar {
        Scalar::Bool => format!("c[{}] = {elem} ? 1 : 0;", index("i")),
        // 64-bit: a number goes in as two u32 halves (no BigInt per value).
        Scalar::I64 | Scalar::U64 => format!(
            "{{\n        const x = {elem};\n        if (typeof x === 'number') rt.putInt64Number(h, {}, x, {});\n        else c[{}] = x;\n      }}",
            index("i"),
            c.scalar == Scalar::U64,
            index("i")
        ),
        _ => format!("c[{}] = {elem};", index("i")),
    };
    let stmt = if c.per_item == 1 {
        stmt
    } else {
        format!("for (let j = 0; j < {}; j++) {stmt}", c.per_item)
    };
    let halves = if matches!(c.scalar, Scalar::I64 | Scalar::U64) {
        "\n      const h = rt.halvesOf(c);"
    } else {
        ""
    };
    format!(
        "    {{\n      const c = this.{col}();{halves}\n      for (let i = 0; i < items.length; i++) {stmt}\n    }}\n"
    )
}

/// The writable view of fixed column `k`.
pub(super) fn column_method(k: usize, c: &SoaColumn) -> String {
    format!(
        "\n  /** Column `{}` ({}): a view, valid until the next allocation. */\n  {}(): {} {{\n    return this.builder.view('{}', this.columns[{k}] ?? 0, this.header === 0 ? 0 : this.length * {});\n  }}\n",
        c.names.join("."),
        if c.per_item > 1 {
            format!("{} per item", c.per_item)
        } else {
            "one per item".into()
        },
        column_member(&c.names),
        typed_array(c.scalar),
        c.scalar.storage().name(),
        c.per_item
    )
}
