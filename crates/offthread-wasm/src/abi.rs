//! Memory and errors shared by the pointer-taking exports (the registry's `kernel_call`).
//!
//! **Memory.** JS asks for `len` bytes with `alloc(len)`, writes its input there
//! (through a `Uint8Array` over `memory.buffer`, re-created after any call that may
//! grow memory), passes the pointer and length to a kernel export, and gives the
//! block back with `dealloc(ptr, len)` (the same `len`). `alloc(0)` returns a
//! non-null pointer that needs no `dealloc`; a null return means out of memory.
//!
//! **Errors.** Every pointer-taking export returns a non-negative `i32` on success
//! and `-(1 + i)` on failure, where `i` is the index of the error's code in
//! `ErrorCode::ALL`, which only ever grows at the end:
//!
//! | return | code |
//! |---|---|
//! | −1 | `ERR_INVALID_SAMPLES` |
//! | −2 | `ERR_INVALID_SEED` |
//! | −3 | `ERR_INVALID_ARG` (e.g. a null pointer with a non-zero length) |
//! | −4 | `ERR_ABORTED` (the host's `interrupted()` said stop: see `registry`) |
//! | −5 | `ERR_TIMEOUT` |
//! | −6 | `ERR_INVALID_TEXT` (QR text that is not UTF-8) |
//! | −7 | `ERR_TEXT_TOO_LONG` |
//! | −8 | `ERR_INVALID_ROUNDS` |
//! | −9 | `ERR_INVALID_QR_OPTIONS` |
//! | −10 | `ERR_INVALID_BUFFER` |
//!
//! The failed call's message — e.g. the QR capacity — is readable as UTF-8 at
//! `last_error_ptr()`, length `last_error_len()`, until the next failing call.

use std::alloc::{Layout, alloc as sys_alloc, dealloc as sys_dealloc};
use std::cell::RefCell;
use std::ptr::NonNull;

use offthread_kernels::{ErrorCode, KernelError};

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Records `e`'s message and returns its negative code.
pub(crate) fn fail(e: &KernelError) -> i32 {
    LAST_ERROR.with(|m| {
        let mut m = m.borrow_mut();
        m.clear();
        m.push_str(e.code.as_str());
        m.push_str(": ");
        m.push_str(&e.message);
    });
    e.code.wasm_return()
}

/// A length as a non-negative `i32` return value.
pub(crate) fn ok_len(len: usize) -> i32 {
    i32::try_from(len).unwrap_or_else(|_| {
        fail(&KernelError::new(
            ErrorCode::InvalidArgument,
            "output larger than 2 GiB",
        ))
    })
}

/// Borrows `len` bytes at `ptr`; `None` for a null pointer with a non-zero length.
///
/// # Safety
/// Unless null, `ptr` must point to `len` readable bytes that stay unchanged for
/// `'a`.
pub(crate) unsafe fn input<'a>(ptr: *const u8, len: usize) -> Option<&'a [u8]> {
    if len == 0 {
        Some(&[])
    } else if ptr.is_null() {
        None
    } else {
        // SAFETY: the caller guarantees `len` readable bytes at `ptr`.
        Some(unsafe { std::slice::from_raw_parts(ptr, len) })
    }
}

pub(crate) fn null_pointer() -> i32 {
    fail(&KernelError::new(
        ErrorCode::InvalidArgument,
        "null pointer with a non-zero length",
    ))
}

/// `len` bytes of linear memory for the caller to fill; null if out of memory.
#[unsafe(no_mangle)]
pub extern "C" fn alloc(len: usize) -> *mut u8 {
    if len == 0 {
        return NonNull::dangling().as_ptr();
    }
    match Layout::from_size_align(len, 1) {
        // SAFETY: the layout has a non-zero size.
        Ok(layout) => unsafe { sys_alloc(layout) },
        Err(_) => std::ptr::null_mut(),
    }
}

/// Frees a block from `alloc`. Null pointers and `len = 0` are ignored.
///
/// # Safety
/// `ptr` must come from `alloc(len)` with the same `len`, and not be freed twice.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dealloc(ptr: *mut u8, len: usize) {
    if ptr.is_null() || len == 0 {
        return;
    }
    if let Ok(layout) = Layout::from_size_align(len, 1) {
        // SAFETY: the caller guarantees `ptr` came from `alloc(len)`.
        unsafe { sys_dealloc(ptr, layout) }
    }
}

/// Where the last failure's message starts (UTF-8, `"ERR_…: message"`).
#[unsafe(no_mangle)]
pub extern "C" fn last_error_ptr() -> *const u8 {
    LAST_ERROR.with(|m| m.borrow().as_ptr())
}

/// The last failure's message length in bytes (0 if none yet).
#[unsafe(no_mangle)]
pub extern "C" fn last_error_len() -> usize {
    LAST_ERROR.with(|m| m.borrow().len())
}
