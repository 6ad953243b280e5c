//! Layout (field offsets, struct sizes, inline-cycle detection) and SoA flattening:
//! the second half of [`super::resolve`], run once every name resolved.

use std::collections::HashMap;
use std::sync::Arc;

use super::ast;
use super::diag::{Diagnostic, Span};
use super::ir::*;
use super::limits::{MAX_INLINE_DEPTH, MAX_SOA_COLUMNS};
use super::resolve::{Resolver, err};
use crate::rt::{DYNAMIC_HEADER_SIZE, STRUCT_ALIGN, field_path_hash};

/// Largest struct: the header counts 8-byte units in 29 bits.
const MAX_STRUCT_SIZE: usize = ((1 << 29) - 1) * 8;

impl Resolver {
    pub(super) fn field_size_align(&self, ty: &Type) -> (usize, usize) {
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
                (s.saturating_mul(*len), a)
            }
        }
    }

    pub(super) fn layout_all(&mut self, decls: &[&ast::StructDecl]) {
        let mut state = vec![0u8; decls.len()]; // 0 new, 1 in progress, 2 done
        for id in 0..decls.len() {
            if self.layout(id, decls, &mut state, 0).is_err() {
                return; // too deep, reported once: the rest would repeat it
            }
        }
    }

    /// Lays out struct `id` after the inline structs it embeds; reports embedding cycles
    /// (`Ok(false)`: `id` is on the current chain) and chains deeper than
    /// [`MAX_INLINE_DEPTH`] (`Err`, reported; the recursion follows the chain).
    pub(super) fn layout(
        &mut self,
        id: usize,
        decls: &[&ast::StructDecl],
        state: &mut [u8],
        depth: usize,
    ) -> Result<bool, ()> {
        match state[id] {
            2 => return Ok(true),
            1 => return Ok(false),
            _ => state[id] = 1,
        }
        let fields = self.out.structs[id].fields.clone();
        for (i, f) in fields.iter().enumerate() {
            let Type::Struct(dep) = f.ty else { continue };
            if self.kinds[dep] != StructKind::Inline || state[dep] == 2 {
                continue;
            }
            if depth == MAX_INLINE_DEPTH {
                self.push(err(
                    "E0019",
                    decls[id].fields[i].ty.span(),
                    format!("inline structs nest more than {MAX_INLINE_DEPTH} levels deep here"),
                    "make a struct on the chain `dynamic` (stored by offset)",
                ));
                return Err(());
            }
            if !self.layout(dep, decls, state, depth + 1)? {
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
                return Ok(true);
            }
        }
        let kind = self.kinds[id];
        let mut at = if kind == StructKind::Dynamic {
            DYNAMIC_HEADER_SIZE
        } else {
            0
        };
        let mut laid = Vec::with_capacity(fields.len());
        // Saturating: on wasm32 a few thousand 512 KiB fields would wrap usize; a
        // saturated size fails the MAX_STRUCT_SIZE check below.
        for f in fields {
            let (size, align) = self.field_size_align(&f.ty);
            let offset = align_sat(at, align.max(1));
            at = offset.saturating_add(size);
            laid.push(Field { offset, size, ..f });
        }
        let s = &mut self.out.structs[id];
        s.fields = laid;
        s.used = at;
        s.size = align_sat(at, STRUCT_ALIGN);
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
        Ok(true)
    }

    /// Computes the columns of every struct used as a SoA item: items of `#soa`
    /// slices and variants of `#bovos` union slices. Checks every lookup table against
    /// the readers' limit: columns of a SoA item, variants of a BoV union slice.
    pub(super) fn flatten_all(&mut self, decls: &[&ast::StructDecl]) {
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
                        layout: layout @ (SliceLayout::BoVoS | SliceLayout::BoVoA),
                        ..
                    } => match **elem {
                        Type::Union(u) => {
                            let bovos = *layout == SliceLayout::BoVoS;
                            if let Some(d) = self.too_many_variants(u, bovos, span) {
                                self.push(d);
                                continue;
                            }
                            if !bovos {
                                continue;
                            }
                            self.out.unions[u]
                                .variants
                                .iter()
                                .map(|v| v.struct_id)
                                .collect()
                        }
                        _ => continue,
                    },
                    _ => continue,
                };
                let bovos = !matches!(
                    self.out.structs[id].fields[fi].ty,
                    Type::Slice {
                        layout: SliceLayout::Soa(_),
                        ..
                    }
                );
                for item in items {
                    let Some(columns) = self.soa_columns(item, span) else {
                        continue;
                    };
                    if bovos && let Some(c) = columns.iter().find(|c| c.varlen) {
                        self.push(bovos_varlen(&self.out.structs[item].name, c, span));
                        continue;
                    }
                    // Shared, not copied: a thousand fields of one item hold one list.
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

    /// E0018 when union `u` has more variants than a BoV table may list.
    fn too_many_variants(&self, u: usize, bovos: bool, span: Span) -> Option<Diagnostic> {
        let union = &self.out.unions[u];
        let n = union.variants.len();
        (n > MAX_SOA_COLUMNS).then(|| {
            err(
                "E0018",
                span,
                format!(
                    "union `{}` has {n} variants, more than the {MAX_SOA_COLUMNS} a `#{}` table may list",
                    union.name,
                    if bovos { "bovos" } else { "bovoa" }
                ),
                format!("readers refuse variant tables of more than {MAX_SOA_COLUMNS} entries (R0005); use `#aos` or `#soa` for this slice"),
            )
        })
    }

    /// The columns of SoA item `item` (computed once); `None` after reporting why it
    /// cannot be one.
    pub(super) fn soa_columns(&mut self, item: usize, span: Span) -> Option<Arc<[SoaColumn]>> {
        if let Some(cols) = &self.out.structs[item].soa {
            return Some(cols.clone());
        }
        let mut columns = Vec::new();
        let mut errors = Vec::new();
        let flat = self.flatten(
            item,
            &mut vec![],
            &mut vec![],
            &mut columns,
            &mut errors,
            span,
        );
        if flat.is_err() && errors.is_empty() {
            let name = &self.out.structs[item].name;
            self.push(err(
                "E0018",
                span,
                format!("SoA item `{name}` flattens to more than {MAX_SOA_COLUMNS} columns"),
                format!("readers refuse SoA tables of more than {MAX_SOA_COLUMNS} columns (R0005); use `#aos`, or split `{name}` into several slices"),
            ));
        }
        let failed = flat.is_err() || !errors.is_empty();
        for d in errors {
            self.push(d);
        }
        if failed {
            return None;
        }
        let mut hashes: HashMap<u32, &SoaColumn> = HashMap::new();
        for c in &columns {
            if let Some(prev) = hashes.insert(c.hash, c) {
                self.push(err(
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
        Some(columns.into())
    }

    /// Appends the columns of struct `id` (and, recursively, of the inline structs it
    /// embeds) to `out`, and a diagnostic per field that cannot be a column to `errors`.
    /// `Err` once they hold more than [`MAX_SOA_COLUMNS`] between them: the walk stops
    /// there, so an item whose inline structs fan out to 2^20 leaves costs 257 steps.
    pub(super) fn flatten(
        &mut self,
        id: usize,
        path: &mut Vec<u32>,
        names: &mut Vec<String>,
        out: &mut Vec<SoaColumn>,
        errors: &mut Vec<Diagnostic>,
        span: Span,
    ) -> Result<(), ()> {
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
                fixed: false,
                hash: field_path_hash(path),
                varlen: false,
                string: None,
            };
            let var = |scalar, enum_id, string| SoaColumn {
                varlen: true,
                string,
                ..leaf(scalar, enum_id, 1)
            };
            match &f.ty {
                Type::Scalar(sc) => out.push(leaf(*sc, None, 1)),
                Type::Enum(e) => out.push(leaf(self.out.enums[*e].repr, Some(*e), 1)),
                Type::Fixed { len, elem } => match **elem {
                    Type::Scalar(sc) => out.push(SoaColumn {
                        fixed: true,
                        ..leaf(sc, None, *len)
                    }),
                    Type::Enum(e) => out.push(SoaColumn {
                        fixed: true,
                        ..leaf(self.out.enums[e].repr, Some(e), *len)
                    }),
                    _ => {}
                },
                Type::Struct(inner) if self.kinds[*inner] == StructKind::Inline => {
                    self.flatten(*inner, path, names, out, errors, span)?;
                }
                // `[]T` of scalars or enums (strings too): offsets column + values area.
                Type::Slice { elem, string, .. } if matches!(**elem, Type::Scalar(_) | Type::Enum(_)) => {
                    match **elem {
                        Type::Scalar(sc) => out.push(var(sc, None, *string)),
                        Type::Enum(e) => out.push(var(self.out.enums[e].repr, Some(e), None)),
                        _ => {}
                    }
                }
                _ => errors.push(err("E0012", span, format!("field `{}.{}` cannot be a SoA column", s.name, names.join(".")), "SoA items hold scalars, enums, fixed arrays, inline structs and slices of scalars or enums; use `#aos` (or `#bovoa` for a union slice)")),
            }
            path.pop();
            names.pop();
            if out.len() + errors.len() > MAX_SOA_COLUMNS {
                return Err(());
            }
        }
        Ok(())
    }
}

/// `align_up` without overflow: a size past `usize::MAX` stays past every limit.
fn align_sat(n: usize, align: usize) -> usize {
    n.checked_add(align - 1)
        .map_or(usize::MAX, |m| m & !(align - 1))
}

/// E0012: BoVoS variant arrays keep fixed-size columns only (their writers fill
/// columns sized by the item count alone).
fn bovos_varlen(item: &str, c: &SoaColumn, span: Span) -> super::diag::Diagnostic {
    err(
        "E0012",
        span,
        format!(
            "field `{item}.{}` cannot be a column of a `#bovos` variant",
            c.names.join(".")
        ),
        "strings and slices are SoA columns in `#soa` slices only; use `#bovoa` for this union slice",
    )
}
