//! The one C-ABI entry for every kernel of the registry (`offthread_kernels::KERNELS`).
//!
//! `kernel_names()` writes the names, one per line, to the output buffer and returns
//! their length; a kernel's line number is its number. `kernel_call(kernel, input, len,
//! a, b, c)` runs one on `len` bytes at `input` (see `abi` for memory) and returns the
//! output's kind: 0 a number (`kernel_out_number()`), 1 UTF-8 text, 2 bytes (both at
//! `kernel_out_ptr()`, `kernel_out_len()` bytes, valid until the next call); negative
//! returns are errors (table in `abi`). A new kernel adds nothing here.

use std::cell::RefCell;

use offthread_kernels::{Call, KERNELS, Never, Output, registry};

use crate::abi::{fail, input, null_pointer, ok_len};

#[derive(Default)]
struct Out {
    number: f64,
    bytes: Vec<u8>,
}

thread_local! {
    static OUT: RefCell<Out> = RefCell::new(Out::default());
}

/// The kernels' names, `\n`-separated, at `kernel_out_ptr()`; returns their length.
#[unsafe(no_mangle)]
pub extern "C" fn kernel_names() -> i32 {
    let names = KERNELS
        .iter()
        .map(|k| k.name)
        .collect::<Vec<_>>()
        .join("\n");
    OUT.with_borrow_mut(|o| {
        o.bytes = names.into_bytes();
        ok_len(o.bytes.len())
    })
}

/// Runs kernel `kernel` (its line in `kernel_names`); returns the output's kind.
///
/// # Safety
/// `input` points to `len` readable bytes (or is null with length 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kernel_call(
    kernel: u32,
    input_ptr: *const u8,
    len: usize,
    a: f64,
    b: f64,
    c: f64,
) -> i32 {
    // SAFETY: forwarded from the caller.
    let Some(bytes) = (unsafe { input(input_ptr, len) }) else {
        return null_pointer();
    };
    let run = registry::lookup(KERNELS, kernel).and_then(|def| {
        let call = Call {
            input: bytes,
            nums: [a, b, c],
        };
        (def.run)(&call, &Never)
    });
    OUT.with_borrow_mut(|o| match run {
        Ok(Output::Number(x)) => {
            o.number = x;
            o.bytes.clear();
            0
        }
        Ok(Output::Text(s)) => {
            o.bytes = s.into_bytes();
            1
        }
        Ok(Output::Bytes(v)) => {
            o.bytes = v;
            2
        }
        Err(e) => fail(&e),
    })
}

/// Where the last output's bytes start.
#[unsafe(no_mangle)]
pub extern "C" fn kernel_out_ptr() -> *const u8 {
    OUT.with_borrow(|o| o.bytes.as_ptr())
}

/// The last output's length in bytes.
#[unsafe(no_mangle)]
pub extern "C" fn kernel_out_len() -> usize {
    OUT.with_borrow(|o| o.bytes.len())
}

/// The last output when it was a number.
#[unsafe(no_mangle)]
pub extern "C" fn kernel_out_number() -> f64 {
    OUT.with_borrow(|o| o.number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::error_return;
    use offthread_kernels::ErrorCode;

    fn out() -> Vec<u8> {
        // SAFETY: the module's own output buffer.
        unsafe { std::slice::from_raw_parts(kernel_out_ptr(), kernel_out_len()).to_vec() }
    }

    #[test]
    fn every_kernel_is_listed_and_callable_by_its_line() {
        let n = kernel_names();
        let names = String::from_utf8(out()).unwrap();
        assert_eq!(n as usize, names.len());
        let index = names.lines().position(|l| l == "sha256.hex").unwrap() as u32;
        // SAFETY: a valid buffer.
        let kind = unsafe { kernel_call(index, b"abc".as_ptr(), 3, 0.0, 0.0, 0.0) };
        assert_eq!(kind, 1);
        assert_eq!(
            out(),
            b"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        // SAFETY: a null pointer with length 0 is the empty input.
        let unknown = unsafe { kernel_call(u32::MAX, std::ptr::null(), 0, 0.0, 0.0, 0.0) };
        assert_eq!(unknown, error_return(ErrorCode::InvalidArgument));
    }
}
