//! The bridge between the offthread pool (`offthread-pool`) and JS Promises.
//!
//! JS gives every async call an integer id and keeps its resolvers. A job runs on the
//! pool; its outcome goes into one `CompletionQueue`, and only the push that finds the
//! queue empty wakes the JS loop (one threadsafe-function call per *batch*). JS then
//! calls `drain(out)`, which copies `[id, kind, number]` triples into a Float64Array
//! it owns: numeric results (π counts, no-ops) never allocate a JS object. Strings,
//! buffers and errors wait in `values` until JS takes them by id.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use offthread_kernels::KernelError;
use offthread_pool::{
    CompletionQueue, JobContext, JobError, JobHandle, JobOptions, Percentiles, Pool, PoolConfig,
    PoolError,
};

use crate::arg::Arg;
use crate::error::{Code, CodedError, coded};

/// Payload kinds written into `drain`'s triples.
const KIND_NUMBER: f64 = 0.0;
const KIND_VALUE: f64 = 1.0;
const KIND_ERROR: f64 = 2.0;

/// What a finished job hands back.
pub enum Outcome {
    Number(f64),
    Text(String),
    Bytes(Vec<u8>),
    /// This many bytes, from the start, were written into the job's [`Lent`] Buffer.
    Lent(usize),
    Error {
        code: &'static str,
        message: String,
    },
}

impl From<KernelError> for Outcome {
    fn from(e: KernelError) -> Self {
        Outcome::Error {
            code: e.code.as_str(),
            message: e.message,
        }
    }
}

impl From<JobError> for Outcome {
    fn from(e: JobError) -> Self {
        match e {
            JobError::Kernel(k) => k.into(),
            other => Outcome::Error {
                code: other.code(),
                message: without_code(other.code(), other.to_string()),
            },
        }
    }
}

fn pool_error(e: PoolError) -> CodedError {
    coded(e.code(), without_code(e.code(), e.to_string()))
}

/// A pool error's text for JS: `err.code` carries the code, so the message does not
/// start with it again (the Rust `Display` does: "ERR_QUEUE_FULL: the queue is full …").
fn without_code(code: &str, text: String) -> String {
    match text.strip_prefix(code).and_then(|t| t.strip_prefix(": ")) {
        Some(rest) => rest.to_owned(),
        None => text,
    }
}

type Wake = ThreadsafeFunction<(), (), (), Status, false, true>;

/// What jobs need after they leave the JS thread: where to put the outcome, how to wake JS.
struct Shared {
    completions: CompletionQueue<(u32, Outcome)>,
    wake: Wake,
    /// The JS object was collected: nobody will drain, so jobs still finishing do not
    /// wake the loop.
    orphaned: AtomicBool,
}

/// The process-wide pool used by sync work-stealing calls (`parallel`): the caller
/// blocks on it, so it runs at normal priority.
pub fn sync_pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("offthread-sync-{i}"))
            .build()
            .expect("cannot start the offthread pool")
    })
}

/// A pool of native threads whose jobs resolve JS promises in batches.
#[napi]
pub struct NativePool {
    /// `None` after `release()`.
    pool: Option<Pool>,
    shared: Option<Arc<Shared>>,
    /// Handles of cancellable jobs (calls with a signal or timeout). JS thread only.
    handles: HashMap<u32, JobHandle>,
    /// Drained completions not yet copied out (when more than one `out` holds).
    backlog: VecDeque<(u32, Outcome)>,
    values: HashMap<u32, Outcome>,
    /// Buffers the binding made for jobs to write into (filters.rs), by job id: JS sees
    /// one only through `take`, after its job is done, so nothing can transfer it away
    /// from under the job. JS thread only.
    pub(crate) lent: HashMap<u32, Lent>,
    referenced: bool,
}

/// A Buffer a job writes into, kept alive by a reference until the job is dropped
/// (`done`, set by the job when it is dropped, after running or unrun).
pub(crate) struct Lent {
    pub done: Arc<AtomicBool>,
    pub buffer: Uint8Array,
}

fn millis(p: Percentiles) -> LatencyStats {
    LatencyStats {
        p50: p.p50 as f64 / 1e6,
        p99: p.p99 as f64 / 1e6,
        max: p.max as f64 / 1e6,
    }
}

#[napi]
impl NativePool {
    /// `threads` 0 = available parallelism; `max_queue` 0 = unbounded; `nice` the
    /// workers' Unix nice value (0–19). `on_ready` is called (once per batch) when
    /// completions are waiting for `drain`.
    #[napi(
        constructor,
        ts_args_type = "threads: number, maxQueue: number, nice: number, onReady: () => void"
    )]
    pub fn new(
        Arg(threads): Arg<u32>,
        Arg(max_queue): Arg<u32>,
        Arg(nice): Arg<u32>,
        Arg(on_ready): Arg<Function<(), ()>>,
    ) -> Result<Self, Code> {
        let wake = on_ready
            .build_threadsafe_function::<()>()
            .weak::<true>()
            .callee_handled::<false>()
            .build()
            .map_err(|e| coded("ERR_INVALID_ARG", e.reason.clone()))?;
        let pool = Pool::new(PoolConfig {
            threads: (threads > 0).then_some(threads as usize),
            max_queue: (max_queue > 0).then_some(max_queue as usize),
            thread_name: "offthread".to_owned(),
            nice: Some(nice as i32),
        })
        .map_err(pool_error)?;
        Ok(Self {
            pool: Some(pool),
            shared: Some(Arc::new(Shared {
                completions: CompletionQueue::new(),
                wake,
                orphaned: AtomicBool::new(false),
            })),
            handles: HashMap::new(),
            backlog: VecDeque::new(),
            values: HashMap::new(),
            lent: HashMap::new(),
            referenced: false,
        })
    }

    #[napi(getter)]
    pub fn threads(&self) -> u32 {
        self.pool.as_ref().map_or(0, |p| p.threads() as u32)
    }

    /// Queues `job`; its outcome completes `id`.
    pub(crate) fn submit(
        &mut self,
        id: u32,
        cancellable: bool,
        job: impl FnOnce(&JobContext) -> std::result::Result<Outcome, KernelError> + Send + 'static,
    ) -> std::result::Result<(), CodedError> {
        let (Some(pool), Some(shared)) = (&self.pool, &self.shared) else {
            return Err(coded("ERR_POOL_CLOSED", "the pool was released"));
        };
        let shared = Arc::clone(shared);
        let on_done = move |outcome: offthread_pool::JobOutcome<Outcome>| {
            let outcome = outcome.unwrap_or_else(Outcome::from);
            if shared.completions.push((id, outcome)) && !shared.orphaned.load(Ordering::Relaxed) {
                shared
                    .wake
                    .call((), ThreadsafeFunctionCallMode::NonBlocking);
            }
        };
        let handle = pool
            .submit(JobOptions::default(), job, on_done)
            .map_err(pool_error)?;
        if cancellable {
            self.handles.insert(id, handle);
        }
        Ok(())
    }

    /// A trivial job that returns `value`: the unit of the `async` benchmark.
    #[napi(ts_args_type = "id: number, value: number")]
    pub fn submit_noop(&mut self, Arg(id): Arg<u32>, Arg(value): Arg<f64>) -> Result<(), Code> {
        self.submit(id, false, move |_| Ok(Outcome::Number(value)))
    }

    /// Spins for at most `micros` µs until a completion is waiting; returns whether one
    /// is (then call `drain`). JS calls this when a lone job should finish within
    /// microseconds, instead of sleeping in epoll and paying a wake-up per round trip.
    #[napi(ts_args_type = "micros: number")]
    pub fn await_completion(&self, Arg(micros): Arg<u32>) -> bool {
        let Some(shared) = &self.shared else {
            return false;
        };
        shared
            .completions
            .wait_briefly(std::time::Duration::from_micros(u64::from(
                micros.min(1000),
            )))
    }

    /// Cancels job `id`: a queued job completes at once with ERR_ABORTED without
    /// running, a running one stops at its next check. Unknown ids are ignored.
    #[napi(ts_args_type = "id: number")]
    pub fn cancel(&mut self, Arg(id): Arg<u32>) {
        if let Some(handle) = self.handles.get(&id) {
            handle.cancel();
        }
    }

    /// Moves up to `out.length / 3` completions into `out` as [id, kind, number]
    /// triples and returns how many. kind 0: the number is the result; 1 and 2: call
    /// `take(id)` for the value or the error.
    #[napi(ts_args_type = "out: Float64Array")]
    pub fn drain(&mut self, Arg(mut out): Arg<Float64ArraySlice>) -> u32 {
        // SAFETY: JS is blocked in this synchronous call, so nothing else touches the
        // array while we write it.
        let out = unsafe { out.as_mut() };
        if let (true, Some(shared)) = (self.backlog.is_empty(), &self.shared) {
            self.backlog.extend(shared.completions.drain());
        }
        let n = self.backlog.len().min(out.len() / 3);
        for (slot, (id, outcome)) in out.chunks_exact_mut(3).zip(self.backlog.drain(..n)) {
            if !self.handles.is_empty() {
                self.handles.remove(&id);
            }
            // A lent Buffer of a job that failed (or never ran) is not handed out.
            if !self.lent.is_empty() && !matches!(outcome, Outcome::Lent(_)) {
                self.lent.remove(&id);
            }
            slot[0] = f64::from(id);
            slot[1] = match outcome {
                Outcome::Number(x) => {
                    slot[2] = x;
                    KIND_NUMBER
                }
                other => {
                    let kind = if matches!(other, Outcome::Error { .. }) {
                        KIND_ERROR
                    } else {
                        KIND_VALUE
                    };
                    self.values.insert(id, other);
                    kind
                }
            };
        }
        n as u32
    }

    /// The value (string, Buffer, a lent Buffer's bytes) or error (`[code, message]`) of
    /// a drained job; undefined once taken.
    #[napi(
        ts_args_type = "id: number",
        ts_return_type = "string | Buffer | Uint8Array | [string, string] | undefined"
    )]
    pub fn take<'env>(&mut self, env: &'env Env, Arg(id): Arg<u32>) -> Result<Unknown<'env>> {
        match self.values.remove(&id) {
            None | Some(Outcome::Number(_)) => ().into_unknown(env),
            Some(Outcome::Text(s)) => s.into_unknown(env),
            Some(Outcome::Bytes(b)) => BufferSlice::from_data(env, b)?.into_unknown(env),
            Some(Outcome::Lent(n)) => match self.lent.remove(&id) {
                Some(lent) => first_bytes(env, lent.buffer, n),
                None => ().into_unknown(env),
            },
            Some(Outcome::Error { code, message }) => {
                vec![code.to_owned(), message].into_unknown(env)
            }
        }
    }

    /// Keeps the process alive while JS awaits jobs (`true` when the first job is
    /// pending, `false` when the last one settles). The wake-up function is created
    /// weak, so an idle pool never holds the process open.
    #[napi(ts_args_type = "on: boolean")]
    pub fn keep_alive(&mut self, env: &Env, Arg(on): Arg<bool>) -> Result<()> {
        let Some(shared) = &self.shared else {
            return Ok(());
        };
        if on == self.referenced {
            return Ok(());
        }
        let raw = shared.wake.raw();
        // SAFETY: called on the JS thread that owns `env`; `raw` is alive while `shared` is.
        let status = unsafe {
            if on {
                napi::sys::napi_ref_threadsafe_function(env.raw(), raw)
            } else {
                napi::sys::napi_unref_threadsafe_function(env.raw(), raw)
            }
        };
        if status != napi::sys::Status::napi_ok {
            return Err(napi::Error::from_reason(
                "cannot (un)reference the wake-up function",
            ));
        }
        self.referenced = on;
        Ok(())
    }

    #[napi]
    pub fn stats(&self) -> NativePoolStats {
        let s = self.pool.as_ref().map(Pool::stats).unwrap_or_default();
        NativePoolStats {
            threads: s.threads as u32,
            queued: s.queued as f64,
            running: s.running as f64,
            completed: s.completed as f64,
            failed: s.failed as f64,
            cancelled: s.cancelled as f64,
            wait_time: millis(s.wait_time),
            run_time: millis(s.run_time),
        }
    }

    /// Stops accepting jobs; queued and running jobs still complete.
    #[napi]
    pub fn close(&self) {
        if let Some(pool) = &self.pool {
            pool.close();
        }
    }

    /// Stops accepting jobs and cancels every queued and running job.
    #[napi]
    pub fn destroy(&self) {
        if let Some(pool) = &self.pool {
            pool.destroy();
        }
    }

    /// Frees the threads and the wake-up function once JS has nothing pending. The
    /// pool is dropped on a helper thread (dropping joins the workers), so the JS
    /// thread never waits for a job's last chunk.
    #[napi]
    pub fn release(&mut self) {
        self.free(false);
    }
}

/// The first `n` bytes of a lent Buffer, as a Uint8Array over the same memory.
fn first_bytes<'env>(env: &'env Env, buffer: Uint8Array, n: usize) -> Result<Unknown<'env>> {
    let raw = env.raw();
    // SAFETY: Node-API calls on the JS thread, with values of this call.
    unsafe {
        let value = Uint8Array::to_napi_value(raw, buffer)?;
        let (mut kind, mut len, mut data) = (0, 0, std::ptr::null_mut());
        let (mut arraybuffer, mut offset) = (std::ptr::null_mut(), 0);
        check_status!(napi::sys::napi_get_typedarray_info(
            raw,
            value,
            &mut kind,
            &mut len,
            &mut data,
            &mut arraybuffer,
            &mut offset
        ))?;
        let mut view = std::ptr::null_mut();
        check_status!(napi::sys::napi_create_typedarray(
            raw,
            napi::sys::TypedarrayType::uint8_array,
            n.min(len),
            arraybuffer,
            offset,
            &mut view
        ))?;
        Unknown::from_napi_value(raw, view)
    }
}

impl NativePool {
    /// Stops the pool (`cancel`: cancels its jobs too), joins its threads on a helper
    /// thread, and lets go of the wake-up function: it is released once the last job
    /// still holding `shared` has finished.
    fn free(&mut self, cancel: bool) {
        if let Some(pool) = self.pool.take() {
            if cancel {
                pool.destroy();
            } else {
                pool.close();
            }
            let spawned = std::thread::Builder::new()
                .name("offthread-release".to_owned())
                .spawn(move || drop(pool));
            // No thread to spare: the closure, and the pool with it, was dropped here,
            // joining in place (after destroy, within a job's last chunk).
            if let Err(e) = spawned {
                eprintln!("offthread: joined the pool's threads on the JS thread ({e})");
            }
        }
        self.shared = None;
        // A job still writing keeps its Buffer: leak the reference rather than free
        // memory under it (only a pool released mid-job gets here).
        for (_, l) in self.lent.drain() {
            if !l.done.load(Ordering::Acquire) {
                std::mem::forget(l.buffer);
            }
        }
        self.handles.clear();
        self.values.clear();
        self.backlog.clear();
    }
}

/// A pool whose JS object is collected without `close()`/`destroy()` (the JS side holds
/// it only weakly from its wake-up callback): cancel its jobs, free its threads off the
/// JS thread (the finalizer must not wait for a running job, which a plain drop of the
/// last `Pool` handle would), and release the wake-up function.
impl Drop for NativePool {
    fn drop(&mut self) {
        if let Some(shared) = &self.shared {
            shared.orphaned.store(true, Ordering::Relaxed);
        }
        self.free(true);
    }
}

#[napi(object)]
pub struct LatencyStats {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

#[napi(object)]
pub struct NativePoolStats {
    pub threads: u32,
    pub queued: f64,
    pub running: f64,
    pub completed: f64,
    pub failed: f64,
    pub cancelled: f64,
    /// Queue wait in ms (p50, p99, max).
    pub wait_time: LatencyStats,
    /// Run time in ms (p50, p99, max).
    pub run_time: LatencyStats,
}
