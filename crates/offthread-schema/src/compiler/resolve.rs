//! AST → IR: resolves names, checks options and annotations; then `decls.rs` checks
//! unions and interfaces and `layout.rs` lays structs out and flattens SoA items.
//! Collects every error it can find.

use std::collections::HashMap;

use super::ast;
use super::diag::{Diagnostic, Span};
use super::ir::*;
use super::limits::MAX_DIAGNOSTICS;

/// Longest fixed array, in items. Keeps struct sizes far from the 29-bit limit.
const MAX_FIXED_LEN: u64 = 65_536;
const SCALARS_HELP: &str = "scalars are u8, u16, u32, u64, i8, i16, i32, i64, f32, f64 and bool";

pub fn resolve(schema: &ast::Schema) -> Result<Schema, Vec<Diagnostic>> {
    let mut r = Resolver::default();
    r.declare(schema);
    let structs: Vec<&ast::StructDecl> = schema
        .items
        .iter()
        .filter_map(|i| {
            if let ast::Item::Struct(s) = i {
                Some(s)
            } else {
                None
            }
        })
        .collect();
    // Structs by position, not by name: a duplicate or scalar-named struct (already an
    // error) must not take another struct's slot (found by the compile_schema fuzzer).
    let mut struct_id = 0;
    for item in &schema.items {
        match item {
            ast::Item::Enum(e) => r.enum_decl(e),
            ast::Item::Struct(s) => {
                r.struct_fields(struct_id, s);
                struct_id += 1;
            }
            _ => {}
        }
    }
    for item in &schema.items {
        match item {
            ast::Item::Union(u) => r.union_decl(u),
            ast::Item::Interface(i) => r.interface_decl(i),
            _ => {}
        }
    }
    if r.diags.is_empty() {
        r.layout_all(&structs);
    }
    if r.diags.is_empty() {
        r.flatten_all(&structs);
    }
    if r.diags.is_empty() {
        Ok(r.out)
    } else {
        Err(r.diags)
    }
}

#[derive(Default)]
pub(super) struct Resolver {
    pub(super) out: Schema,
    names: HashMap<String, ItemRef>,
    pub(super) diags: Vec<Diagnostic>,
    /// Struct kinds by index, known before any field is resolved.
    pub(super) kinds: Vec<StructKind>,
}

pub(super) fn err(
    code: &'static str,
    span: Span,
    msg: impl Into<String>,
    help: impl Into<String>,
) -> Diagnostic {
    Diagnostic::new(code, span, msg, help)
}

impl Resolver {
    /// Records a diagnostic; past [`MAX_DIAGNOSTICS`] they are dropped (5,000 unknown
    /// types on one line would otherwise render that line 5,000 times).
    pub(super) fn push(&mut self, d: Diagnostic) {
        if self.diags.len() < MAX_DIAGNOSTICS {
            self.diags.push(d);
        }
    }

    /// Registers every name first so declarations may refer forward.
    fn declare(&mut self, schema: &ast::Schema) {
        let mut counts = [0usize; 4];
        for item in &schema.items {
            let name = item.name();
            let r = match item {
                ast::Item::Struct(s) => {
                    let kind = self.struct_kind(s);
                    self.kinds.push(kind);
                    self.out.structs.push(Struct {
                        name: s.name.name.clone(),
                        kind,
                        fields: vec![],
                        used: 0,
                        size: 0,
                        soa: None,
                    });
                    counts[0] += 1;
                    ItemRef::Struct(counts[0] - 1)
                }
                ast::Item::Enum(_) => {
                    counts[1] += 1;
                    ItemRef::Enum(counts[1] - 1)
                }
                ast::Item::Union(_) => {
                    counts[2] += 1;
                    ItemRef::Union(counts[2] - 1)
                }
                ast::Item::Interface(_) => {
                    counts[3] += 1;
                    ItemRef::Interface(counts[3] - 1)
                }
            };
            self.out.order.push(r);
            self.out.spans.push(name.span);
            if Scalar::from_name(&name.name).is_some() {
                self.push(err(
                    "E0005",
                    name.span,
                    format!("`{}` is a scalar type and cannot be redeclared", name.name),
                    "pick another name",
                ));
            } else if self.names.insert(name.name.clone(), r).is_some() {
                self.push(err(
                    "E0005",
                    name.span,
                    format!("`{}` is declared more than once", name.name),
                    "every struct, enum, union and interface needs its own name",
                ));
            }
        }
    }

    /// Checks that an option list is exactly one of `allowed` per group.
    pub(super) fn pick<'a>(
        &mut self,
        options: &'a [ast::Ident],
        group: &[&str],
        decl: &ast::Ident,
        help: &str,
    ) -> Option<&'a ast::Ident> {
        let found: Vec<&ast::Ident> = options
            .iter()
            .filter(|o| group.contains(&o.name.as_str()))
            .collect();
        match found.as_slice() {
            [one] => Some(one),
            [] => {
                self.push(err(
                    "E0013",
                    decl.span,
                    format!("`{}` needs one of: {}", decl.name, group.join(", ")),
                    help,
                ));
                None
            }
            [_, second, ..] => {
                self.push(err(
                    "E0013",
                    second.span,
                    format!(
                        "`{}` is given more than one of: {}",
                        decl.name,
                        group.join(", ")
                    ),
                    help,
                ));
                None
            }
        }
    }

    pub(super) fn unknown_options(&mut self, options: &[ast::Ident], allowed: &[&str], help: &str) {
        for o in options {
            if !allowed.contains(&o.name.as_str()) {
                self.push(err(
                    "E0013",
                    o.span,
                    format!("unknown option `{}`", o.name),
                    help,
                ));
            }
        }
    }

    fn struct_kind(&mut self, s: &ast::StructDecl) -> StructKind {
        const HELP: &str =
            "structs are `(inline)` (fixed, embedded) or `(dynamic)` (can gain fields)";
        self.unknown_options(&s.options, &["inline", "dynamic"], HELP);
        match self.pick(&s.options, &["inline", "dynamic"], &s.name, HELP) {
            Some(o) if o.name == "inline" => StructKind::Inline,
            _ => StructKind::Dynamic,
        }
    }

    fn enum_decl(&mut self, e: &ast::EnumDecl) {
        const HELP: &str = "enums are stored as `(u8)`, `(u16)` or `(u32)`";
        self.unknown_options(&e.options, &["u8", "u16", "u32"], HELP);
        let repr = self
            .pick(&e.options, &["u8", "u16", "u32"], &e.name, HELP)
            .and_then(|o| Scalar::from_name(&o.name))
            .unwrap_or(Scalar::U32);
        if e.variants.is_empty() {
            self.push(err(
                "E0016",
                e.name.span,
                format!("enum `{}` has no variants", e.name.name),
                "add at least one `variant = value;`",
            ));
        }
        let max = (1u64 << (repr.size() * 8)) - 1;
        let mut names = HashMap::new();
        let mut values = HashMap::new();
        let mut variants = Vec::new();
        for v in &e.variants {
            self.unique(&mut names, &v.name, "variant");
            if v.value.value > max {
                self.push(err(
                    "E0008",
                    v.value.span,
                    format!("value {} does not fit in {}", v.value.value, repr.name()),
                    format!("values of a ({}) enum go up to {max}", repr.name()),
                ));
            }
            if let Some(prev) = values.insert(v.value.value, v.name.name.clone()) {
                self.push(err(
                    "E0007",
                    v.value.span,
                    format!("value {} is already used by `{prev}`", v.value.value),
                    "give every variant its own value",
                ));
            }
            variants.push((v.name.name.clone(), v.value.value));
        }
        self.out.enums.push(Enum {
            name: e.name.name.clone(),
            repr,
            variants,
        });
    }

    pub(super) fn unique(
        &mut self,
        seen: &mut HashMap<String, Span>,
        name: &ast::Ident,
        what: &str,
    ) {
        if seen.insert(name.name.clone(), name.span).is_some() {
            self.push(err(
                "E0006",
                name.span,
                format!("{what} `{}` is declared more than once", name.name),
                format!("every {what} needs its own name"),
            ));
        }
    }

    fn struct_fields(&mut self, id: usize, s: &ast::StructDecl) {
        if s.fields.is_empty() {
            self.push(err("E0016", s.name.span, format!("struct `{}` has no fields", s.name.name), "add at least one field: empty items would make arrays of unbounded length free to claim"));
        }
        let mut seen = HashMap::new();
        let mut fields = Vec::new();
        for f in &s.fields {
            self.unique(&mut seen, &f.name, "field");
            if let Some(ty) = self.field_type(&f.ty, &f.annotations) {
                fields.push(Field {
                    name: f.name.name.clone(),
                    ty,
                    offset: 0,
                    size: 0,
                });
            }
        }
        self.out.structs[id].fields = fields;
    }

    pub(super) fn lookup(&mut self, name: &ast::Ident) -> Option<Type> {
        if let Some(s) = Scalar::from_name(&name.name) {
            return Some(Type::Scalar(s));
        }
        match self.names.get(&name.name) {
            Some(ItemRef::Struct(i)) => Some(Type::Struct(*i)),
            Some(ItemRef::Enum(i)) => Some(Type::Enum(*i)),
            Some(ItemRef::Union(i)) => Some(Type::Union(*i)),
            Some(ItemRef::Interface(_)) => {
                self.push(err(
                    "E0012",
                    name.span,
                    format!("interface `{}` is not a data type", name.name),
                    "fields and parameters hold scalars, enums, structs, unions and arrays",
                ));
                None
            }
            None => {
                self.push(err(
                    "E0004",
                    name.span,
                    format!("unknown type `{}`", name.name),
                    format!(
                        "declare `{}` as a struct, enum or union; {SCALARS_HELP}",
                        name.name
                    ),
                ));
                None
            }
        }
    }

    pub(super) fn field_type(
        &mut self,
        ty: &ast::TypeExpr,
        annotations: &[ast::Ident],
    ) -> Option<Type> {
        let is_slice = matches!(ty, ast::TypeExpr::Slice { .. });
        for a in annotations {
            let known = ["soa", "aos", "bovoa", "bovos", "string"].contains(&a.name.as_str());
            if !known {
                self.push(err(
                    "E0010",
                    a.span,
                    format!("unknown annotation `#{}`", a.name),
                    "annotations are `#soa`, `#aos`, `#bovoa`, `#bovos` and `#string`",
                ));
            } else if !is_slice {
                self.push(err(
                    "E0010",
                    a.span,
                    format!("`#{}` applies to slices only", a.name),
                    "annotate a `[]T` field",
                ));
            }
        }
        let layouts: Vec<&ast::Ident> = annotations.iter().filter(|a| a.name != "string").collect();
        if let [_, second, ..] = layouts.as_slice() {
            self.push(err(
                "E0011",
                second.span,
                "a slice has one layout",
                "keep one of `#soa`, `#aos`, `#bovoa`, `#bovos`",
            ));
        }
        let layout = layouts.first().map(|a| a.name.as_str());
        let string = annotations.iter().find(|a| a.name == "string");
        match ty {
            ast::TypeExpr::Named(n) => self.lookup(n),
            ast::TypeExpr::Fixed { len, elem, .. } => {
                if len.value == 0 || len.value > MAX_FIXED_LEN {
                    self.push(err(
                        "E0008",
                        len.span,
                        format!("array length {} is out of range", len.value),
                        format!("fixed arrays hold 1 to {MAX_FIXED_LEN} items"),
                    ));
                }
                let e = self.field_type(elem, &[])?;
                if !matches!(e, Type::Scalar(_) | Type::Enum(_)) {
                    self.push(err(
                        "E0012",
                        elem.span(),
                        "fixed arrays hold scalars or enums",
                        "use a slice `[]T` for structs and unions",
                    ));
                    return None;
                }
                Some(Type::Fixed {
                    len: len.value as usize,
                    elem: Box::new(e),
                })
            }
            ast::TypeExpr::Slice { elem, .. } => {
                let e = self.field_type(elem, &[])?;
                let bad_layout = |r: &mut Self, allowed: &str| {
                    if let Some(a) = layouts
                        .first()
                        .filter(|a| !allowed.split(',').any(|x| x == a.name))
                    {
                        r.push(err(
                            "E0010",
                            a.span,
                            format!("`#{}` does not apply to this slice", a.name),
                            format!("slices of this type take: {}", allowed.replace(',', ", ")),
                        ));
                    }
                };
                let string_kind = match (&e, string) {
                    (Type::Scalar(Scalar::U8), Some(_)) => Some(StringKind::Utf8),
                    (Type::Scalar(Scalar::U16), Some(_)) => Some(StringKind::Utf16),
                    (_, Some(a)) => {
                        self.push(err(
                            "E0010",
                            a.span,
                            "`#string` applies to `[]u8` (UTF-8) and `[]u16` (UTF-16)",
                            "strings are slices of u8 or u16",
                        ));
                        None
                    }
                    _ => None,
                };
                let layout = match &e {
                    Type::Scalar(_) | Type::Enum(_) => {
                        bad_layout(self, "soa,aos");
                        SliceLayout::Scalars
                    }
                    Type::Struct(_) => {
                        bad_layout(self, "soa,aos");
                        if layout == Some("aos") {
                            SliceLayout::Aos
                        } else {
                            SliceLayout::Soa(Vec::new().into())
                        }
                    }
                    Type::Union(_) => {
                        bad_layout(self, "soa,aos,bovoa,bovos");
                        match layout {
                            Some("aos") => SliceLayout::UnionAos,
                            Some("bovoa") => SliceLayout::BoVoA,
                            Some("bovos") => SliceLayout::BoVoS,
                            _ => SliceLayout::UnionSoa,
                        }
                    }
                    Type::Fixed { .. } | Type::Slice { .. } => {
                        self.push(err("E0012", elem.span(), "slices of arrays are not supported", "wrap the inner array in a struct: `[]item` with `item { values: []T; }`"));
                        return None;
                    }
                };
                Some(Type::Slice {
                    elem: Box::new(e),
                    layout,
                    string: string_kind,
                })
            }
        }
    }
}
