//! offthread-pool: the job runtime that moves CPU work off the JS event loop.
//!
//! Plain Rust: no napi, no wasm. The Node binding submits one job per JS call, gets
//! `on_done` on a worker thread, pushes the outcome to a [`CompletionQueue`] and wakes
//! the JS loop once per batch.
//!
//! ```
//! use std::sync::mpsc;
//! use offthread_kernels::{Interrupt, pi};
//! use offthread_pool::{JobOptions, Pool, PoolConfig};
//!
//! let pool = Pool::new(PoolConfig { threads: Some(2), ..PoolConfig::default() })?;
//! let (tx, rx) = mpsc::channel();
//! pool.submit(
//!     JobOptions::default(),
//!     |ctx| pi::estimate(pi::PiOptions { samples: 100_000, seed: 1 }, pi::Method::Fast, ctx),
//!     move |outcome| tx.send(outcome).unwrap(),
//! )?;
//! assert_eq!(rx.recv().unwrap().unwrap().inside, 78_463);
//! # Ok::<(), offthread_pool::PoolError>(())
//! ```
//!
//! # Design
//!
//! **Threads: rayon's `ThreadPool`.** A job that runs a parallel kernel (`par_iter`)
//! splits over the *same* threads, so async parallel calls never oversubscribe the
//! cores, and [`Pool::install`] gives the sync parallel variant the same pool. rayon
//! also brings tested sleep/wake logic. A pool built directly on crossbeam-deque would
//! need its own parking, and a parallel kernel would then need a second pool: two sets
//! of threads fighting for 2 cores.
//!
//! **Queue: our own FIFO** (a crossbeam `Injector`, already in rayon's tree), drained
//! by at most `threads` rayon tasks ("drain loops"). A submit pushes the job and spawns
//! a drain loop only if fewer than `threads` run, so a busy pool pays no rayon spawn
//! (allocation, global-queue push, sleep-counter traffic) per job. Measured on 2 cores
//! (best of 7, 1,000 no-op jobs queued per round): ≈80 ns submit + ≈130 ns
//! dequeue→`on_done`, against ≈135 + ≈205 ns with one rayon `spawn_fifo` per job, the
//! first version of this crate. Drain loops yield to other rayon work every 50 µs, so
//! `install` calls and a running job's `par_iter` chunks are not starved by a long
//! queue; a drain loop that rayon starts on a thread already draining (inside that
//! yield, or while a job waits in `join`) gives its slot back at once, so slots always
//! mean threads. A drain loop that empties the queue lingers 30 µs before returning its
//! thread to rayon, and `submit` spawns no loop for a job a lingering one will take: a
//! caller awaiting one job at a time then pays no spawn and no futex wake per job. Owning the queue is also what lets [`Pool::destroy`] cancel every queued job
//! at once, which rayon's internal queues cannot offer.
//!
//! **Cancel: a state machine per job** (`QUEUED → RUNNING → DONE`, `QUEUED →
//! CANCELLED`). Whoever wins the CAS out of `QUEUED` owns the closures, so `on_done`
//! runs exactly once, and cancelling a queued job is O(1): its queue entry is skipped
//! when reached. Running jobs poll a flag through [`JobContext`], an
//! [`offthread_core::Interrupt`].
//!
//! **Accounting:** one atomic word holds `queued` and `running` (moving a job from one
//! to the other is one add; idle is zero; `max_queue` is a CAS on it). Outcome counters
//! and the wait/run histograms are per worker (log-linear buckets written only by their
//! worker), merged on [`Pool::stats`]; recording never serialises workers.
//!
//! # Notes for bindings (napi)
//!
//! - **Which thread runs what.** `job` runs on a pool worker. `on_done` runs exactly
//!   once: on the worker that ran (or skipped) the job, or *synchronously on the
//!   cancelling thread* — inside [`JobHandle::cancel`] for a queued job, inside
//!   [`Pool::destroy`] for every queued job (so on the JS thread if JS called them).
//!   `on_idle` callbacks run on the worker that finished last, or at once on the caller.
//! - **No locks held around user code.** The pool calls `job`, `on_done` and `on_idle`
//!   with none of its locks held, and [`CompletionQueue`] never calls out under its
//!   lock, so there is no lock ordering to respect: `on_done` may call `submit`,
//!   `cancel`, `stats`, `CompletionQueue::push`. It must not block on the pool
//!   (`wait_idle` from a worker returns at once instead of deadlocking).
//! - **Closures are dropped off the JS thread.** The job closure and `on_done` are
//!   consumed/dropped on a worker (or on the cancelling thread). Do not capture napi
//!   values or references; keep JS state in a JS-thread table keyed by a job id and
//!   let `on_done` push `(id, outcome)` to a `CompletionQueue`, waking the loop (one
//!   threadsafe-function / `uv_async_send`, non-blocking) only when `push` returns true.
//! - **Dropping the last `Pool` handle blocks** until queued and running jobs finish and
//!   the threads are joined (not when dropped on one of the pool's own workers). In a
//!   JS finalizer call [`Pool::destroy`] first, or have each job's `on_done` hold a
//!   `Pool` clone so the last drop happens on a worker.
//! - **Codes.** [`JobError::code`] / [`PoolError::code`]; the codes this crate adds are
//!   [`ERROR_CODES`] (`ERR_KERNEL_PANIC`, `ERR_INVALID_POOL_OPTIONS`, `ERR_QUEUE_FULL`,
//!   `ERR_POOL_CLOSED`, `ERR_POOL_SPAWN`); `ERR_ABORTED`/`ERR_TIMEOUT` are the kernels'.
//! - **Panics** are caught (job → `ERR_KERNEL_PANIC`; in `on_done`/`on_idle` → logged to
//!   stderr), but the process panic hook still prints them; requires `panic = "unwind"`.
//!
//! Overhead numbers and how they are taken: `examples/overhead.rs`
//! (`cargo run --release -p offthread-pool --example overhead`).

mod completion;
mod error;
mod job;
mod pool;
mod priority;
mod stats;

pub use completion::CompletionQueue;
pub use error::{
    ERR_INVALID_POOL_OPTIONS, ERR_KERNEL_PANIC, ERR_POOL_CLOSED, ERR_POOL_SPAWN, ERR_QUEUE_FULL,
    ERROR_CODES, JobError, PoolError,
};
pub use job::{JobContext, JobHandle, JobOptions, JobOutcome};
pub use pool::{MAX_QUEUE, MAX_THREADS, Pool, PoolConfig, PoolStats};
pub use stats::Percentiles;
