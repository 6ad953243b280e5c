//! Monte Carlo π (Kyriakou & Tselikas 2022), bit-identical in every variant.
//!
//! Each sample draws x then y from one Park–Miller stream and counts
//! x·x + y·y ≤ 1 in f64. Work is split with jump-ahead (a^k mod m), never with other
//! seeds, so every method and every chunking returns the same `inside`.

mod call;
mod lanes;
pub mod prng;

pub use call::{CountFn, PiRange, RANGE, RANGE_REFERENCE, count_checked, run_range};
pub use lanes::{count_in_slices, count_reference, lane_starts, settle_band, step_division_free};
pub use prng::{MAX_SEED_MAGNITUDE, ParkMiller, jump_multiplier, normalize_seed};

use crate::{ErrorCode, Interrupt, KernelError};

/// Largest sample count accepted: 2^53, so counts stay exact as JS numbers.
pub const MAX_SAMPLES: u64 = 1 << 53;

/// Samples per cancellation check (≈1 ms of the fast kernel on one core).
pub const CHUNK_SAMPLES: u64 = 1 << 21;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PiOptions {
    pub samples: u64,
    pub seed: i64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PiResult {
    /// 4·inside/samples; NaN when samples is 0.
    pub estimate: f64,
    pub inside: u64,
    pub samples: u64,
    /// The seed as given (normalisation is internal).
    pub seed: i64,
}

/// How the count is computed on one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// The definition as written: `%` reduction and f64 division per draw.
    Reference,
    /// Division-free, eight lanes, SIMD (AVX-512/AVX2/SSE2 picked at run time).
    Fast,
}

/// A sample count or index given as a JS number (f64 across napi, the C ABI and wasm):
/// an integer from 0 to [`MAX_SAMPLES`], else `ERR_INVALID_SAMPLES`.
pub fn samples_from_f64(x: f64) -> Result<u64, KernelError> {
    if x >= 0.0 && x.fract() == 0.0 && x <= MAX_SAMPLES as f64 {
        Ok(x as u64)
    } else {
        Err(KernelError::new(
            ErrorCode::InvalidSamples,
            format!("samples must be an integer from 0 to 2^53, got {x}"),
        ))
    }
}

/// A seed given as a JS number: a safe integer, else `ERR_INVALID_SEED`.
pub fn seed_from_f64(x: f64) -> Result<i64, KernelError> {
    if x.fract() == 0.0 && x.abs() <= MAX_SEED_MAGNITUDE as f64 {
        Ok(x as i64)
    } else {
        Err(KernelError::new(
            ErrorCode::InvalidSeed,
            format!("seed must be a safe integer, got {x}"),
        ))
    }
}

impl PiOptions {
    /// From JS numbers: the one place the bindings (napi, C ABI, wasm) check them.
    pub fn from_f64(samples: f64, seed: f64) -> Result<Self, KernelError> {
        Ok(Self {
            samples: samples_from_f64(samples)?,
            seed: seed_from_f64(seed)?,
        })
    }

    pub fn validate(self) -> Result<Self, KernelError> {
        if self.samples > MAX_SAMPLES {
            return Err(KernelError::new(
                ErrorCode::InvalidSamples,
                format!(
                    "samples must be an integer from 0 to 2^53, got {}",
                    self.samples
                ),
            ));
        }
        if self.seed.unsigned_abs() > MAX_SEED_MAGNITUDE as u64 {
            return Err(KernelError::new(
                ErrorCode::InvalidSeed,
                format!("seed must be a safe integer, got {}", self.seed),
            ));
        }
        Ok(self)
    }
}

fn result(opts: PiOptions, inside: u64) -> PiResult {
    PiResult {
        estimate: 4.0 * inside as f64 / opts.samples as f64,
        inside,
        samples: opts.samples,
        seed: opts.seed,
    }
}

/// Stream state just before the first draw of sample `first_sample`.
pub fn state_at(seed: i64, first_sample: u64) -> u32 {
    let mut rng = ParkMiller::new(seed);
    rng.jump(2 * first_sample);
    rng.state()
}

/// Counts `count` samples starting at sample index `first` of the stream for `seed`.
/// The building block for every chunked variant (JS chunks, pool chunks, workers).
pub fn count_range(seed: i64, first: u64, count: u64, method: Method) -> u64 {
    let state = state_at(seed, first);
    match method {
        Method::Reference => count_reference(state, count),
        Method::Fast => lanes::count_inside(state, count),
    }
}

/// Single-thread estimate, checking `interrupt` every [`CHUNK_SAMPLES`].
pub fn estimate(
    opts: PiOptions,
    method: Method,
    interrupt: &dyn Interrupt,
) -> Result<PiResult, KernelError> {
    let opts = opts.validate()?;
    let mut inside = 0;
    let mut first = 0;
    while first < opts.samples {
        interrupt.check()?;
        let n = (opts.samples - first).min(CHUNK_SAMPLES);
        inside += count_range(opts.seed, first, n, method);
        first += n;
    }
    Ok(result(opts, inside))
}

/// Work-stealing estimate on the current rayon pool (the caller's `install` scope),
/// fast method, chunks of at most [`CHUNK_SAMPLES`] each checking `interrupt`.
#[cfg(feature = "parallel")]
pub fn estimate_parallel(
    opts: PiOptions,
    interrupt: &dyn Interrupt,
) -> Result<PiResult, KernelError> {
    let opts = opts.validate()?;
    let range = PiRange {
        first: 0,
        count: opts.samples,
        seed: opts.seed,
    };
    let inside = call::count_shared(range, lanes::count_inside, interrupt)?;
    Ok(result(opts, inside))
}

/// Work-sharing estimate for a *blocked caller* (the sync `parallel` variant): the
/// calling thread and `pool.current_num_threads() - 1` helper tasks pull chunks from
/// one atomic counter. The caller never waits for a helper to wake up — a helper that
/// starts late finds no work — only for chunks already claimed (≤ one chunk's time).
#[cfg(feature = "parallel")]
pub fn estimate_shared(opts: PiOptions, pool: &rayon::ThreadPool) -> Result<PiResult, KernelError> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    struct Shared {
        seed: i64,
        samples: u64,
        chunk: u64,
        chunks: u64,
        next: AtomicU64,
        done: AtomicU64,
        inside: AtomicU64,
    }

    impl Shared {
        /// Claims and counts chunks until none are left.
        fn work(&self) {
            loop {
                let i = self.next.fetch_add(1, Ordering::Relaxed);
                if i >= self.chunks {
                    return;
                }
                let first = i * self.chunk;
                let n = (self.samples - first).min(self.chunk);
                let c = count_range(self.seed, first, n, Method::Fast);
                self.inside.fetch_add(c, Ordering::Relaxed);
                self.done.fetch_add(1, Ordering::Release);
            }
        }
    }

    let opts = opts.validate()?;
    let threads = pool.current_num_threads().max(1) as u64;
    // ≈ 8 chunks per thread; 2^14 samples (≈ 10 µs) at least, CHUNK_SAMPLES at most.
    let chunk = opts
        .samples
        .div_ceil(threads * 8)
        .clamp(1 << 14, CHUNK_SAMPLES);
    let shared = Arc::new(Shared {
        seed: opts.seed,
        samples: opts.samples,
        chunk,
        chunks: opts.samples.div_ceil(chunk),
        next: AtomicU64::new(0),
        done: AtomicU64::new(0),
        inside: AtomicU64::new(0),
    });
    for _ in 1..threads.min(shared.chunks) {
        let helper = Arc::clone(&shared);
        pool.spawn(move || helper.work());
    }
    shared.work();
    while shared.done.load(Ordering::Acquire) < shared.chunks {
        std::thread::yield_now();
    }
    Ok(result(opts, shared.inside.load(Ordering::Relaxed)))
}
