//! The layout experiment's variants, native build (for `npm run bench -- layout`).

use napi_derive::napi;
use offthread_kernels::layout;

/// Runs layout variant `variant` (0 native … 6 aop) `reps` times over `n` scooters;
/// returns the distances' checksum, or −1 for an unknown variant.
#[napi]
pub fn layout_run_sync(variant: u32, n: u32, reps: u32, speed: u32) -> f64 {
    layout::run(variant as usize, n as usize, reps, speed).map_or(-1.0, |s| s as f64)
}
