use super::Cx;

/// An open enum: a const object of the named values and a `number` type.
pub(super) fn emit(cx: &Cx<'_>, id: usize) -> String {
    let e = &cx.s.enums[id];
    let name = cx.enum_name(id);
    let mut out = format!(
        "/** Enum `{}` ({}); values from newer schemas pass through. */\nexport const {name} = {{\n",
        e.name,
        e.repr.name()
    );
    for (v, value) in &e.variants {
        out += &format!("  {}: {value},\n", v.to_ascii_uppercase());
    }
    out += &format!("}} as const;\nexport type {name} = number;\n");
    out
}
