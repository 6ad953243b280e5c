//! `resize_<field>`: in-place resize of a slice field within its capacity (Karmem
//! §4.3.1), for scalar slices, AoS and fixed-column SoA arrays. The work is the
//! runtime's `rt::resize_array`; this only names the field's slot and its layout.

use super::Cx;
use crate::compiler::ir::*;

/// The `rt::ResizeLayout` expression of a slice field, or None when it cannot be resized
/// in place (strings, unions, SoA with variable-length columns).
pub(super) fn layout(cx: &Cx<'_>, ty: &Type) -> Option<String> {
    let Type::Slice {
        elem,
        layout,
        string: None,
    } = ty
    else {
        return None;
    };
    match (&**elem, layout) {
        (Type::Scalar(_) | Type::Enum(_), _) => Some("rt::ResizeLayout::Contiguous".into()),
        (Type::Struct(id), SliceLayout::Soa(_)) if !cx.s.has_varlen(*id) => Some(format!(
            "rt::ResizeLayout::Soa {{ columns: {}Soa::COLUMNS }}",
            cx.struct_name(*id)
        )),
        (Type::Struct(_), SliceLayout::Soa(_)) => None,
        (Type::Struct(_), _) => Some("rt::ResizeLayout::Contiguous".into()),
        _ => None,
    }
}

/// The `resize_…` associated functions of struct `id`.
pub(super) fn methods(cx: &Cx<'_>, id: usize) -> String {
    let mut out = String::new();
    for f in &cx.s.structs[id].fields {
        let Some(layout) = layout(cx, &f.ty) else {
            continue;
        };
        out += &format!(
            "\n    /// Resizes `{0}` in place to `count` items, within the capacity it was written with:\n\
             \x20   /// shrinking erases the rest of the last 64-byte block, growing back zeroes the new\n\
             \x20   /// items (W0010 past the capacity). `at`: this struct's offset (0 for the root).\n\
             \x20   pub fn resize_{0}(buf: &mut [u8], at: usize, count: usize) -> Result<(), rt::ResizeError> {{\n\
             \x20       rt::resize_array(buf, at + {1}, count, {layout})\n    }}\n",
            f.name, f.offset
        );
    }
    out
}
