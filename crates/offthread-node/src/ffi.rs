//! A plain C ABI over the same kernel, for the paper's `ffi-napi` row (called from JS
//! through koffi). Not napi: koffi loads this `.node` file as an ordinary shared object.

use offthread_kernels::pi::{self, Method, PiOptions};

/// `inside` for `samples` samples of the stream for `seed` (f64 in and out: exact below
/// 2^53). `method`: 0 = reference, 1 = fast. Negative return = invalid input.
#[unsafe(no_mangle)]
pub extern "C" fn offthread_pi_count(samples: f64, seed: f64, method: u32) -> f64 {
    let Ok(opts) = PiOptions::from_f64(samples, seed) else {
        return -1.0;
    };
    let method = if method == 0 {
        Method::Reference
    } else {
        Method::Fast
    };
    // Never unwind into C: a panic becomes the error value.
    std::panic::catch_unwind(|| pi::count_range(opts.seed, 0, opts.samples, method) as f64)
        .unwrap_or(-2.0)
}
