//! Interfaces are emitted as types only: a trait with one method per function and
//! a constant describing the shared memories and the communication pattern.

use super::{Cx, ident};
use crate::compiler::ir::Type;
use crate::compiler::pascal_case;

pub(super) fn emit(cx: &Cx<'_>, id: usize) -> String {
    let i = &cx.s.interfaces[id];
    let name = pascal_case(&i.name);
    let upper = i.name.to_ascii_uppercase();
    let mut out = format!(
        "/// Pattern of interface `{}`.\npub const {upper}_PATTERN: &str = \"{}\";\n\n\
         /// Memories of interface `{}`: (name, import access, export access, 64 KiB pages).\n\
         pub const {upper}_MEMORIES: &[(&str, &str, &str, u32)] = &[\n",
        i.name,
        i.pattern.name(),
        i.name
    );
    for m in &i.memories {
        out += &format!(
            "    (\"{}\", \"{}\", \"{}\", {}),\n",
            m.name,
            m.import.name(),
            m.export.name(),
            m.pages
        );
    }
    out += &format!(
        "];\n\n/// Interface `{}` ({}).\npub trait {name} {{\n",
        i.name,
        i.pattern.name()
    );
    for f in &i.functions {
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{}: &{}", ident(&p.name), param_type(cx, &p.ty)))
            .collect();
        let results: Vec<String> = f.results.iter().map(|p| param_type(cx, &p.ty)).collect();
        let ret = match results.as_slice() {
            [] => String::new(),
            [one] => format!(" -> {one}"),
            many => format!(" -> ({})", many.join(", ")),
        };
        let doc: Vec<String> = f
            .params
            .iter()
            .chain(&f.results)
            .map(|p| match p.memory {
                Some(m) => format!("`{}` in `{}`", p.name, i.memories[m].name),
                None => format!("`{}` in the callee's own memory", p.name),
            })
            .collect();
        out += &format!(
            "    /// {}\n    fn {}(&mut self{}{}){ret};\n",
            doc.join(", "),
            ident(&f.name),
            if params.is_empty() { "" } else { ", " },
            params.join(", ")
        );
    }
    out += "}\n";
    out
}

/// A parameter is a whole message in a memory: never absent, so structs and unions
/// are not wrapped in `Option` the way fields are.
fn param_type(cx: &Cx<'_>, ty: &Type) -> String {
    match ty {
        Type::Struct(id) => cx.struct_name(*id),
        Type::Union(u) => cx.union_name(*u),
        _ => cx.owned_type(ty),
    }
}
