//! The π kernel for wasm32 SIMD128, in f64x2 lanes.
//!
//! The shared kernel (`offthread_kernels::pi`, lanes of u64) leans on 64-bit lane
//! multiplies, which V8 lowers badly in SIMD128 (~6 ns/sample). Here every quantity is
//! an f64, where the arithmetic is exact or is the definition itself:
//!
//! * step: p = a·s < 2^46 is exact; q = ⌊p·2^-31⌋ is exact (a power-of-two scale and
//!   floor); r = p − q·m = (p mod 2^31) + q < 2^31 + 2^15 (2^31 ≡ 1 mod m), every term
//!   an integer below 2^53, so exact; one conditional subtraction of m gives a·s mod m.
//! * test, division-free as in the shared kernel: with X = s_x − 1, Y = s_y − 1 and
//!   D = m − 1 the definition can only disagree with the exact X² + Y² ≤ D² when
//!   |X² + Y² − D²| < 2^13 (lanes.rs). Here r = X·X + Y·Y is computed in f64: the two
//!   products and the sum (all below 2^63) are each rounded by at most half an ulp,
//!   2^8 + 2^8 + 2^9 = 2^10 in all. A sample with r ≤ D² − 2^16 is therefore inside and
//!   one with r > D² + 2^16 outside, both with margin; a slice where the two thresholds
//!   count differently holds a sample in the band (≈10^-14 per sample) and is recounted
//!   with the definition. No division (two per sample before: 2.3× slower).
//!
//! Layout as in the shared kernel: a slice of the stream is cut into `LANES` contiguous
//! runs; lane j starts at its run's first draw (jump-ahead) and the last lane ends where
//! the slice ends, which is the next slice's start state. Tails use the definition.

use offthread_kernels::pi::prng::MODULUS;
use offthread_kernels::pi::{count_in_slices, lane_starts, settle_band};

/// f64x2 vectors in flight (independent chains keep the pipelines full).
const VECTORS: usize = 8;
const LANES: usize = 2 * VECTORS;
/// Samples per lane in a full slice.
const RUN: u64 = 1024;
/// Half-width of the band around D² where a slice falls back to the definition.
const BAND: f64 = 65_536.0;
const D: f64 = (MODULUS - 1) as f64;
// D² is 2^62 − 2^33 + 4 and rounds to 2^62 − 2^33 in f64 (4 below half an ulp); the
// thresholds then round to multiples of 2^10, moving them by at most 2^9: still outside
// the 2^13 + 2^10 the argument above needs.
const LOW: f64 = D * D - BAND;
const HIGH: f64 = D * D + BAND;

/// `inside` for `samples` samples whose first draw follows stream state `state`.
pub fn count_inside(state: u32, samples: u64) -> u64 {
    count_in_slices(state, samples, LANES, RUN, count_slice)
}

/// Lane start states as f64 (exact: every state is below 2^31).
fn lane_starts_f64(s: u64, run_jump: u64) -> [f64; LANES] {
    lane_starts::<LANES>(s, run_jump).map(|x| x as f64)
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn count_slice(s: u64, run: u64, run_jump: u64) -> (u64, u64) {
    use core::arch::wasm32::*;

    let a = f64x2_splat(16807.0);
    let m = f64x2_splat(MODULUS as f64);
    let inv_2_31 = f64x2_splat(1.0 / 2_147_483_648.0);
    let one = f64x2_splat(1.0);
    let low_t = f64x2_splat(LOW);
    let high_t = f64x2_splat(HIGH);

    #[inline(always)]
    fn step(s: v128, a: v128, m: v128, inv_2_31: v128) -> v128 {
        let p = f64x2_mul(s, a);
        let q = f64x2_floor(f64x2_mul(p, inv_2_31));
        let r = f64x2_sub(p, f64x2_mul(q, m));
        // r − m where r ≥ m: the mask's all-ones lanes keep m's bits, the others give +0.
        f64x2_sub(r, v128_and(f64x2_ge(r, m), m))
    }

    let starts = lane_starts_f64(s, run_jump);
    let mut lanes = [f64x2_splat(0.0); VECTORS];
    for (v, lane) in lanes.iter_mut().enumerate() {
        *lane = f64x2(starts[2 * v], starts[2 * v + 1]);
    }
    let mut low = [i64x2_splat(0); VECTORS];
    let mut high = [i64x2_splat(0); VECTORS];
    for _ in 0..run {
        for v in 0..VECTORS {
            let x = step(lanes[v], a, m, inv_2_31);
            let y = step(x, a, m, inv_2_31);
            lanes[v] = y;
            let dx = f64x2_sub(x, one);
            let dy = f64x2_sub(y, one);
            let r = f64x2_add(f64x2_mul(dx, dx), f64x2_mul(dy, dy));
            // A true comparison is −1 in every bit: subtracting it counts one.
            low[v] = i64x2_sub(low[v], f64x2_le(r, low_t));
            high[v] = i64x2_sub(high[v], f64x2_le(r, high_t));
        }
    }
    let total = |c: [v128; VECTORS]| -> u64 {
        c.iter()
            .map(|c| i64x2_extract_lane::<0>(*c) as u64 + i64x2_extract_lane::<1>(*c) as u64)
            .sum()
    };
    let next = f64x2_extract_lane::<1>(lanes[VECTORS - 1]) as u64;
    (
        settle_band(total(low), total(high), s, run * LANES as u64),
        next,
    )
}

/// The same computation lane by lane in plain f64 (other targets, and the tests).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn count_slice(s: u64, run: u64, run_jump: u64) -> (u64, u64) {
    count_slice_scalar(s, run, run_jump)
}

#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
fn count_slice_scalar(s: u64, run: u64, run_jump: u64) -> (u64, u64) {
    count_slice_scalar_with_band(s, run, run_jump, LOW, HIGH)
}

/// `count_slice_scalar` with the thresholds as parameters, so a test can force the recount.
fn count_slice_scalar_with_band(
    s: u64,
    run: u64,
    run_jump: u64,
    low_t: f64,
    high_t: f64,
) -> (u64, u64) {
    let m = MODULUS as f64;
    let step = |s: f64| {
        let p = s * 16807.0;
        let q = (p * (1.0 / 2_147_483_648.0)).floor();
        let r = p - q * m;
        if r >= m { r - m } else { r }
    };
    let mut lanes = lane_starts_f64(s, run_jump);
    let (mut low, mut high) = (0, 0);
    for _ in 0..run {
        for lane in &mut lanes {
            let x = step(*lane);
            let y = step(x);
            *lane = y;
            let (dx, dy) = (x - 1.0, y - 1.0);
            let r = dx * dx + dy * dy;
            low += u64::from(r <= low_t);
            high += u64::from(r <= high_t);
        }
    }
    (
        settle_band(low, high, s, run * LANES as u64),
        lanes[LANES - 1] as u64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use offthread_kernels::pi::{Method, count_range, count_reference, jump_multiplier, state_at};

    #[test]
    fn equals_the_shared_kernel() {
        for seed in [1, 7, -3, 0, 2_147_483_646, (1 << 53) - 1] {
            for n in [
                0,
                1,
                15,
                16,
                17,
                1023,
                16 * 1024,
                16 * 1024 + 5,
                100_003,
                1_000_001,
            ] {
                assert_eq!(
                    count_inside(state_at(seed, 0), n),
                    count_range(seed, 0, n, Method::Reference),
                    "seed {seed} n {n}"
                );
            }
        }
        assert_eq!(count_inside(state_at(1, 0), 100_000), 78_463);
    }

    #[test]
    fn slices_chain_through_the_last_lane() {
        let s = u64::from(state_at(5, 0));
        let (_, next) = count_slice_scalar(s, 64, jump_multiplier(128));
        assert_eq!(next, u64::from(state_at(5, 64 * LANES as u64)));
    }

    #[test]
    fn a_slice_in_the_band_is_recounted_with_the_definition() {
        // A band as wide as the whole range makes every slice disagree between the two
        // thresholds, so each goes through count_reference: the count must not change.
        for seed in [1, 99] {
            let s = u64::from(state_at(seed, 0));
            let (want, _) = count_slice_scalar(s, 64, jump_multiplier(128));
            let (got, _) =
                count_slice_scalar_with_band(s, 64, jump_multiplier(128), -1.0, f64::MAX);
            assert_eq!(got, want, "seed {seed}");
            assert_eq!(want, count_reference(s as u32, 64 * LANES as u64));
        }
    }

    #[test]
    fn f64_thresholds_keep_their_margin() {
        // The rounded thresholds stay ≥ 2^13 + 2^10 away from the exact D².
        let d2 = (MODULUS - 1) as i128 * (MODULUS - 1) as i128;
        assert!(d2 - LOW as i128 >= (1 << 13) + (1 << 10));
        assert!(HIGH as i128 - d2 >= (1 << 13) + (1 << 10));
    }

    #[test]
    fn every_step_is_the_modular_product() {
        let m = MODULUS as f64;
        for s in [
            1u64,
            2,
            16806,
            127_773,
            127_774,
            MODULUS - 2,
            MODULUS - 1,
            1 << 30,
        ] {
            let p = s as f64 * 16807.0;
            let q = (p * (1.0 / 2_147_483_648.0)).floor();
            let r = p - q * m;
            let r = if r >= m { r - m } else { r };
            assert_eq!(r as u64, s * 16807 % MODULUS, "s = {s}");
        }
    }
}
