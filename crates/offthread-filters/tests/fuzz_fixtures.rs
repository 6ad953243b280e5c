//! The saved inputs of the `filters` fuzz target (tests/fixtures/fuzz/filters/: issue
//! 31's hostile inputs — a stray CSV quote, a BOM cut after one byte, a lone UTF-16
//! surrogate before an odd byte, zero padding after a gzip member, 12 MiB of zeros in
//! 12 KB of gzip, 8,000 nested arrays in a skipped NDJSON value) replayed through the
//! target's own property, so `cargo test` checks what `npm run fuzz` seeds with.

use offthread_filters::fuzzing::check_chunking;

#[test]
fn every_saved_fuzz_input_holds_the_property() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/fuzz/filters");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let outcome = std::panic::catch_unwind(|| check_chunking(&data));
        assert!(outcome.is_ok(), "{} breaks the property", path.display());
        n += 1;
    }
    assert!(n >= 6, "only {n} saved inputs in {}", dir.display());
}
