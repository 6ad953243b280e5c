//! stats::temperature over schema buffers: values, empty batches, in-place updates,
//! and malformed buffers (typed errors only).

use offthread_kernels::{ErrorCode, stats};
use offthread_schema_rt::generated::temperature::{TemperatureBatch, TemperatureReading};

fn batch(values: &[f32]) -> Vec<u8> {
    let readings = values
        .iter()
        .enumerate()
        .map(|(i, &value)| TemperatureReading {
            timestamp: i as i64 * 1000,
            value,
        })
        .collect();
    TemperatureBatch { readings }.to_bytes().unwrap()
}

#[test]
fn average_min_max_of_the_value_column() {
    let values: Vec<f32> = (0..10_000).map(|i| (i % 100) as f32 * 0.5 - 10.0).collect();
    let s = stats::temperature(&batch(&values)).unwrap();
    assert_eq!(s.count, 10_000);
    assert_eq!(s.min, -10.0);
    assert_eq!(s.max, 39.5);
    let expected: f64 = values.iter().map(|&v| f64::from(v)).sum::<f64>() / 10_000.0;
    assert_eq!(s.average, expected);
}

#[test]
fn an_empty_batch_has_nan_statistics() {
    let s = stats::temperature(&batch(&[])).unwrap();
    assert_eq!(s.count, 0);
    assert!(s.average.is_nan() && s.min.is_nan() && s.max.is_nan());
}

#[test]
fn offset_updates_the_buffer_in_place() {
    let mut buf = batch(&[1.0, 2.0, 3.0]);
    assert_eq!(stats::temperature_offset(&mut buf, 0.5).unwrap(), 3);
    let s = stats::temperature(&buf).unwrap();
    assert_eq!((s.min, s.max), (1.5, 3.5));
    let decoded = TemperatureBatch::from_bytes(&buf).unwrap();
    assert_eq!(
        decoded.readings[2],
        TemperatureReading {
            timestamp: 2000,
            value: 3.5
        }
    );
}

#[test]
fn malformed_buffers_are_typed_errors_never_panics() {
    let good = batch(&[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(
        stats::temperature(&[]).unwrap_err().code,
        ErrorCode::InvalidBuffer
    );
    assert_eq!(
        stats::temperature(&good[..good.len() / 2])
            .unwrap_err()
            .code,
        ErrorCode::InvalidBuffer
    );
    // Every single-byte corruption and truncation: Ok or InvalidBuffer, nothing else.
    for i in 0..good.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut bad = good.clone();
            bad[i] ^= flip;
            if let Err(e) = stats::temperature(&bad) {
                assert_eq!(e.code, ErrorCode::InvalidBuffer);
            }
            let _ = stats::temperature_offset(&mut bad, 1.0);
        }
        let _ = stats::temperature(&good[..i]);
    }
}
