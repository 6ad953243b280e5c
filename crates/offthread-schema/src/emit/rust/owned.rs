//! Owned values: plain structs with a canonical writer (`to_bytes`) and a decoder
//! from the readers (`from_bytes`, budgeted against hostile DAGs).

use super::reader::column_name;
use super::{Cx, ident, plus, storage};
use crate::compiler::ir::*;

pub(super) fn emit_struct(cx: &Cx<'_>, id: usize) -> String {
    let s = &cx.s.structs[id];
    let name = cx.struct_name(id);
    let mut out = format!(
        "/// Owned `{}`.\n#[derive(Clone, Debug, PartialEq)]\npub struct {name} {{\n",
        s.name
    );
    for f in &s.fields {
        out += &format!("    pub {}: {},\n", ident(&f.name), cx.owned_type(&f.ty));
    }
    out += &format!(
        "}}\n\nimpl Default for {name} {{\n    fn default() -> Self {{\n        Self {{\n"
    );
    for f in &s.fields {
        out += &format!(
            "            {}: {},\n",
            ident(&f.name),
            cx.default_value(&f.ty)
        );
    }
    out += "        }\n    }\n}\n\n";
    let (alloc, header) = match s.kind {
        StructKind::Dynamic => (
            "b.dynamic_struct(Self::USED)?",
            "        b.put::<u32>(at, rt::dynamic_header(Self::USED));\n",
        ),
        StructKind::Inline => ("b.inline_struct(Self::SIZE)?", ""),
    };
    let root = match s.kind {
        StructKind::Dynamic => "dynamic",
        StructKind::Inline => "inline",
    };
    out += &format!(
        "impl {name} {{\n\
         \x20   /// Bytes on the wire (a multiple of 8).\n    pub const SIZE: usize = {};\n\
         \x20   /// Where the last field ends.\n    pub const USED: usize = {};\n\n\
         \x20   /// Encodes this value as the root of a new message.\n\
         \x20   pub fn to_bytes(&self) -> Result<Vec<u8>, rt::WriteError> {{\n\
         \x20       let mut b = rt::Builder::new();\n        self.write_new(&mut b)?;\n        Ok(b.finish())\n    }}\n\n\
         \x20   /// Encodes into `out` in place (e.g. WASM memory), with no intermediate buffer;\n\
         \x20   /// returns the message length.\n\
         \x20   pub fn write_into(&self, out: &mut [u8]) -> Result<usize, rt::WriteError> {{\n\
         \x20       let mut b = rt::Builder::on_slice(out);\n        self.write_new(&mut b)?;\n        Ok(b.len())\n    }}\n\n\
         \x20   /// Decodes a whole message whose root is this ({root}) struct.\n\
         \x20   pub fn from_bytes(buf: &[u8]) -> Result<Self, rt::ReadError> {{\n\
         \x20       Self::from_bytes_with(buf, rt::ReadOptions::DEFAULT)\n    }}\n\n\
         \x20   pub fn from_bytes_with(buf: &[u8], opts: rt::ReadOptions) -> Result<Self, rt::ReadError> {{\n\
         \x20       let r = {name}Ref::from_bytes_with(buf, opts)?;\n\
         \x20       Self::decode(r, &mut opts.budget(buf.len()))\n    }}\n\n\
         \x20   /// Allocates this struct, writes it and everything it points to; returns its offset.\n\
         \x20   pub fn write_new(&self, b: &mut rt::Builder) -> Result<usize, rt::WriteError> {{\n\
         \x20       let at = {alloc};\n        self.write_at(b, at)?;\n        Ok(at)\n    }}\n\n\
         \x20   /// Writes the fields into the `SIZE` bytes reserved at `at`, then the data they point to.\n\
         \x20   pub fn write_at(&self, b: &mut rt::Builder, at: usize) -> Result<(), rt::WriteError> {{\n{header}",
        s.size, s.used
    );
    for f in &s.fields {
        out += &write_field(cx, f);
    }
    out += "        Ok(())\n    }\n\n";
    out += &format!(
        "    /// Copies a reader's data into an owned value.\n\
         \x20   pub fn decode(r: {name}Ref<'_>, budget: &mut rt::Budget) -> Result<Self, rt::ReadError> {{\n\
         \x20       budget.spend(1)?;\n        Ok(Self {{\n"
    );
    for f in &s.fields {
        out += &format!("            {}: {},\n", ident(&f.name), decode_field(cx, f));
    }
    out += "        })\n    }\n";
    out += &super::resize::methods(cx, id);
    out += "}\n";
    out
}

fn write_field(cx: &Cx<'_>, f: &Field) -> String {
    let at = plus("at", f.offset);
    let v = format!("self.{}", ident(&f.name));
    let line = |s: String| format!("        {s}\n");
    match &f.ty {
        Type::Scalar(Scalar::Bool) => line(format!("b.put_bool({at}, {v});")),
        Type::Scalar(sc) => line(format!("b.put::<{}>({at}, {v});", sc.name())),
        Type::Enum(e) => line(format!(
            "b.put::<{}>({at}, {v}.0);",
            cx.s.enums[*e].repr.name()
        )),
        Type::Fixed { elem, .. } => match **elem {
            Type::Scalar(Scalar::Bool) => line(format!(
                "for (i, x) in {v}.iter().enumerate() {{\n            b.put_bool({at} + i, *x);\n        }}"
            )),
            Type::Scalar(sc) => line(format!("b.put_array::<{}>({at}, &{v});", sc.name())),
            Type::Enum(e) => {
                let r = cx.s.enums[e].repr;
                line(format!(
                    "for (i, x) in {v}.iter().enumerate() {{\n            b.put::<{}>({at} + i * {}, x.0);\n        }}",
                    r.name(),
                    r.size()
                ))
            }
            _ => unreachable!("fixed arrays hold scalars or enums"),
        },
        Type::Struct(id) if cx.s.structs[*id].kind == StructKind::Inline => {
            line(format!("{v}.write_at(b, {at})?;"))
        }
        Type::Struct(_) => line(format!(
            "if let Some(x) = &{v} {{\n            let p = x.write_new(b)?;\n            b.put_ptr({at}, p);\n        }}"
        )),
        Type::Union(_) => line(format!(
            "if let Some(x) = &{v} {{\n            x.write_at(b, {at})?;\n        }}"
        )),
        Type::Slice {
            elem,
            layout,
            string,
        } => {
            let p = match (&**elem, layout, string) {
                (_, _, Some(StringKind::Utf8)) => format!("b.scalars::<u8>({v}.as_bytes())?"),
                (_, _, Some(StringKind::Utf16)) => {
                    format!("b.scalars::<u16>(&{v}.encode_utf16().collect::<Vec<u16>>())?")
                }
                (Type::Scalar(Scalar::Bool), ..) => format!("b.bools(&{v})?"),
                (Type::Scalar(sc), ..) => format!("b.scalars::<{}>(&{v})?", sc.name()),
                (Type::Enum(e), ..) => {
                    let r = cx.s.enums[*e].repr.name();
                    format!("b.scalars::<{r}>(&{v}.iter().map(|x| x.0).collect::<Vec<{r}>>())?")
                }
                (Type::Struct(id), SliceLayout::Soa(_), _) => {
                    format!("{}::write_soa(b, &{v})?", cx.struct_name(*id))
                }
                (Type::Struct(id), ..) => {
                    let n = cx.struct_name(*id);
                    return line(format!(
                        "let (h, data) = b.aos({v}.len(), {n}::SIZE)?;\n        b.put_ptr({at}, h);\n        \
                         for (i, x) in {v}.iter().enumerate() {{\n            x.write_at(b, data + i * {n}::SIZE)?;\n        }}"
                    ));
                }
                (Type::Union(u), layout, _) => {
                    let n = cx.union_name(*u);
                    format!("{n}::{}(b, &{v})?", union_fn("write", layout))
                }
                _ => unreachable!("slices of arrays are rejected by the resolver (E0012)"),
            };
            line(format!("let p = {p};\n        b.put_ptr({at}, p);"))
        }
    }
}

fn decode_field(cx: &Cx<'_>, f: &Field) -> String {
    let r = format!("r.{}()", ident(&f.name));
    match &f.ty {
        Type::Scalar(_) | Type::Enum(_) | Type::Fixed { .. } => r,
        Type::Struct(id) if cx.s.structs[*id].kind == StructKind::Inline => {
            format!("{}::decode({r}, budget)?", cx.struct_name(*id))
        }
        Type::Struct(id) => format!(
            "match {r}? {{\n                Some(x) => Some(Box::new({}::decode(x, budget)?)),\n                None => None,\n            }}",
            cx.struct_name(*id)
        ),
        Type::Union(u) => format!("{}::decode({r}?, budget)?", cx.union_name(*u)),
        Type::Slice {
            string: Some(StringKind::Utf8),
            ..
        } => {
            format!(
                "{{\n                let s = {r}?;\n                budget.spend(s.len() as u64)?;\n                s.to_owned()\n            }}"
            )
        }
        Type::Slice {
            string: Some(StringKind::Utf16),
            ..
        } => {
            format!(
                "{{\n                let s = {r}?;\n                budget.spend(s.len() as u64)?;\n                s\n            }}"
            )
        }
        Type::Slice { elem, layout, .. } => {
            let collect = match (&**elem, layout) {
                (Type::Scalar(Scalar::Bool), _) => "c.iter().map(|x| x != 0).collect()".to_string(),
                (Type::Scalar(_), _) => "c.to_vec()".to_string(),
                (Type::Enum(e), _) => format!("c.iter().map({}).collect()", cx.enum_name(*e)),
                (Type::Struct(id), SliceLayout::Soa(_)) => {
                    return format!("{}::read_soa({r}?, budget)?", cx.struct_name(*id));
                }
                (Type::Struct(id), _) => format!(
                    "c.iter()\n                    .map(|x| {}::decode(x, budget))\n                    .collect::<Result<Vec<_>, _>>()?",
                    cx.struct_name(*id)
                ),
                (Type::Union(u), layout) => {
                    return format!(
                        "{}::{}({r}?, budget)?",
                        cx.union_name(*u),
                        union_fn("read", layout)
                    );
                }
                _ => unreachable!("slices of arrays are rejected by the resolver (E0012)"),
            };
            format!(
                "{{\n                let c = {r}?;\n                budget.spend(c.len() as u64)?;\n                {collect}\n            }}"
            )
        }
    }
}

/// `write_soa` / `read_soa` on a SoA item struct.
pub(super) fn emit_soa(cx: &Cx<'_>, id: usize) -> String {
    let name = cx.struct_name(id);
    let cols = cx.s.soa_columns(id);
    let list: Vec<String> = cols
        .iter()
        .enumerate()
        .map(|(k, c)| match c.varlen {
            false => format!(
                "rt::ColumnSpec::Fixed {{ hash: {:#010x}, item_bytes: {} }}",
                c.hash,
                c.item_bytes()
            ),
            true => format!(
                "rt::ColumnSpec::Var {{ hash: {:#010x}, elem_bytes: {}, values: v{k} }}",
                c.hash,
                c.item_bytes()
            ),
        })
        .collect();
    // Items with only fixed columns keep the plain `soa` call (unchanged output).
    let alloc = if cols.iter().any(|c| c.varlen) {
        let mut sizes = String::new();
        for (k, c) in cols.iter().enumerate().filter(|(_, c)| c.varlen) {
            sizes += &format!(
                "        let v{k}: usize = items.iter().map(|item| {}).sum();\n",
                var_len(c)
            );
        }
        format!(
            "{sizes}        let Some(cols) = b.soa_columns(items.len(), &[{}])? else {{",
            list.join(", ")
        )
    } else {
        let list: Vec<String> = cols
            .iter()
            .map(|c| format!("({:#010x}, {})", c.hash, c.item_bytes()))
            .collect();
        format!(
            "        let Some(cols) = b.soa(items.len(), &[{}])? else {{",
            list.join(", ")
        )
    };
    let mut out = format!(
        "impl {name} {{\n\
         \x20   /// Writes `items` as a SoA array (header, lookup table, one column per field);\n\
         \x20   /// returns the header offset, 0 when `items` is empty.\n\
         \x20   pub fn write_soa(b: &mut rt::Builder, items: &[Self]) -> Result<usize, rt::WriteError> {{\n\
         {alloc}\n            return Ok(0);\n        }};\n"
    );
    for (k, c) in cols.iter().enumerate() {
        let path: Vec<String> = c.names.iter().map(|n| ident(n)).collect();
        let v = format!("item.{}", path.join("."));
        if c.varlen {
            out += &write_var(c, k, &v);
            continue;
        }
        let st = storage(c.scalar);
        let size = c.scalar.size();
        let conv = |x: &str| match (c.scalar, c.enum_id) {
            (Scalar::Bool, _) => format!("u8::from({x})"),
            (_, Some(_)) => format!("{x}.0"),
            _ => x.to_string(),
        };
        // `[1]T` is an array too: test `fixed`, not the count.
        let body = if !c.fixed {
            format!(
                "b.put::<{st}>(cols.columns[{k}] + i * {size}, {});",
                conv(&v)
            )
        } else {
            format!(
                "for (j, x) in {v}.iter().copied().enumerate() {{\n                b.put::<{st}>(cols.columns[{k}] + (i * {} + j) * {size}, {});\n            }}",
                c.per_item,
                conv("x")
            )
        };
        out += &format!(
            "        for (i, item) in items.iter().enumerate() {{\n            {body}\n        }}\n"
        );
    }
    out += "        Ok(cols.header)\n    }\n\n";
    out += &format!(
        "    /// Copies a SoA array into owned items (absent columns read as zero).\n\
         \x20   pub fn read_soa(soa: {name}Soa<'_>, budget: &mut rt::Budget) -> Result<Vec<Self>, rt::ReadError> {{\n\
         \x20       budget.spend(soa.len() as u64)?;\n"
    );
    for (k, c) in cols.iter().enumerate() {
        out += &format!("        let c{k} = soa.{}()?;\n", column_name(c));
        if c.varlen {
            let raw = if c.string.is_some() { ".raw()" } else { "" };
            out += &format!("        budget.spend(c{k}{raw}.values().len() as u64)?;\n");
        }
    }
    let mut next = 0;
    let lit = item_literal(cx, id, &mut next, 3);
    out += &format!(
        "        Ok((0..soa.len())\n            .map(|i| {lit})\n            .collect())\n    }}\n}}\n"
    );
    out
}

/// `Name { field: cK.get(i)…, inner: Inner { … } }` in column order.
fn item_literal(cx: &Cx<'_>, id: usize, next: &mut usize, depth: usize) -> String {
    let pad = "    ".repeat(depth + 1);
    let mut out = format!("{} {{\n", cx.struct_name(id));
    for f in &cx.s.structs[id].fields {
        let value = match &f.ty {
            Type::Struct(inner) => item_literal(cx, *inner, next, depth + 1),
            ty => {
                let k = *next;
                *next += 1;
                leaf_value(cx, ty, k)
            }
        };
        out += &format!("{pad}{}: {value},\n", ident(&f.name));
    }
    out += &format!("{}}}", "    ".repeat(depth));
    out
}

/// Elements item `item` puts in variable-length column `c` (`v` is `item.path`).
fn var_len(c: &SoaColumn) -> String {
    let path: Vec<String> = c.names.iter().map(|n| ident(n)).collect();
    let v = format!("item.{}", path.join("."));
    match c.string {
        Some(StringKind::Utf16) => format!("{v}.encode_utf16().count()"),
        _ => format!("{v}.len()"),
    }
}

/// Fills variable-length column `k` from every item's `v`.
fn write_var(c: &SoaColumn, k: usize, v: &str) -> String {
    let at = format!("cols.columns[{k}], cols.values[{k}]");
    let (call, each) = match (c.string, c.scalar, c.enum_id) {
        (Some(StringKind::Utf8), ..) => ("put_var_bytes", format!("{v}.as_bytes()")),
        (Some(StringKind::Utf16), ..) => ("put_var", format!("{v}.encode_utf16()")),
        (_, Scalar::U8, None) => ("put_var_bytes", format!("&{v}[..]")),
        (_, Scalar::Bool, _) => ("put_var", format!("{v}.iter().map(|x| u8::from(*x))")),
        (_, _, Some(_)) => ("put_var", format!("{v}.iter().map(|x| x.0)")),
        _ => ("put_var", format!("{v}.iter().copied()")),
    };
    format!("        b.{call}({at}, items.iter().map(|item| {each}));\n")
}

fn leaf_value(cx: &Cx<'_>, ty: &Type, k: usize) -> String {
    let conv = |ty: &Type, x: String| match ty {
        Type::Scalar(Scalar::Bool) => format!("{x} != 0"),
        Type::Enum(e) => format!("{}({x})", cx.enum_name(*e)),
        _ => x,
    };
    match ty {
        Type::Slice {
            string: Some(StringKind::Utf8),
            ..
        } => format!("c{k}.get(i).unwrap_or_default().to_owned()"),
        Type::Slice {
            string: Some(StringKind::Utf16),
            ..
        } => format!("c{k}.get(i).unwrap_or_default()"),
        Type::Slice { elem, .. } => {
            let each = match &**elem {
                Type::Scalar(Scalar::Bool) => ".iter().map(|x| x != 0).collect()".to_string(),
                Type::Enum(e) => format!(".iter().map({}).collect()", cx.enum_name(*e)),
                _ => ".to_vec()".to_string(),
            };
            format!("c{k}.get(i).map(|c| c{each}).unwrap_or_default()")
        }
        Type::Fixed { len, elem } => {
            format!(
                "core::array::from_fn(|j| {})",
                conv(elem, format!("c{k}.get(i * {len} + j).unwrap_or_default()"))
            )
        }
        _ => conv(ty, format!("c{k}.get(i).unwrap_or_default()")),
    }
}

/// `write_aos` / `read_bovos` …: the union's helper for a slice layout.
pub(super) fn union_fn(verb: &str, layout: &SliceLayout) -> String {
    let suffix = match layout {
        SliceLayout::UnionAos => "aos",
        SliceLayout::BoVoA => "bovoa",
        SliceLayout::BoVoS => "bovos",
        _ => "soa",
    };
    format!("{verb}_{suffix}")
}
