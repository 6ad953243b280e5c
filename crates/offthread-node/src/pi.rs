//! π: one private `count_impl`, exposed sync, as a libuv AsyncTask (the paper's
//! addonAsync), as per-chunk AsyncTasks (addonConAsync), and work-stealing.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offthread_kernels::pi::{self, Method, PiOptions};

use crate::arg::Arg;
use crate::error::{Code, CodedResult, from_kernel, guard};
use crate::runtime::{self, NativePool, Outcome};

/// Arguments arrive as JS numbers already validated by the TS facade; the binding is
/// public too, so the kernel's own constructor checks them again (the one Rust check).
pub(crate) fn options(samples: f64, seed: f64) -> CodedResult<PiOptions> {
    PiOptions::from_f64(samples, seed).map_err(from_kernel)
}

fn method(fast: bool) -> Method {
    if fast {
        Method::Fast
    } else {
        Method::Reference
    }
}

/// Counts samples [first, first + count) of the stream for `seed`.
fn count_impl(first: f64, count: f64, seed: f64, fast: bool) -> Result<f64, Code> {
    let opts = options(count, seed)?;
    let first = pi::samples_from_f64(first).map_err(from_kernel)?;
    guard(|| Ok(pi::count_range(opts.seed, first, opts.samples, method(fast)) as f64))
}

/// `inside` for `samples` samples on the calling thread. `fast`: division-free SIMD
/// kernel (`nativeBitwise`) instead of the straight port (`native`).
#[napi(ts_args_type = "samples: number, seed: number, fast: boolean")]
pub fn pi_count_sync(
    Arg(samples): Arg<f64>,
    Arg(seed): Arg<f64>,
    Arg(fast): Arg<bool>,
) -> Result<f64, Code> {
    count_impl(0.0, samples, seed, fast)
}

/// `inside` for samples [first, first + count): the unit of every chunked variant.
#[napi(ts_args_type = "first: number, count: number, seed: number")]
pub fn pi_count_range_sync(
    Arg(first): Arg<f64>,
    Arg(count): Arg<f64>,
    Arg(seed): Arg<f64>,
) -> Result<f64, Code> {
    count_impl(first, count, seed, true)
}

/// Work-shared count: the calling thread and the sync pool's threads pull chunks of one
/// stream; blocks the calling thread.
#[napi(ts_args_type = "samples: number, seed: number")]
pub fn pi_count_parallel_sync(Arg(samples): Arg<f64>, Arg(seed): Arg<f64>) -> Result<f64, Code> {
    let opts = options(samples, seed)?;
    guard(|| {
        pi::estimate_shared(opts, runtime::sync_pool())
            .map(|r| r.inside as f64)
            .map_err(from_kernel)
    })
}

pub struct PiRangeTask {
    first: f64,
    count: f64,
    seed: f64,
}

impl Task for PiRangeTask {
    /// The count or the coded error. A `napi::Error` returned from `compute` carries
    /// only a napi status (every failure was GenericFailure, a panic lost
    /// ERR_KERNEL_PANIC); the JS error is built in `resolve`, on the JS thread, with
    /// the registry code.
    type Output = CodedResult<f64>;
    type JsValue = f64;

    fn compute(&mut self) -> Result<Self::Output> {
        Ok(count_impl(self.first, self.count, self.seed, true))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<f64> {
        output.map_err(|e| {
            // napi-rs rejects with this exact JS value (err.code included).
            napi::Error::from_unknown_without_coercion(JsError::from(e).into_unknown(env))
        })
    }
}

/// One napi AsyncTask on libuv's thread pool (the paper's `addonAsync`; with
/// `first`/`count` chunks from JS, its `addonConAsync`). Kept for comparison: the
/// offthread pool is the product.
#[napi(
    ts_args_type = "first: number, count: number, seed: number",
    ts_return_type = "Promise<number>"
)]
pub fn pi_count_range_uv(
    Arg(first): Arg<f64>,
    Arg(count): Arg<f64>,
    Arg(seed): Arg<f64>,
) -> AsyncTask<PiRangeTask> {
    AsyncTask::new(PiRangeTask { first, count, seed })
}

#[napi]
impl NativePool {
    /// π count on the pool (work-stealing inside the job), checking cancellation
    /// between chunks.
    #[napi(ts_args_type = "id: number, samples: number, seed: number, cancellable: boolean")]
    pub fn submit_pi(
        &mut self,
        Arg(id): Arg<u32>,
        Arg(samples): Arg<f64>,
        Arg(seed): Arg<f64>,
        Arg(cancellable): Arg<bool>,
    ) -> Result<(), Code> {
        let opts = options(samples, seed)?;
        self.submit(id, cancellable, move |ctx| {
            pi::estimate_parallel(opts, ctx).map(|r| Outcome::Number(r.inside as f64))
        })
    }
}
