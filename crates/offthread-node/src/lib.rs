//! Node.js binding for offthread (napi-rs v3). Thin by design: parse arguments →
//! call the core crates → map errors to stable codes. The public API, validation of
//! JS values and docs live in the TS package (`packages/offthread`).

// napi-derive compiles its registration out of `cfg(test)` builds, so `clippy
// --all-targets` would see every export as dead code there. Tests are in JS.
#![cfg_attr(test, allow(dead_code))]

mod arg;
mod bytes;
mod error;
mod ffi;
mod filters;
mod memory;
mod pi;
mod registry;
mod runtime;
mod stats;
#[cfg(feature = "test-hooks")]
mod test_hooks;

pub use error::error_codes;
