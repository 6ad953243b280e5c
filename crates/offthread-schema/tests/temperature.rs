//! The paper's TemperatureBatch through the committed generated module.

use offthread_schema::generated::temperature::*;
use offthread_schema::rt::{Column, ReadError};

fn batch(n: usize) -> TemperatureBatch {
    TemperatureBatch {
        readings: (0..n)
            .map(|i| TemperatureReading {
                timestamp: 1_700_000_000_000 + i as i64,
                value: 20.0 + i as f32 / 4.0,
            })
            .collect(),
    }
}

/// A 64-byte aligned copy, as a WASM host or the TS side would hold it: a `u64`
/// allocation with slack, and the window inside it that starts on a 64-byte line.
struct Aligned {
    words: Vec<u64>,
    start: usize,
    len: usize,
}

impl Aligned {
    fn new(bytes: &[u8]) -> Self {
        let mut words = vec![0u64; bytes.len().div_ceil(8) + 8];
        let start = (64 - words.as_ptr() as usize % 64) % 64;
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[start..start + bytes.len()]
            .copy_from_slice(bytes);
        Self {
            words,
            start,
            len: bytes.len(),
        }
    }

    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<u64, u8>(&self.words)[self.start..self.start + self.len]
    }
}

#[test]
fn round_trips_and_reads_columns_zero_copy() {
    let b = batch(10);
    let bytes = b.to_bytes().unwrap();
    assert_eq!(TemperatureBatch::from_bytes(&bytes).unwrap(), b);

    let copy = Aligned::new(&bytes);
    let buf = copy.bytes();
    assert_eq!(buf, &bytes[..]);
    let r = TemperatureBatchRef::from_bytes(buf).unwrap();
    let readings = r.readings().unwrap();
    assert_eq!(readings.len(), 10);
    let values = readings.value().unwrap();
    let ts = readings.timestamp().unwrap();
    assert!((buf.as_ptr() as usize).is_multiple_of(64));
    assert!(
        matches!(values, Column::Slice(_)),
        "aligned buffer must give a slice"
    );
    assert!(matches!(ts, Column::Slice(_)));
    assert_eq!(values.get(3), Some(20.75));
    assert_eq!(ts.get(9), Some(1_700_000_000_009));
    assert_eq!(values.get(10), None);
}

#[test]
fn unaligned_buffer_falls_back_to_checked_reads() {
    let bytes = batch(5).to_bytes().unwrap();
    let mut shifted = vec![0u8; bytes.len() + 1];
    shifted[1..].copy_from_slice(&bytes);
    let buf = &shifted[1..];
    let readings = TemperatureBatchRef::from_bytes(buf)
        .unwrap()
        .readings()
        .unwrap();
    let v = readings.value().unwrap();
    let from_slice = batch(5)
        .readings
        .iter()
        .map(|r| r.value)
        .collect::<Vec<_>>();
    assert_eq!(v.to_vec(), from_slice);
}

#[test]
fn empty_batch_has_no_array() {
    let bytes = batch(0).to_bytes().unwrap();
    assert_eq!(bytes.len(), 8, "root struct only: header + null offset");
    let r = TemperatureBatchRef::from_bytes(&bytes).unwrap();
    assert!(r.readings().unwrap().is_empty());
}

#[test]
fn truncated_buffer_is_a_typed_error() {
    let b = batch(3);
    let bytes = b.to_bytes().unwrap();
    // The last column's 64-byte padding carries no data: cutting it is still valid.
    let data_end = bytes.len() - 64 + 3 * 4;
    for cut in 0..bytes.len() {
        let res = TemperatureBatch::from_bytes(&bytes[..cut]);
        if cut < data_end {
            assert!(
                matches!(res, Err(ReadError::OutOfBounds { .. })),
                "cut at {cut}: {res:?}"
            );
        } else {
            assert_eq!(res.as_ref(), Ok(&b), "cut at {cut}");
        }
    }
}

#[test]
fn write_into_reports_a_small_buffer() {
    let b = batch(2);
    let need = b.to_bytes().unwrap().len();
    let mut out = vec![0u8; need - 1];
    let err = b.write_into(&mut out).unwrap_err();
    assert_eq!(err.code(), "W0002");
    let mut out = vec![0u8; need];
    assert_eq!(b.write_into(&mut out).unwrap(), need);
}

mod common;

/// The canonical 10-reading batch shared with the TS test.
#[test]
fn golden_ten_readings() {
    common::check_golden("temperature_10", &batch(10).to_bytes().unwrap());
}

#[test]
fn mutated_batches_give_typed_errors_only() {
    let valid = batch(10).to_bytes().unwrap();
    let rejected = common::mutate_and_read(&valid, 100_000, 0x5eed_0004, |buf| {
        // Walk the lazy reader too, not only the owned decode.
        let lazy = TemperatureBatchRef::from_bytes(buf).and_then(|r| {
            let soa = r.readings()?;
            let sum: f64 = soa.value()?.iter().map(f64::from).sum();
            Ok(sum + soa.timestamp()?.iter().map(|t| t as f64).sum::<f64>())
        });
        TemperatureBatch::from_bytes(buf).is_ok() && lazy.is_ok()
    });
    assert!(rejected > 10_000, "rejected {rejected}");
}

/// docs/schema-format.md §2.11, byte by byte.
#[test]
fn layout_matches_the_spec_example() {
    let b = TemperatureBatch {
        readings: vec![
            TemperatureReading {
                timestamp: 1,
                value: 0.5,
            },
            TemperatureReading {
                timestamp: 2,
                value: 1.5,
            },
        ],
    };
    let bytes = b.to_bytes().unwrap();
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!(bytes.len(), 384);
    assert_eq!((word(0), word(4)), (1, 64));
    assert_eq!((word(64), word(68), word(72), word(76)), (2, 2, 2, 128));
    assert_eq!((word(128), word(132)), (0x7c3c_3420, 0xcc68_7331));
    assert_eq!((word(192), word(196)), (4, 5));
    assert_eq!(
        &bytes[256..272],
        &[1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(&bytes[320..328], &[0, 0, 0, 0x3f, 0, 0, 0xc0, 0x3f]);
    let zero_ranges = [8..64, 80..128, 136..192, 200..256, 272..320, 328..384];
    for r in zero_ranges {
        assert!(bytes[r.clone()].iter().all(|b| *b == 0), "{r:?} not zero");
    }
    assert_eq!(TemperatureReading::SIZE, 24);
    assert_eq!(
        offthread_schema::rt::dynamic_header(TemperatureReading::USED),
        0x8000_0003
    );
}

/// A batch whose `readings` SoA claims count = buffer length (issue 11: the root at 0,
/// the array header at 64, the lookup table at 128); `columns` are (hash, block).
fn forged(len: usize, columns: &[(u32, u32)]) -> Vec<u8> {
    let mut words = vec![0u32; len / 4];
    words[..2].copy_from_slice(&[1, 64]);
    words[16..20].copy_from_slice(&[len as u32, len as u32, columns.len() as u32, 128]);
    for (i, &(hash, block)) in columns.iter().enumerate() {
        words[32 + i] = hash;
        words[48 + i] = block;
    }
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn soa_count_the_columns_cannot_hold_is_refused() {
    // Before, `from_bytes` built 4,096 zero readings out of nothing for both: an empty
    // column table (R0009), and a column the reader does not know that cannot hold 4,096
    // items (R0001).
    let cases = [
        (forged(4096, &[]), "R0009"),
        (forged(4096, &[(0xdead_beef, 4096 / 64 - 1)]), "R0001"),
    ];
    for (buf, code) in cases {
        let owned = TemperatureBatch::from_bytes(&buf).map(|b| b.readings.len());
        assert_eq!(owned.map_err(|e| e.code()), Err(code));
        let lazy = TemperatureBatchRef::from_bytes(&buf).and_then(|b| b.readings().map(|_| ()));
        assert_eq!(lazy.unwrap_err().code(), code);
    }
    // An unknown column with room for every item is a legal evolution: known columns read as zeros.
    let mut ok = forged(8192, &[(0xdead_beef, 4096 / 64)]);
    ok[64..72].copy_from_slice(&[100, 0, 0, 0, 100, 0, 0, 0]);
    let batch = TemperatureBatch::from_bytes(&ok).unwrap();
    assert_eq!(batch.readings.len(), 100);
    assert_eq!(batch.readings[99], TemperatureReading::default());
}
