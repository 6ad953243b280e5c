//! Layout queries over a resolved schema: which structs are AoS/SoA items, which
//! layouts a union is sliced with, an item's SoA columns. Both emitters (Rust and TS)
//! ask the IR, so neither borrows the other's context.

use std::collections::BTreeSet;

use super::ir::{Schema, SliceLayout, SoaColumn, Type};

/// Which structs are SoA / AoS items and which layouts each union is sliced with.
#[derive(Clone, Debug, Default)]
pub struct Layouts {
    pub soa: BTreeSet<usize>,
    pub aos: BTreeSet<usize>,
    /// Per union, in first-use order (as [`Schema::union_layouts`]).
    pub unions: Vec<Vec<SliceLayout>>,
}

impl Schema {
    /// Structs that are SoA items (of a `#soa` slice or a `#bovos` union slice).
    pub fn soa_items(&self) -> BTreeSet<usize> {
        (0..self.structs.len())
            .filter(|&id| self.structs[id].soa.is_some())
            .collect()
    }

    /// Structs that are AoS items (of an `#aos` slice or a `#bovoa` union slice).
    pub fn aos_items(&self) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        for ty in self.slice_types() {
            if let Type::Slice { elem, layout, .. } = ty {
                match (&**elem, layout) {
                    (Type::Struct(id), SliceLayout::Aos) => {
                        out.insert(*id);
                    }
                    (Type::Union(u), SliceLayout::BoVoA) => {
                        out.extend(self.unions[*u].variants.iter().map(|v| v.struct_id));
                    }
                    _ => {}
                }
            }
        }
        out
    }

    /// [`Self::soa_items`], [`Self::aos_items`] and every union's layouts in one pass
    /// over the schema: the emitters ask per declaration, and asking the schema each
    /// time made emitting quadratic (20,000 structs took 11 s).
    pub fn layouts(&self) -> Layouts {
        let mut out = Layouts {
            soa: self.soa_items(),
            aos: self.aos_items(),
            unions: vec![Vec::new(); self.unions.len()],
        };
        for ty in self.slice_types() {
            if let Type::Slice { elem, layout, .. } = ty
                && let Type::Union(u) = **elem
                && !out.unions[u].contains(layout)
            {
                out.unions[u].push(layout.clone());
            }
        }
        out
    }

    /// The layouts union `u` is used with in slices.
    pub fn union_layouts(&self, u: usize) -> Vec<SliceLayout> {
        let mut out = Vec::new();
        for ty in self.slice_types() {
            if let Type::Slice { elem, layout, .. } = ty
                && **elem == Type::Union(u)
                && !out.contains(layout)
            {
                out.push(layout.clone());
            }
        }
        out
    }

    /// Every slice type in fields and interface parameters.
    fn slice_types(&self) -> Vec<&Type> {
        let fields = self.structs.iter().flat_map(|s| &s.fields).map(|f| &f.ty);
        let params = self
            .interfaces
            .iter()
            .flat_map(|i| &i.functions)
            .flat_map(|f| f.params.iter().chain(&f.results))
            .map(|p| &p.ty);
        fields
            .chain(params)
            .filter(|t| matches!(t, Type::Slice { .. }))
            .collect()
    }

    /// The SoA columns of item struct `id`.
    pub fn soa_columns(&self, id: usize) -> &[SoaColumn] {
        self.structs[id].soa.as_deref().unwrap_or(&[])
    }

    /// True when SoA item `id` has a variable-length column (its writers need the
    /// values' sizes before allocating).
    pub fn has_varlen(&self, id: usize) -> bool {
        self.soa_columns(id).iter().any(|c| c.varlen)
    }
}
