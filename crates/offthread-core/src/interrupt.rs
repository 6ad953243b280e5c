use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::{ErrorCode, KernelError};

/// Checked by long kernels between chunks. Returning an error stops the kernel with
/// that error (`ERR_ABORTED`, `ERR_TIMEOUT`, …).
pub trait Interrupt: Sync {
    fn check(&self) -> Result<(), KernelError>;
}

/// Never interrupts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Never;

impl Interrupt for Never {
    #[inline]
    fn check(&self) -> Result<(), KernelError> {
        Ok(())
    }
}

impl Interrupt for AtomicBool {
    #[inline]
    fn check(&self) -> Result<(), KernelError> {
        if self.load(Ordering::Relaxed) {
            Err(KernelError::new(
                ErrorCode::Aborted,
                "the operation was aborted",
            ))
        } else {
            Ok(())
        }
    }
}

/// Interrupts once `at` has passed.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    pub at: Instant,
}

impl Interrupt for Deadline {
    fn check(&self) -> Result<(), KernelError> {
        if Instant::now() >= self.at {
            Err(KernelError::new(
                ErrorCode::Timeout,
                "the operation timed out",
            ))
        } else {
            Ok(())
        }
    }
}

impl<A: Interrupt, B: Interrupt> Interrupt for (A, B) {
    fn check(&self) -> Result<(), KernelError> {
        self.0.check()?;
        self.1.check()
    }
}

impl<T: Interrupt + ?Sized> Interrupt for &T {
    fn check(&self) -> Result<(), KernelError> {
        (**self).check()
    }
}

impl<T: Interrupt> Interrupt for Option<T> {
    fn check(&self) -> Result<(), KernelError> {
        self.as_ref().map_or(Ok(()), Interrupt::check)
    }
}
