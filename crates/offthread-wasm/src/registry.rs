//! The one C-ABI entry for every kernel of the registry (`offthread_kernels::KERNELS`).
//!
//! `kernel_names()` writes the names, one per line, to the output buffer and returns
//! their length; a kernel's line number is its number. `kernel_call(kernel, input, len,
//! a, b, c)` runs one on `len` bytes at `input` (see `abi` for memory) and returns the
//! output's kind: 0 a number (`kernel_out_number()`), 1 UTF-8 text, 2 bytes (both at
//! `kernel_out_ptr()`, `kernel_out_len()` bytes, valid until the next call); negative
//! returns are errors (table in `abi`). A new kernel adds nothing here.
//!
//! **Interrupt.** The module imports one function, `offthread.interrupted() -> i32`,
//! which long kernels call between chunks (≈ 1 ms apart): non-zero stops the call with
//! `ERR_ABORTED`. A pool worker answers from its shared-memory cancel flag; a host with
//! nothing to cancel passes `() => 0` (`wasmImports` in the TS client).
//!
//! `pi.range` is this build's f64x2 kernel (`pi_simd`): same counts, faster in V8.

use std::cell::RefCell;

use offthread_kernels::{
    Call, ErrorCode, Interrupt, KERNELS, KernelDef, KernelError, Output, pi, registry,
};

use crate::abi::{fail, input, null_pointer, ok_len};

#[derive(Default)]
struct Out {
    number: f64,
    bytes: Vec<u8>,
}

thread_local! {
    static OUT: RefCell<Out> = RefCell::new(Out::default());
}

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "offthread")]
unsafe extern "C" {
    /// Non-zero once the running call should stop (the host's cancel flag).
    safe fn interrupted() -> i32;
}

// Off wasm (the crate's own tests) the host is this thread's flag.
#[cfg(not(target_arch = "wasm32"))]
thread_local! {
    static HOST_STOP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(not(target_arch = "wasm32"))]
fn interrupted() -> i32 {
    i32::from(HOST_STOP.get())
}

/// The host's cancel flag as the kernels' [`Interrupt`].
struct Host;

impl Interrupt for Host {
    fn check(&self) -> Result<(), KernelError> {
        if interrupted() != 0 {
            Err(KernelError::new(
                ErrorCode::Aborted,
                "the operation was aborted",
            ))
        } else {
            Ok(())
        }
    }
}

/// `pi.range` counted by `pi_simd`: the registry's entry, this build's kernel.
const PI_RANGE: KernelDef = KernelDef {
    name: pi::RANGE.name,
    run: |call, interrupt| pi::run_range(call, crate::pi_simd::count_inside, interrupt),
};

/// Kernel `kernel` of the registry, with this build's own implementations in place.
fn lookup(kernel: u32) -> Result<KernelDef, KernelError> {
    let def = *registry::lookup(KERNELS, kernel)?;
    Ok(if def.name == PI_RANGE.name {
        PI_RANGE
    } else {
        def
    })
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
    let run = lookup(kernel).and_then(|def| {
        let call = Call {
            input: bytes,
            nums: [a, b, c],
        };
        (def.run)(&call, &Host)
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
        assert_eq!(unknown, ErrorCode::InvalidArgument.wasm_return());
    }

    fn index(name: &str) -> u32 {
        KERNELS.iter().position(|k| k.name == name).unwrap() as u32
    }

    fn number(kernel: &str, nums: [f64; 3]) -> i32 {
        // SAFETY: no input.
        unsafe {
            kernel_call(
                index(kernel),
                std::ptr::null(),
                0,
                nums[0],
                nums[1],
                nums[2],
            )
        }
    }

    #[test]
    fn pi_range_is_this_builds_kernel_with_the_registry_counts() {
        for nums in [[0.0, 100_000.0, 1.0], [3e6, 1_234_567.0, -5.0]] {
            assert_eq!(number("pi.range", nums), 0);
            let fast = kernel_out_number();
            assert_eq!(number("pi.rangeReference", nums), 0);
            assert_eq!(fast, kernel_out_number());
        }
        assert_eq!(number("pi.range", [0.0, 100_000.0, 1.0]), 0);
        assert_eq!(kernel_out_number(), 78_463.0);
    }

    #[test]
    fn the_host_flag_stops_a_long_call_with_err_aborted() {
        HOST_STOP.set(true);
        let stopped = number("pi.range", [0.0, 1e12, 1.0]);
        HOST_STOP.set(false);
        assert_eq!(stopped, ErrorCode::Aborted.wasm_return());
        assert_eq!(
            number("pi.range", [0.0, 1000.0, 1.0]),
            0,
            "the next call runs"
        );
    }
}
