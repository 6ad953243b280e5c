//! The one batch-statistics call that is not a registry kernel: it writes into the
//! caller's memory (`stats.temperature` itself is in the registry, `registry.rs`).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offthread_kernels::stats;

use crate::arg::Arg;
use crate::error::{Code, from_kernel, guard};

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
