//! Batch statistics over schema buffers, zero copy both ways: the sync call borrows the
//! caller's bytes; the pool job holds a reference to the caller's Uint8Array (keeping
//! its memory alive) and reads it where it lies.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offthread_kernels::stats::{self, TemperatureStats};

use crate::error::{Code, from_kernel, guard};
use crate::runtime::{NativePool, Outcome};

#[napi(object)]
pub struct TemperatureSummary {
    pub count: f64,
    pub average: f64,
    pub min: f64,
    pub max: f64,
}

impl From<TemperatureStats> for TemperatureSummary {
    fn from(s: TemperatureStats) -> Self {
        Self {
            count: s.count as f64,
            average: s.average,
            min: f64::from(s.min),
            max: f64::from(s.max),
        }
    }
}

/// Average/min/max of an encoded TemperatureBatch, read in place.
#[napi]
pub fn stats_temperature_sync(buf: &[u8]) -> Result<TemperatureSummary, Code> {
    guard(|| stats::temperature(buf).map(Into::into).map_err(from_kernel))
}

/// Adds `delta` to every value of the batch, in the caller's memory; returns the count.
#[napi]
pub fn stats_temperature_offset_sync(mut buf: Uint8Array, delta: f64) -> Result<f64, Code> {
    // SAFETY: JS is blocked in this synchronous call; nothing else touches the bytes.
    let bytes = unsafe { buf.as_mut() };
    guard(|| {
        stats::temperature_offset(bytes, delta as f32)
            .map(|n| n as f64)
            .map_err(from_kernel)
    })
}

#[napi]
impl NativePool {
    /// Average/min/max on the pool. The job reads the caller's memory (the Uint8Array
    /// reference keeps it alive until the job is dropped) and answers with
    /// `[count, average, min, max]` as 4 little-endian f64 in a 32-byte Buffer.
    #[napi]
    pub fn submit_stats_temperature(&mut self, id: u32, buf: Uint8Array) -> Result<(), Code> {
        self.submit(id, false, move |_| {
            let s = stats::temperature(&buf)?;
            let mut out = Vec::with_capacity(32);
            for x in [
                s.count as f64,
                s.average,
                f64::from(s.min),
                f64::from(s.max),
            ] {
                out.extend_from_slice(&x.to_le_bytes());
            }
            Ok(Outcome::Bytes(out))
        })
    }
}
