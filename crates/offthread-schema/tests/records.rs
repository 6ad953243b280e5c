//! Variable-length SoA columns (strings and `[]T` in SoA items): round trips, golden
//! bytes (shared with the TS test), forged offsets, mutated buffers.

#[rustfmt::skip]
#[path = "generated/records.rs"]
mod records;
#[rustfmt::skip]
#[path = "generated/records_v1.rs"]
mod records_v1;
mod common;

use offthread_schema::rt;
use records::*;

fn row(i: u32, label: &str) -> Row {
    Row {
        id: i,
        score: f64::from(i) * 0.5 - 1.0,
        label: label.into(),
        samples: (0..i as u16).map(|k| k * 1000 + 1).collect(),
        levels: (0..i % 3).map(|k| Level(k as u8)).collect(),
        flags: (0..i).map(|k| k % 2 == 0).collect(),
        wide: if i == 1 {
            "π 𝄞".into()
        } else {
            String::new()
        },
    }
}

/// The fixed value behind `golden/records.hex`; `packages/offthread/test/schema-records.test.mjs`
/// builds the same value.
fn sample() -> RowBatch {
    RowBatch {
        name: "batch".into(),
        rows: vec![row(0, ""), row(1, "Grüße ✓"), row(2, "plain"), row(3, "")],
        tail: 0xfeed,
    }
}

#[test]
fn golden_bytes() {
    common::check_golden("records", &sample().to_bytes().unwrap());
}

#[test]
fn round_trips() {
    let long = "ü".repeat(5000);
    let cases = [
        sample(),
        RowBatch::default(),
        RowBatch {
            rows: vec![row(0, ""), row(0, "")],
            ..RowBatch::default()
        },
        RowBatch {
            rows: (0..200)
                .map(|i| row(i % 40, if i % 7 == 0 { &long } else { "x" }))
                .collect(),
            ..sample()
        },
    ];
    for v in cases {
        let bytes = v.to_bytes().unwrap();
        assert_eq!(RowBatch::from_bytes(&bytes).unwrap(), v);
    }
}

#[test]
fn readers_see_values_offsets_and_columns() {
    let bytes = sample().to_bytes().unwrap();
    let r = RowBatchRef::from_bytes(&bytes).unwrap();
    let rows = r.rows().unwrap();
    assert_eq!(rows.len(), 4);
    let label = rows.label().unwrap();
    assert_eq!(
        label.iter().collect::<Vec<_>>(),
        ["", "Grüße ✓", "plain", ""]
    );
    assert_eq!(label.get(4), None);
    let raw = label.raw();
    let ends = [
        0,
        0,
        "Grüße ✓".len() as u32,
        "Grüße ✓plain".len() as u32,
        "Grüße ✓plain".len() as u32,
    ];
    assert_eq!(raw.offsets().to_vec(), ends);
    assert!(raw.values().as_slice().is_some(), "u8 values are zero-copy");
    let samples = rows.samples().unwrap();
    assert_eq!(samples.get(3).unwrap().to_vec(), [1, 1001, 2001]);
    assert_eq!(samples.values().len(), 6);
    assert_eq!(rows.wide().unwrap().get(1).as_deref(), Some("π 𝄞"));
    assert_eq!(rows.levels().unwrap().get(2).unwrap().to_vec(), [0, 1]);
    // The empty batch: offset 0, every column empty.
    let empty = RowBatch::default().to_bytes().unwrap();
    let rows = RowBatchRef::from_bytes(&empty).unwrap().rows().unwrap();
    assert!(rows.is_empty() && rows.label().unwrap().is_empty());
    assert_eq!(rows.samples().unwrap().offsets().to_vec(), [0]);
}

/// Absolute offset of the `label` offsets column in an encoding of `sample()`.
fn label_offsets(bytes: &[u8]) -> usize {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let header = word(8); // `rows` at +8
    let (columns, table) = (word(header + 8), word(header + 12));
    let hash = rt::field_path_hash(&[2]) as usize;
    let i = (0..columns).find(|&i| word(table + 4 * i) == hash).unwrap();
    word(table + rt::align_up(4 * columns, 64) + 4 * i) * 64
}

fn code(bytes: &[u8]) -> &'static str {
    RowBatch::from_bytes(bytes).unwrap_err().code()
}

fn put(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn forged_offsets_give_typed_errors() {
    let valid = sample().to_bytes().unwrap();
    let offs = label_offsets(&valid);
    let forge = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = valid.clone();
        f(&mut b);
        b
    };
    // Decreasing (item 2 ends before it starts), and a non-zero first offset.
    assert_eq!(code(&forge(&|b| put(b, offs + 12, 1))), "R0011");
    assert_eq!(code(&forge(&|b| put(b, offs, 1))), "R0011");
    // The last offset past the values area, and past the buffer.
    assert_eq!(code(&forge(&|b| put(b, offs + 16, 1 << 20))), "R0001");
    assert_eq!(code(&forge(&|b| put(b, offs + 16, u32::MAX))), "R0001");
    // Invalid UTF-8 inside one item (the ü's first byte at the start of item 1).
    let values = rt::align_up(offs + 5 * 4, 64);
    assert_eq!(code(&forge(&|b| b[values + 2] = 0xff)), "R0008");
    // A count the columns cannot hold: larger than the buffer, then merely too large.
    let header = u32::from_le_bytes(valid[8..12].try_into().unwrap()) as usize;
    assert_eq!(
        code(&forge(&|b| {
            put(b, header, u32::MAX);
            put(b, header + 4, u32::MAX);
        })),
        "R0009"
    );
    let n = valid.len() as u32 / 5;
    assert_eq!(
        code(&forge(&|b| {
            put(b, header, n);
            put(b, header + 4, n);
        })),
        "R0001"
    );
    // The offsets column itself cut short by the end of the buffer.
    assert_eq!(code(&valid[..offs + 8]), "R0001");
}

#[test]
fn mutated_buffers_give_typed_errors_only() {
    let valid = sample().to_bytes().unwrap();
    let rejected = common::mutate_and_read(&valid, 50_000, 0x5eed_0a11, |buf| {
        RowBatch::from_bytes(buf).is_ok()
    });
    assert!(rejected > 5_000 && rejected < 50_000, "rejected {rejected}");
}

#[test]
fn a_reader_without_the_columns_reads_data_with_them() {
    let bytes = sample().to_bytes().unwrap();
    let old = records_v1::RowBatch::from_bytes(&bytes).unwrap();
    let ids: Vec<(u32, f64)> = old.rows.iter().map(|r| (r.id, r.score)).collect();
    assert_eq!(ids, [(0, -1.0), (1, -0.5), (2, 0.0), (3, 0.5)]);
    assert_eq!((old.name.as_str(), old.tail), ("batch", 0xfeed));
}

#[test]
fn a_reader_with_the_columns_reads_data_without_them() {
    let old = records_v1::RowBatch {
        name: "old".into(),
        rows: (0..3)
            .map(|i| records_v1::Row { id: i, score: 2.0 })
            .collect(),
        tail: 1,
    };
    let bytes = old.to_bytes().unwrap();
    let got = RowBatch::from_bytes(&bytes).unwrap();
    let want: Vec<Row> = (0..3)
        .map(|i| Row {
            id: i,
            score: 2.0,
            ..Row::default()
        })
        .collect();
    assert_eq!(got.rows, want);
    let rows = RowBatchRef::from_bytes(&bytes).unwrap().rows().unwrap();
    let label = rows.label().unwrap();
    assert_eq!((label.len(), label.get(2)), (3, Some("")));
    assert!(matches!(
        rows.samples().unwrap().offsets(),
        rt::Column::Zero(4)
    ));
}
