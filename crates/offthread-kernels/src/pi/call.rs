//! π as registry kernels. Numbers `[first, count, seed]`, no input; the result is
//! `inside` for samples [first, first + count) of `seed`'s stream.
//!
//! * `pi.range`: the fast division-free kernel (every product variant);
//! * `pi.rangeReference`: the definition's `%` step and division (the `native` variant).
//!
//! Both check their interrupt every [`CHUNK_SAMPLES`] and, on a rayon thread (a pool
//! job), share the range between the pool's threads (work-stealing), as one pool job
//! always did. Chunking changes no count: jump-ahead puts each chunk where it belongs.

use offthread_core::registry::{Call, KernelDef, Output};

use super::{CHUNK_SAMPLES, PiOptions, count_reference, lanes, samples_from_f64, state_at};
use crate::{Interrupt, KernelError};

/// Counts `n` samples whose first draw follows stream state `state`.
pub type CountFn = fn(u32, u64) -> u64;

/// A checked range call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PiRange {
    pub first: u64,
    pub count: u64,
    pub seed: i64,
}

impl PiRange {
    /// From JS numbers: the one Rust check of a range call's arguments (napi, C ABI, wasm).
    pub fn from_f64(first: f64, count: f64, seed: f64) -> Result<Self, KernelError> {
        let PiOptions { samples, seed } = PiOptions::from_f64(count, seed)?;
        Ok(Self {
            first: samples_from_f64(first)?,
            count: samples,
            seed,
        })
    }
}

/// `inside` for the range, counted by `count` in chunks that each check `interrupt`.
pub fn count_checked(
    r: PiRange,
    count: CountFn,
    interrupt: &dyn Interrupt,
) -> Result<u64, KernelError> {
    if on_a_pool(r) {
        #[cfg(feature = "parallel")]
        return count_shared(r, count, interrupt);
    }
    let mut inside = 0;
    let mut done = 0;
    while done < r.count {
        interrupt.check()?;
        let n = (r.count - done).min(CHUNK_SAMPLES);
        inside += count(state_at(r.seed, r.first + done), n);
        done += n;
    }
    Ok(inside)
}

/// Whether this range is shared between the threads of the rayon pool we run on.
fn on_a_pool(r: PiRange) -> bool {
    #[cfg(feature = "parallel")]
    return rayon::current_thread_index().is_some() && r.count > MIN_SHARED_CHUNK;
    #[cfg(not(feature = "parallel"))]
    return {
        let _ = r;
        false
    };
}

/// Smallest chunk the threads of a pool share (≈ 30 µs of the fast kernel).
#[cfg(feature = "parallel")]
const MIN_SHARED_CHUNK: u64 = 1 << 16;

/// The range in chunks on the current rayon pool: ≈ 8 per thread, from
/// [`MIN_SHARED_CHUNK`] to [`CHUNK_SAMPLES`] samples, each checking `interrupt`.
#[cfg(feature = "parallel")]
pub fn count_shared(
    r: PiRange,
    count: CountFn,
    interrupt: &dyn Interrupt,
) -> Result<u64, KernelError> {
    use rayon::prelude::*;
    let threads = rayon::current_num_threads() as u64;
    let chunk = r
        .count
        .div_ceil(threads * 8)
        .clamp(MIN_SHARED_CHUNK, CHUNK_SAMPLES);
    (0..r.count.div_ceil(chunk))
        .into_par_iter()
        .map(|i| {
            interrupt.check()?;
            let at = i * chunk;
            let n = (r.count - at).min(chunk);
            Ok(count(state_at(r.seed, r.first + at), n))
        })
        .try_reduce(|| 0, |a, b| Ok(a + b))
}

/// A range call counted by `count`: the registered kernels, and the wasm build's own
/// `pi.range` (its f64x2 kernel, `offthread-wasm/src/pi_simd.rs`).
pub fn run_range(
    call: &Call<'_>,
    count: CountFn,
    interrupt: &dyn Interrupt,
) -> Result<Output, KernelError> {
    let [first, n, seed] = call.nums;
    let r = PiRange::from_f64(first, n, seed)?;
    count_checked(r, count, interrupt).map(|inside| Output::Number(inside as f64))
}

/// `pi.range(first, count, seed)`: the fast kernel.
pub const RANGE: KernelDef = KernelDef {
    name: "pi.range",
    run: |call, interrupt| run_range(call, lanes::count_inside, interrupt),
};

/// `pi.rangeReference(first, count, seed)`: the definition as written.
pub const RANGE_REFERENCE: KernelDef = KernelDef {
    name: "pi.rangeReference",
    run: |call, interrupt| run_range(call, count_reference, interrupt),
};
