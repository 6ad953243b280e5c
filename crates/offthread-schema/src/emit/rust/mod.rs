//! Rust emitter: per struct a zero-copy `…Ref` reader and an owned value with a
//! canonical writer; per SoA/AoS item struct a `…Soa`/`…Aos` view; enums as open
//! newtypes; unions as tagged enums; interfaces as traits (types only).

mod enums;
mod interfaces;
mod owned;
mod reader;
mod resize;
mod unions;

use crate::compiler::diag::Diagnostic;
use crate::compiler::ir::*;
use crate::compiler::limits::MAX_GENERATED_BYTES;
use crate::compiler::pascal_case;

/// Where the generated code finds the runtime.
#[derive(Clone, Debug)]
pub struct RustOptions {
    /// Path of the runtime: the `offthread_schema_rt` crate (`crate` inside it).
    pub runtime: String,
}

/// Default `use` path of the runtime in generated Rust: the runtime crate itself.
pub const DEFAULT_RUNTIME: &str = "::offthread_schema_rt";

impl Default for RustOptions {
    fn default() -> Self {
        Self {
            runtime: DEFAULT_RUNTIME.into(),
        }
    }
}

/// Emits one Rust module for `schema`.
pub fn emit(schema: &Schema, opts: &RustOptions) -> Result<String, Diagnostic> {
    emit_within(schema, opts, MAX_GENERATED_BYTES)
}

/// [`emit`], failing with E0021 at the first declaration whose code takes the module
/// past `limit` bytes (the driver's share of `MAX_GENERATED_BYTES` left). Checked per
/// declaration, so memory stays near the limit.
pub fn emit_within(
    schema: &Schema,
    opts: &RustOptions,
    limit: usize,
) -> Result<String, Diagnostic> {
    let layouts = schema.layouts();
    let cx = Cx {
        s: schema,
        source: source_param(schema),
    };
    let mut out = String::new();
    out.push_str(super::HEADER);
    out.push_str("\n#![allow(clippy::all, dead_code, unused_imports)]\n\n");
    // `use a::rt;` when the path already ends in `rt` (clippy flags `use a::rt as rt`).
    if opts.runtime.ends_with("::rt") {
        out.push_str(&format!("use {};\n", opts.runtime));
    } else {
        out.push_str(&format!("use {} as rt;\n", opts.runtime));
    }
    for (k, item) in schema.order.iter().enumerate() {
        out.push('\n');
        match *item {
            ItemRef::Enum(id) => out.push_str(&enums::emit(&cx, id)),
            ItemRef::Struct(id) => {
                out.push_str(&reader::emit_struct(&cx, id));
                out.push('\n');
                out.push_str(&owned::emit_struct(&cx, id));
                if layouts.soa.contains(&id) {
                    out.push('\n');
                    out.push_str(&reader::emit_soa(&cx, id));
                    out.push('\n');
                    out.push_str(&owned::emit_soa(&cx, id));
                }
                if layouts.aos.contains(&id) {
                    out.push('\n');
                    out.push_str(&reader::emit_aos(&cx, id));
                }
            }
            ItemRef::Union(id) => out.push_str(&unions::emit(&cx, id, &layouts.unions[id])),
            ItemRef::Interface(id) => out.push_str(&interfaces::emit(&cx, id)),
        }
        if out.len() > limit {
            return Err(super::too_large(schema, k));
        }
    }
    Ok(out)
}

pub(crate) struct Cx<'a> {
    pub s: &'a Schema,
    /// The readers' source type parameter ([`source_param`]).
    pub source: String,
}

/// The readers' source type parameter: `S`, unless the schema names a type so (then
/// `S1`, `S2`, …), which the parameter would shadow.
fn source_param(s: &Schema) -> String {
    let taken: std::collections::HashSet<String> = s
        .structs
        .iter()
        .map(|t| pascal_case(&t.name))
        .chain(s.enums.iter().map(|t| pascal_case(&t.name)))
        .chain(s.unions.iter().map(|t| pascal_case(&t.name)))
        .collect();
    let mut p = "S".to_string();
    let mut n = 0;
    while taken.contains(&p) {
        n += 1;
        p = format!("S{n}");
    }
    p
}

/// Rust keywords a schema name may collide with.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use", "where",
    "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv", "try",
    "typeof", "unsized", "virtual", "yield",
];

/// A field or method name, escaped when it is a keyword.
pub(crate) fn ident(name: &str) -> String {
    match name {
        "self" | "Self" | "super" | "crate" => format!("{name}_"),
        n if KEYWORDS.contains(&n) => format!("r#{n}"),
        n => n.to_string(),
    }
}

/// `base + off`, without a `+ 0`.
pub(crate) fn plus(base: &str, off: usize) -> String {
    if off == 0 {
        base.to_string()
    } else {
        format!("{base} + {off}")
    }
}

/// Rust spelling of a stored scalar (`bool` is stored as `u8`).
pub(crate) fn storage(s: Scalar) -> &'static str {
    s.storage().name()
}

impl Cx<'_> {
    pub fn struct_name(&self, id: usize) -> String {
        pascal_case(&self.s.structs[id].name)
    }

    pub fn enum_name(&self, id: usize) -> String {
        pascal_case(&self.s.enums[id].name)
    }

    pub fn union_name(&self, id: usize) -> String {
        pascal_case(&self.s.unions[id].name)
    }

    /// The owned Rust type of a field.
    pub fn owned_type(&self, ty: &Type) -> String {
        match ty {
            Type::Scalar(s) => s.name().to_string(),
            Type::Enum(e) => self.enum_name(*e),
            Type::Struct(id) if self.s.structs[*id].kind == StructKind::Inline => {
                self.struct_name(*id)
            }
            Type::Struct(id) => format!("Option<Box<{}>>", self.struct_name(*id)),
            Type::Union(u) => format!("Option<{}>", self.union_name(*u)),
            Type::Fixed { len, elem } => format!("[{}; {len}]", self.owned_type(elem)),
            Type::Slice {
                string: Some(_), ..
            } => "String".into(),
            Type::Slice { elem, layout, .. } => match (&**elem, layout) {
                (Type::Struct(id), _) => format!("Vec<{}>", self.struct_name(*id)),
                // BoV keeps no empty items (each item lives in its variant's array).
                (Type::Union(u), SliceLayout::BoVoA | SliceLayout::BoVoS) => {
                    format!("Vec<{}>", self.union_name(*u))
                }
                (e, _) => format!("Vec<{}>", self.owned_type(e)),
            },
        }
    }

    /// The default value of a field's owned type.
    pub fn default_value(&self, ty: &Type) -> String {
        match ty {
            Type::Scalar(Scalar::Bool) => "false".into(),
            Type::Scalar(Scalar::F32 | Scalar::F64) => "0.0".into(),
            Type::Scalar(_) => "0".into(),
            Type::Enum(e) => format!("{}(0)", self.enum_name(*e)),
            Type::Struct(id) if self.s.structs[*id].kind == StructKind::Inline => {
                format!("{}::default()", self.struct_name(*id))
            }
            Type::Struct(_) | Type::Union(_) => "None".into(),
            Type::Fixed { len, elem } => format!("[{}; {len}]", self.default_value(elem)),
            Type::Slice {
                string: Some(_), ..
            } => "String::new()".into(),
            Type::Slice { .. } => "Vec::new()".into(),
        }
    }
}
