//! Regression (found by the integrity experiment, tests/integrity): a `[1]T` field of a
//! SoA item is an array of one value, not a scalar. The SoA writers decided by the
//! column's value count (`per_item == 1`), so the Rust `write_soa` passed `[u8; 1]` where
//! a `u8` goes (it did not compile) and the TS `fill` refused the array `[7]` as a bad
//! `u8` (W0008).

use offthread_schema::driver::{BuildOptions, build};

const SCHEMA: &str = "
enum e (u16) { a = 1; }
struct item (inline) { one: [1]u8; one_e: [1]e; two: [2]u16; plain: u32; }
struct batch (dynamic) { items: []item; }
";

fn generated(lang: &str) -> String {
    let out = build(SCHEMA, &BuildOptions::new("fixed_one.km", "fixed_one"));
    assert!(out.diagnostics.is_empty(), "{}", out.rendered);
    out.files
        .into_iter()
        .find(|f| f.lang == lang)
        .unwrap()
        .contents
}

#[test]
fn rust_soa_writer_writes_a_one_item_array_as_an_array() {
    let rust = generated("rust");
    assert!(
        rust.contains("for (j, x) in item.one.iter().copied().enumerate()"),
        "{rust}"
    );
    assert!(
        rust.contains("for (j, x) in item.one_e.iter().copied().enumerate()"),
        "{rust}"
    );
    assert!(
        rust.contains("for (j, x) in item.two.iter().copied().enumerate()"),
        "{rust}"
    );
    assert!(!rust.contains("item.one);"), "{rust}");
    // A scalar stays a scalar.
    assert!(rust.contains("item.plain);"), "{rust}");
}

#[test]
fn ts_soa_writer_fills_a_one_item_array_as_an_array() {
    let ts = generated("ts");
    assert!(ts.contains("rt.fixed(it.one, 1, 'one')"), "{ts}");
    assert!(ts.contains("rt.fixed(items[i]!.oneE, 1, 'one_e')"), "{ts}");
    assert!(ts.contains("rt.fixed(items[i]!.two, 2, 'two')"), "{ts}");
    assert!(!ts.contains("const x = it.one;"), "{ts}");
}
