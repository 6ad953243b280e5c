//! Bench and test hooks, compiled only with the `test-hooks` feature (the test build of
//! the addon, never the one `npm run package` ships): jobs that panic or spin until
//! cancelled, and the layout experiment's variants.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offthread_kernels::layout;

use crate::arg::Arg;
use crate::runtime::NativePool;

#[napi]
impl NativePool {
    /// Test hook: a job that panics (becomes ERR_KERNEL_PANIC).
    #[napi(ts_args_type = "id: number")]
    pub fn submit_panic(&mut self, Arg(id): Arg<u32>) -> Result<(), crate::error::Code> {
        self.submit(id, false, |_| panic!("test panic requested"))
    }

    /// Test hook: a job that runs until cancelled, checking every millisecond.
    #[napi(ts_args_type = "id: number")]
    pub fn submit_spin(&mut self, Arg(id): Arg<u32>) -> Result<(), crate::error::Code> {
        use offthread_kernels::Interrupt;
        self.submit(id, true, |ctx| {
            loop {
                ctx.check()?;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        })
    }
}

/// Runs layout variant `variant` (0 native … 6 aop) `reps` times over `n` scooters;
/// returns the distances' checksum, or −1 for an unknown variant.
#[napi(ts_args_type = "variant: number, n: number, reps: number, speed: number")]
pub fn layout_run_sync(
    Arg(variant): Arg<u32>,
    Arg(n): Arg<u32>,
    Arg(reps): Arg<u32>,
    Arg(speed): Arg<u32>,
) -> f64 {
    layout::run(variant as usize, n as usize, reps, speed).map_or(-1.0, |s| s as f64)
}
