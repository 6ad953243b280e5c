//! Layout (field offsets, struct sizes, inline-cycle detection) and SoA flattening:
//! the second half of [`super::resolve`], run once every name resolved.

use std::collections::HashMap;

use super::ast;
use super::diag::Span;
use super::ir::*;
use super::resolve::{Resolver, err};
use crate::rt::{DYNAMIC_HEADER_SIZE, STRUCT_ALIGN, align_up, field_path_hash};

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
                (s * len, a)
            }
        }
    }

    pub(super) fn layout_all(&mut self, decls: &[&ast::StructDecl]) {
        let mut state = vec![0u8; decls.len()]; // 0 new, 1 in progress, 2 done
        for id in 0..decls.len() {
            self.layout(id, decls, &mut state);
        }
    }

    /// Lays out struct `id` after the inline structs it embeds; reports embedding cycles.
    pub(super) fn layout(
        &mut self,
        id: usize,
        decls: &[&ast::StructDecl],
        state: &mut [u8],
    ) -> bool {
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
                let bovos = !matches!(
                    self.out.structs[id].fields[fi].ty,
                    Type::Slice {
                        layout: SliceLayout::Soa(_),
                        ..
                    }
                );
                for item in items {
                    let columns = self.soa_columns(item, span);
                    if bovos && let Some(c) = columns.iter().find(|c| c.varlen) {
                        self.diags
                            .push(bovos_varlen(&self.out.structs[item].name, c, span));
                        continue;
                    }
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

    pub(super) fn soa_columns(&mut self, item: usize, span: Span) -> Vec<SoaColumn> {
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

    pub(super) fn flatten(
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
                    self.flatten(*inner, path, names, out, span);
                }
                // `[]T` of scalars or enums (strings too): offsets column + values area.
                Type::Slice { elem, string, .. } if matches!(**elem, Type::Scalar(_) | Type::Enum(_)) => {
                    match **elem {
                        Type::Scalar(sc) => out.push(var(sc, None, *string)),
                        Type::Enum(e) => out.push(var(self.out.enums[e].repr, Some(e), None)),
                        _ => {}
                    }
                }
                _ => self.diags.push(err("E0012", span, format!("field `{}.{}` cannot be a SoA column", s.name, names.join(".")), "SoA items hold scalars, enums, fixed arrays, inline structs and slices of scalars or enums; use `#aos` (or `#bovoa` for a union slice)")),
            }
            path.pop();
            names.pop();
        }
    }
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
