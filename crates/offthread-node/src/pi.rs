//! π's variants of their own: work-sharing with the blocked caller (`parallel`), and the
//! libuv task by its old name (`piCountRangeUv`). Every other π call goes through the
//! registry's generic entries (`registry.rs`).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offthread_kernels::pi::{self, PiOptions};

use crate::arg::Arg;
use crate::error::{Code, from_kernel, guard};
use crate::registry::{JobInput, KernelTask};
use crate::runtime;

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

/// One napi AsyncTask on libuv's thread pool (the paper's `addonAsync`; with
/// `first`/`count` chunks from JS, its `addonConAsync`): `kernelCallUv` of the
/// registry's `pi.range`, kept by name for src/queue and the async bench.
#[napi(
    ts_args_type = "first: number, count: number, seed: number",
    ts_return_type = "Promise<number>"
)]
pub fn pi_count_range_uv(
    Arg(first): Arg<f64>,
    Arg(count): Arg<f64>,
    Arg(seed): Arg<f64>,
) -> AsyncTask<KernelTask> {
    KernelTask::start(
        pi::RANGE,
        JobInput::Text(String::new()),
        [first, count, seed],
    )
}
