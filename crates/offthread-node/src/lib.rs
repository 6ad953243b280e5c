//! Node.js binding for offthread (napi-rs v3). Thin by design: parse arguments →
//! call the core crates → map errors to stable codes. The public API, validation of
//! JS values and docs live in the TS package (`packages/offthread`).

mod error;
mod ffi;
mod pi;
mod runtime;

pub use error::error_codes;
