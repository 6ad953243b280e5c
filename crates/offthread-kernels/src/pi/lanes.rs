//! The fast π kernel: division-free, SIMD-friendly, bit-identical to the definition.
//!
//! Lanes: 8 independent sub-streams of the *same* sequence. In a block of 16 draws,
//! lane j owns draws 2j (x) and 2j+1 (y); every lane advances by a^16 per block, so the
//! lanes together walk the sequence in order and can never diverge from it.
//!
//! The test: with X = s_x − 1, Y = s_y − 1, D = m − 1 the definition asks
//! fl(fl(X/D)² + fl(Y/D)²) ≤ 1. Each of its four roundings is ≤ 2^-53 relative, so it
//! can only disagree with the exact integer test X² + Y² ≤ D² when
//! |X² + Y² − D²| ≤ D²·2^-50 < 2^13. We count with integers against D² − 2^16 and
//! D² + 2^16; when the two counts of a slice differ (probability ~10^-14 per sample),
//! that slice is recounted with the f64 definition. Integers never round.

use super::prng::{MODULUS, jump_multiplier, mul_mod, reduce};

const LANES: usize = 8;
/// Half-width of the band around D² where the f64 test is consulted.
const BAND: u64 = 1 << 16;
const D: u64 = MODULUS - 1;
const D2: u64 = D * D;
// The rounding bound D²·2^-50 must sit well inside the band (checked at compile time).
const _: () = assert!((D2 >> 50) * 4 < BAND);

/// Samples per slice: the unit that is recounted exactly if it touches the band.
const SLICE_BLOCKS: u64 = 512;

/// Counts samples inside the quarter circle for `samples` samples whose first draw
/// follows stream state `state`.
pub fn count_inside(state: u32, samples: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { count_inside_avx512(state, samples) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { count_inside_avx2(state, samples) };
        }
    }
    count_inside_generic(state, samples)
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

#[inline(always)]
fn count_inside_generic(state: u32, samples: u64) -> u64 {
    let blocks = samples / LANES as u64;
    let mut s = u64::from(state);
    let mut inside = 0;
    let mut done_blocks = 0;
    while done_blocks < blocks {
        let n = (blocks - done_blocks).min(SLICE_BLOCKS);
        inside += count_slice(s, n);
        s = mul_mod(s, jump_multiplier(n * 2 * LANES as u64));
        done_blocks += n;
    }
    inside + count_reference(s as u32, samples % LANES as u64)
}

/// `blocks` full blocks of LANES samples starting after state `s`.
#[inline(always)]
fn count_slice(s: u64, blocks: u64) -> u64 {
    let step = jump_multiplier(2 * LANES as u64);
    let mut xs = [0u32; LANES];
    let mut ys = [0u32; LANES];
    let mut cur = s;
    for j in 0..LANES {
        cur = mul_mod(cur, super::prng::MULTIPLIER);
        xs[j] = cur as u32;
        cur = mul_mod(cur, super::prng::MULTIPLIER);
        ys[j] = cur as u32;
    }
    let mut low = [0u64; LANES];
    let mut high = [0u64; LANES];
    for _ in 0..blocks {
        for j in 0..LANES {
            let x = u64::from(xs[j] - 1);
            let y = u64::from(ys[j] - 1);
            let r = x * x + y * y;
            low[j] += u64::from(r <= D2 - BAND);
            high[j] += u64::from(r <= D2 + BAND);
            xs[j] = reduce(step * u64::from(xs[j])) as u32;
            ys[j] = reduce(step * u64::from(ys[j])) as u32;
        }
    }
    let low: u64 = low.iter().sum();
    let high: u64 = high.iter().sum();
    if low == high {
        low
    } else {
        count_reference(s as u32, blocks * LANES as u64)
    }
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
    reduce(super::prng::MULTIPLIER * u64::from(s)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pi::prng::to_unit;

    #[test]
    fn unit_of_extremes() {
        assert_eq!(to_unit(1), 0.0);
        assert!(to_unit((MODULUS - 1) as u32) < 1.0);
    }
}
