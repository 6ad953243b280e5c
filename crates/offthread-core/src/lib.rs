//! The vocabulary every offthread layer shares, and nothing else: the registry's error
//! codes ([`ErrorCode`]), a kernel's typed failure ([`KernelError`]) and the check a
//! long-running kernel makes between chunks ([`Interrupt`]). The kernels, the pool and
//! both bindings depend on this crate; it depends on nothing, so the pool no longer
//! pulls in the kernels (md-5, fast_qr, png, …) to name an error.

mod error;
mod interrupt;

pub use error::{ErrorCode, KernelError};
pub use interrupt::{Deadline, Interrupt, Never};
