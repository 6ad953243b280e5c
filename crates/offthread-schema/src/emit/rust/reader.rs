//! The zero-copy readers: `…Ref` per struct, `…Soa` / `…Aos` per slice item struct.

use super::{Cx, ident, storage};
use crate::compiler::ir::*;

const R: &str = "Result<";
const E: &str = ", rt::ReadError>";

pub(super) fn emit_struct(cx: &Cx<'_>, id: usize) -> String {
    let s = &cx.s.structs[id];
    let name = cx.struct_name(id);
    let p = &cx.source;
    let (kind, root) = match s.kind {
        StructKind::Dynamic => (
            "dynamic",
            "rt::StructView::open_dynamic(src, opts)".to_string(),
        ),
        StructKind::Inline => (
            "inline",
            format!("rt::StructView::open_inline(src, {}, opts)", s.size),
        ),
    };
    // Accessors that read through any source, and those only a slice has (SoA arrays
    // and unions hand out slices of the message).
    let (mut any, mut slice) = (String::new(), String::new());
    for f in &s.fields {
        let into = if slice_only(&f.ty) {
            &mut slice
        } else {
            &mut any
        };
        into.push('\n');
        *into += &accessor(cx, f);
    }
    format!(
        "/// Zero-copy reader for `{}` ({kind}, {} bytes), over a slice or any other\n\
         /// [`rt::Source`] of the message (a guest's input in place).\n\
         #[derive(Clone, Copy, Debug)]\n\
         pub struct {name}Ref<'a, {p} = &'a [u8]> {{\n    view: rt::StructView<'a, {p}>,\n}}\n\n\
         impl<'a> {name}Ref<'a> {{\n\
         \x20   /// Opens a message whose root (offset 0) is this struct.\n\
         \x20   pub fn from_bytes(buf: &'a [u8]) -> {R}Self{E} {{\n\
         \x20       Self::from_bytes_with(buf, rt::ReadOptions::DEFAULT)\n    }}\n\n\
         \x20   /// Opens a message with explicit limits.\n\
         \x20   pub fn from_bytes_with(buf: &'a [u8], opts: rt::ReadOptions) -> {R}Self{E} {{\n\
         \x20       Self::from_source_with(buf, opts)\n    }}\n{slice}}}\n\n\
         impl<'a, {p}: rt::Source<'a>> {name}Ref<'a, {p}> {{\n\
         \x20   /// Opens a message wherever it is, its root (offset 0) this struct.\n\
         \x20   pub fn from_source(src: {p}) -> {R}Self{E} {{\n\
         \x20       Self::from_source_with(src, rt::ReadOptions::DEFAULT)\n    }}\n\n\
         \x20   /// Opens a message wherever it is, with explicit limits.\n\
         \x20   pub fn from_source_with(src: {p}, opts: rt::ReadOptions) -> {R}Self{E} {{\n\
         \x20       {root}.map(Self::from_view)\n    }}\n\n\
         \x20   pub fn from_view(view: rt::StructView<'a, {p}>) -> Self {{\n        Self {{ view }}\n    }}\n\n\
         \x20   pub fn view(&self) -> rt::StructView<'a, {p}> {{\n        self.view\n    }}\n{any}}}\n",
        s.name, s.size
    )
}

/// Whether a field's reader needs the message as a slice: SoA arrays and unions.
fn slice_only(ty: &Type) -> bool {
    match ty {
        Type::Union(_) => true,
        Type::Slice { elem, layout, .. } => {
            matches!(**elem, Type::Union(_))
                || matches!((&**elem, layout), (Type::Struct(_), SliceLayout::Soa(_)))
        }
        _ => false,
    }
}

fn accessor(cx: &Cx<'_>, f: &Field) -> String {
    let (ret, body) = accessor_parts(cx, &f.ty, f.offset);
    format!(
        "    /// `{}` at +{}.\n    pub fn {}(&self) -> {ret} {{\n        {body}\n    }}\n",
        f.name,
        f.offset,
        ident(&f.name)
    )
}

fn accessor_parts(cx: &Cx<'_>, ty: &Type, off: usize) -> (String, String) {
    let p = &cx.source;
    match ty {
        Type::Scalar(Scalar::Bool) => ("bool".into(), format!("self.view.read_bool({off})")),
        Type::Scalar(sc) => (
            sc.name().into(),
            format!("self.view.read::<{}>({off})", sc.name()),
        ),
        Type::Enum(e) => {
            let en = cx.enum_name(*e);
            (
                en.clone(),
                format!(
                    "{en}(self.view.read::<{}>({off}))",
                    cx.s.enums[*e].repr.name()
                ),
            )
        }
        Type::Fixed { len, elem } => {
            let (st, map) = match **elem {
                Type::Scalar(Scalar::Bool) => ("u8".to_string(), ".map(|v| v != 0)".to_string()),
                Type::Scalar(sc) => (sc.name().to_string(), String::new()),
                Type::Enum(e) => (
                    cx.s.enums[e].repr.name().to_string(),
                    format!(".map({})", cx.enum_name(e)),
                ),
                _ => unreachable!("fixed arrays hold scalars or enums"),
            };
            (
                cx.owned_type(ty),
                format!("self.view.read_array::<{st}, {len}>({off}){map}"),
            )
        }
        Type::Struct(id) => {
            let n = cx.struct_name(*id);
            let st = &cx.s.structs[*id];
            if st.kind == StructKind::Inline {
                (
                    format!("{n}Ref<'a, {p}>"),
                    format!("{n}Ref::from_view(self.view.inline({off}, {}))", st.size),
                )
            } else {
                (
                    format!("{R}Option<{n}Ref<'a, {p}>>{E}"),
                    format!("Ok(self.view.dynamic({off})?.map({n}Ref::from_view))"),
                )
            }
        }
        Type::Union(u) => {
            let n = cx.union_name(*u);
            (
                format!("{R}{n}Ref<'a>{E}"),
                format!("{n}Ref::read(&self.view, {off})"),
            )
        }
        Type::Slice {
            string: Some(StringKind::Utf8),
            ..
        } => (format!("{R}{p}::Text{E}"), format!("self.view.utf8({off})")),
        Type::Slice {
            string: Some(StringKind::Utf16),
            ..
        } => (format!("{R}String{E}"), format!("self.view.utf16({off})")),
        Type::Slice { elem, layout, .. } => match (&**elem, layout) {
            (Type::Scalar(sc), _) => (
                format!("{R}{p}::Column<{}>{E}", storage(*sc)),
                format!("self.view.scalars::<{}>({off})", storage(*sc)),
            ),
            (Type::Enum(e), _) => {
                let r = cx.s.enums[*e].repr.name();
                (
                    format!("{R}{p}::Column<{r}>{E}"),
                    format!("self.view.scalars::<{r}>({off})"),
                )
            }
            (Type::Struct(id), SliceLayout::Soa(_)) => {
                let n = cx.struct_name(*id);
                (
                    format!("{R}{n}Soa<'a>{E}"),
                    format!("self.view.soa({off}).map({n}Soa::from_view)"),
                )
            }
            (Type::Struct(id), _) => {
                let n = cx.struct_name(*id);
                let st = &cx.s.structs[*id];
                let evolving = st.kind == StructKind::Dynamic;
                (
                    format!("{R}{n}Aos<'a, {p}>{E}"),
                    format!(
                        "self.view.aos({off}, {}, {evolving}).map({n}Aos::from_view)",
                        st.size
                    ),
                )
            }
            (Type::Union(u), layout) => {
                let n = cx.union_name(*u);
                let tag = cx.s.unions[*u].tag.name();
                match layout {
                    SliceLayout::UnionAos => (
                        format!("{R}{n}Aos<'a>{E}"),
                        format!("self.view.aos({off}, 8, false).map({n}Aos::from_view)"),
                    ),
                    SliceLayout::BoVoA => (
                        format!("{R}{n}Bovoa<'a>{E}"),
                        format!("self.view.variant_table({off}).map({n}Bovoa::from_table)"),
                    ),
                    SliceLayout::BoVoS => (
                        format!("{R}{n}Bovos<'a>{E}"),
                        format!("self.view.variant_table({off}).map({n}Bovos::from_table)"),
                    ),
                    _ => (
                        format!("{R}{n}Soa<'a>{E}"),
                        format!(
                            "let (tags, ptrs) = self.view.union_soa::<{tag}>({off})?;\n        Ok({n}Soa::new(self.view, tags, ptrs))"
                        ),
                    ),
                }
            }
            _ => unreachable!("slices of arrays are rejected by the resolver (E0012)"),
        },
    }
}

/// Accessor name of a SoA column: the path's field names joined by `_`.
pub(super) fn column_name(c: &SoaColumn) -> String {
    ident(&c.names.join("_"))
}

pub(super) fn emit_soa(cx: &Cx<'_>, id: usize) -> String {
    let name = cx.struct_name(id);
    let mut out = format!(
        "/// A struct-of-arrays of `{}`: one zero-copy column per flattened field.\n\
         #[derive(Clone, Copy, Debug)]\n\
         pub struct {name}Soa<'a> {{\n    soa: rt::SoaView<'a>,\n}}\n\n\
         impl<'a> {name}Soa<'a> {{\n\
         \x20   pub fn from_view(soa: rt::SoaView<'a>) -> Self {{\n        Self {{ soa }}\n    }}\n\n\
         \x20   /// Number of items.\n    pub fn len(&self) -> usize {{\n        self.soa.len()\n    }}\n\n\
         \x20   pub fn is_empty(&self) -> bool {{\n        self.soa.is_empty()\n    }}\n",
        cx.s.structs[id].name
    );
    if !cx.s.has_varlen(id) {
        // Named once per item: each resizable field of this item refers to it, so the
        // code does not grow by a column list per field.
        let cols: Vec<String> =
            cx.s.soa_columns(id)
                .iter()
                .map(|c| format!("({:#010x}, {})", c.hash, c.item_bytes()))
                .collect();
        out += &format!(
            "\n    /// `(hash, bytes per item)` of every column, for in-place resizes.\n\
             \x20   pub const COLUMNS: &'static [(u32, usize)] = &[{}];\n",
            cols.join(", ")
        );
    }
    for c in cx.s.soa_columns(id) {
        if c.varlen {
            out += &var_accessor(c);
            continue;
        }
        let st = storage(c.scalar);
        let per = if c.per_item > 1 {
            format!(" ({} values per item)", c.per_item)
        } else {
            String::new()
        };
        out += &format!(
            "\n    /// Column `{}`{per}, path `{:?}`, hash `{:#010x}`.\n\
             \x20   pub fn {}(&self) -> {R}rt::Column<'a, {st}>{E} {{\n\
             \x20       self.soa.column::<{st}>({:#010x}, {})\n    }}\n",
            c.names.join("."),
            c.path,
            c.hash,
            column_name(c),
            c.hash,
            c.per_item
        );
    }
    out += "}\n";
    out
}

/// A variable-length column: its reader type and the `SoaView` call that opens it.
pub(super) fn var_column_type(c: &SoaColumn) -> (String, String) {
    let st = storage(c.scalar);
    match c.string {
        Some(StringKind::Utf8) => ("rt::StrColumn<'a>".into(), "utf8_column".into()),
        Some(StringKind::Utf16) => ("rt::Utf16Column<'a>".into(), "utf16_column".into()),
        None => (
            format!("rt::VarColumn<'a, {st}>"),
            format!("var_column::<{st}>"),
        ),
    }
}

fn var_accessor(c: &SoaColumn) -> String {
    let (ty, open) = var_column_type(c);
    format!(
        "\n    /// Column `{}` (variable length: offsets + values), path `{:?}`, hash `{:#010x}`.\n\
         \x20   pub fn {}(&self) -> {R}{ty}{E} {{\n\
         \x20       self.soa.{open}({:#010x})\n    }}\n",
        c.names.join("."),
        c.path,
        c.hash,
        column_name(c),
        c.hash,
    )
}

pub(super) fn emit_aos(cx: &Cx<'_>, id: usize) -> String {
    let name = cx.struct_name(id);
    let p = &cx.source;
    format!(
        "/// An array of `{}` stored item after item (in a message at any [`rt::Source`]).\n\
         #[derive(Clone, Copy, Debug)]\n\
         pub struct {name}Aos<'a, {p} = &'a [u8]> {{\n    aos: rt::AosView<'a, {p}>,\n}}\n\n\
         impl<'a, {p}: rt::Source<'a>> {name}Aos<'a, {p}> {{\n\
         \x20   pub fn from_view(aos: rt::AosView<'a, {p}>) -> Self {{\n        Self {{ aos }}\n    }}\n\n\
         \x20   /// Number of items.\n    pub fn len(&self) -> usize {{\n        self.aos.len()\n    }}\n\n\
         \x20   pub fn is_empty(&self) -> bool {{\n        self.aos.is_empty()\n    }}\n\n\
         \x20   /// Item `i`, or `None` past the end.\n\
         \x20   pub fn get(&self, i: usize) -> Option<{name}Ref<'a, {p}>> {{\n        self.aos.get(i).map({name}Ref::from_view)\n    }}\n\n\
         \x20   pub fn iter(&self) -> impl Iterator<Item = {name}Ref<'a, {p}>> + 'a {{\n\
         \x20       let aos = self.aos;\n        (0..aos.len()).filter_map(move |i| aos.get(i).map({name}Ref::from_view))\n    }}\n}}\n",
        cx.s.structs[id].name
    )
}
