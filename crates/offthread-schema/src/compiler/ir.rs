//! The one IR every emitter reads: names resolved, options checked, every field's
//! offset and every SoA column's hash computed.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
    Bool,
}

impl Scalar {
    pub const ALL: [Scalar; 11] = [
        Scalar::U8,
        Scalar::U16,
        Scalar::U32,
        Scalar::U64,
        Scalar::I8,
        Scalar::I16,
        Scalar::I32,
        Scalar::I64,
        Scalar::F32,
        Scalar::F64,
        Scalar::Bool,
    ];

    /// The schema spelling (`u32`), also the Rust type for all but `bool`.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::Bool => "bool",
        }
    }

    pub fn from_name(s: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|k| k.name() == s)
    }

    pub fn size(self) -> usize {
        match self {
            Scalar::U8 | Scalar::I8 | Scalar::Bool => 1,
            Scalar::U16 | Scalar::I16 => 2,
            Scalar::U32 | Scalar::I32 | Scalar::F32 => 4,
            Scalar::U64 | Scalar::I64 | Scalar::F64 => 8,
        }
    }

    /// The stored scalar: `bool` is a `u8` on the wire.
    pub fn storage(self) -> Scalar {
        if self == Scalar::Bool {
            Scalar::U8
        } else {
            self
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StructKind {
    /// Fixed layout, embedded in its parent; never evolves.
    Inline,
    /// Header with its size; may gain fields at the end; referenced by offset.
    Dynamic,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StringKind {
    Utf8,
    Utf16,
}

/// How a slice lays out its items.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SliceLayout {
    /// Scalars or enums, one after another.
    Scalars,
    /// Structs one after another, `stride` bytes apart.
    Aos,
    /// Structs split into one column per flattened scalar field.
    Soa(std::sync::Arc<[SoaColumn]>),
    /// Unions as (tag, offset) pairs, 8 bytes each.
    UnionAos,
    /// Unions as a tag column and an offset column.
    UnionSoa,
    /// One AoS array per variant (insertion order not kept).
    BoVoA,
    /// One SoA array per variant (insertion order not kept).
    BoVoS,
}

/// One column of a SoA array: a scalar (or fixed array of scalars) leaf of the
/// item struct, flattened through nested inline structs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoaColumn {
    /// Declaration indices from the item struct down to the leaf.
    pub path: Vec<u32>,
    /// Field names along the path (`pos`, `x`).
    pub names: Vec<String>,
    /// The leaf's scalar as declared (`bool` stays `bool`; storage is `u8`).
    pub scalar: Scalar,
    /// The leaf's enum, if it is one (then `scalar` is its repr).
    pub enum_id: Option<usize>,
    /// Values per item: 1, or N for a `[N]T` leaf (1 for a variable-length leaf).
    pub per_item: usize,
    /// A `[N]T` leaf: its items are arrays of `per_item` values, even when N = 1.
    pub fixed: bool,
    pub hash: u32,
    /// A `[]T` leaf: an offsets column plus a values area of `scalar` elements.
    pub varlen: bool,
    /// The text a variable-length `#string` leaf holds.
    pub string: Option<StringKind>,
}

impl SoaColumn {
    /// Bytes per item in this column (per element, for a variable-length one).
    pub fn item_bytes(&self) -> usize {
        self.scalar.size() * self.per_item
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    Scalar(Scalar),
    Enum(usize),
    /// Inline structs are embedded; dynamic ones are stored as a 4-byte offset.
    Struct(usize),
    /// 8 bytes: tag (u8/u16/u32) at +0, offset at +4.
    Union(usize),
    /// `[N]T` of a scalar or enum.
    Fixed {
        len: usize,
        elem: Box<Type>,
    },
    /// `[]T`: a 4-byte offset to an array header.
    Slice {
        elem: Box<Type>,
        layout: SliceLayout,
        string: Option<StringKind>,
    },
}

#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    pub ty: Type,
    /// Byte offset inside the struct (dynamic structs count their 4-byte header).
    pub offset: usize,
    pub size: usize,
}

#[derive(Clone, Debug)]
pub struct Struct {
    pub name: String,
    pub kind: StructKind,
    pub fields: Vec<Field>,
    /// Where the last field ends (header included for dynamic structs).
    pub used: usize,
    /// `used` rounded up to 8: the struct's size on the wire.
    pub size: usize,
    /// The flattened columns, when the struct is the item of a SoA array (a `#soa`
    /// slice, or a variant of a `#bovos` union slice).
    pub soa: Option<std::sync::Arc<[SoaColumn]>>,
}

#[derive(Clone, Debug)]
pub struct Enum {
    pub name: String,
    pub repr: Scalar,
    pub variants: Vec<(String, u64)>,
}

#[derive(Clone, Debug)]
pub struct UnionVariant {
    pub name: String,
    /// The struct the variant holds.
    pub struct_id: usize,
    pub tag: u32,
}

#[derive(Clone, Debug)]
pub struct Union {
    pub name: String,
    pub tag: Scalar,
    pub variants: Vec<UnionVariant>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    None,
    Read,
    Write,
    ReadWrite,
}

impl Access {
    pub fn name(self) -> &'static str {
        match self {
            Access::None => "none",
            Access::Read => "read",
            Access::Write => "write",
            Access::ReadWrite => "readwrite",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// The host or the importer picks one exporter.
    Direct,
    /// One call reaches every exporter; results come back in order.
    Fanout,
    /// One shared instance; calls are serialised (`single` or `singleton`).
    Singleton,
    /// N instances; calls are spread over them.
    Pool,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Direct => "direct",
            Pattern::Fanout => "fanout",
            Pattern::Singleton => "singleton",
            Pattern::Pool => "pool",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Memory {
    pub name: String,
    pub import: Access,
    pub export: Access,
    /// Maximum size in 64 KiB pages.
    pub pages: u32,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub ty: Type,
    /// Index into the interface's memories; `None`: the message travels through the
    /// callee's own memory (copied in by the host).
    pub memory: Option<usize>,
}

#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub params: Vec<Param>,
    pub results: Vec<Param>,
}

#[derive(Clone, Debug)]
pub struct Interface {
    pub name: String,
    pub pattern: Pattern,
    pub memories: Vec<Memory>,
    pub functions: Vec<Function>,
}

/// A declaration, in source order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemRef {
    Struct(usize),
    Enum(usize),
    Union(usize),
    Interface(usize),
}

#[derive(Clone, Debug, Default)]
pub struct Schema {
    pub structs: Vec<Struct>,
    pub enums: Vec<Enum>,
    pub unions: Vec<Union>,
    pub interfaces: Vec<Interface>,
    pub order: Vec<ItemRef>,
    /// The name of each declaration in `order`, where diagnostics about its generated
    /// code point (E0021).
    pub spans: Vec<super::diag::Span>,
}
