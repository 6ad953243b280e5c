//! `row_batch` (an SoA whose items carry variable-length columns: UTF-8 and UTF-16
//! strings, u16/enum/bool slices) over arbitrary bytes: owned decode, round trip, and
//! every column's offsets and values through the lazy readers.
#![no_main]

#[path = "common/mod.rs"]
mod common;

#[rustfmt::skip]
#[path = "../../crates/offthread-schema/tests/generated/records.rs"]
#[allow(clippy::all, dead_code)]
mod records;

use common::{ok, round_trip};
use libfuzzer_sys::fuzz_target;
use records::{RowBatch, RowBatchRef};

fuzz_target!(|data: &[u8]| {
    round_trip(data, RowBatch::from_bytes_with, RowBatch::to_bytes);
    let Some(r) = ok(RowBatchRef::from_bytes(data)) else {
        return;
    };
    let _ = (ok(r.name()), r.tail());
    let Some(rows) = ok(r.rows()) else {
        return;
    };
    let n = rows.len();
    if let Some(col) = ok(rows.label()) {
        assert_eq!(col.len(), n);
        let total: usize = (0..n).filter_map(|i| col.get(i)).map(str::len).sum();
        assert!(total <= data.len());
        assert!(col.get(n).is_none());
    }
    if let Some(col) = ok(rows.wide()) {
        assert_eq!(col.len(), n);
        let _ = (0..n).filter_map(|i| col.get(i)).count();
    }
    if let Some(col) = ok(rows.samples()) {
        assert_eq!(col.len(), n);
        let _ = (0..n)
            .filter_map(|i| col.get(i))
            .map(|c| c.len())
            .sum::<usize>();
    }
    for col in [ok(rows.levels()), ok(rows.flags())].into_iter().flatten() {
        assert_eq!(col.len(), n);
        assert!(col.get(n).is_none());
    }
    let _ = (ok(rows.id()), ok(rows.score()));
});
