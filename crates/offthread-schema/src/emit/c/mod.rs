//! C emitter: one header per schema, for C guests (docs/guests.md, "C guests"). Per
//! struct an owned C type, a decoder (`<name>_decode`) that mirrors the Rust owned
//! decode check for check — the same views, depth limit and traversal budget, so a
//! hostile message is the same read error (an `int` R code), never an out-of-bounds
//! read or a trap — and, where the struct holds no union, UTF-16 string or SoA slice,
//! a canonical writer (`<name>_encode`). The runtime is `offthread_rt.h`, emitted next
//! to it.

use crate::compiler::diag::Diagnostic;
use crate::compiler::ir::*;

/// The C runtime every generated header includes (written next to it).
const RUNTIME: &str = include_str!("offthread_rt.h");
/// The C runtime under the generated-file header, as it is written.
pub fn runtime() -> String {
    format!("{}\n{RUNTIME}", c_header())
}

/// [`super::HEADER`] as a C comment.
pub(crate) fn c_header() -> String {
    format!("/* {} */", super::HEADER.trim_start_matches("// "))
}

/// The include guard of `stem`'s header: `<prefix>_<STEM>_H`, any non-alphanumeric as `_`.
pub(crate) fn guard(prefix: &str, stem: &str) -> String {
    format!(
        "{prefix}_{}_H",
        stem.to_ascii_uppercase()
            .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    )
}

/// File name of the C runtime ([`runtime`]).
pub const RUNTIME_FILE: &str = "offthread_rt.h";

/// C keywords (and names the runtime takes): a schema name equal to one gets a `_`.
const RESERVED: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "bool", "true", "false", "alignas",
    "alignof", "asm", "typeof", "main", "items", "len", "as", "tag",
];

pub(crate) fn ident(name: &str) -> String {
    if RESERVED.contains(&name) || name.starts_with("ot_") {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

fn c_scalar(s: Scalar) -> &'static str {
    match s {
        Scalar::U8 => "uint8_t",
        Scalar::U16 => "uint16_t",
        Scalar::U32 => "uint32_t",
        Scalar::U64 => "uint64_t",
        Scalar::I8 => "int8_t",
        Scalar::I16 => "int16_t",
        Scalar::I32 => "int32_t",
        Scalar::I64 => "int64_t",
        Scalar::F32 => "float",
        Scalar::F64 => "double",
        Scalar::Bool => "bool",
    }
}

/// `x` (a `uint64_t` holding the little-endian bits) as a value of `s`.
fn from_bits(s: Scalar, x: &str) -> String {
    match s {
        Scalar::F32 => format!("ot_f32_bits((uint32_t)({x}))"),
        Scalar::F64 => format!("ot_f64_bits({x})"),
        Scalar::Bool => format!("(({x}) != 0)"),
        Scalar::I8 => format!("(int8_t)(uint8_t)({x})"),
        Scalar::I16 => format!("(int16_t)(uint16_t)({x})"),
        Scalar::I32 => format!("(int32_t)(uint32_t)({x})"),
        Scalar::I64 => format!("(int64_t)({x})"),
        other => format!("({})({x})", c_scalar(other)),
    }
}

/// The bits of `x` (a value of `s`) as a `uint64_t` to store.
fn to_bits(s: Scalar, x: &str) -> String {
    match s {
        Scalar::F32 => format!("ot_bits_f32({x})"),
        Scalar::F64 => format!("ot_bits_f64({x})"),
        Scalar::Bool => format!("(uint64_t)(({x}) ? 1 : 0)"),
        _ => format!("(uint64_t)({x})"),
    }
}

struct Cx<'a> {
    s: &'a Schema,
}

impl Cx<'_> {
    fn struct_name(&self, id: usize) -> String {
        ident(&self.s.structs[id].name)
    }
    fn union_name(&self, id: usize) -> String {
        ident(&self.s.unions[id].name)
    }
    fn enum_name(&self, id: usize) -> String {
        ident(&self.s.enums[id].name)
    }
    /// The scalar a leaf of `ty` is stored as, and its C type.
    fn leaf(&self, ty: &Type) -> (Scalar, String) {
        match ty {
            Type::Scalar(s) => (*s, c_scalar(*s).to_string()),
            Type::Enum(e) => (self.s.enums[*e].repr, self.enum_name(*e)),
            _ => unreachable!("not a leaf"),
        }
    }
    /// `(type, declarator suffix)` of a field of `ty`.
    fn field_type(&self, ty: &Type) -> (String, String) {
        match ty {
            Type::Scalar(_) | Type::Enum(_) => (self.leaf(ty).1, String::new()),
            Type::Fixed { len, elem } => (self.leaf(elem).1, format!("[{len}]")),
            Type::Struct(id) if self.s.structs[*id].kind == StructKind::Inline => {
                (self.struct_name(*id), String::new())
            }
            Type::Struct(id) => (format!("{} *", self.struct_name(*id)), String::new()),
            Type::Union(u) => (self.union_name(*u), String::new()),
            Type::Slice {
                string: Some(_), ..
            } => ("ot_str".into(), String::new()),
            Type::Slice { elem, .. } => {
                let item = match &**elem {
                    Type::Struct(id) => self.struct_name(*id),
                    Type::Union(u) => self.union_name(*u),
                    leaf => self.leaf(leaf).1,
                };
                (format!("OT_SLICE({item})"), String::new())
            }
        }
    }

    /// Whether `id` gets a C writer: no union, UTF-16 string or SoA slice in it or below.
    fn writable(&self, id: usize, seen: &mut Vec<usize>) -> bool {
        if seen.contains(&id) {
            return true;
        }
        seen.push(id);
        self.s.structs[id].fields.iter().all(|f| match &f.ty {
            Type::Union(_) => false,
            Type::Struct(s) => self.writable(*s, seen),
            Type::Slice {
                string: Some(StringKind::Utf16),
                ..
            } => false,
            Type::Slice { elem, layout, .. } => match (&**elem, layout) {
                (Type::Union(_), _) | (_, SliceLayout::Soa(_)) => false,
                (Type::Struct(s), _) => self.writable(*s, seen),
                _ => true,
            },
            _ => true,
        })
    }
}

/// Emits `<stem>.h` for `schema` (it includes [`RUNTIME_FILE`]).
pub fn emit(schema: &Schema, stem: &str) -> Result<String, Diagnostic> {
    emit_within(schema, stem, crate::compiler::limits::MAX_GENERATED_BYTES)
}

/// [`emit`], failing with E0021 at the first struct or union whose code takes the
/// header past `limit` bytes (the driver's share of `MAX_GENERATED_BYTES` left), as
/// the Rust and TS emitters do. Checked per declaration, so memory stays near the limit.
pub fn emit_within(schema: &Schema, stem: &str, limit: usize) -> Result<String, Diagnostic> {
    let cx = Cx { s: schema };
    // Each struct's and union's index in `schema.order` (E0021 points at it).
    let (mut struct_at, mut union_at) =
        (vec![0; schema.structs.len()], vec![0; schema.unions.len()]);
    for (k, item) in schema.order.iter().enumerate() {
        match *item {
            ItemRef::Struct(id) => struct_at[id] = k,
            ItemRef::Union(id) => union_at[id] = k,
            _ => {}
        }
    }
    let within = |out: &String, k: usize| {
        if out.len() > limit {
            Err(super::too_large(schema, k))
        } else {
            Ok(())
        }
    };
    let guard = guard("OFFTHREAD_SCHEMA", stem);
    let mut out = format!(
        "{}\n/* C readers and writers (docs/guests.md, \"C guests\"). */\n#ifndef {guard}\n#define {guard}\n\n#include \"{RUNTIME_FILE}\"\n\n",
        c_header()
    );
    for (id, e) in schema.enums.iter().enumerate() {
        let n = cx.enum_name(id);
        out += &format!(
            "/* enum `{}` (open: any {} may arrive). */\ntypedef {} {n};\n",
            e.name,
            e.repr.name(),
            c_scalar(e.repr)
        );
        for (v, x) in &e.variants {
            out += &format!(
                "#define {}_{} (({n}){x})\n",
                e.name.to_ascii_uppercase(),
                v.to_ascii_uppercase()
            );
        }
        out.push('\n');
    }
    for id in 0..schema.structs.len() {
        let n = cx.struct_name(id);
        out += &format!("typedef struct {n} {n};\n");
    }
    for id in 0..schema.unions.len() {
        let n = cx.union_name(id);
        out += &format!("typedef struct {n} {n};\n");
    }
    out.push('\n');
    // Unions hold pointers only: complete before any struct that embeds one.
    for (id, u) in schema.unions.iter().enumerate() {
        let n = cx.union_name(id);
        out += &format!(
            "/* union `{}`: `tag` 0 is empty (also a tag this schema does not know). */\nstruct {n} {{\n    uint32_t tag;\n    union {{\n",
            u.name
        );
        for v in &u.variants {
            out += &format!(
                "        {} *{}; /* tag {} */\n",
                cx.struct_name(v.struct_id),
                ident(&v.name),
                v.tag
            );
        }
        out += "    } as;\n};\n";
        for v in &u.variants {
            out += &format!(
                "#define {}_{} {}u\n",
                u.name.to_ascii_uppercase(),
                v.name.to_ascii_uppercase(),
                v.tag
            );
        }
        out.push('\n');
    }
    // Structs, each after the inline structs it embeds.
    let mut done = vec![false; schema.structs.len()];
    for (id, &k) in struct_at.iter().enumerate() {
        define_struct(&cx, id, &mut done, &mut out);
        within(&out, k)?;
    }
    // Whether each struct gets a writer: its prototypes and its definition.
    let writable: Vec<bool> = (0..schema.structs.len())
        .map(|id| cx.writable(id, &mut Vec::new()))
        .collect();
    for (id, (s, &writable)) in schema.structs.iter().zip(&writable).enumerate() {
        let n = cx.struct_name(id);
        out += &format!("OT_FN int {n}_dec(const ot_view *v, ot_ctx *c, {n} *out);\n");
        if s.soa.is_some() {
            out += &format!(
                "OT_FN int {n}_read_soa(const ot_soa *s, ot_ctx *c, {n} **items, uint32_t *len);\n"
            );
        }
        if writable {
            out += &format!(
                "OT_FN int {n}_write_at(const {n} *x, ot_builder *b, uint32_t at);\n\
                 OT_FN int {n}_write_new(const {n} *x, ot_builder *b, uint32_t *at);\n"
            );
        }
    }
    for id in 0..schema.unions.len() {
        let n = cx.union_name(id);
        out += &format!(
            "OT_FN int {n}_from_tag_ptr(const ot_view *v, uint32_t tag, uint32_t ptr, ot_ctx *c, {n} *out);\n"
        );
    }
    out.push('\n');
    for (id, &k) in union_at.iter().enumerate() {
        out += &emit_union(&cx, id);
        within(&out, k)?;
    }
    for id in 0..schema.structs.len() {
        out += &emit_decode(&cx, id);
        if schema.structs[id].soa.is_some() {
            out += &emit_read_soa(&cx, id);
        }
        if writable[id] {
            out += &emit_writer(&cx, id);
        } else {
            out += &format!(
                "/* `{}` has no C writer: it holds a union, a UTF-16 string or a SoA slice. */\n\n",
                schema.structs[id].name
            );
        }
        within(&out, struct_at[id])?;
    }
    out += &format!("#endif /* {guard} */\n");
    // Never more than `limit`, the closing line included.
    within(&out, schema.order.len().saturating_sub(1))?;
    Ok(out)
}

fn define_struct(cx: &Cx<'_>, id: usize, done: &mut [bool], out: &mut String) {
    if done[id] {
        return;
    }
    done[id] = true;
    let s = &cx.s.structs[id];
    for f in &s.fields {
        if let Type::Struct(inner) = f.ty
            && cx.s.structs[inner].kind == StructKind::Inline
        {
            define_struct(cx, inner, done, out);
        }
    }
    let n = cx.struct_name(id);
    let kind = match s.kind {
        StructKind::Inline => "inline",
        StructKind::Dynamic => "dynamic",
    };
    *out += &format!(
        "/* `{}` ({kind}): {} bytes on the wire, {} used. */\n#define {}_SIZE {}u\nstruct {n} {{\n",
        s.name,
        s.size,
        s.used,
        s.name.to_ascii_uppercase(),
        s.size
    );
    for f in &s.fields {
        let (ty, suffix) = cx.field_type(&f.ty);
        let sep = if ty.ends_with('*') { "" } else { " " };
        *out += &format!("    {ty}{sep}{}{suffix};\n", ident(&f.name));
    }
    if s.fields.is_empty() {
        *out += "    uint8_t empty_;\n";
    }
    *out += "};\n\n";
}

/// `{ … }` allocating `count` items of `T` into `dst` (`dst = NULL` for none).
fn alloc_items(dst: &str, ty: &str, count: &str) -> String {
    format!(
        "{dst} = ({ty} *)ot_alloc_array(c->arena, {count}, sizeof({ty}), _Alignof({ty}));\n        if (!{dst}) return OT_ENOMEM;"
    )
}

fn emit_decode(cx: &Cx<'_>, id: usize) -> String {
    let s = &cx.s.structs[id];
    let n = cx.struct_name(id);
    let mut out = format!(
        "OT_FN int {n}_dec(const ot_view *v, ot_ctx *c, {n} *out) {{\n    OT_TRY(ot_spend(c, 1));\n"
    );
    for f in &s.fields {
        out += &decode_field(cx, &f.ty, f.offset, &format!("out->{}", ident(&f.name)));
    }
    out += "    return OT_OK;\n}\n\n";
    let root = match s.kind {
        StructKind::Dynamic => "ot_root_dynamic(buf, len, &v)".to_string(),
        StructKind::Inline => format!("ot_root_inline(buf, len, {}, &v)", s.size),
    };
    out += &format!(
        "/* Decodes a whole message whose root is `{}`; what it copies goes to `arena`.\n * Returns 0 or an error code (1..11: R0001..R0011; OT_ENOMEM). */\n\
         static inline int {n}_decode(const uint8_t *buf, uint32_t len, ot_arena *arena, {n} *out) {{\n\
         \x20   ot_view v;\n    OT_TRY({root});\n\
         \x20   ot_ctx c = {{arena, (uint64_t)len * 8 + 1024}};\n    return {n}_dec(&v, &c, out);\n}}\n\n",
        s.name
    );
    out
}

/// Statements decoding a field of `ty` at `off` of view `v` into lvalue `dst`.
fn decode_field(cx: &Cx<'_>, ty: &Type, off: usize, dst: &str) -> String {
    match ty {
        Type::Scalar(_) | Type::Enum(_) => {
            let (sc, _) = cx.leaf(ty);
            format!(
                "    {dst} = {};\n",
                from_bits(sc, &format!("ot_rd(v, {off}, {})", sc.size()))
            )
        }
        Type::Fixed { len, elem } => {
            let (sc, _) = cx.leaf(elem);
            format!(
                "    for (uint32_t i = 0; i < {len}; i++) {dst}[i] = {};\n",
                from_bits(
                    sc,
                    &format!("ot_rd(v, {off} + i * {}, {})", sc.size(), sc.size())
                )
            )
        }
        Type::Struct(sid) if cx.s.structs[*sid].kind == StructKind::Inline => format!(
            "    {{\n        ot_view w = ot_inline(v, {off}, {});\n        OT_TRY({}_dec(&w, c, &{dst}));\n    }}\n",
            cx.s.structs[*sid].size,
            cx.struct_name(*sid)
        ),
        Type::Struct(sid) => {
            let sn = cx.struct_name(*sid);
            format!(
                "    {{\n        ot_view w;\n        bool has;\n        OT_TRY(ot_deref_dynamic(v, ot_rd_u32(v, {off}), &w, &has));\n        {dst} = NULL;\n        if (has) {{\n        {}\n        OT_TRY({sn}_dec(&w, c, {dst}));\n        }}\n    }}\n",
                alloc_items(dst, &sn, "1")
            )
        }
        Type::Union(u) => format!(
            "    OT_TRY({}_from_tag_ptr(v, (uint32_t)ot_rd(v, {off}, {}), ot_rd_u32(v, {off} + 4), c, &{dst}));\n",
            cx.union_name(*u),
            cx.s.unions[*u].tag.size()
        ),
        Type::Slice {
            string: Some(StringKind::Utf8),
            ..
        } => {
            format!("    OT_TRY(ot_utf8(v, {off}, &{dst}));\n    OT_TRY(ot_spend(c, {dst}.len));\n")
        }
        Type::Slice {
            string: Some(StringKind::Utf16),
            ..
        } => format!(
            "    OT_TRY(ot_utf16(v, {off}, c->arena, &{dst}));\n    OT_TRY(ot_spend(c, {dst}.len));\n"
        ),
        Type::Slice { elem, layout, .. } => match (&**elem, layout) {
            (Type::Scalar(_) | Type::Enum(_), _) => {
                let (sc, cty) = cx.leaf(elem);
                format!(
                    "    {{\n        ot_column k;\n        OT_TRY(ot_scalars(v, {off}, {}, &k));\n        OT_TRY(ot_spend(c, k.count));\n        {}\n        for (uint32_t i = 0; i < k.count; i++) {dst}.items[i] = {};\n        {dst}.len = k.count;\n    }}\n",
                    sc.size(),
                    alloc_items(&format!("{dst}.items"), &cty, "k.count"),
                    from_bits(sc, "ot_col_get(&k, i)")
                )
            }
            (Type::Struct(sid), SliceLayout::Soa(_)) => format!(
                "    {{\n        ot_soa s;\n        OT_TRY(ot_soa_field(v, {off}, &s));\n        OT_TRY({}_read_soa(&s, c, &{dst}.items, &{dst}.len));\n    }}\n",
                cx.struct_name(*sid)
            ),
            (Type::Struct(sid), _) => {
                let st = &cx.s.structs[*sid];
                let sn = cx.struct_name(*sid);
                format!(
                    "    {{\n        ot_aos a;\n        OT_TRY(ot_aos_field(v, {off}, {}, {}, &a));\n        OT_TRY(ot_spend(c, a.count));\n        {}\n        for (uint32_t i = 0; i < a.count; i++) {{\n            ot_view w = ot_aos_get(&a, i);\n            OT_TRY({sn}_dec(&w, c, &{dst}.items[i]));\n        }}\n        {dst}.len = a.count;\n    }}\n",
                    st.size,
                    st.kind == StructKind::Dynamic,
                    alloc_items(&format!("{dst}.items"), &sn, "a.count")
                )
            }
            (Type::Union(u), layout) => decode_union_slice(cx, *u, layout, off, dst),
            _ => unreachable!("slices of arrays are rejected by the resolver (E0012)"),
        },
    }
}

fn decode_union_slice(
    cx: &Cx<'_>,
    u: usize,
    layout: &SliceLayout,
    off: usize,
    dst: &str,
) -> String {
    let un = cx.union_name(u);
    let tag = cx.s.unions[u].tag.size();
    match layout {
        SliceLayout::UnionAos => format!(
            "    {{\n        ot_aos a;\n        OT_TRY(ot_aos_field(v, {off}, 8, false, &a));\n        OT_TRY(ot_spend(c, a.count));\n        {}\n        for (uint32_t i = 0; i < a.count; i++) {{\n            ot_view w = ot_aos_get(&a, i);\n            OT_TRY({un}_from_tag_ptr(&w, (uint32_t)ot_rd(&w, 0, {tag}), ot_rd_u32(&w, 4), c, &{dst}.items[i]));\n        }}\n        {dst}.len = a.count;\n    }}\n",
            alloc_items(&format!("{dst}.items"), &un, "a.count")
        ),
        SliceLayout::BoVoA | SliceLayout::BoVoS => {
            let aos = *layout == SliceLayout::BoVoA;
            let mut out =
                "    {\n        ot_variant_table t;\n        OT_TRY(ot_variant_table_field(v, "
                    .to_string()
                    + &format!("{off}, &t));\n        uint32_t total = 0;\n");
            let vs = &cx.s.unions[u].variants;
            for (k, var) in vs.iter().enumerate() {
                let st = &cx.s.structs[var.struct_id];
                let sn = cx.struct_name(var.struct_id);
                out += &format!("        {sn} *v{k} = NULL;\n        uint32_t n{k} = 0;\n");
                if aos {
                    out += &format!(
                        "        {{\n            ot_aos a;\n            OT_TRY(ot_aos_at(v, ot_variant_array(&t, {}), {}, {}, &a));\n            OT_TRY(ot_spend(c, a.count));\n            {}\n            for (uint32_t i = 0; i < a.count; i++) {{\n                ot_view w = ot_aos_get(&a, i);\n                OT_TRY({sn}_dec(&w, c, &v{k}[i]));\n            }}\n            n{k} = a.count;\n        }}\n",
                        var.tag,
                        st.size,
                        st.kind == StructKind::Dynamic,
                        alloc_items(&format!("v{k}"), &sn, "a.count")
                    );
                } else {
                    out += &format!(
                        "        {{\n            ot_soa s;\n            OT_TRY(ot_soa_at(v, ot_variant_array(&t, {}), &s));\n            OT_TRY({sn}_read_soa(&s, c, &v{k}, &n{k}));\n        }}\n",
                        var.tag
                    );
                }
                out += &format!("        total += n{k};\n");
            }
            out += &format!(
                "        {}\n        uint32_t j = 0;\n",
                alloc_items(&format!("{dst}.items"), &un, "total")
            );
            for (k, var) in vs.iter().enumerate() {
                out += &format!(
                    "        for (uint32_t i = 0; i < n{k}; i++, j++) {{\n            {dst}.items[j].tag = {};\n            {dst}.items[j].as.{} = &v{k}[i];\n        }}\n",
                    var.tag,
                    ident(&var.name)
                );
            }
            out += &format!("        {dst}.len = total;\n    }}\n");
            out
        }
        _ => format!(
            "    {{\n        ot_column tags, ptrs;\n        uint32_t n;\n        OT_TRY(ot_union_soa(v, {off}, {tag}, &tags, &ptrs, &n));\n        OT_TRY(ot_spend(c, n));\n        {}\n        for (uint32_t i = 0; i < n; i++)\n            OT_TRY({un}_from_tag_ptr(v, (uint32_t)ot_col_get(&tags, i), (uint32_t)ot_col_get(&ptrs, i), c, &{dst}.items[i]));\n        {dst}.len = n;\n    }}\n",
            alloc_items(&format!("{dst}.items"), &un, "n")
        ),
    }
}

fn emit_union(cx: &Cx<'_>, id: usize) -> String {
    let u = &cx.s.unions[id];
    let n = cx.union_name(id);
    let mut out = format!(
        "OT_FN int {n}_from_tag_ptr(const ot_view *v, uint32_t tag, uint32_t ptr, ot_ctx *c, {n} *out) {{\n    ot_view w;\n    bool has;\n    out->tag = 0;\n    switch (tag) {{\n"
    );
    for var in &u.variants {
        let st = &cx.s.structs[var.struct_id];
        let sn = cx.struct_name(var.struct_id);
        let deref = match st.kind {
            StructKind::Dynamic => "ot_deref_dynamic(v, ptr, &w, &has)".to_string(),
            StructKind::Inline => format!("ot_deref_inline(v, ptr, {}, &w, &has)", st.size),
        };
        out += &format!(
            "    case {}: {{\n        OT_TRY({deref});\n        if (!has) return OT_OK;\n        {sn} *p;\n        p = ({sn} *)ot_alloc(c->arena, sizeof({sn}), _Alignof({sn}));\n        if (!p) return OT_ENOMEM;\n        OT_TRY({sn}_dec(&w, c, p));\n        out->tag = {};\n        out->as.{} = p;\n        return OT_OK;\n    }}\n",
            var.tag,
            var.tag,
            ident(&var.name)
        );
    }
    out += "    default: /* empty, or a newer variant: decoded as empty */\n        (void)w;\n        (void)has;\n        return OT_OK;\n    }\n}\n\n";
    out
}

fn emit_read_soa(cx: &Cx<'_>, id: usize) -> String {
    let n = cx.struct_name(id);
    let cols = cx.s.soa_columns(id);
    let mut out = format!(
        "OT_FN int {n}_read_soa(const ot_soa *s, ot_ctx *c, {n} **items, uint32_t *len) {{\n    OT_TRY(ot_spend(c, s->count));\n"
    );
    for (k, col) in cols.iter().enumerate() {
        if col.varlen {
            let open = match col.string {
                Some(StringKind::Utf8) => format!("ot_soa_utf8(s, {:#010x}u, &c{k})", col.hash),
                Some(StringKind::Utf16) => format!("ot_soa_utf16(s, {:#010x}u, &c{k})", col.hash),
                None => format!(
                    "ot_soa_var(s, {:#010x}u, {}, &c{k})",
                    col.hash,
                    col.scalar.size()
                ),
            };
            out += &format!(
                "    ot_var_column c{k};\n    OT_TRY({open});\n    OT_TRY(ot_spend(c, c{k}.values.count));\n"
            );
        } else {
            out += &format!(
                "    ot_column c{k};\n    OT_TRY(ot_soa_column(s, {:#010x}u, {}, {}, &c{k}));\n",
                col.hash,
                col.per_item,
                col.scalar.size()
            );
        }
    }
    out += &format!(
        "    {n} *it = ({n} *)ot_alloc_array(c->arena, s->count, sizeof({n}), _Alignof({n}));\n    if (!it) return OT_ENOMEM;\n    for (uint32_t i = 0; i < s->count; i++) {{\n"
    );
    for (k, col) in cols.iter().enumerate() {
        let path: Vec<String> = col.names.iter().map(|x| ident(x)).collect();
        let dst = format!("it[i].{}", path.join("."));
        let elem_ty = match col.enum_id {
            Some(e) => cx.enum_name(e),
            None => c_scalar(col.scalar).to_string(),
        };
        if !col.varlen {
            if col.fixed {
                out += &format!(
                    "        for (uint32_t j = 0; j < {p}; j++) {dst}[j] = {};\n",
                    from_bits(
                        col.scalar,
                        &format!("ot_col_get(&c{k}, (uint64_t)i * {} + j)", col.per_item)
                    ),
                    p = col.per_item
                );
            } else {
                out += &format!(
                    "        {dst} = {};\n",
                    from_bits(col.scalar, &format!("ot_col_get(&c{k}, i)"))
                );
            }
            continue;
        }
        out += &format!(
            "        {{\n            uint64_t first, n;\n            ot_var_item(&c{k}, i, &first, &n);\n"
        );
        out += &match col.string {
            Some(StringKind::Utf8) => format!(
                "            {dst} = n ? (ot_str){{(const char *)c{k}.values.p + first, (uint32_t)n}} : (ot_str){{\"\", 0}};\n"
            ),
            Some(StringKind::Utf16) => {
                format!(
                    "            OT_TRY(ot_utf16_to_str(c->arena, &c{k}.values, first, n, &{dst}));\n"
                )
            }
            None => format!(
                "            {}\n            for (uint64_t j = 0; j < n; j++) {dst}.items[j] = {};\n            {dst}.len = (uint32_t)n;\n",
                alloc_items(&format!("{dst}.items"), &elem_ty, "n"),
                from_bits(col.scalar, &format!("ot_col_get(&c{k}.values, first + j)"))
            ),
        };
        out += "        }\n";
    }
    out += "    }\n    *items = it;\n    *len = s->count;\n    return OT_OK;\n}\n\n";
    out
}

fn emit_writer(cx: &Cx<'_>, id: usize) -> String {
    let s = &cx.s.structs[id];
    let n = cx.struct_name(id);
    let mut out = format!("OT_FN int {n}_write_at(const {n} *x, ot_builder *b, uint32_t at) {{\n");
    for f in &s.fields {
        out += &write_field(cx, &f.ty, f.offset, &format!("x->{}", ident(&f.name)));
    }
    out += "    (void)x;\n    (void)b;\n    (void)at;\n    return OT_OK;\n}\n\n";
    let alloc = match s.kind {
        StructKind::Dynamic => format!("ot_b_dynamic(b, {}, at)", s.used),
        StructKind::Inline => format!("ot_b_alloc(b, {}, 8, at)", s.size),
    };
    out += &format!(
        "OT_FN int {n}_write_new(const {n} *x, ot_builder *b, uint32_t *at) {{\n    OT_TRY({alloc});\n    return {n}_write_at(x, b, *at);\n}}\n\n\
         /* Encodes `x` as a message into `b` (root at 0 when `b` is empty); 0 or W0001/W0002. */\n\
         static inline int {n}_encode(const {n} *x, ot_builder *b) {{\n    uint32_t at;\n    return {n}_write_new(x, b, &at);\n}}\n\n"
    );
    out
}

fn write_field(cx: &Cx<'_>, ty: &Type, off: usize, v: &str) -> String {
    match ty {
        Type::Scalar(_) | Type::Enum(_) => {
            let (sc, _) = cx.leaf(ty);
            format!(
                "    ot_put(b, at + {off}, {}, {});\n",
                to_bits(sc, v),
                sc.size()
            )
        }
        Type::Fixed { len, elem } => {
            let (sc, _) = cx.leaf(elem);
            format!(
                "    for (uint32_t i = 0; i < {len}; i++) ot_put(b, at + {off} + i * {sz}, {}, {sz});\n",
                to_bits(sc, &format!("{v}[i]")),
                sz = sc.size()
            )
        }
        Type::Struct(sid) if cx.s.structs[*sid].kind == StructKind::Inline => format!(
            "    OT_TRY({}_write_at(&{v}, b, at + {off}));\n",
            cx.struct_name(*sid)
        ),
        Type::Struct(sid) => format!(
            "    if ({v}) {{\n        uint32_t p;\n        OT_TRY({}_write_new({v}, b, &p));\n        ot_put(b, at + {off}, p, 4);\n    }}\n",
            cx.struct_name(*sid)
        ),
        Type::Slice {
            string: Some(_), ..
        } => format!(
            "    {{\n        uint32_t p;\n        OT_TRY(ot_b_scalars(b, {v}.ptr, {v}.len, 1, &p));\n        ot_put(b, at + {off}, p, 4);\n    }}\n"
        ),
        Type::Slice { elem, .. } => match &**elem {
            Type::Scalar(_) | Type::Enum(_) => {
                let (sc, _) = cx.leaf(elem);
                format!(
                    "    {{\n        uint32_t p;\n        OT_TRY(ot_b_scalars(b, {v}.items, {v}.len, {}, &p));\n        ot_put(b, at + {off}, p, 4);\n    }}\n",
                    sc.size()
                )
            }
            Type::Struct(sid) => {
                let sn = cx.struct_name(*sid);
                format!(
                    "    {{\n        uint32_t h, data;\n        OT_TRY(ot_b_aos(b, {v}.len, {}, &h, &data));\n        ot_put(b, at + {off}, h, 4);\n        for (uint32_t i = 0; i < {v}.len; i++) OT_TRY({sn}_write_at(&{v}.items[i], b, data + i * {}));\n    }}\n",
                    cx.s.structs[*sid].size, cx.s.structs[*sid].size
                )
            }
            _ => unreachable!("not writable"),
        },
        Type::Union(_) => unreachable!("not writable"),
    }
}
