//! offthread kernels for WebAssembly (and any C-ABI host): plain `extern "C"`
//! exports, numbers in and out, no wasm-bindgen.
//!
//! Counts travel as f64 (exact below 2^53) so JS never meets BigInt. Errors are
//! returned as negative numbers: −1 invalid samples, −2 invalid seed.

use offthread_kernels::pi::{self, Method, PiOptions};

pub mod abi;
pub mod filters;
pub mod layout;
pub mod md5;
pub mod pi_simd;
pub mod qr;
pub mod stats;

fn to_u64(x: f64) -> Option<u64> {
    (x >= 0.0 && x.fract() == 0.0 && x <= pi::MAX_SAMPLES as f64).then_some(x as u64)
}

fn to_seed(x: f64) -> Option<i64> {
    (x.fract() == 0.0 && x.abs() <= pi::MAX_SEED_MAGNITUDE as f64).then_some(x as i64)
}

fn count(first: f64, samples: f64, seed: f64, method: Method) -> f64 {
    let (Some(first), Some(samples)) = (to_u64(first), to_u64(samples)) else {
        return -1.0;
    };
    let Some(seed) = to_seed(seed) else {
        return -2.0;
    };
    if (PiOptions { samples, seed }).validate().is_err() {
        return -1.0;
    }
    match method {
        Method::Fast => pi_simd::count_inside(pi::state_at(seed, first), samples) as f64,
        Method::Reference => pi::count_range(seed, first, samples, method) as f64,
    }
}

/// `inside` for samples [first, first + samples) of the stream for `seed`,
/// fast method (f64x2 lanes, `pi_simd`).
#[unsafe(no_mangle)]
pub extern "C" fn pi_count_range(first: f64, samples: f64, seed: f64) -> f64 {
    count(first, samples, seed, Method::Fast)
}

/// As `pi_count_range`, with the definition's `%` step and per-draw division.
#[unsafe(no_mangle)]
pub extern "C" fn pi_count_range_reference(first: f64, samples: f64, seed: f64) -> f64 {
    count(first, samples, seed, Method::Reference)
}
