//! The vocabulary every offthread layer shares, and nothing else: the registry's error
//! codes ([`ErrorCode`]), a kernel's typed failure ([`KernelError`]), the check a
//! long-running kernel makes between chunks ([`Interrupt`]), and the shapes of a call
//! through the kernel registry ([`registry`]). The kernels, the pool and both bindings
//! depend on this crate; it depends on nothing, so the pool does not pull in the kernels
//! (md-5, fast_qr, png, …) to name an error.

mod error;
mod interrupt;
pub mod registry;

pub use error::{ErrorCode, KernelError};
pub use interrupt::{Deadline, Interrupt, Never};
