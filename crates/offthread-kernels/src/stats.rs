//! Batch statistics over schema buffers (the Karmem paper's TemperatureBatch), read in
//! place: the reader borrows the caller's bytes, nothing is decoded into new memory.
//!
//! ```
//! use offthread_kernels::stats;
//! use offthread_schema_rt::generated::temperature::{TemperatureBatch, TemperatureReading};
//! let batch = TemperatureBatch {
//!     readings: vec![TemperatureReading { timestamp: 1, value: 20.5 }, TemperatureReading { timestamp: 2, value: 22.5 }],
//! };
//! let s = stats::temperature(&batch.to_bytes().unwrap())?;
//! assert_eq!((s.count, s.average, s.min, s.max), (2, 21.5, 20.5, 22.5));
//! # Ok::<(), offthread_kernels::KernelError>(())
//! ```

use offthread_core::registry::{KernelDef, Output};
use offthread_schema_rt::generated::temperature::TemperatureBatchRef;
use offthread_schema_rt::{Column, ReadError};

use crate::{ErrorCode, KernelError};

/// Average, minimum and maximum of a batch's `value` column.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TemperatureStats {
    pub count: u64,
    /// Mean of the values, summed in f64. NaN for an empty batch.
    pub average: f64,
    /// NaN for an empty batch.
    pub min: f32,
    /// NaN for an empty batch.
    pub max: f32,
}

impl TemperatureStats {
    /// `[count, average, min, max]` as four little-endian f64: the registry's result.
    pub fn to_le_bytes(&self) -> [u8; 32] {
        let mut out = [0; 32];
        let values = [
            self.count as f64,
            self.average,
            f64::from(self.min),
            f64::from(self.max),
        ];
        for (slot, v) in out.chunks_exact_mut(8).zip(values) {
            slot.copy_from_slice(&v.to_le_bytes());
        }
        out
    }
}

fn invalid(e: ReadError) -> KernelError {
    KernelError::new(
        ErrorCode::InvalidBuffer,
        format!("not a valid TemperatureBatch: {e}"),
    )
}

fn summarise(values: impl Iterator<Item = f32>) -> TemperatureStats {
    let (mut count, mut sum, mut min, mut max) = (0u64, 0f64, f32::INFINITY, f32::NEG_INFINITY);
    for v in values {
        count += 1;
        sum += f64::from(v);
        min = min.min(v);
        max = max.max(v);
    }
    if count == 0 {
        return TemperatureStats {
            count,
            average: f64::NAN,
            min: f32::NAN,
            max: f32::NAN,
        };
    }
    TemperatureStats {
        count,
        average: sum / count as f64,
        min,
        max,
    }
}

/// Reads `buf` (an encoded TemperatureBatch) in place and summarises its values.
/// A malformed buffer is `ERR_INVALID_BUFFER`, never a panic or an out-of-bounds read.
pub fn temperature(buf: &[u8]) -> Result<TemperatureStats, KernelError> {
    let readings = TemperatureBatchRef::from_bytes(buf)
        .map_err(invalid)?
        .readings()
        .map_err(invalid)?;
    Ok(match readings.value().map_err(invalid)? {
        Column::Slice(values) => summarise(values.iter().copied()),
        other => summarise(other.iter()),
    })
}

/// Adds `delta` to every value of the batch in `buf`, in place; returns how many were
/// updated. Proves the caller's memory is the kernel's memory (no copy either way).
pub fn temperature_offset(buf: &mut [u8], delta: f32) -> Result<u64, KernelError> {
    let (start, len) = {
        let readings = TemperatureBatchRef::from_bytes(buf)
            .map_err(invalid)?
            .readings()
            .map_err(invalid)?;
        // Where the column sits in `buf`: the reader hands out views into it.
        let (at, len) = match readings.value().map_err(invalid)? {
            Column::Slice(values) => (values.as_ptr() as usize, 4 * values.len()),
            Column::Bytes(bytes) => (bytes.as_ptr() as usize, bytes.len()),
            Column::Zero(_) => return Ok(0), // written by a schema without `value`
        };
        (at - buf.as_ptr() as usize, len)
    };
    let mut updated = 0;
    for chunk in buf[start..start + len].chunks_exact_mut(4) {
        let v = f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]) + delta;
        chunk.copy_from_slice(&v.to_le_bytes());
        updated += 1;
    }
    Ok(updated)
}

/// `stats.temperature(buf)`: an encoded TemperatureBatch's summary as 32 bytes
/// ([`TemperatureStats::to_le_bytes`]). No numbers.
pub const TEMPERATURE: KernelDef = KernelDef {
    name: "stats.temperature",
    run: |call, _| {
        Ok(Output::Bytes(
            temperature(call.input)?.to_le_bytes().to_vec(),
        ))
    },
};
