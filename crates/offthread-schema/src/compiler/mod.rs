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
mod names;
pub mod parser;
mod resolve;

pub use names::{camel_case, pascal_case};

/// Parses, resolves and lays out `source`. On failure, every diagnostic found.
pub fn compile(source: &str) -> Result<ir::Schema, Vec<diag::Diagnostic>> {
    let ast = parser::parse(source).map_err(|d| vec![d])?;
    resolve::resolve(&ast)
}
