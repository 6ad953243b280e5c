//! How a binding calls a kernel it knows only by name: the kernel registry's shapes.
//!
//! A registered kernel takes one input (a string's UTF-8 or bytes) and up to three JS
//! numbers, checks them itself (its `XOptions::from_…` constructor: the one Rust check
//! of each argument), and returns a number, a text or bytes. A kernel with two inputs
//! takes them concatenated, the first one's length among its numbers (`md5.iterate`:
//! the start digest, then the text). The napi binding, the C ABI
//! of the wasm build and the TS package call every registered kernel through one generic
//! entry each, so adding a kernel adds no code to them.

use crate::{Interrupt, KernelError};

/// The arguments of one call.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// A string's UTF-8 or the caller's bytes (empty when the kernel takes none). A job
    /// on a pool reads a copy, or shared memory that cannot be detached.
    pub input: &'a [u8],
    /// Numbers, in the order the kernel documents; unused ones are 0.
    pub nums: [f64; 3],
}

/// What a registered kernel returns.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    Number(f64),
    Text(String),
    Bytes(Vec<u8>),
}

/// One registered kernel: its name as JS spells it (`"sha256.hex"`) and its entry.
#[derive(Debug, Clone, Copy)]
pub struct KernelDef {
    pub name: &'static str,
    /// Checks the call's arguments, runs, and checks `interrupt` between chunks if long.
    pub run: fn(&Call<'_>, &dyn Interrupt) -> Result<Output, KernelError>,
}

/// The kernel at `index` of `table`, or `ERR_INVALID_ARG`.
pub fn lookup(table: &'static [KernelDef], index: u32) -> Result<&'static KernelDef, KernelError> {
    table.get(index as usize).ok_or_else(|| {
        KernelError::new(
            crate::ErrorCode::InvalidArgument,
            format!(
                "no kernel number {index} (the registry holds {})",
                table.len()
            ),
        )
    })
}
