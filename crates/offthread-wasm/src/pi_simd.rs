//! The π kernel for wasm32 SIMD128, in f64x2 lanes.
//!
//! The shared kernel (`offthread_kernels::pi`, lanes of u64) leans on 64-bit lane
//! multiplies, which V8 lowers badly in SIMD128 (~6 ns/sample). Here every quantity is
//! an f64, where the arithmetic is exact or is the definition itself:
//!
//! * step: p = a·s < 2^46 is exact; q = ⌊p·2^-31⌋ is exact (a power-of-two scale and
//!   floor); r = p − q·m = (p mod 2^31) + q < 2^31 + 2^15 (2^31 ≡ 1 mod m), every term
//!   an integer below 2^53, so exact; one conditional subtraction of m gives a·s mod m.
//! * test: x = (s − 1)/(m − 1) with an f64 division, then x·x + y·y ≤ 1 with separate
//!   multiplies and an add — exactly the definition's operations in IEEE f64 (SIMD128
//!   has no fused multiply-add), so the count is bit-identical without any band.
//!
//! Layout as in the shared kernel: a slice of the stream is cut into `LANES` contiguous
//! runs; lane j starts at its run's first draw (jump-ahead) and the last lane ends where
//! the slice ends, which is the next slice's start state. Tails use the definition.

use offthread_kernels::pi::count_reference;
use offthread_kernels::pi::prng::{MODULUS, jump_multiplier, mul_mod};

/// f64x2 vectors in flight (independent chains keep the pipelines full).
const VECTORS: usize = 8;
const LANES: usize = 2 * VECTORS;
/// Samples per lane in a full slice.
const RUN: u64 = 1024;

/// `inside` for `samples` samples whose first draw follows stream state `state`.
pub fn count_inside(state: u32, samples: u64) -> u64 {
    let mut s = u64::from(state);
    let mut left = samples;
    let mut inside = 0;
    let full_jump = jump_multiplier(2 * RUN);
    while left >= LANES as u64 * RUN {
        let (count, next) = count_slice(s, RUN, full_jump);
        inside += count;
        s = next;
        left -= LANES as u64 * RUN;
    }
    let run = left / LANES as u64;
    if run > 0 {
        let (count, next) = count_slice(s, run, jump_multiplier(2 * run));
        inside += count;
        s = next;
        left -= LANES as u64 * run;
    }
    inside + count_reference(s as u32, left)
}

/// Lane start states: s, s·J, s·J², … with J = a^(2·run); and the state after the slice.
fn lane_starts(s: u64, run_jump: u64) -> ([f64; LANES], u64) {
    let mut starts = [0.0; LANES];
    let mut cur = s;
    for lane in &mut starts {
        *lane = cur as f64;
        cur = mul_mod(cur, run_jump);
    }
    (starts, cur)
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn count_slice(s: u64, run: u64, run_jump: u64) -> (u64, u64) {
    use core::arch::wasm32::*;

    let a = f64x2_splat(16807.0);
    let m = f64x2_splat(MODULUS as f64);
    let inv_2_31 = f64x2_splat(1.0 / 2_147_483_648.0);
    let one = f64x2_splat(1.0);
    let d = f64x2_splat((MODULUS - 1) as f64);

    #[inline(always)]
    fn step(s: v128, a: v128, m: v128, inv_2_31: v128) -> v128 {
        let p = f64x2_mul(s, a);
        let q = f64x2_floor(f64x2_mul(p, inv_2_31));
        let r = f64x2_sub(p, f64x2_mul(q, m));
        // r − m where r ≥ m: the mask's all-ones lanes keep m's bits, the others give +0.
        f64x2_sub(r, v128_and(f64x2_ge(r, m), m))
    }

    let (starts, _) = lane_starts(s, run_jump);
    let mut lanes = [f64x2_splat(0.0); VECTORS];
    for (v, lane) in lanes.iter_mut().enumerate() {
        *lane = f64x2(starts[2 * v], starts[2 * v + 1]);
    }
    let mut counts = [i64x2_splat(0); VECTORS];
    for _ in 0..run {
        for v in 0..VECTORS {
            let x = step(lanes[v], a, m, inv_2_31);
            let y = step(x, a, m, inv_2_31);
            lanes[v] = y;
            let fx = f64x2_div(f64x2_sub(x, one), d);
            let fy = f64x2_div(f64x2_sub(y, one), d);
            let r = f64x2_add(f64x2_mul(fx, fx), f64x2_mul(fy, fy));
            // A true comparison is −1 in every bit: subtracting it counts one.
            counts[v] = i64x2_sub(counts[v], f64x2_le(r, one));
        }
    }
    let mut inside = 0u64;
    for c in counts {
        inside += i64x2_extract_lane::<0>(c) as u64 + i64x2_extract_lane::<1>(c) as u64;
    }
    (inside, f64x2_extract_lane::<1>(lanes[VECTORS - 1]) as u64)
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
    let m = MODULUS as f64;
    let step = |s: f64| {
        let p = s * 16807.0;
        let q = (p * (1.0 / 2_147_483_648.0)).floor();
        let r = p - q * m;
        if r >= m { r - m } else { r }
    };
    let (mut lanes, _) = lane_starts(s, run_jump);
    let mut inside = 0;
    for _ in 0..run {
        for lane in &mut lanes {
            let x = step(*lane);
            let y = step(x);
            *lane = y;
            let fx = (x - 1.0) / (m - 1.0);
            let fy = (y - 1.0) / (m - 1.0);
            inside += u64::from(fx * fx + fy * fy <= 1.0);
        }
    }
    (inside, lanes[LANES - 1] as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use offthread_kernels::pi::{Method, count_range, state_at};

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
