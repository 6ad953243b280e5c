//! Unions: a plain tagged type, a reader result type, and read/write/decode functions.

use super::Cx;
use crate::compiler::camel_case;
use crate::compiler::ir::*;

pub(super) fn emit(cx: &Cx<'_>, id: usize) -> String {
    let u = &cx.s.unions[id];
    let n = cx.union_name(id);
    let tag = u.tag.name();
    let plain: Vec<String> = u
        .variants
        .iter()
        .map(|v| {
            format!(
                "{{ tag: '{}'; value: {} }}",
                camel_case(&v.name),
                cx.name(v.struct_id)
            )
        })
        .collect();
    let refs: Vec<String> = u
        .variants
        .iter()
        .map(|v| {
            format!(
                "{{ tag: '{}'; value: {}Reader }}",
                camel_case(&v.name),
                cx.name(v.struct_id)
            )
        })
        .collect();
    let mut out = format!(
        "/** Union `{}` ({tag} tag) as a plain object. */\nexport type {n} =\n  | {};\n\n\
         /** What a reader finds in a `{}` field. */\nexport type {n}Ref =\n  | {{ tag: 'empty' }}\n  | {{ tag: 'unknown'; raw: number }}\n  | {};\n\n",
        u.name,
        plain.join("\n  | "),
        u.name,
        refs.join("\n  | ")
    );
    out += &format!(
        "export function read{n}(view: rt.StructView, off: number): {n}Ref {{\n  const [tag, ptr] = view.unionTagPtr(off, '{tag}');\n  switch (tag) {{\n    case 0:\n      return {{ tag: 'empty' }};\n"
    );
    for v in &u.variants {
        let st = &cx.s.structs[v.struct_id];
        let deref = match st.kind {
            StructKind::Dynamic => "view.derefDynamic(ptr)".to_string(),
            StructKind::Inline => format!("view.derefInline(ptr, {})", st.size),
        };
        out += &format!(
            "    case {}: {{\n      const v = {deref};\n      return v === null ? {{ tag: 'empty' }} : {{ tag: '{}', value: new {}Reader(v) }};\n    }}\n",
            v.tag,
            camel_case(&v.name),
            cx.name(v.struct_id)
        );
    }
    out += "    default:\n      return { tag: 'unknown', raw: tag };\n  }\n}\n\n";
    out += &format!(
        "/** Writes the variant out of line, then tag and offset at `at`. */\n\
         export function write{n}(b: rt.Builder, at: number, v: {n}): void {{\n  let ptr = 0;\n  let tag = 0;\n  switch (v.tag) {{\n"
    );
    for v in &u.variants {
        out += &format!(
            "    case '{}':\n      ptr = {}Writer.alloc(b).fill(v.value).offset;\n      tag = {};\n      break;\n",
            camel_case(&v.name),
            cx.name(v.struct_id),
            v.tag
        );
    }
    out += &format!("  }}\n  b.{tag}(at, tag);\n  b.u32(at + 4, ptr);\n}}\n\n");
    out += &format!(
        "/** `null` for an empty union or a tag this schema does not know. */\n\
         export function decode{n}(r: {n}Ref, budget: rt.Budget): {n} | null {{\n  switch (r.tag) {{\n"
    );
    for v in &u.variants {
        let t = camel_case(&v.name);
        out += &format!(
            "    case '{t}':\n      return {{ tag: '{t}', value: r.value.toPlain(budget) }};\n"
        );
    }
    out += "    default:\n      return null;\n  }\n}\n";
    out
}
