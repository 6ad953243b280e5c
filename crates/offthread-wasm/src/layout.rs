//! The layout experiment's variants (offthread_kernels::layout) in the WASM build.

use offthread_kernels::layout;

/// Runs layout variant `variant` (0 native … 6 aop) `reps` times over `n` scooters;
/// returns the distances' checksum (f64, exact below 2^53) or −1 for an unknown variant.
#[unsafe(no_mangle)]
pub extern "C" fn layout_run(variant: u32, n: u32, reps: u32, speed: u32) -> f64 {
    layout::run(variant as usize, n as usize, reps, speed).map_or(-1.0, |s| s as f64)
}
