//! AST → IR: resolves names, checks options and annotations, lays structs out and
//! flattens SoA items into columns. Collects every error it can find.

use std::collections::HashMap;

use super::ast;
use super::diag::{Diagnostic, Span};
use super::ir::*;
use crate::rt::{DYNAMIC_HEADER_SIZE, STRUCT_ALIGN, align_up, field_path_hash};

/// Longest fixed array, in items. Keeps struct sizes far from the 29-bit limit.
const MAX_FIXED_LEN: u64 = 65_536;
/// Largest struct: the header counts 8-byte units in 29 bits.
const MAX_STRUCT_SIZE: usize = ((1 << 29) - 1) * 8;
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
    for item in &schema.items {
        match item {
            ast::Item::Enum(e) => r.enum_decl(e),
            ast::Item::Struct(s) => r.struct_fields(s),
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
struct Resolver {
    out: Schema,
    names: HashMap<String, ItemRef>,
    diags: Vec<Diagnostic>,
    /// Struct kinds by index, known before any field is resolved.
    kinds: Vec<StructKind>,
}

fn err(
    code: &'static str,
    span: Span,
    msg: impl Into<String>,
    help: impl Into<String>,
) -> Diagnostic {
    Diagnostic::new(code, span, msg, help)
}

impl Resolver {
    fn push(&mut self, d: Diagnostic) {
        self.diags.push(d);
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
    fn pick<'a>(
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

    fn unknown_options(&mut self, options: &[ast::Ident], allowed: &[&str], help: &str) {
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

    fn unique(&mut self, seen: &mut HashMap<String, Span>, name: &ast::Ident, what: &str) {
        if seen.insert(name.name.clone(), name.span).is_some() {
            self.push(err(
                "E0006",
                name.span,
                format!("{what} `{}` is declared more than once", name.name),
                format!("every {what} needs its own name"),
            ));
        }
    }

    fn struct_fields(&mut self, s: &ast::StructDecl) {
        let ItemRef::Struct(id) = self.names[&s.name.name] else {
            return;
        };
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

    fn lookup(&mut self, name: &ast::Ident) -> Option<Type> {
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

    fn field_type(&mut self, ty: &ast::TypeExpr, annotations: &[ast::Ident]) -> Option<Type> {
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
                            SliceLayout::Soa(vec![])
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

    fn union_decl(&mut self, u: &ast::UnionDecl) {
        const HELP: &str = "unions are `(dynamic, u8|u16|u32)`";
        self.unknown_options(&u.options, &["dynamic", "u8", "u16", "u32"], HELP);
        if !u.options.iter().any(|o| o.name == "dynamic") {
            self.push(err("E0013", u.name.span, format!("union `{}` must be `dynamic`", u.name.name), "unions are stored as a tag and an offset, so they are always dynamic: `(dynamic, u8)`"));
        }
        let tag = self
            .pick(&u.options, &["u8", "u16", "u32"], &u.name, HELP)
            .and_then(|o| Scalar::from_name(&o.name))
            .unwrap_or(Scalar::U32);
        if u.variants.is_empty() {
            self.push(err(
                "E0016",
                u.name.span,
                format!("union `{}` has no variants", u.name.name),
                "add at least one `variant: struct_name = tag;`",
            ));
        }
        let max = (1u64 << (tag.size() * 8)) - 1;
        let mut names = HashMap::new();
        let mut tags = HashMap::new();
        let mut next = 1u64;
        let mut variants = Vec::new();
        for v in &u.variants {
            self.unique(&mut names, &v.name, "variant");
            let (value, span) = v
                .tag
                .as_ref()
                .map_or((next, v.name.span), |t| (t.value, t.span));
            next = value.saturating_add(1);
            if value == 0 || value > max {
                self.push(err(
                    "E0008",
                    span,
                    format!("tag {value} is out of range"),
                    format!("tags go from 1 to {max} (0 means empty)"),
                ));
            }
            if let Some(prev) = tags.insert(value, v.name.name.clone()) {
                self.push(err(
                    "E0007",
                    span,
                    format!("tag {value} is already used by `{prev}`"),
                    "give every variant its own tag",
                ));
            }
            let struct_id = match self.field_type(&v.ty, &[]) {
                Some(Type::Struct(id)) => id,
                Some(_) => {
                    self.push(err(
                        "E0012",
                        v.ty.span(),
                        "union variants hold structs",
                        "wrap the value in a struct",
                    ));
                    continue;
                }
                None => continue,
            };
            variants.push(UnionVariant {
                name: v.name.name.clone(),
                struct_id,
                tag: value as u32,
            });
        }
        self.out.unions.push(Union {
            name: u.name.name.clone(),
            tag,
            variants,
        });
    }

    fn access(&mut self, a: &ast::Ident) -> Access {
        match a.name.as_str() {
            "none" => Access::None,
            "read" => Access::Read,
            "write" => Access::Write,
            "readwrite" => Access::ReadWrite,
            other => {
                self.push(err(
                    "E0013",
                    a.span,
                    format!("unknown access `{other}`"),
                    "access is `read`, `write`, `readwrite` or `none`",
                ));
                Access::None
            }
        }
    }

    fn interface_decl(&mut self, i: &ast::InterfaceDecl) {
        const HELP: &str = "interfaces are `(dynamic, direct|fanout|singleton)`";
        let patterns = ["direct", "fanout", "singleton"];
        self.unknown_options(
            &i.options,
            &["dynamic", "direct", "fanout", "singleton"],
            HELP,
        );
        if !i.options.iter().any(|o| o.name == "dynamic") {
            self.push(err(
                "E0013",
                i.name.span,
                format!("interface `{}` must be `dynamic`", i.name.name),
                "interfaces can always gain members: `(dynamic, direct)`",
            ));
        }
        let pattern = match self
            .pick(&i.options, &patterns, &i.name, HELP)
            .map(|o| o.name.as_str())
        {
            Some("fanout") => Pattern::Fanout,
            Some("singleton") => Pattern::Singleton,
            _ => Pattern::Direct,
        };
        let mut seen = HashMap::new();
        let mut out = Interface {
            name: i.name.name.clone(),
            pattern,
            memories: vec![],
            functions: vec![],
        };
        for m in &i.members {
            self.unique(&mut seen, m.name(), "member");
            if let ast::Member::Memory {
                name,
                import,
                export,
                pages,
            } = m
            {
                if pages.value == 0 || pages.value > 65_536 {
                    self.push(err(
                        "E0008",
                        pages.span,
                        format!("{} pages is out of range", pages.value),
                        "a memory has 1 to 65536 pages of 64 KiB",
                    ));
                }
                let (import, export) = (self.access(import), self.access(export));
                out.memories.push(Memory {
                    name: name.name.clone(),
                    import,
                    export,
                    pages: pages.value.min(65_536) as u32,
                });
            }
        }
        for m in &i.members {
            if let ast::Member::Fn {
                name,
                params,
                results,
            } = m
            {
                let params = self.params(params, &out.memories);
                let results = self.params(results, &out.memories);
                out.functions.push(Function {
                    name: name.name.clone(),
                    params,
                    results,
                });
            }
        }
        self.out.interfaces.push(out);
    }

    fn params(&mut self, params: &[ast::Param], memories: &[Memory]) -> Vec<Param> {
        let mut seen = HashMap::new();
        let mut out = Vec::new();
        for p in params {
            self.unique(&mut seen, &p.name, "parameter");
            let memory = memories.iter().position(|m| m.name == p.memory.name);
            if memory.is_none() {
                let names: Vec<&str> = memories.iter().map(|m| m.name.as_str()).collect();
                self.push(err(
                    "E0014",
                    p.memory.span,
                    format!("no memory `{}` in this interface", p.memory.name),
                    if names.is_empty() {
                        "declare one: `m: memory (import: read, export: write, 1);`".to_string()
                    } else {
                        format!("memories here: {}", names.join(", "))
                    },
                ));
            }
            if let (Some(ty), Some(memory)) = (self.field_type(&p.ty, &[]), memory) {
                out.push(Param {
                    name: p.name.name.clone(),
                    ty,
                    memory,
                });
            }
        }
        out
    }

    fn field_size_align(&self, ty: &Type) -> (usize, usize) {
        match ty {
            Type::Scalar(s) => (s.size(), s.size()),
            Type::Enum(e) => {
                let s = self.out.enums[*e].repr.size();
                (s, s)
            }
            Type::Struct(id) if self.kinds[*id] == StructKind::Inline => {
                (self.out.structs[*id].size, STRUCT_ALIGN)
            }
            Type::Struct(_) | Type::Slice { .. } => (4, 4),
            Type::Union(_) => (8, 4),
            Type::Fixed { len, elem } => {
                let (s, a) = self.field_size_align(elem);
                (s * len, a)
            }
        }
    }

    fn layout_all(&mut self, decls: &[&ast::StructDecl]) {
        let mut state = vec![0u8; decls.len()]; // 0 new, 1 in progress, 2 done
        for id in 0..decls.len() {
            self.layout(id, decls, &mut state);
        }
    }

    /// Lays out struct `id` after the inline structs it embeds; reports embedding cycles.
    fn layout(&mut self, id: usize, decls: &[&ast::StructDecl], state: &mut [u8]) -> bool {
        match state[id] {
            2 => return true,
            1 => return false,
            _ => state[id] = 1,
        }
        let fields = self.out.structs[id].fields.clone();
        for (i, f) in fields.iter().enumerate() {
            if let Type::Struct(dep) = f.ty
                && self.kinds[dep] == StructKind::Inline
                && !self.layout(dep, decls, state)
            {
                let span = decls[id].fields[i].ty.span();
                self.push(err(
                    "E0009",
                    span,
                    format!(
                        "field `{}.{}` embeds inline struct `{}`, which embeds `{}` again",
                        self.out.structs[id].name,
                        f.name,
                        self.out.structs[dep].name,
                        self.out.structs[id].name
                    ),
                    "make one struct on the cycle `dynamic` (stored by offset) or break the cycle",
                ));
                state[id] = 2;
                return true;
            }
        }
        let kind = self.kinds[id];
        let mut at = if kind == StructKind::Dynamic {
            DYNAMIC_HEADER_SIZE
        } else {
            0
        };
        let mut laid = Vec::with_capacity(fields.len());
        for f in fields {
            let (size, align) = self.field_size_align(&f.ty);
            let offset = align_up(at, align.max(1));
            at = offset + size;
            laid.push(Field { offset, size, ..f });
        }
        let s = &mut self.out.structs[id];
        s.fields = laid;
        s.used = at;
        s.size = align_up(at, STRUCT_ALIGN);
        if s.size > MAX_STRUCT_SIZE {
            let msg = format!("struct `{}` is {} bytes", s.name, s.size);
            self.push(err(
                "E0008",
                decls[id].name.span,
                msg,
                "a struct's size is stored in 29 bits of 8-byte units; use slices for bulk data",
            ));
        }
        state[id] = 2;
        true
    }

    /// Computes the columns of every struct used as a SoA item: items of `#soa`
    /// slices and variants of `#bovos` union slices.
    fn flatten_all(&mut self, decls: &[&ast::StructDecl]) {
        for (id, decl) in decls.iter().enumerate() {
            for fi in 0..self.out.structs[id].fields.len() {
                let span = decl.fields[fi].ty.span();
                let items: Vec<usize> = match &self.out.structs[id].fields[fi].ty {
                    Type::Slice {
                        elem,
                        layout: SliceLayout::Soa(_),
                        ..
                    } => match **elem {
                        Type::Struct(item) => vec![item],
                        _ => continue,
                    },
                    Type::Slice {
                        elem,
                        layout: SliceLayout::BoVoS,
                        ..
                    } => match **elem {
                        Type::Union(u) => self.out.unions[u]
                            .variants
                            .iter()
                            .map(|v| v.struct_id)
                            .collect(),
                        _ => continue,
                    },
                    _ => continue,
                };
                for item in items {
                    let columns = self.soa_columns(item, span);
                    if let Type::Slice {
                        layout: SliceLayout::Soa(cols),
                        ..
                    } = &mut self.out.structs[id].fields[fi].ty
                    {
                        *cols = columns.clone();
                    }
                    self.out.structs[item].soa = Some(columns);
                }
            }
        }
    }

    fn soa_columns(&mut self, item: usize, span: Span) -> Vec<SoaColumn> {
        if let Some(cols) = &self.out.structs[item].soa {
            return cols.clone();
        }
        let mut columns = Vec::new();
        self.flatten(item, &mut vec![], &mut vec![], &mut columns, span);
        let mut hashes: HashMap<u32, &SoaColumn> = HashMap::new();
        for c in &columns {
            if let Some(prev) = hashes.insert(c.hash, c) {
                self.diags.push(err(
                    "E0015",
                    span,
                    format!(
                        "columns `{}` and `{}` hash to the same value",
                        prev.names.join("."),
                        c.names.join(".")
                    ),
                    "reorder or pad the item's fields; this is vanishingly rare",
                ));
            }
        }
        columns
    }

    fn flatten(
        &mut self,
        id: usize,
        path: &mut Vec<u32>,
        names: &mut Vec<String>,
        out: &mut Vec<SoaColumn>,
        span: Span,
    ) {
        let s = self.out.structs[id].clone();
        for (i, f) in s.fields.iter().enumerate() {
            path.push(i as u32);
            names.push(f.name.clone());
            let leaf = |scalar, enum_id, per_item| SoaColumn {
                path: path.clone(),
                names: names.clone(),
                scalar,
                enum_id,
                per_item,
                hash: field_path_hash(path),
            };
            match &f.ty {
                Type::Scalar(sc) => out.push(leaf(*sc, None, 1)),
                Type::Enum(e) => out.push(leaf(self.out.enums[*e].repr, Some(*e), 1)),
                Type::Fixed { len, elem } => match **elem {
                    Type::Scalar(sc) => out.push(leaf(sc, None, *len)),
                    Type::Enum(e) => out.push(leaf(self.out.enums[e].repr, Some(e), *len)),
                    _ => {}
                },
                Type::Struct(inner) if self.kinds[*inner] == StructKind::Inline => {
                    self.flatten(*inner, path, names, out, span);
                }
                _ => self.diags.push(err("E0012", span, format!("field `{}.{}` cannot be a SoA column", s.name, names.join(".")), "SoA items hold scalars, enums, fixed arrays and inline structs; use `#aos` (or `#bovoa` for a union slice)")),
            }
            path.pop();
            names.pop();
        }
    }
}
