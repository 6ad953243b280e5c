//! π's variants of their own: work-sharing with the blocked caller (`parallel`) and
//! libuv AsyncTasks (the paper's addonAsync / addonConAsync). Both count through the
//! registry's `pi.range` (`offthread_kernels::pi`); every other π call goes through the
//! registry's generic entries (`registry.rs`).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offthread_kernels::pi::{self, PiOptions};
use offthread_kernels::{Call, Never, Output};

use crate::arg::Arg;
use crate::error::{Code, CodedResult, from_kernel, guard};
use crate::runtime;

/// Samples [first, first + count) of `seed`'s stream, the registry's `pi.range` on
/// this thread (checked there: the one Rust check of the arguments).
fn count_range(first: f64, count: f64, seed: f64) -> CodedResult<f64> {
    let call = Call {
        input: &[],
        nums: [first, count, seed],
    };
    guard(
        || match (pi::RANGE.run)(&call, &Never).map_err(from_kernel)? {
            Output::Number(inside) => Ok(inside),
            _ => unreachable!("pi.range answers a number"),
        },
    )
}

/// Work-shared count: the calling thread and the sync pool's threads pull chunks of one
/// stream; blocks the calling thread.
#[napi(ts_args_type = "samples: number, seed: number")]
pub fn pi_count_parallel_sync(Arg(samples): Arg<f64>, Arg(seed): Arg<f64>) -> Result<f64, Code> {
    let opts = PiOptions::from_f64(samples, seed).map_err(from_kernel)?;
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
        Ok(count_range(self.first, self.count, self.seed))
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
