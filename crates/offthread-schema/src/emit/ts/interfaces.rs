//! Interfaces as types only: a TS interface plus constants for the pattern and memories.

use super::{Cx, member};
use crate::compiler::ir::Type;
use crate::compiler::pascal_case;

pub(super) fn emit(cx: &Cx<'_>, id: usize) -> String {
    let i = &cx.s.interfaces[id];
    let name = pascal_case(&i.name);
    let upper = i.name.to_ascii_uppercase();
    let mut out = format!(
        "/** Pattern of interface `{}`. */\nexport const {upper}_PATTERN = '{}' as const;\n\n",
        i.name,
        i.pattern.name()
    );
    out += &format!(
        "/** Memories of interface `{}` (pages of 64 KiB). */\nexport const {upper}_MEMORIES = [\n",
        i.name
    );
    for m in &i.memories {
        out += &format!(
            "  {{ name: '{}', import: '{}', export: '{}', pages: {} }},\n",
            m.name,
            m.import.name(),
            m.export.name(),
            m.pages
        );
    }
    out += &format!(
        "] as const;\n\n/** Interface `{}` ({}). */\nexport interface {name} {{\n",
        i.name,
        i.pattern.name()
    );
    for f in &i.functions {
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{}: {}", member(&p.name), param_type(cx, &p.ty)))
            .collect();
        let results: Vec<String> = f.results.iter().map(|p| param_type(cx, &p.ty)).collect();
        let ret = match results.as_slice() {
            [] => "void".to_string(),
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        out += &format!("  {}({}): {ret};\n", member(&f.name), params.join(", "));
    }
    out += "}\n";
    out
}

/// A parameter is a whole message in a memory: never absent, so no `| null`.
fn param_type(cx: &Cx<'_>, ty: &Type) -> String {
    match ty {
        Type::Struct(id) => cx.name(*id),
        Type::Union(u) => cx.union_name(*u),
        _ => cx.plain_type(ty),
    }
}
