//! QR exports. The text is UTF-8 written into linear memory (see `abi`);
//! `ecc` is 0 = L, 1 = M, 2 = Q, 3 = H; `size` and `margin` as in
//! `offthread_kernels::qr::QrOptions` (JS defaults: M, 128, 4).
//!
//! Each export returns the output's length in bytes and leaves the output in a
//! buffer owned by the module, readable at `qr_last_ptr()` until the next `qr_*`
//! call (copy it out, e.g. `memory.buffer.slice(ptr, ptr + len)`). Negative
//! returns are errors (table in `abi`): −6 text not UTF-8, −7 text too long (the
//! message at `last_error_ptr()` gives the capacity), −9 bad ecc/size/margin.

use std::cell::RefCell;

use offthread_kernels::KernelError;
use offthread_kernels::qr::{self, Ecc, QrEncoder, QrOptions};

use crate::abi::{fail, input, null_pointer, ok_len};

#[derive(Default)]
struct State {
    encoder: QrEncoder,
    svg: String,
    last: (usize, usize),
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

#[derive(Clone, Copy)]
enum Output {
    Png,
    DataUrl,
    Svg,
}

/// # Safety
/// `text` points to `text_len` readable bytes (or is null with length 0).
unsafe fn run(
    text: *const u8,
    text_len: usize,
    ecc: u32,
    size: u32,
    margin: u32,
    what: Output,
) -> i32 {
    // SAFETY: forwarded from the caller.
    let Some(bytes) = (unsafe { input(text, text_len) }) else {
        return null_pointer();
    };
    let (text, ecc) = match qr::text_from_utf8(bytes).and_then(|t| Ok((t, Ecc::from_index(ecc)?))) {
        Ok(v) => v,
        Err(e) => return fail(&e),
    };
    let opts = QrOptions {
        text,
        ecc,
        size,
        margin,
    };
    STATE.with(|s| {
        let state = &mut *s.borrow_mut();
        let out: Result<&[u8], KernelError> = match what {
            Output::Png => state.encoder.png(opts),
            Output::DataUrl => state.encoder.data_url(opts).map(str::as_bytes),
            Output::Svg => qr::svg(opts).map(|svg| {
                state.svg = svg;
                state.svg.as_bytes()
            }),
        };
        match out {
            Ok(bytes) => {
                state.last = (bytes.as_ptr() as usize, bytes.len());
                ok_len(bytes.len())
            }
            Err(e) => fail(&e),
        }
    })
}

/// The PNG file; returns its length.
///
/// # Safety
/// `text` points to `text_len` readable bytes (or is null with length 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qr_png(
    text: *const u8,
    text_len: usize,
    ecc: u32,
    size: u32,
    margin: u32,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { run(text, text_len, ecc, size, margin, Output::Png) }
}

/// `data:image/png;base64,…` (ASCII); returns its length.
///
/// # Safety
/// As [`qr_png`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qr_data_url(
    text: *const u8,
    text_len: usize,
    ecc: u32,
    size: u32,
    margin: u32,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { run(text, text_len, ecc, size, margin, Output::DataUrl) }
}

/// The SVG document (UTF-8); returns its length.
///
/// # Safety
/// As [`qr_png`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qr_svg(
    text: *const u8,
    text_len: usize,
    ecc: u32,
    size: u32,
    margin: u32,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { run(text, text_len, ecc, size, margin, Output::Svg) }
}

/// Where the last successful `qr_*` output starts (valid until the next `qr_*`
/// call); null before the first.
#[unsafe(no_mangle)]
pub extern "C" fn qr_last_ptr() -> *const u8 {
    STATE.with(|s| s.borrow().last.0 as *const u8)
}

/// The last successful `qr_*` output's length (what that call returned).
#[unsafe(no_mangle)]
pub extern "C" fn qr_last_len() -> usize {
    STATE.with(|s| s.borrow().last.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{alloc, dealloc, error_return, last_error_len, last_error_ptr};
    use offthread_kernels::ErrorCode;

    fn last_output() -> Vec<u8> {
        // SAFETY: the module's own output buffer, valid until the next qr_* call.
        unsafe { std::slice::from_raw_parts(qr_last_ptr(), qr_last_len()).to_vec() }
    }

    fn call(f: unsafe extern "C" fn(*const u8, usize, u32, u32, u32) -> i32, text: &[u8]) -> i32 {
        // Through alloc/dealloc, as JS does.
        let p = alloc(text.len());
        // SAFETY: `p` has `text.len()` bytes; freed with the same length.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), p, text.len());
            let r = f(p, text.len(), 1, 128, 4);
            dealloc(p, text.len());
            r
        }
    }

    #[test]
    fn outputs_match_the_kernel() {
        let text = "héllo wörld ✓ 日本";
        let o = QrOptions::new(text);
        let n = call(qr_png, text.as_bytes());
        assert_eq!(n as usize, qr_last_len());
        assert_eq!(last_output(), qr::png(o).unwrap());
        call(qr_data_url, text.as_bytes());
        assert_eq!(last_output(), qr::data_url(o).unwrap().into_bytes());
        call(qr_svg, text.as_bytes());
        assert_eq!(last_output(), qr::svg(o).unwrap().into_bytes());
        assert!(call(qr_png, b"") > 0, "empty text is a valid code");
    }

    #[test]
    fn errors() {
        assert_eq!(call(qr_png, b"\xff\xfe"), -6);
        let long = vec![b'a'; 3000];
        assert_eq!(
            call(qr_data_url, &long),
            error_return(ErrorCode::TextTooLong)
        );
        // SAFETY: the module's own message buffer.
        let msg = unsafe { std::slice::from_raw_parts(last_error_ptr(), last_error_len()) };
        let msg = std::str::from_utf8(msg).unwrap();
        assert!(
            msg.starts_with("ERR_TEXT_TOO_LONG: ") && msg.contains("2331"),
            "{msg}"
        );
        // SAFETY: valid text.
        unsafe {
            assert_eq!(qr_png(b"x".as_ptr(), 1, 4, 128, 4), -9);
            assert_eq!(qr_png(b"x".as_ptr(), 1, 1, 0, 4), -9);
            assert_eq!(qr_png(b"x".as_ptr(), 1, 1, 128, 1000), -9);
            assert_eq!(qr_png(std::ptr::null(), 1, 1, 128, 4), -3);
        }
    }
}
