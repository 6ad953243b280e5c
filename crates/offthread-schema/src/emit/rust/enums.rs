use super::Cx;

/// Enums are open newtypes: a value from a newer schema survives a round trip.
pub(super) fn emit(cx: &Cx<'_>, id: usize) -> String {
    let e = &cx.s.enums[id];
    let name = cx.enum_name(id);
    let repr = e.repr.name();
    let mut out = format!(
        "/// Enum `{}` ({repr}). Values this schema does not name (from a newer one) are kept.\n\
         #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]\n\
         pub struct {name}(pub {repr});\n\nimpl {name} {{\n",
        e.name
    );
    for (v, value) in &e.variants {
        out += &format!(
            "    pub const {}: Self = Self({value});\n",
            v.to_ascii_uppercase()
        );
    }
    out += "\n    /// The variant's schema name; `None` for a value this schema does not know.\n";
    out += "    pub fn name(self) -> Option<&'static str> {\n        match self.0 {\n";
    for (v, value) in &e.variants {
        out += &format!("            {value} => Some(\"{v}\"),\n");
    }
    out += "            _ => None,\n        }\n    }\n}\n";
    out
}
