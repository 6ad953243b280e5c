//! MD5 exports. Text is any bytes written into linear memory (see `abi`); digests
//! are 32 lowercase hex ASCII bytes. Returns: bytes written (32, or 0 for the
//! empty d₀), or a negative error (table in `abi`).

use offthread_kernels::Never;
use offthread_kernels::md5::{self, HEX_LEN, Md5IterateOptions};

use crate::abi::{fail, input, null_pointer};

/// # Safety
/// `out` must be null or point to 32 writable bytes.
unsafe fn write_digest(out: *mut u8, digest: Option<[u8; HEX_LEN]>) -> i32 {
    match digest {
        None => 0,
        Some(d) => {
            // SAFETY: the caller guarantees 32 writable bytes at `out`.
            unsafe { std::ptr::copy_nonoverlapping(d.as_ptr(), out, HEX_LEN) };
            HEX_LEN as i32
        }
    }
}

/// hex(MD5(text)) into `out` (32 bytes). Returns 32.
///
/// # Safety
/// `text` points to `text_len` readable bytes (or is null with length 0); `out`
/// points to 32 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn md5_hex(text: *const u8, text_len: usize, out: *mut u8) -> i32 {
    // SAFETY: forwarded from the caller.
    let Some(text) = (unsafe { input(text, text_len) }) else {
        return null_pointer();
    };
    if out.is_null() {
        return null_pointer();
    }
    // SAFETY: `out` is non-null and the caller guarantees 32 bytes there.
    unsafe { write_digest(out, Some(md5::hex(text))) }
}

/// The MD5 loop (docs/kernels.md) from d₀ = "": writes d_N into `out` and returns 32,
/// or returns 0 and writes nothing when `rounds` is 0.
///
/// # Safety
/// As [`md5_hex`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn md5_iterate(
    text: *const u8,
    text_len: usize,
    rounds: f64,
    out: *mut u8,
) -> i32 {
    // SAFETY: forwarded from the caller.
    let Some(text) = (unsafe { input(text, text_len) }) else {
        return null_pointer();
    };
    if out.is_null() {
        return null_pointer();
    }
    let run = Md5IterateOptions::from_f64(text, rounds).and_then(|o| md5::iterate_hex(o, &Never));
    match run {
        // SAFETY: `out` is non-null and the caller guarantees 32 bytes there.
        Ok(d) => unsafe { write_digest(out, d) },
        Err(e) => fail(&e),
    }
}

/// Continues a loop: `io` holds d_k (32 hex bytes) on entry and d_(k+rounds) on
/// return (unchanged for `rounds = 0`). Returns 32. Start from d₀ with
/// [`md5_iterate`].
///
/// # Safety
/// `text` as in [`md5_hex`]; `io` points to 32 readable and writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn md5_iterate_from(
    text: *const u8,
    text_len: usize,
    rounds: f64,
    io: *mut u8,
) -> i32 {
    // SAFETY: forwarded from the caller.
    let Some(text) = (unsafe { input(text, text_len) }) else {
        return null_pointer();
    };
    if io.is_null() {
        return null_pointer();
    }
    let mut start = [0; HEX_LEN];
    // SAFETY: `io` is non-null and the caller guarantees 32 readable bytes.
    unsafe { std::ptr::copy_nonoverlapping(io, start.as_mut_ptr(), HEX_LEN) };
    let run = Md5IterateOptions::from_f64(text, rounds)
        .and_then(|o| md5::iterate_hex_from(o, Some(&start), &Never));
    match run {
        // SAFETY: as above, 32 writable bytes.
        Ok(d) => unsafe { write_digest(io, d) },
        Err(e) => fail(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{error_return, last_error_len, last_error_ptr};
    use offthread_kernels::ErrorCode;
    use offthread_kernels::md5::MAX_ROUNDS;

    fn last_error() -> String {
        // SAFETY: the module's own message buffer.
        let bytes = unsafe { std::slice::from_raw_parts(last_error_ptr(), last_error_len()) };
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[test]
    fn hex_and_iterate() {
        let text = b"abc";
        let mut out = [0u8; 32];
        // SAFETY: valid buffers.
        unsafe {
            assert_eq!(md5_hex(text.as_ptr(), 3, out.as_mut_ptr()), 32);
            assert_eq!(&out, b"900150983cd24fb0d6963f7d28e17f72");
            assert_eq!(md5_iterate(text.as_ptr(), 3, 0.0, out.as_mut_ptr()), 0);
            assert_eq!(md5_iterate(text.as_ptr(), 3, 1000.0, out.as_mut_ptr()), 32);
        }
        let want = md5::iterate(Md5IterateOptions { text, rounds: 1000 }, &Never).unwrap();
        assert_eq!(&out[..], want.as_bytes());
        // 400 + 600 rounds through md5_iterate_from.
        let mut io = [0u8; 32];
        // SAFETY: valid buffers.
        unsafe {
            assert_eq!(md5_iterate(text.as_ptr(), 3, 400.0, io.as_mut_ptr()), 32);
            assert_eq!(
                md5_iterate_from(text.as_ptr(), 3, 600.0, io.as_mut_ptr()),
                32
            );
        }
        assert_eq!(io, out);
        // Empty text through a null pointer.
        // SAFETY: length 0 needs no memory.
        unsafe { assert_eq!(md5_hex(std::ptr::null(), 0, out.as_mut_ptr()), 32) };
        assert_eq!(&out, b"d41d8cd98f00b204e9800998ecf8427e");
    }

    #[test]
    fn errors() {
        let mut out = [0u8; 32];
        let p = out.as_mut_ptr();
        for bad in [-1.0, 0.5, f64::NAN, f64::INFINITY, MAX_ROUNDS as f64 + 1.0] {
            // SAFETY: valid buffers.
            let r = unsafe { md5_iterate(b"x".as_ptr(), 1, bad, p) };
            assert_eq!(r, error_return(ErrorCode::InvalidRounds), "{bad}");
            assert_eq!(r, -8);
            assert!(last_error().starts_with("ERR_INVALID_ROUNDS: "));
        }
        // SAFETY: null pointers are rejected before any access.
        unsafe {
            assert_eq!(md5_iterate(std::ptr::null(), 1, 1.0, p), -3);
            assert_eq!(md5_hex(b"x".as_ptr(), 1, std::ptr::null_mut()), -3);
            assert_eq!(
                md5_iterate_from(b"x".as_ptr(), 1, 1.0, std::ptr::null_mut()),
                -3
            );
        }
    }
}
