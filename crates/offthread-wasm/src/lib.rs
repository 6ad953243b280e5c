//! offthread kernels for WebAssembly (and any C-ABI host): plain `extern "C"`
//! exports, numbers in and out, no wasm-bindgen.
//!
//! Counts travel as f64 (exact below 2^53) so JS never meets BigInt. Errors are
//! returned as negative numbers: −1 invalid samples, −2 invalid seed.

use offthread_kernels::pi::{self, Method, PiOptions};

pub mod abi;
pub mod filters;
pub mod layout;
pub mod pi_simd;
pub mod registry;

/// The count, or the negative code of the first bad argument (−1 samples, −2 seed).
fn count(first: f64, samples: f64, seed: f64, method: Method) -> f64 {
    let checked = pi::samples_from_f64(first)
        .and_then(|first| Ok((first, PiOptions::from_f64(samples, seed)?)));
    let (first, PiOptions { samples, seed }) = match checked {
        Ok(v) => v,
        Err(e) => return f64::from(abi::error_return(e.code)),
    };
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
