//! offthread kernels for WebAssembly (and any C-ABI host): plain `extern "C"`
//! exports, numbers in and out, no wasm-bindgen.
//!
//! Every kernel goes through the registry's one entry (`registry`: `kernel_names`,
//! `kernel_call`); memory and the error table are `abi`'s. Besides: stream filters
//! (`filters`) and the layout experiment (`layout`). Counts travel as f64 (exact below
//! 2^53) so JS never meets BigInt.

pub mod abi;
pub mod filters;
pub mod layout;
pub mod pi_simd;
pub mod registry;
