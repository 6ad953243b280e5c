//! The parse tree, close to the source and carrying spans for diagnostics.

use super::diag::Span;

#[derive(Clone, Debug)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Int {
    pub value: u64,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum TypeExpr {
    /// A scalar (`u32`) or a declared name.
    Named(Ident),
    /// `[N]T`
    Fixed {
        len: Int,
        elem: Box<TypeExpr>,
        span: Span,
    },
    /// `[]T`
    Slice { elem: Box<TypeExpr>, span: Span },
}

impl TypeExpr {
    pub fn span(&self) -> Span {
        match self {
            TypeExpr::Named(i) => i.span,
            TypeExpr::Fixed { span, .. } | TypeExpr::Slice { span, .. } => *span,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Field {
    pub name: Ident,
    pub ty: TypeExpr,
    pub annotations: Vec<Ident>,
}

#[derive(Clone, Debug)]
pub struct StructDecl {
    pub name: Ident,
    pub options: Vec<Ident>,
    pub fields: Vec<Field>,
}

#[derive(Clone, Debug)]
pub struct EnumVariant {
    pub name: Ident,
    pub value: Int,
}

#[derive(Clone, Debug)]
pub struct EnumDecl {
    pub name: Ident,
    pub options: Vec<Ident>,
    pub variants: Vec<EnumVariant>,
}

#[derive(Clone, Debug)]
pub struct UnionVariant {
    pub name: Ident,
    pub ty: TypeExpr,
    pub tag: Option<Int>,
}

#[derive(Clone, Debug)]
pub struct UnionDecl {
    pub name: Ident,
    pub options: Vec<Ident>,
    pub variants: Vec<UnionVariant>,
}

/// `name: T @ mem`, `T @ mem` or `T`: without a name the compiler names it
/// (`input`/`output`); without a memory it travels through the guest's own memory.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: Option<Ident>,
    pub ty: TypeExpr,
    pub memory: Option<Ident>,
}

#[derive(Clone, Debug)]
pub enum Member {
    /// `name: memory (import: read, export: write, 64);`
    Memory {
        name: Ident,
        import: Ident,
        export: Ident,
        pages: Int,
    },
    /// `name: fn(a: T @ mem) (r: U @ mem);` or `name: (T @ mem) -> (U @ mem);`
    Fn {
        name: Ident,
        params: Vec<Param>,
        results: Vec<Param>,
    },
}

impl Member {
    pub fn name(&self) -> &Ident {
        match self {
            Member::Memory { name, .. } | Member::Fn { name, .. } => name,
        }
    }
}

#[derive(Clone, Debug)]
pub struct InterfaceDecl {
    pub name: Ident,
    pub options: Vec<Ident>,
    pub members: Vec<Member>,
}

#[derive(Clone, Debug)]
pub enum Item {
    Struct(StructDecl),
    Enum(EnumDecl),
    Union(UnionDecl),
    Interface(InterfaceDecl),
}

impl Item {
    pub fn name(&self) -> &Ident {
        match self {
            Item::Struct(d) => &d.name,
            Item::Enum(d) => &d.name,
            Item::Union(d) => &d.name,
            Item::Interface(d) => &d.name,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Schema {
    pub items: Vec<Item>,
}
