//! TypeScript emitter: per struct a plain interface, a `…Reader` (zero-copy; SoA
//! columns are typed-array views), a top-down `…Writer`, and `encode…`/`decode…`.
//! The code imports the hand-written runtime `packages/offthread/src/schema/runtime.ts`
//! (published as `offthread/schema`).

mod columns;
mod enums;
mod interfaces;
mod reader;
mod unions;
mod varlen;
mod writer;

use crate::compiler::diag::Diagnostic;
use crate::compiler::ir::*;
use crate::compiler::limits::MAX_GENERATED_BYTES;
use crate::compiler::{camel_case, pascal_case};

/// Where the generated module finds the runtime.
#[derive(Clone, Debug)]
pub struct TsOptions {
    /// Import specifier of the runtime: `offthread/schema` (the package subpath), or
    /// a relative path for the package's own generated files (`../runtime.js`).
    pub runtime: String,
}

/// Default import specifier of the runtime in generated TS: the package subpath.
pub const DEFAULT_RUNTIME: &str = "offthread/schema";

impl Default for TsOptions {
    fn default() -> Self {
        Self {
            runtime: DEFAULT_RUNTIME.into(),
        }
    }
}

/// Emits one TypeScript module for `schema`.
pub fn emit(schema: &Schema, opts: &TsOptions) -> Result<String, Diagnostic> {
    emit_within(schema, opts, MAX_GENERATED_BYTES)
}

/// [`emit`], failing with E0021 at the first declaration whose code takes the module
/// past `limit` bytes (the driver's share of `MAX_GENERATED_BYTES` left). Checked per
/// declaration, so memory stays near the limit.
pub fn emit_within(schema: &Schema, opts: &TsOptions, limit: usize) -> Result<String, Diagnostic> {
    let layouts = schema.layouts();
    let cx = Cx { s: schema };
    let mut out = String::new();
    out.push_str(super::HEADER);
    out.push_str(&format!(
        "\n/* eslint-disable */\nimport * as rt from '{}';\n",
        opts.runtime
    ));
    for (k, item) in schema.order.iter().enumerate() {
        out.push('\n');
        match *item {
            ItemRef::Enum(id) => out.push_str(&enums::emit(&cx, id)),
            ItemRef::Struct(id) => {
                out.push_str(&plain_interface(&cx, id));
                out.push('\n');
                out.push_str(&reader::emit_struct(&cx, id));
                out.push('\n');
                out.push_str(&writer::emit_struct(&cx, id));
                if layouts.soa.contains(&id) {
                    out.push('\n');
                    out.push_str(&reader::emit_soa(&cx, id));
                    out.push('\n');
                    out.push_str(&writer::emit_soa(&cx, id));
                }
                if layouts.aos.contains(&id) {
                    out.push('\n');
                    out.push_str(&reader::emit_aos(&cx, id));
                    out.push('\n');
                    out.push_str(&writer::emit_aos(&cx, id));
                }
                out.push('\n');
                out.push_str(&codec_functions(&cx, id));
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
}

/// Members of the struct `…Reader` / `…Writer` classes themselves.
const TAKEN_BY_STRUCT: &[&str] = &[
    "view",
    "toPlain",
    "builder",
    "offset",
    "fill",
    "finish",
    "constructor",
];
/// Members of the `…SoaReader` / `…SoaWriter` classes themselves.
const TAKEN_BY_SOA: &[&str] = &[
    "soa",
    "length",
    "toPlain",
    "builder",
    "header",
    "columns",
    "values",
    "sizes",
    "write",
    "fill",
    "constructor",
];

/// A field's method name on struct readers/writers: camelCase, `_` appended on a clash.
/// Plain objects use the bare camelCase name.
pub(crate) fn member(name: &str) -> String {
    escape(camel_case(name), TAKEN_BY_STRUCT)
}

/// A SoA column's method name (field names along the path joined by `_`).
pub(crate) fn column_member(names: &[String]) -> String {
    escape(camel_case(&names.join("_")), TAKEN_BY_SOA)
}

fn escape(n: String, taken: &[&str]) -> String {
    if taken.contains(&n.as_str()) {
        format!("{n}_")
    } else {
        n
    }
}

/// Readonly fields and a constructor that assigns them. Not TS parameter properties:
/// generated code stays erasable (`erasableSyntaxOnly`, Node's type stripping). The fields
/// are `declare`d (no emitted class field): an ES2022 field would be defined as undefined,
/// then assigned, on every reader object a small read makes.
pub(crate) fn fields_and_ctor(params: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (name, ty) in params {
        out += &format!("  declare readonly {name}: {ty};\n");
    }
    let args: Vec<String> = params.iter().map(|(n, t)| format!("{n}: {t}")).collect();
    out += &format!("\n  constructor({}) {{\n", args.join(", "));
    for (name, _) in params {
        out += &format!("    this.{name} = {name};\n");
    }
    out += "  }\n";
    out
}

pub(crate) fn plus(base: &str, off: usize) -> String {
    if off == 0 {
        base.to_string()
    } else {
        format!("{base} + {off}")
    }
}

/// TS value type of a scalar.
pub(crate) fn scalar_type(s: Scalar) -> &'static str {
    match s {
        Scalar::U64 | Scalar::I64 => "bigint",
        Scalar::Bool => "boolean",
        _ => "number",
    }
}

/// TS type a writer accepts for a scalar: 64-bit integers also as safe-integer numbers.
pub(crate) fn writable_scalar_type(s: Scalar) -> &'static str {
    match s {
        Scalar::U64 | Scalar::I64 => "bigint | number",
        _ => scalar_type(s),
    }
}

/// Typed array holding a stored scalar.
pub(crate) fn typed_array(s: Scalar) -> &'static str {
    match s.storage() {
        Scalar::U8 => "Uint8Array",
        Scalar::U16 => "Uint16Array",
        Scalar::U32 => "Uint32Array",
        Scalar::U64 => "BigUint64Array",
        Scalar::I8 => "Int8Array",
        Scalar::I16 => "Int16Array",
        Scalar::I32 => "Int32Array",
        Scalar::I64 => "BigInt64Array",
        Scalar::F32 => "Float32Array",
        Scalar::F64 => "Float64Array",
        Scalar::Bool => unreachable!("storage() maps bool to u8"),
    }
}

impl Cx<'_> {
    pub fn name(&self, id: usize) -> String {
        pascal_case(&self.s.structs[id].name)
    }

    pub fn enum_name(&self, id: usize) -> String {
        pascal_case(&self.s.enums[id].name)
    }

    pub fn union_name(&self, id: usize) -> String {
        pascal_case(&self.s.unions[id].name)
    }

    /// The scalar a leaf type is stored as (enums: their repr).
    pub fn leaf_scalar(&self, ty: &Type) -> Scalar {
        match ty {
            Type::Scalar(s) => *s,
            Type::Enum(e) => self.s.enums[*e].repr,
            _ => unreachable!("not a leaf"),
        }
    }

    /// The plain-object TS type of a field.
    pub fn plain_type(&self, ty: &Type) -> String {
        match ty {
            Type::Scalar(s) => scalar_type(*s).into(),
            Type::Enum(e) => self.enum_name(*e),
            Type::Struct(id) if self.s.structs[*id].kind == StructKind::Inline => self.name(*id),
            Type::Struct(id) => format!("{} | null", self.name(*id)),
            Type::Union(u) => format!("{} | null", self.union_name(*u)),
            Type::Fixed { elem, .. } => format!("{}[]", self.plain_type(elem)),
            Type::Slice {
                string: Some(_), ..
            } => "string".into(),
            Type::Slice { elem, layout, .. } => match &**elem {
                Type::Struct(id) => format!("{}[]", self.name(*id)),
                Type::Union(u) => match layout {
                    SliceLayout::BoVoA | SliceLayout::BoVoS => format!("{}[]", self.union_name(*u)),
                    _ => format!("({} | null)[]", self.union_name(*u)),
                },
                Type::Scalar(Scalar::Bool) => "ArrayLike<boolean>".into(),
                e => format!("ArrayLike<{}>", scalar_type(self.leaf_scalar(e))),
            },
        }
    }
}

fn plain_interface(cx: &Cx<'_>, id: usize) -> String {
    let s = &cx.s.structs[id];
    let mut out = format!(
        "/** `{}` as a plain object. */\nexport interface {} {{\n",
        s.name,
        cx.name(id)
    );
    for f in &s.fields {
        out += &format!("  {}: {};\n", camel_case(&f.name), cx.plain_type(&f.ty));
    }
    out += "}\n";
    out
}

fn codec_functions(cx: &Cx<'_>, id: usize) -> String {
    let n = cx.name(id);
    format!(
        "/**\n * Encodes `value` as the root of a new message (the canonical bytes, identical to Rust's).\n\
         \x20* Without `builder`: written in the runtime's reused scratch builder, returned as an\n\
         \x20* exact-size copy; with one: a view of `builder`'s buffer.\n */\n\
         export function encode{n}(value: rt.Writable<{n}>, builder?: rt.Builder): Uint8Array {{\n\
         \x20 if (builder !== undefined) {{\n\
         \x20   try {{\n      return {n}Writer.alloc(builder).fill(value).finish();\n    }} catch (err) {{\n      throw rt.writeFailure(err);\n    }}\n  }}\n\
         \x20 const b = rt.scratch();\n\
         \x20 try {{\n    return {n}Writer.alloc(b).fill(value).finish().slice();\n  }} catch (err) {{\n    throw rt.writeFailure(err);\n  }} finally {{\n    rt.release(b);\n  }}\n}}\n\n\
         /** Decodes a whole message whose root is `{}` into plain objects. */\n\
         export function decode{n}(bytes: rt.Bytes, opts?: rt.ReadOptions): {n} {{\n\
         \x20 return {n}Reader.fromBytes(bytes, opts).toPlain();\n}}\n",
        cx.s.structs[id].name
    )
}
