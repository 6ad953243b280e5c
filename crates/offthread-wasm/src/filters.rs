//! Stream filters (crates/offthread-filters) for WASM hosts: a handle per stream, run
//! in place on the calling thread (the TS package calls these for hosts without the
//! native addon). Self-contained error protocol, so the filter codes stay out of the
//! kernels' numeric table: −1 means failure, and `filter_error_ptr/len` hold
//! "CODE: message" (UTF-8) until the next failing call.
//!
//! `filter_new(spec, len)` → handle ≥ 0; `filter_push(h, ptr, len)` and
//! `filter_finish(h)` → output length ≥ 0, the first that many bytes at
//! `filter_out_ptr()` until the next push/finish; `filter_free(h)`.

use std::cell::RefCell;

use offthread_filters::{CLOSED, FilterError, FilterHandle, INVALID_SPEC};

use crate::abi::input;

thread_local! {
    static FILTERS: RefCell<Vec<Option<FilterHandle>>> = const { RefCell::new(Vec::new()) };
    static OUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

fn fail(e: &FilterError) -> i32 {
    ERROR.with(|m| *m.borrow_mut() = format!("{}: {}", e.code, e.message));
    -1
}

fn finish(result: Result<Vec<u8>, FilterError>) -> i32 {
    match result {
        Ok(bytes) => match i32::try_from(bytes.len()) {
            Ok(n) => {
                OUT.with(|o| *o.borrow_mut() = bytes);
                n
            }
            Err(_) => fail(&FilterError::new(
                offthread_filters::TOO_LARGE,
                "output over 2 GiB",
            )),
        },
        Err(e) => fail(&e),
    }
}

fn with_handle(
    handle: i32,
    f: impl FnOnce(&mut FilterHandle) -> Result<Vec<u8>, FilterError>,
) -> Result<Vec<u8>, FilterError> {
    FILTERS.with(|all| {
        let mut all = all.borrow_mut();
        let slot = usize::try_from(handle)
            .ok()
            .and_then(|i| all.get_mut(i))
            .and_then(Option::as_mut);
        match slot {
            Some(h) => f(h),
            None => Err(FilterError::new(CLOSED, format!("no filter {handle}"))),
        }
    })
}

/// Opens a filter from its JSON spec (`len` bytes of UTF-8 at `spec`).
///
/// # Safety
/// `spec` points to `len` readable bytes (or is null with `len` 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn filter_new(spec: *const u8, len: usize) -> i32 {
    // SAFETY: forwarded from the caller.
    let text = unsafe { input(spec, len) }.and_then(|b| std::str::from_utf8(b).ok());
    let Some(text) = text else {
        return fail(&FilterError::new(INVALID_SPEC, "the spec is not UTF-8"));
    };
    match FilterHandle::from_json(text) {
        Ok(h) => FILTERS.with(|all| {
            let mut all = all.borrow_mut();
            let index = match all.iter().position(Option::is_none) {
                Some(i) => {
                    all[i] = Some(h);
                    i
                }
                None => {
                    all.push(Some(h));
                    all.len() - 1
                }
            };
            index as i32
        }),
        Err(e) => fail(&e),
    }
}

/// The next chunk (`len` bytes at `ptr`) of filter `handle`'s stream.
///
/// # Safety
/// `ptr` points to `len` readable bytes (or is null with `len` 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn filter_push(handle: i32, ptr: *const u8, len: usize) -> i32 {
    // SAFETY: forwarded from the caller.
    let Some(chunk) = (unsafe { input(ptr, len) }) else {
        return fail(&FilterError::new(CLOSED, "a null chunk pointer"));
    };
    if let Some(n) = push_into_out(handle, chunk) {
        return n;
    }
    finish(with_handle(handle, |h| h.push_now(chunk)))
}

/// Transcoding with an output bound writes into OUT itself, which keeps its capacity
/// (and length) from chunk to chunk: no allocation or zeroing per chunk once it has
/// grown. `None`: the filter returns a new Vec (or the handle is unknown).
fn push_into_out(handle: i32, chunk: &[u8]) -> Option<i32> {
    FILTERS.with(|all| {
        let mut all = all.borrow_mut();
        let h = usize::try_from(handle)
            .ok()
            .and_then(|i| all.get_mut(i))
            .and_then(Option::as_mut)?;
        let bound = h.output_bound(chunk.len())?;
        let n = i32::try_from(bound).ok().and_then(|_| {
            OUT.with(|o| {
                let mut out = o.borrow_mut();
                if out.len() < bound {
                    out.resize(bound, 0);
                }
                Some(
                    h.prepare_push_into(chunk, &mut out)
                        .and_then(|w| w.run(&mut out)),
                )
            })
        })?;
        Some(match n {
            Ok(n) => n as i32,
            Err(e) => fail(&e),
        })
    })
}

/// The end of filter `handle`'s stream.
#[unsafe(no_mangle)]
pub extern "C" fn filter_finish(handle: i32) -> i32 {
    finish(with_handle(handle, FilterHandle::finish_now))
}

/// Frees filter `handle` (its slot is reused).
#[unsafe(no_mangle)]
pub extern "C" fn filter_free(handle: i32) {
    FILTERS.with(|all| {
        if let Some(slot) = usize::try_from(handle)
            .ok()
            .and_then(|i| all.borrow_mut().get_mut(i).map(Option::take))
        {
            drop(slot);
        }
    });
}

#[unsafe(no_mangle)]
pub extern "C" fn filter_out_ptr() -> *const u8 {
    OUT.with(|o| o.borrow().as_ptr())
}

#[unsafe(no_mangle)]
pub extern "C" fn filter_error_ptr() -> *const u8 {
    ERROR.with(|m| m.borrow().as_ptr())
}

#[unsafe(no_mangle)]
pub extern "C" fn filter_error_len() -> usize {
    ERROR.with(|m| m.borrow().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error() -> String {
        // SAFETY: the pointer and length describe ERROR's current contents.
        unsafe {
            String::from_utf8_lossy(std::slice::from_raw_parts(
                filter_error_ptr(),
                filter_error_len(),
            ))
            .into_owned()
        }
    }

    #[test]
    fn a_stream_through_the_c_abi() {
        let spec = br#"{"kind":"transcode","from":"utf8","to":"utf16le"}"#;
        // SAFETY: pointers and lengths of live slices.
        let h = unsafe { filter_new(spec.as_ptr(), spec.len()) };
        assert!(h >= 0);
        let text = "h\u{e9}".as_bytes();
        // SAFETY: as above.
        let n = unsafe { filter_push(h, text.as_ptr(), 2) };
        assert_eq!(n, 2, "'h' out, the first byte of 'é' kept back");
        let n = unsafe { filter_push(h, text[2..].as_ptr(), 1) };
        // SAFETY: OUT holds `n` bytes after a successful push.
        let out = unsafe { std::slice::from_raw_parts(filter_out_ptr(), n as usize) };
        assert_eq!(out, [0xe9, 0]);
        assert_eq!(filter_finish(h), 0);
        assert_eq!(filter_finish(h), -1);
        assert!(error().starts_with("ERR_FILTER_CLOSED"), "{}", error());
        filter_free(h);
        assert_eq!(filter_finish(h), -1);

        // A long chunk, then a short one: OUT stays long, the count says what is new.
        // SAFETY: as above.
        let h = unsafe { filter_new(spec.as_ptr(), spec.len()) };
        let long = "abc".repeat(1000);
        // SAFETY: as above.
        assert_eq!(unsafe { filter_push(h, long.as_ptr(), long.len()) }, 6000);
        // SAFETY: as above.
        assert_eq!(unsafe { filter_push(h, "\u{20ac}".as_ptr(), 3) }, 2);
        // SAFETY: OUT holds at least 2 bytes after that push.
        let out = unsafe { std::slice::from_raw_parts(filter_out_ptr(), 2) };
        assert_eq!(out, 0x20ACu16.to_le_bytes());
        filter_free(h);

        let bad = br#"{"kind":"gzip","level":11}"#;
        // SAFETY: as above.
        assert_eq!(unsafe { filter_new(bad.as_ptr(), bad.len()) }, -1);
        assert!(
            error().starts_with("ERR_FILTER_INVALID_SPEC"),
            "{}",
            error()
        );
    }
}
