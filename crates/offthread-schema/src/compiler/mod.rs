//! The schema compiler: [`lexer`] → [`parser`] (AST with spans) → [`ir`] (resolved,
//! validated, laid out) → the emitters in [`crate::emit`]. Errors are
//! [`diag::Diagnostic`]s with stable codes, rendered like rustc's.

pub mod ast;
mod decls;
pub mod diag;
pub mod ir;
mod ir_queries;
mod layout;
pub mod lexer;
pub mod limits;
mod names;
pub mod parser;
mod resolve;

pub use ir_queries::Layouts;
pub use names::{camel_case, pascal_case};

/// Parses, resolves and lays out `source`. On failure, the diagnostics found (at most
/// [`limits::MAX_DIAGNOSTICS`]).
pub fn compile(source: &str) -> Result<ir::Schema, Vec<diag::Diagnostic>> {
    if source.len() > limits::MAX_SOURCE_BYTES {
        return Err(vec![too_long(source)]);
    }
    let ast = parser::parse(source).map_err(|d| vec![d])?;
    resolve::resolve(&ast)
}

/// E0020 at the first character past [`limits::MAX_SOURCE_BYTES`].
fn too_long(source: &str) -> diag::Diagnostic {
    let mut at = limits::MAX_SOURCE_BYTES;
    while !source.is_char_boundary(at) {
        at -= 1;
    }
    let end = at + source[at..].chars().next().map_or(0, char::len_utf8);
    diag::Diagnostic::new(
        "E0020",
        diag::Span::new(at, end),
        format!(
            "the schema is {} bytes, more than {} KiB",
            source.len(),
            limits::MAX_SOURCE_BYTES >> 10
        ),
        "split the schema into several files",
    )
}
