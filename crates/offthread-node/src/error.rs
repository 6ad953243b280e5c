//! Core errors → JS errors whose `code` is the stable string from docs/errors.md.

use napi_derive::napi;
use offthread_kernels::{ErrorCode, KernelError};

/// A JS error carrying a stable `code` (`err.code` in JS).
pub type CodedError = napi::Error<Code>;
pub type CodedResult<T> = std::result::Result<T, CodedError>;

/// The `code` of a thrown error. napi-rs puts `AsRef<str>` of the status on `err.code`.
#[derive(Debug, Clone, Copy)]
pub struct Code(pub &'static str);

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.0
    }
}

pub const KERNEL_PANIC: &str = "ERR_KERNEL_PANIC";

pub fn coded(code: &'static str, message: impl Into<String>) -> CodedError {
    napi::Error::new(Code(code), message.into())
}

pub fn from_kernel(e: KernelError) -> CodedError {
    coded(e.code.as_str(), e.message)
}

/// Message of a caught panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic payload".to_owned());
    format!("a kernel panicked: {text}")
}

/// Runs `f`, turning a panic into `ERR_KERNEL_PANIC` so no panic crosses the FFI boundary.
pub fn guard<T>(f: impl FnOnce() -> CodedResult<T>) -> CodedResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|p| Err(coded(KERNEL_PANIC, panic_message(&*p))))
}

/// Every code the native layer can raise (checked against docs/errors.md by the tests).
#[napi]
pub fn error_codes() -> Vec<&'static str> {
    ErrorCode::ALL
        .iter()
        .map(|c| c.as_str())
        .chain(offthread_pool::ERROR_CODES.iter().copied())
        .chain([KERNEL_PANIC])
        .collect()
}
