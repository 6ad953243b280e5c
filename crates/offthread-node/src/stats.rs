//! Batch statistics over schema buffers. The sync calls borrow the caller's bytes (JS
//! is blocked meanwhile). The pool job reads a copy taken during the submit call, or,
//! for a SharedArrayBuffer view, the shared memory in place (see `bytes.rs`).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offthread_kernels::stats::{self, TemperatureStats};

use crate::arg::Arg;
use crate::bytes::JobBytes;
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
#[napi(ts_args_type = "buf: Uint8Array")]
pub fn stats_temperature_sync(Arg(buf): Arg<Uint8ArraySlice>) -> Result<TemperatureSummary, Code> {
    guard(|| {
        stats::temperature(&buf)
            .map(Into::into)
            .map_err(from_kernel)
    })
}

/// Adds `delta` to every value of the batch, in the caller's memory; returns the count.
#[napi(ts_args_type = "buf: Uint8Array, delta: number")]
pub fn stats_temperature_offset_sync(
    Arg(mut buf): Arg<Uint8Array>,
    Arg(delta): Arg<f64>,
) -> Result<f64, Code> {
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
    /// Average/min/max on the pool; answers `[count, average, min, max]` as 4
    /// little-endian f64 in a 32-byte Buffer. The bytes are copied during this call
    /// (a transfer could detach and free them under the job), unless `buf` views a
    /// SharedArrayBuffer, which cannot be detached: that one is read in place.
    #[napi(ts_args_type = "id: number, buf: Uint8Array")]
    pub fn submit_stats_temperature(
        &mut self,
        Arg(id): Arg<u32>,
        buf: JobBytes,
    ) -> Result<(), Code> {
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
