//! The fast π kernel: division-free, SIMD-friendly, bit-identical to the definition.
//!
//! Lanes: a slice of the stream is cut into LANES contiguous runs; lane j starts at its
//! run's first draw (jump-ahead) and steps by a = 16807 like the definition. Since
//! a·s < 2^46, one fold reduces it (2^31 ≡ 1 mod m), and the lanes are independent, so
//! the compiler keeps them in SIMD registers (AVX-512: 4 × 8 lanes). The last lane ends
//! exactly where the slice ends, which gives the next slice its start state for free.
//!
//! The test: with X = s_x − 1, Y = s_y − 1, D = m − 1 the definition asks
//! fl(fl(X/D)² + fl(Y/D)²) ≤ 1. Each of its four roundings is ≤ 2^-53 relative, so it
//! can only disagree with the exact integer test X² + Y² ≤ D² when
//! |X² + Y² − D²| ≤ D²·2^-50 < 2^13. We count with integers against D² − 2^16 and
//! D² + 2^16; when the two counts of a slice differ (probability ~10^-14 per sample),
//! that slice is recounted with the f64 definition. Integers never round.

use super::prng::{MODULUS, MULTIPLIER, jump_multiplier, mul_mod};

const LANES: usize = 32;
/// Half-width of the band around D² where the f64 test is consulted.
const BAND: u64 = 1 << 16;
const D: u64 = MODULUS - 1;
const D2: u64 = D * D;
/// Samples per lane in a full slice (a slice is LANES × this many samples).
const RUN: u64 = 1024;

// The rounding bound D²·2^-50 must sit well inside the band (checked at compile time).
const _: () = assert!((D2 >> 50) * 4 < BAND);

/// Counts samples inside the quarter circle for `samples` samples whose first draw
/// follows stream state `state`.
pub fn count_inside(state: u32, samples: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let cap = simd_cap();
        if cap >= SimdCap::Avx512 && std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { count_inside_avx512(state, samples) };
        }
        if cap >= SimdCap::Avx2 && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { count_inside_avx2(state, samples) };
        }
    }
    count_inside_generic(state, samples)
}

/// The widest x86 vectors `count_inside` may use.
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum SimdCap {
    Sse2,
    Avx2,
    Avx512,
}

/// All the CPU has, unless `OFFTHREAD_PI_SIMD=sse2|avx2` caps it (read once). The browser
/// experiment uses it to time native code at WASM's 128-bit vector width.
#[cfg(target_arch = "x86_64")]
fn simd_cap() -> SimdCap {
    static CAP: std::sync::OnceLock<SimdCap> = std::sync::OnceLock::new();
    *CAP.get_or_init(|| match std::env::var("OFFTHREAD_PI_SIMD").as_deref() {
        Ok("sse2") => SimdCap::Sse2,
        Ok("avx2") => SimdCap::Avx2,
        _ => SimdCap::Avx512,
    })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq")]
unsafe fn count_inside_avx512(state: u32, samples: u64) -> u64 {
    count_inside_generic(state, samples)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn count_inside_avx2(state: u32, samples: u64) -> u64 {
    count_inside_generic(state, samples)
}

// An always-inlined closure, not the fn item `count_slice`: the slice loop must be
// compiled inside the AVX-512/AVX2 callers (passing the fn item lost them: 1.85 instead
// of 0.64 ns/sample), which clippy's redundant-closure lint cannot know.
#[allow(clippy::redundant_closure)]
#[inline(always)]
fn count_inside_generic(state: u32, samples: u64) -> u64 {
    count_in_slices(
        state,
        samples,
        LANES,
        RUN,
        #[inline(always)]
        |s, run, jump| count_slice(s, run, jump),
    )
}

/// The slicing every lane kernel shares (this one and the WASM build's f64x2 one):
/// full slices of `lanes` runs × `run` samples, one shorter slice for the tail, then the
/// last < `lanes` samples by the definition. `count_slice(s, run, jump)` counts one
/// slice from state `s` (`jump` = a^(2·run)) and returns its count and the state after
/// it. Tiny inputs go straight to the definition (no jump multipliers to compute).
#[inline(always)]
pub fn count_in_slices(
    state: u32,
    samples: u64,
    lanes: usize,
    run: u64,
    mut count_slice: impl FnMut(u64, u64, u64) -> (u64, u64),
) -> u64 {
    let lanes = lanes as u64;
    if samples < lanes {
        return count_reference(state, samples);
    }
    let mut s = u64::from(state);
    let mut left = samples;
    let mut inside = 0;
    let full_jump = jump_multiplier(2 * run);
    while left >= lanes * run {
        let (count, next) = count_slice(s, run, full_jump);
        inside += count;
        s = next;
        left -= lanes * run;
    }
    let tail_run = left / lanes;
    if tail_run > 0 {
        let (count, next) = count_slice(s, tail_run, jump_multiplier(2 * tail_run));
        inside += count;
        s = next;
        left -= lanes * tail_run;
    }
    inside + count_reference(s as u32, left)
}

/// Start states of `N` contiguous runs: s, s·J, s·J², … with J = a^(2·run).
#[inline(always)]
pub fn lane_starts<const N: usize>(s: u64, run_jump: u64) -> [u64; N] {
    let mut lanes = [0u64; N];
    let mut cur = s;
    for lane in &mut lanes {
        *lane = cur;
        cur = mul_mod(cur, run_jump);
    }
    lanes
}

/// A slice's count from its counts against the low and high band thresholds: exact when
/// they agree, else (a sample in the band) the slice recounted with the definition.
pub fn settle_band(low: u64, high: u64, s: u64, samples: u64) -> u64 {
    if low == high {
        low
    } else {
        count_reference(s as u32, samples)
    }
}

/// One division-free step: a·s mod m for s < m (a·s < 2^46, so one fold suffices).
#[inline(always)]
fn step(s: u64) -> u64 {
    let p = MULTIPLIER * s;
    let r = (p & MODULUS) + (p >> 31);
    if r >= MODULUS { r - MODULUS } else { r }
}

/// LANES runs of `run` samples from state `s`; `run_jump` = a^(2·run). Returns the
/// count and the state after the slice.
#[inline(always)]
fn count_slice(s: u64, run: u64, run_jump: u64) -> (u64, u64) {
    count_slice_with_band(s, run, run_jump, BAND)
}

/// `count_slice` with the band as a parameter, so a test can force the exact recount.
#[inline(always)]
fn count_slice_with_band(s: u64, run: u64, run_jump: u64, band: u64) -> (u64, u64) {
    let mut lanes: [u64; LANES] = lane_starts(s, run_jump);
    let mut low = [0u64; LANES];
    let mut high = [0u64; LANES];
    for _ in 0..run {
        for j in 0..LANES {
            let x = step(lanes[j]);
            let y = step(x);
            lanes[j] = y;
            let r = (x - 1) * (x - 1) + (y - 1) * (y - 1);
            low[j] += u64::from(r <= D2 - band);
            high[j] += u64::from(r <= D2 + band);
        }
    }
    let count = settle_band(low.iter().sum(), high.iter().sum(), s, run * LANES as u64);
    (count, lanes[LANES - 1])
}

/// The definition, sample by sample (used for tails and the rare band slices).
pub fn count_reference(state: u32, samples: u64) -> u64 {
    let mut rng = super::prng::ParkMiller::from_state(state);
    let mut inside = 0;
    for _ in 0..samples {
        let x = rng.next_f64();
        let y = rng.next_f64();
        inside += u64::from(x * x + y * y <= 1.0);
    }
    inside
}

/// Division-free single-stream step used by the `native` (straight port) comparison
/// and by tests: identical outputs to `ParkMiller::next`.
#[inline(always)]
pub fn step_division_free(s: u32) -> u32 {
    step(u64::from(s)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pi::prng::to_unit;

    #[test]
    fn a_slice_touching_the_band_is_recounted_exactly() {
        // A band of ±D²/4 catches many samples, so low ≠ high and the slice takes the
        // f64 path; the count must still equal the definition's.
        let state = crate::pi::state_at(1, 0);
        let (count, next) =
            count_slice_with_band(u64::from(state), 64, jump_multiplier(128), D2 / 4);
        assert_eq!(count, count_reference(state, 64 * LANES as u64));
        assert_eq!(next, u64::from(crate::pi::state_at(1, 64 * LANES as u64)));
    }

    #[test]
    fn unit_of_extremes() {
        assert_eq!(to_unit(1), 0.0);
        assert!(to_unit((MODULUS - 1) as u32) < 1.0);
    }
}
