//! Schema evolution both ways, for plain dynamic structs, SoA arrays and AoS arrays:
//! a v1 reader ignores v2's new fields and columns; a v2 reader reads v1's missing
//! ones as zero.

#[rustfmt::skip]
#[path = "generated/evolution_v1.rs"]
mod v1;
#[rustfmt::skip]
#[path = "generated/evolution_v2.rs"]
mod v2;
mod common;

fn v1_batch() -> v1::Batch {
    v1::Batch {
        label: 7,
        readings: (0..5)
            .map(|i| v1::Reading {
                id: i,
                value: i as f32 * 2.0,
            })
            .collect(),
        readings_aos: (0..3)
            .map(|i| v1::Reading {
                id: 100 + i,
                value: -(i as f32),
            })
            .collect(),
    }
}

fn v2_batch() -> v2::Batch {
    let reading = |i: u32| v2::Reading {
        id: i,
        value: i as f32 * 2.0,
        quality: 9,
        extra: f64::from(i) / 3.0,
    };
    v2::Batch {
        label: 7,
        readings: (0..5).map(reading).collect(),
        readings_aos: (100..103).map(reading).collect(),
        note: "appended in v2".into(),
        count: 1 << 40,
    }
}

#[test]
fn v2_reader_reads_v1_data_with_zeros() {
    let bytes = v1_batch().to_bytes().unwrap();
    common::check_golden("evolution_v1", &bytes);
    let got = v2::Batch::from_bytes(&bytes).unwrap();
    let want = v2::Batch {
        label: 7,
        readings: (0..5)
            .map(|i| v2::Reading {
                id: i,
                value: i as f32 * 2.0,
                quality: 0,
                extra: 0.0,
            })
            .collect(),
        readings_aos: (0..3)
            .map(|i| v2::Reading {
                id: 100 + i,
                value: -(i as f32),
                quality: 0,
                extra: 0.0,
            })
            .collect(),
        note: String::new(),
        count: 0,
    };
    assert_eq!(got, want);
    // The missing SoA column is a zero column of the right length, not an error.
    let r = v2::BatchRef::from_bytes(&bytes).unwrap();
    let extra = r.readings().unwrap().extra().unwrap();
    assert!(matches!(extra, offthread_schema::rt::Column::Zero(5)));
}

#[test]
fn v1_reader_reads_v2_data_ignoring_new_fields() {
    let bytes = v2_batch().to_bytes().unwrap();
    common::check_golden("evolution_v2", &bytes);
    let got = v1::Batch::from_bytes(&bytes).unwrap();
    let want = v1::Batch {
        label: 7,
        readings: (0..5)
            .map(|i| v1::Reading {
                id: i,
                value: i as f32 * 2.0,
            })
            .collect(),
        readings_aos: (100..103)
            .map(|i| v1::Reading {
                id: i,
                value: i as f32 * 2.0,
            })
            .collect(),
    };
    assert_eq!(got, want);
}

#[test]
fn soa_lookup_respects_the_column_bound() {
    let bytes = v2_batch().to_bytes().unwrap();
    let opts = offthread_schema::rt::ReadOptions {
        max_soa_columns: 3,
        ..Default::default()
    };
    let err = v2::Batch::from_bytes_with(&bytes, opts).unwrap_err();
    assert_eq!(err.code(), "R0005");
    let opts = offthread_schema::rt::ReadOptions {
        max_soa_columns: 4,
        ..Default::default()
    };
    assert!(v2::Batch::from_bytes_with(&bytes, opts).is_ok());
}

#[test]
fn mutated_evolution_buffers_give_typed_errors_only() {
    let valid = v2_batch().to_bytes().unwrap();
    common::mutate_and_read(&valid, 100_000, 0x5eed_0002, |buf| {
        v1::Batch::from_bytes(buf).is_ok()
    });
    common::mutate_and_read(&valid, 100_000, 0x5eed_0003, |buf| {
        v2::Batch::from_bytes(buf).is_ok()
    });
}
