//! The layout experiment's variants, native build (for `npm run bench -- layout`).

use napi_derive::napi;

use crate::arg::Arg;
use offthread_kernels::layout;

/// Runs layout variant `variant` (0 native … 6 aop) `reps` times over `n` scooters;
/// returns the distances' checksum, or −1 for an unknown variant.
#[napi(ts_args_type = "variant: number, n: number, reps: number, speed: number")]
pub fn layout_run_sync(
    Arg(variant): Arg<u32>,
    Arg(n): Arg<u32>,
    Arg(reps): Arg<u32>,
    Arg(speed): Arg<u32>,
) -> f64 {
    layout::run(variant as usize, n as usize, reps, speed).map_or(-1.0, |s| s as f64)
}
