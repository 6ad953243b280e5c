//! Unions: an owned enum (`Option<…>` in fields; tag 0 is empty), a `…Ref` enum that
//! keeps unknown tags from newer schemas, and per slice layout a reader view plus
//! `write_…`/`read_…` helpers (AoS, SoA, BoVoA, BoVoS: docs/schema-format.md §2.9).

use super::Cx;
use crate::compiler::ir::*;
use crate::compiler::pascal_case;

pub(super) fn emit(cx: &Cx<'_>, id: usize, layouts: &[SliceLayout]) -> String {
    let mut out = owned(cx, id);
    out.push('\n');
    out += &reference(cx, id);
    for layout in layouts {
        out.push('\n');
        out += &match layout {
            SliceLayout::UnionAos => aos(cx, id),
            SliceLayout::BoVoA => bov(cx, id, true),
            SliceLayout::BoVoS => bov(cx, id, false),
            _ => soa(cx, id),
        };
    }
    out
}

fn owned(cx: &Cx<'_>, id: usize) -> String {
    let u = &cx.s.unions[id];
    let name = cx.union_name(id);
    let tag = u.tag.name();
    let mut out = format!(
        "/// Owned union `{}` ({tag} tag).\n#[derive(Clone, Debug, PartialEq)]\npub enum {name} {{\n",
        u.name
    );
    for v in &u.variants {
        out += &format!(
            "    {}(Box<{}>),\n",
            pascal_case(&v.name),
            cx.struct_name(v.struct_id)
        );
    }
    out += &format!(
        "}}\n\nimpl {name} {{\n    /// The tag written for this variant.\n    pub fn tag(&self) -> u32 {{\n        match self {{\n"
    );
    for v in &u.variants {
        out += &format!(
            "            Self::{}(_) => {},\n",
            pascal_case(&v.name),
            v.tag
        );
    }
    out += "        }\n    }\n\n    /// Writes the variant's struct out of line; returns its offset.\n";
    out += "    pub fn write_value(&self, b: &mut rt::Builder) -> Result<usize, rt::WriteError> {\n        match self {\n";
    for v in &u.variants {
        out += &format!(
            "            Self::{}(x) => x.write_new(b),\n",
            pascal_case(&v.name)
        );
    }
    out += &format!(
        "        }}\n    }}\n\n\
         \x20   /// Writes the value out of line, then tag and offset at `at`.\n\
         \x20   pub fn write_at(&self, b: &mut rt::Builder, at: usize) -> Result<(), rt::WriteError> {{\n\
         \x20       let p = self.write_value(b)?;\n        b.put::<{tag}>(at, self.tag() as {tag});\n        b.put_ptr(at + 4, p);\n        Ok(())\n    }}\n\n\
         \x20   /// `None` for an empty union or a tag this schema does not know.\n\
         \x20   pub fn decode(r: {name}Ref<'_>, budget: &mut rt::Budget) -> Result<Option<Self>, rt::ReadError> {{\n\
         \x20       Ok(match r {{\n"
    );
    for v in &u.variants {
        let vn = pascal_case(&v.name);
        out += &format!(
            "            {name}Ref::{vn}(x) => Some(Self::{vn}(Box::new({}::decode(x, budget)?))),\n",
            cx.struct_name(v.struct_id)
        );
    }
    out += &format!(
        "            {name}Ref::Empty | {name}Ref::Unknown(_) => None,\n        }})\n    }}\n}}\n"
    );
    out
}

fn reference(cx: &Cx<'_>, id: usize) -> String {
    let u = &cx.s.unions[id];
    let name = cx.union_name(id);
    let tag = u.tag.name();
    let mut out = format!(
        "/// Reader for union `{}`.\n#[derive(Clone, Copy, Debug)]\npub enum {name}Ref<'a> {{\n    /// Tag 0 (or a null offset).\n    Empty,\n",
        u.name
    );
    for v in &u.variants {
        out += &format!(
            "    {}({}Ref<'a>),\n",
            pascal_case(&v.name),
            cx.struct_name(v.struct_id)
        );
    }
    out += &format!(
        "    /// A tag from a newer schema.\n    Unknown(u32),\n}}\n\n\
         impl<'a> {name}Ref<'a> {{\n\
         \x20   /// Reads the union stored at `off` of `view`.\n\
         \x20   pub fn read(view: &rt::StructView<'a>, off: usize) -> Result<Self, rt::ReadError> {{\n\
         \x20       let (tag, ptr) = view.union_tag_ptr::<{tag}>(off);\n        Self::from_tag_ptr(view, tag, ptr)\n    }}\n\n\
         \x20   /// The value with `tag` at absolute offset `ptr`, followed from `view`.\n\
         \x20   pub fn from_tag_ptr(view: &rt::StructView<'a>, tag: u32, ptr: usize) -> Result<Self, rt::ReadError> {{\n\
         \x20       Ok(match tag {{\n            0 => Self::Empty,\n"
    );
    for v in &u.variants {
        let st = &cx.s.structs[v.struct_id];
        let sn = cx.struct_name(v.struct_id);
        let deref = match st.kind {
            StructKind::Dynamic => "view.deref_dynamic(ptr)?".to_string(),
            StructKind::Inline => format!("view.deref_inline(ptr, {})?", st.size),
        };
        out += &format!(
            "            {} => match {deref} {{\n                Some(v) => Self::{}({sn}Ref::from_view(v)),\n                None => Self::Empty,\n            }},\n",
            v.tag,
            pascal_case(&v.name)
        );
    }
    out += "            t => Self::Unknown(t),\n        })\n    }\n}\n";
    out
}

/// The common part of the AoS/SoA union slice views: `len`, `is_empty`.
fn len_methods(field: &str) -> String {
    format!(
        "    /// Number of items.\n    pub fn len(&self) -> usize {{\n        self.{field}.len()\n    }}\n\n\
         \x20   pub fn is_empty(&self) -> bool {{\n        self.{field}.is_empty()\n    }}\n"
    )
}

fn aos(cx: &Cx<'_>, id: usize) -> String {
    let n = cx.union_name(id);
    format!(
        "/// A `#aos` slice of `{}`: (tag, offset) pairs.\n#[derive(Clone, Copy, Debug)]\npub struct {n}Aos<'a> {{\n    aos: rt::AosView<'a>,\n}}\n\n\
         impl<'a> {n}Aos<'a> {{\n    pub fn from_view(aos: rt::AosView<'a>) -> Self {{\n        Self {{ aos }}\n    }}\n\n{}\n\
         \x20   /// Item `i`; `None` past the end.\n\
         \x20   pub fn get(&self, i: usize) -> Option<Result<{n}Ref<'a>, rt::ReadError>> {{\n\
         \x20       self.aos.get(i).map(|v| {n}Ref::read(&v, 0))\n    }}\n}}\n\n\
         impl {n} {{\n\
         \x20   /// Writes a `#aos` union slice; returns the header offset (0 when empty).\n\
         \x20   pub fn write_aos(b: &mut rt::Builder, items: &[Option<Self>]) -> Result<usize, rt::WriteError> {{\n\
         \x20       let (h, data) = b.aos(items.len(), 8)?;\n\
         \x20       for (i, x) in items.iter().enumerate() {{\n\
         \x20           if let Some(x) = x {{\n                x.write_at(b, data + i * 8)?;\n            }}\n        }}\n        Ok(h)\n    }}\n\n\
         \x20   pub fn read_aos(a: {n}Aos<'_>, budget: &mut rt::Budget) -> Result<Vec<Option<Self>>, rt::ReadError> {{\n\
         \x20       budget.spend(a.len() as u64)?;\n\
         \x20       (0..a.len())\n            .map(|i| match a.get(i) {{\n                Some(r) => Self::decode(r?, budget),\n                None => Ok(None),\n            }})\n            .collect()\n    }}\n}}\n",
        cx.s.unions[id].name,
        len_methods("aos"),
    )
}

fn soa(cx: &Cx<'_>, id: usize) -> String {
    let n = cx.union_name(id);
    let tag = cx.s.unions[id].tag.name();
    let size = cx.s.unions[id].tag.size();
    format!(
        "/// A `#soa` slice of `{}`: a tag column (searchable with SIMD) and an offset column.\n\
         #[derive(Clone, Copy, Debug)]\npub struct {n}Soa<'a> {{\n    view: rt::StructView<'a>,\n    tags: rt::Column<'a, {tag}>,\n    ptrs: rt::Column<'a, u32>,\n}}\n\n\
         impl<'a> {n}Soa<'a> {{\n\
         \x20   pub fn new(view: rt::StructView<'a>, tags: rt::Column<'a, {tag}>, ptrs: rt::Column<'a, u32>) -> Self {{\n\
         \x20       Self {{ view, tags, ptrs }}\n    }}\n\n{}\n\
         \x20   /// The tag column.\n    pub fn tags(&self) -> rt::Column<'a, {tag}> {{\n        self.tags\n    }}\n\n\
         \x20   /// Item `i`; `None` past the end.\n\
         \x20   pub fn get(&self, i: usize) -> Option<Result<{n}Ref<'a>, rt::ReadError>> {{\n\
         \x20       let tag = self.tags.get(i)?;\n        let ptr = self.ptrs.get(i)?;\n\
         \x20       Some({n}Ref::from_tag_ptr(&self.view, tag.into(), ptr as usize))\n    }}\n}}\n\n\
         impl {n} {{\n\
         \x20   /// Writes a `#soa` union slice; returns the header offset (0 when empty).\n\
         \x20   pub fn write_soa(b: &mut rt::Builder, items: &[Option<Self>]) -> Result<usize, rt::WriteError> {{\n\
         \x20       let Some(cols) = b.union_soa(items.len(), {size})? else {{\n            return Ok(0);\n        }};\n\
         \x20       for (i, x) in items.iter().enumerate() {{\n\
         \x20           if let Some(x) = x {{\n                let p = x.write_value(b)?;\n\
         \x20               b.put::<{tag}>(cols.tags + i * {size}, x.tag() as {tag});\n\
         \x20               b.put_ptr(cols.ptrs + i * 4, p);\n            }}\n        }}\n        Ok(cols.header)\n    }}\n\n\
         \x20   pub fn read_soa(s: {n}Soa<'_>, budget: &mut rt::Budget) -> Result<Vec<Option<Self>>, rt::ReadError> {{\n\
         \x20       budget.spend(s.len() as u64)?;\n\
         \x20       (0..s.len())\n            .map(|i| match s.get(i) {{\n                Some(r) => Self::decode(r?, budget),\n                None => Ok(None),\n            }})\n            .collect()\n    }}\n}}\n",
        cx.s.unions[id].name,
        len_methods("tags"),
    )
}

/// BoVoA (`aos`) or BoVoS: one array per variant, found through the variant table.
fn bov(cx: &Cx<'_>, id: usize, aos: bool) -> String {
    let u = &cx.s.unions[id];
    let n = cx.union_name(id);
    let (kind, ann, wrapper) = if aos {
        ("Bovoa", "#bovoa", "Aos")
    } else {
        ("Bovos", "#bovos", "Soa")
    };
    let lower = kind.to_ascii_lowercase();
    let mut out = format!(
        "/// A `{ann}` slice of `{}`: one {} array per variant (insertion order is not kept).\n\
         #[derive(Clone, Copy, Debug)]\npub struct {n}{kind}<'a> {{\n    table: rt::VariantTable<'a>,\n}}\n\n\
         impl<'a> {n}{kind}<'a> {{\n    pub fn from_table(table: rt::VariantTable<'a>) -> Self {{\n        Self {{ table }}\n    }}\n\n{}",
        u.name,
        if aos { "AoS" } else { "SoA" },
        len_methods("table")
    );
    for v in &u.variants {
        let sn = cx.struct_name(v.struct_id);
        let st = &cx.s.structs[v.struct_id];
        let call = if aos {
            format!(
                "self.table.aos({}, {}, {}).map({sn}Aos::from_view)",
                v.tag,
                st.size,
                st.kind == StructKind::Dynamic
            )
        } else {
            format!("self.table.soa({}).map({sn}Soa::from_view)", v.tag)
        };
        out += &format!(
            "\n    /// The `{}` items (tag {}).\n    pub fn {}(&self) -> Result<{sn}{wrapper}<'a>, rt::ReadError> {{\n        {call}\n    }}\n",
            v.name,
            v.tag,
            super::ident(&v.name)
        );
    }
    out += &format!(
        "}}\n\nimpl {n} {{\n\
         \x20   /// Writes a `{ann}` union slice, grouping items by variant in declaration order;\n\
         \x20   /// returns the header offset (0 when empty).\n\
         \x20   pub fn write_{lower}(b: &mut rt::Builder, items: &[Self]) -> Result<usize, rt::WriteError> {{\n\
         \x20       let (h, table) = b.variant_table(items.len(), {})?;\n        if h == 0 {{\n            return Ok(0);\n        }}\n",
        u.variants.len()
    );
    for (k, v) in u.variants.iter().enumerate() {
        let sn = cx.struct_name(v.struct_id);
        let vn = pascal_case(&v.name);
        let write = if aos {
            format!(
                "let (ah, data) = b.aos(xs.len(), {sn}::SIZE)?;\n            for (i, x) in xs.iter().enumerate() {{\n                x.write_at(b, data + i * {sn}::SIZE)?;\n            }}\n            ah"
            )
        } else {
            format!("{sn}::write_soa(b, &xs)?")
        };
        out += &format!(
            "        {{\n            let xs: Vec<{sn}> = items\n                .iter()\n                .filter_map(|x| match x {{\n                    Self::{vn}(v) => Some((**v).clone()),\n                    #[allow(unreachable_patterns)]\n                    _ => None,\n                }})\n                .collect();\n\
             \x20           b.put::<u32>(table + {}, {});\n            let p = {{\n            {write}\n            }};\n            b.put_ptr(table + {}, p);\n        }}\n",
            k * 8,
            v.tag,
            k * 8 + 4
        );
    }
    out += &format!(
        "        Ok(h)\n    }}\n\n\
         \x20   /// Reads a `{ann}` union slice, variant by variant in declaration order.\n\
         \x20   pub fn read_{lower}(t: {n}{kind}<'_>, budget: &mut rt::Budget) -> Result<Vec<Self>, rt::ReadError> {{\n\
         \x20       let mut out = Vec::new();\n"
    );
    for v in &u.variants {
        let sn = cx.struct_name(v.struct_id);
        let vn = pascal_case(&v.name);
        let items = if aos {
            format!(
                "{{\n            let a = t.{}()?;\n            budget.spend(a.len() as u64)?;\n            (0..a.len()).filter_map(|i| a.get(i)).map(|x| {sn}::decode(x, budget)).collect::<Result<Vec<_>, _>>()?\n        }}",
                super::ident(&v.name)
            )
        } else {
            format!("{sn}::read_soa(t.{}()?, budget)?", super::ident(&v.name))
        };
        out +=
            &format!("        out.extend({items}.into_iter().map(|x| Self::{vn}(Box::new(x))));\n");
    }
    out += "        Ok(out)\n    }\n}\n";
    out
}
