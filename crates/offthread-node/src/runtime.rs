//! The bridge between the offthread pool and JS Promises.
//!
//! JS gives every async call an integer id and keeps its resolvers. A job runs on the
//! pool; its outcome goes into one `Completions` list, and only the push that finds the
//! list empty wakes the JS loop (one threadsafe-function call per *batch*). JS then
//! calls `drain(out)`, which copies `[id, kind, number]` triples into a Float64Array
//! it owns: numeric results (π counts, no-ops) never allocate a JS object. Strings,
//! buffers and errors wait in `values` until JS takes them by id.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use offthread_kernels::{Interrupt, KernelError};

use crate::error::{Code, CodedError, coded, panic_message};

/// Payload kinds written into `drain`'s triples.
const KIND_NUMBER: f64 = 0.0;
const KIND_VALUE: f64 = 1.0;
const KIND_ERROR: f64 = 2.0;

/// What a finished job hands back.
pub enum Outcome {
    Number(f64),
    Text(String),
    Bytes(Vec<u8>),
    Error { code: &'static str, message: String },
}

impl From<KernelError> for Outcome {
    fn from(e: KernelError) -> Self {
        Outcome::Error {
            code: e.code.as_str(),
            message: e.message,
        }
    }
}

type Wake = ThreadsafeFunction<(), (), (), Status, false, true>;

struct Shared {
    pool: rayon::ThreadPool,
    completions: Mutex<Vec<(u32, Outcome)>>,
    wake: Wake,
    /// Cancel flags of jobs that can be cancelled (only calls with a signal/timeout).
    cancels: Mutex<HashMap<u32, Arc<AtomicBool>>>,
    max_queue: usize,
    queued: AtomicUsize,
    running: AtomicUsize,
    completed: AtomicU64,
    failed: AtomicU64,
    cancelled: AtomicU64,
    closed: AtomicBool,
}

impl Shared {
    fn complete(&self, id: u32, outcome: Outcome) {
        let was_empty = {
            let mut list = self.completions.lock().unwrap_or_else(|e| e.into_inner());
            list.push((id, outcome));
            list.len() == 1
        };
        if was_empty {
            self.wake.call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

/// The process-wide pool used by sync work-stealing calls (`parallel`).
fn sync_pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("offthread-sync-{i}"))
            .build()
            .expect("cannot start the offthread pool")
    })
}

/// Runs `f` inside the pool (its `par_iter`s use the pool's threads) and waits.
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    sync_pool().install(f)
}

/// A pool of native threads whose jobs resolve JS promises in batches.
#[napi]
pub struct NativePool {
    shared: Arc<Shared>,
    referenced: bool,
    values: HashMap<u32, Outcome>,
}

pub(crate) struct CancelFlag(Option<Arc<AtomicBool>>);

impl Interrupt for CancelFlag {
    fn check(&self) -> std::result::Result<(), KernelError> {
        self.0.as_deref().map_or(Ok(()), Interrupt::check)
    }
}

#[napi]
impl NativePool {
    /// `threads` 0 = available parallelism; `max_queue` 0 = unbounded. `on_ready` is
    /// called (once per batch) when completions are waiting for `drain`.
    #[napi(constructor)]
    pub fn new(threads: u32, max_queue: u32, on_ready: Function<(), ()>) -> Result<Self> {
        let wake = on_ready
            .build_threadsafe_function::<()>()
            .weak::<true>()
            .callee_handled::<false>()
            .build()?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads as usize)
            .thread_name(|i| format!("offthread-{i}"))
            .build()
            .map_err(|e| napi::Error::from_reason(e.to_string()))?;
        Ok(Self {
            shared: Arc::new(Shared {
                pool,
                completions: Mutex::new(Vec::with_capacity(1024)),
                wake,
                cancels: Mutex::new(HashMap::new()),
                max_queue: if max_queue == 0 {
                    usize::MAX
                } else {
                    max_queue as usize
                },
                queued: AtomicUsize::new(0),
                running: AtomicUsize::new(0),
                completed: AtomicU64::new(0),
                failed: AtomicU64::new(0),
                cancelled: AtomicU64::new(0),
                closed: AtomicBool::new(false),
            }),
            referenced: false,
            values: HashMap::new(),
        })
    }

    #[napi(getter)]
    pub fn threads(&self) -> u32 {
        self.shared.pool.current_num_threads() as u32
    }

    /// Queues `job`; its result completes `id`.
    pub(crate) fn submit(
        &self,
        id: u32,
        cancellable: bool,
        job: impl FnOnce(&CancelFlag) -> Outcome + Send + 'static,
    ) -> std::result::Result<(), CodedError> {
        let shared = &self.shared;
        if shared.closed.load(Ordering::Relaxed) {
            return Err(coded("ERR_POOL_CLOSED", "the pool is closed"));
        }
        if shared.queued.fetch_add(1, Ordering::Relaxed) >= shared.max_queue {
            shared.queued.fetch_sub(1, Ordering::Relaxed);
            return Err(coded(
                "ERR_QUEUE_FULL",
                format!("the pool's queue is full (maxQueue {})", shared.max_queue),
            ));
        }
        let flag = cancellable.then(|| {
            let flag = Arc::new(AtomicBool::new(false));
            shared
                .cancels
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(id, flag.clone());
            flag
        });
        let shared = Arc::clone(shared);
        self.shared.pool.spawn_fifo(move || {
            shared.queued.fetch_sub(1, Ordering::Relaxed);
            let cancel = CancelFlag(flag);
            let outcome = if let Err(e) = cancel.check() {
                e.into()
            } else {
                shared.running.fetch_add(1, Ordering::Relaxed);
                let outcome =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&cancel)))
                        .unwrap_or_else(|p| Outcome::Error {
                            code: crate::error::KERNEL_PANIC,
                            message: panic_message(&*p),
                        });
                shared.running.fetch_sub(1, Ordering::Relaxed);
                outcome
            };
            if cancel.0.is_some() {
                shared
                    .cancels
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id);
            }
            let counter = match &outcome {
                Outcome::Error {
                    code: "ERR_ABORTED" | "ERR_TIMEOUT",
                    ..
                } => &shared.cancelled,
                Outcome::Error { .. } => &shared.failed,
                _ => &shared.completed,
            };
            counter.fetch_add(1, Ordering::Relaxed);
            shared.complete(id, outcome);
        });
        Ok(())
    }

    /// π count on the pool (work-stealing inside the job), checking cancellation
    /// between chunks.
    #[napi]
    pub fn submit_pi(
        &self,
        id: u32,
        samples: f64,
        seed: f64,
        cancellable: bool,
    ) -> Result<(), Code> {
        let opts = crate::pi::options(samples, seed)?;
        self.submit(
            id,
            cancellable,
            move |cancel| match offthread_kernels::pi::estimate_parallel(opts, cancel) {
                Ok(r) => Outcome::Number(r.inside as f64),
                Err(e) => e.into(),
            },
        )
    }

    /// A trivial job that returns `value`: the unit of the `async` benchmark.
    #[napi]
    pub fn submit_noop(&self, id: u32, value: f64) -> Result<(), Code> {
        self.submit(id, false, move |_| Outcome::Number(value))
    }

    /// Test hook: a job that panics (becomes ERR_KERNEL_PANIC).
    #[napi]
    pub fn submit_panic(&self, id: u32) -> Result<(), Code> {
        self.submit(id, false, |_| panic!("test panic requested"))
    }

    /// Test hook: a job that runs until cancelled, checking every millisecond.
    #[napi]
    pub fn submit_spin(&self, id: u32) -> Result<(), Code> {
        self.submit(id, true, |cancel| {
            loop {
                if let Err(e) = cancel.check() {
                    return e.into();
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        })
    }

    /// Marks job `id` cancelled: a queued job is skipped, a running one stops at its
    /// next check. Unknown ids (already finished) are ignored.
    #[napi]
    pub fn cancel(&self, id: u32) {
        if let Some(flag) = self
            .shared
            .cancels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
        {
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// Moves up to `out.length / 3` completions into `out` as [id, kind, number]
    /// triples and returns how many. kind 0: the number is the result; 1 and 2: call
    /// `take(id)` for the value or the error.
    #[napi]
    pub fn drain(&mut self, mut out: Float64ArraySlice) -> u32 {
        // SAFETY: JS is blocked in this synchronous call, so nothing else touches the
        // array while we write it.
        let out = unsafe { out.as_mut() };
        let capacity = out.len() / 3;
        let mut list = self
            .shared
            .completions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let n = list.len().min(capacity);
        for (slot, (id, outcome)) in out.chunks_exact_mut(3).zip(list.drain(..n)) {
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

    /// The value (string, Buffer) or error (`[code, message]`) of a drained job.
    #[napi(ts_return_type = "string | Buffer | [string, string] | undefined")]
    pub fn take<'env>(&mut self, env: &'env Env, id: u32) -> Result<Unknown<'env>> {
        match self.values.remove(&id) {
            None | Some(Outcome::Number(_)) => ().into_unknown(env),
            Some(Outcome::Text(s)) => s.into_unknown(env),
            Some(Outcome::Bytes(b)) => BufferSlice::from_data(env, b)?.into_unknown(env),
            Some(Outcome::Error { code, message }) => {
                vec![code.to_owned(), message].into_unknown(env)
            }
        }
    }

    /// Keeps the process alive while JS awaits jobs (`true` when the first job is
    /// pending, `false` when the last one settles). The wake-up function is created
    /// weak, so an idle pool never holds the process open.
    #[napi]
    pub fn keep_alive(&mut self, env: &Env, on: bool) -> Result<()> {
        if on == self.referenced {
            return Ok(());
        }
        let raw = self.shared.wake.raw();
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
        let s = &self.shared;
        NativePoolStats {
            threads: s.pool.current_num_threads() as u32,
            queued: s.queued.load(Ordering::Relaxed) as f64,
            running: s.running.load(Ordering::Relaxed) as f64,
            completed: s.completed.load(Ordering::Relaxed) as f64,
            failed: s.failed.load(Ordering::Relaxed) as f64,
            cancelled: s.cancelled.load(Ordering::Relaxed) as f64,
        }
    }

    /// Stops accepting jobs; queued and running jobs still complete.
    #[napi]
    pub fn close(&self) {
        self.shared.closed.store(true, Ordering::Relaxed);
    }

    /// Stops accepting jobs and cancels every cancellable queued or running job.
    #[napi]
    pub fn destroy(&self) {
        self.close();
        for flag in self
            .shared
            .cancels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
        {
            flag.store(true, Ordering::Relaxed);
        }
    }
}

#[napi(object)]
pub struct NativePoolStats {
    pub threads: u32,
    pub queued: f64,
    pub running: f64,
    pub completed: f64,
    pub failed: f64,
    pub cancelled: f64,
}
