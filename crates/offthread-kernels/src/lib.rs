//! offthread's compute kernels: plain Rust with no FFI, no Node and no WASM knowledge.
//!
//! Each kernel takes a typed options value and returns a `Result<_, KernelError>`.
//! Long kernels take an [`Interrupt`] and check it between chunks, so a pool can
//! cancel them or enforce a deadline.
//!
//! ```
//! use offthread_kernels::{pi, Never};
//! let r = pi::estimate(pi::PiOptions { samples: 100_000, seed: 1 }, pi::Method::Fast, &Never)?;
//! assert_eq!(r.inside, 78_463);
//! # Ok::<(), offthread_kernels::KernelError>(())
//! ```

pub mod layout;
pub mod md5;
pub mod pi;
pub mod qr;
pub mod sha256;
pub mod stats;

// The shared vocabulary lives in offthread-core; re-exported so kernel users need one crate.
pub use offthread_core::registry::{self, Call, KernelDef, Output};
pub use offthread_core::{Deadline, ErrorCode, Interrupt, KernelError, Never};

/// The kernel registry: every kernel the bindings call by name through their one generic
/// entry (napi `kernelCallSync` / `NativePool.submitKernel`, wasm `kernel_call`, TS
/// `registry.ts`). Adding a kernel: its module above, its [`KernelDef`] here (at the end:
/// an index is how a binding names a kernel within one build), its TS facade. See
/// ARCHITECTURE.md, "Adding a kernel".
pub const KERNELS: &[KernelDef] = &[
    sha256::HEX,
    md5::HEX,
    md5::ITERATE,
    pi::RANGE,
    pi::RANGE_REFERENCE,
    qr::DATA_URL,
    qr::PNG,
    qr::SVG,
    stats::TEMPERATURE,
];
