//! The schema compiler for any C-ABI host (wasm32 in Node and browsers), without
//! wasm-bindgen. The protocol, like crates/offthread-wasm's:
//!
//! 1. `alloc(len)` twice; write the UTF-8 source and the options there.
//! 2. `compile(src, src_len, opts, opts_len)` returns the byte length of a JSON
//!    result (or −1 if either input is not UTF-8, or a pointer is null).
//! 3. Read the JSON at `result_ptr()` (valid until the next `compile`); `dealloc`
//!    both inputs with their lengths.
//!
//! Options are `key=value` lines: `file` (name in diagnostics), `stem` (file base
//! name), `rust` / `ts` / `rust_guest` / `c` (`1` to emit), `rust_runtime`, `ts_runtime`,
//! `guest_schema` (defaults as the CLI). The result is [`json::output`]'s document:
//! `{ "files": [{ "lang", "path", "contents" }], "diagnostics": [...], "rendered" }`.

use std::alloc::{Layout, alloc as sys_alloc, dealloc as sys_dealloc};
use std::cell::RefCell;

use offthread_schema::driver::{self, BuildOptions};

pub mod json;

thread_local! {
    static RESULT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Parses the `key=value` option lines; unknown keys are ignored (newer hosts).
pub fn options(text: &str) -> BuildOptions {
    let mut o = BuildOptions::new("schema.km", "schema");
    for line in text.lines() {
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        match k {
            "file" => o.file = v.into(),
            "stem" => o.stem = v.into(),
            "rust" => o.rust = v == "1",
            "ts" => o.ts = v == "1",
            "rust_runtime" => o.rust_runtime = v.into(),
            "ts_runtime" => o.ts_runtime = v.into(),
            // `<stem>_guest.rs`, as the CLI's --rust-guest / --guest-schema.
            "rust_guest" => o.rust_guest = v == "1",
            "guest_schema" => o.guest_schema = v.into(),
            // `<stem>.h` and `offthread_rt.h`, as the CLI's --c.
            "c" => o.c = v == "1",
            _ => {}
        }
    }
    o
}

/// Compiles and returns the JSON result (what the export leaves in memory).
pub fn compile_to_json(source: &str, opts: &str) -> String {
    let o = options(opts);
    json::output(&driver::build(source, &o))
}

fn layout(len: usize) -> Option<Layout> {
    Layout::from_size_align(len, 1).ok()
}

/// `len` bytes for the caller to fill; null if out of memory. `alloc(0)` is a
/// dangling non-null pointer that needs no `dealloc`.
#[unsafe(no_mangle)]
pub extern "C" fn alloc(len: usize) -> *mut u8 {
    match layout(len) {
        Some(_) if len == 0 => std::ptr::NonNull::dangling().as_ptr(),
        // SAFETY: the layout has a non-zero size.
        Some(l) => unsafe { sys_alloc(l) },
        None => std::ptr::null_mut(),
    }
}

/// Frees a block from `alloc(len)` (same `len`).
///
/// # Safety
/// `ptr` must come from `alloc(len)` and not be freed twice.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dealloc(ptr: *mut u8, len: usize) {
    if let (false, Some(l)) = (ptr.is_null() || len == 0, layout(len)) {
        // SAFETY: the caller passes a live block from `alloc(len)`.
        unsafe { sys_dealloc(ptr, l) }
    }
}

/// # Safety
/// Unless null, `ptr` must point to `len` readable bytes.
unsafe fn text<'a>(ptr: *const u8, len: usize) -> Option<&'a str> {
    if len == 0 {
        return Some("");
    }
    if ptr.is_null() {
        return None;
    }
    // SAFETY: the caller guarantees `len` readable bytes at `ptr`.
    std::str::from_utf8(unsafe { std::slice::from_raw_parts(ptr, len) }).ok()
}

/// Compiles the schema at `src`; see the module docs for the protocol.
///
/// # Safety
/// `src`/`opts` must point to `src_len`/`opts_len` readable bytes (or be null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn compile(
    src: *const u8,
    src_len: usize,
    opts: *const u8,
    opts_len: usize,
) -> i32 {
    // SAFETY: forwarded from the caller.
    let (Some(src), Some(opts)) = (unsafe { text(src, src_len) }, unsafe {
        text(opts, opts_len)
    }) else {
        return -1;
    };
    let out = compile_to_json(src, opts).into_bytes();
    let len = i32::try_from(out.len()).unwrap_or(-1);
    RESULT.with(|r| *r.borrow_mut() = out);
    len
}

/// Start of the last `compile` result.
#[unsafe(no_mangle)]
pub extern "C" fn result_ptr() -> *const u8 {
    RESULT.with(|r| r.borrow().as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_guest_options_reach_the_driver() {
        let o = options("stem=app\nrust=0\nts=0\nrust_guest=1\nguest_schema=crate::s");
        assert!(o.rust_guest && !o.rust && !o.ts);
        assert_eq!(o.guest_schema, "crate::s");
        assert!(!options("").rust_guest, "off unless asked for");
        let src = "struct t (dynamic) {\n    v: u32;\n}\n\ninterface i (dynamic, direct) {\n    f: (t) -> (t);\n}\n";
        let json = compile_to_json(src, "stem=app\nrust=0\nts=0\nrust_guest=1");
        assert!(
            json.contains(r#""lang":"rust-guest","path":"app_guest.rs""#),
            "{json}"
        );
    }

    #[test]
    fn the_c_option_reaches_the_driver() {
        assert!(options("c=1").c);
        assert!(!options("").c, "off unless asked for");
        let json = compile_to_json(
            "struct t (dynamic) {\n    v: u32;\n}\n",
            "stem=app\nrust=0\nts=0\nc=1",
        );
        assert!(json.contains(r#""lang":"c","path":"app.h""#), "{json}");
        assert!(
            json.contains(r#""lang":"c","path":"offthread_rt.h""#),
            "{json}"
        );
    }
}
