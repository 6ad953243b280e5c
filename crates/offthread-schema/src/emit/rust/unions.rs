//! Unions: an owned enum (`Option<…>` in fields; tag 0 is empty) and a `…Ref` enum
//! that keeps unknown tags from newer schemas.

use super::Cx;
use crate::compiler::ir::*;
use crate::compiler::pascal_case;

pub(super) fn emit(cx: &Cx<'_>, id: usize) -> String {
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
    out += "        }\n    }\n\n    /// Writes tag and offset at `at`, the value out of line.\n";
    out += "    pub fn write_at(&self, b: &mut rt::Builder, at: usize) -> Result<(), rt::WriteError> {\n        let p = match self {\n";
    for v in &u.variants {
        out += &format!(
            "            Self::{}(x) => x.write_new(b)?,\n",
            pascal_case(&v.name)
        );
    }
    out += &format!(
        "        }};\n        b.put::<{tag}>(at, self.tag() as {tag});\n        b.put_ptr(at + 4, p);\n        Ok(())\n    }}\n\n\
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
        "            {name}Ref::Empty | {name}Ref::Unknown(_) => None,\n        }})\n    }}\n}}\n\n\
         /// Reader for union `{}`.\n#[derive(Clone, Copy, Debug)]\npub enum {name}Ref<'a> {{\n    /// Tag 0 (or a null offset).\n    Empty,\n",
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
         \x20       let (tag, ptr) = view.union_tag_ptr::<{tag}>(off);\n        Ok(match tag {{\n            0 => Self::Empty,\n"
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
