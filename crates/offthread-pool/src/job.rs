//! One job: its context (cancel flag, deadline), its handle, and the state machine that
//! decides who calls `on_done`.
//!
//! States: `QUEUED → RUNNING → DONE`, or `QUEUED → CANCELLED`. The worker that wins
//! `QUEUED → RUNNING` or the canceller that wins `QUEUED → CANCELLED` becomes the only
//! owner of the job's closures, so `on_done` runs exactly once and a queued job is
//! cancelled in O(1) without touching the queue (its stale entry is skipped later).

use std::any::Any;
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use offthread_core::{ErrorCode, Interrupt, KernelError};

use crate::error::JobError;
use crate::stats::Outcome;

/// What a job reports to the pool that runs it. The pool's shared state implements it,
/// so this module does not name the pool (no import circle job ↔ pool).
pub(crate) trait Ledger: Send + Sync {
    /// `Pool::destroy` was called: every job counts as cancelled.
    fn is_destroyed(&self) -> bool;
    /// The job left the queue and starts, after waiting `waited_ns`.
    fn started(&self, waited_ns: u64);
    /// The job's closure returned after `ran_ns`; it moves from running to delivering.
    fn ran(&self, ran_ns: u64);
    fn count(&self, outcome: Outcome);
    /// Frees the job's slot, queued (`running == false`) or delivering, once `on_done` returned.
    fn release(&self, running: bool);
}

/// Counts `outcome` and hands it to `on_done` (a panic there is caught: it must not kill
/// the worker or skip the accounting).
fn deliver<T>(ledger: &dyn Ledger, on_done: impl FnOnce(JobOutcome<T>), outcome: JobOutcome<T>) {
    ledger.count(match &outcome {
        Ok(_) => Outcome::Completed,
        Err(JobError::Kernel(_) | JobError::Panicked(_)) => Outcome::Failed,
        Err(JobError::Cancelled | JobError::TimedOut) => Outcome::Cancelled,
    });
    report_callback_panic(
        "on_done",
        catch_unwind(AssertUnwindSafe(|| on_done(outcome))),
    );
}

/// A panic out of a user callback: nobody to return it to, so it is printed.
pub(crate) fn report_callback_panic(what: &str, r: std::thread::Result<()>) {
    if let Err(p) = r {
        // The panic hook has already printed it too.
        eprintln!(
            "offthread-pool: {what} callback panicked: {}",
            panic_message(&*p)
        );
    }
}

/// What `on_done` receives.
pub type JobOutcome<T> = Result<T, JobError>;

/// Per-job options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobOptions {
    /// Past this instant the job is not started (`TimedOut`), and a running job's
    /// `ctx.check()` returns `ERR_TIMEOUT`.
    pub deadline: Option<Instant>,
}

impl JobOptions {
    /// Deadline `timeout` from now (`None` if that overflows `Instant`).
    pub fn timeout(timeout: Duration) -> Self {
        Self {
            deadline: Instant::now().checked_add(timeout),
        }
    }
}

const QUEUED: u8 = 0;
const RUNNING: u8 = 1;
const DONE: u8 = 2;
const CANCELLED: u8 = 3;

/// Passed to the job. Implements [`Interrupt`]: hand `ctx` to a kernel and it stops at
/// its next check once the job is cancelled (`ERR_ABORTED`, also after
/// [`Pool::destroy`](crate::Pool::destroy)) or past its deadline (`ERR_TIMEOUT`).
/// `Sync`, so nested `par_iter` chunks may check it from every worker.
pub struct JobContext {
    state: AtomicU8,
    cancel: AtomicBool,
    deadline: Option<Instant>,
    submitted_at: Instant,
    ledger: Arc<dyn Ledger>,
}

impl JobContext {
    /// Cancellation was requested (handle or pool destroy).
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed) || self.ledger.is_destroyed()
    }

    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }
}

impl Interrupt for JobContext {
    #[inline]
    fn check(&self) -> Result<(), KernelError> {
        if self.is_cancelled() {
            return Err(KernelError::new(
                ErrorCode::Aborted,
                "the operation was aborted",
            ));
        }
        match self.deadline {
            Some(at) if Instant::now() >= at => Err(KernelError::new(
                ErrorCode::Timeout,
                "the operation timed out",
            )),
            _ => Ok(()),
        }
    }
}

impl std::fmt::Debug for JobContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobContext")
            .field("cancelled", &self.is_cancelled())
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

/// The type-erased job, as stored in the queue and in handles.
pub(crate) trait ErasedJob: Send + Sync {
    /// Called by a worker that dequeued the job. Returns when the job's closure
    /// returned, if it ran.
    fn run(self: Arc<Self>) -> Option<Instant>;
    /// Requests cancellation; a queued job is finished at once (returns `true`).
    fn cancel(&self) -> bool;
    fn is_finished(&self) -> bool;
}

pub(crate) struct Job<T, F, D> {
    ctx: JobContext,
    /// The job and its `on_done`; taken by whoever wins the state CAS out of `QUEUED`.
    payload: UnsafeCell<Option<(F, D)>>,
    _out: PhantomData<fn() -> T>,
}

// SAFETY: `payload` is only accessed by the single thread that moved `state` out of
// QUEUED (a successful compare_exchange, Acquire), so it is never shared; the closures
// are `Send`, which is what moving them to that thread requires.
unsafe impl<T, F: Send, D: Send> Sync for Job<T, F, D> {}

impl<T, F, D> Job<T, F, D>
where
    T: Send + 'static,
    F: FnOnce(&JobContext) -> Result<T, KernelError> + Send + 'static,
    D: FnOnce(JobOutcome<T>) + Send + 'static,
{
    pub(crate) fn new(ledger: Arc<dyn Ledger>, opts: JobOptions, job: F, on_done: D) -> Self {
        Self {
            ctx: JobContext {
                state: AtomicU8::new(QUEUED),
                cancel: AtomicBool::new(false),
                deadline: opts.deadline,
                submitted_at: Instant::now(),
                ledger,
            },
            payload: UnsafeCell::new(Some((job, on_done))),
            _out: PhantomData,
        }
    }

    /// Moves the state out of QUEUED; on success the caller owns the payload.
    fn claim(&self, to: u8) -> Option<(F, D)> {
        self.ctx
            .state
            .compare_exchange(QUEUED, to, Ordering::Acquire, Ordering::Relaxed)
            .ok()?;
        // SAFETY: the CAS above succeeded for exactly one caller (see `impl Sync`).
        unsafe { (*self.payload.get()).take() }
    }

    /// Finishes a job that never ran: drops it, counts and delivers `err`, frees its
    /// queue slot.
    fn finish_unstarted(&self, job: F, done: D, err: JobError, state: u8) {
        let ledger = &*self.ctx.ledger;
        // A panicking destructor must not skip the delivery or the accounting.
        let _ = catch_unwind(AssertUnwindSafe(move || drop(job)));
        self.ctx.state.store(state, Ordering::Release);
        deliver(ledger, done, Err(err));
        ledger.release(false);
    }
}

impl<T, F, D> ErasedJob for Job<T, F, D>
where
    T: Send + 'static,
    F: FnOnce(&JobContext) -> Result<T, KernelError> + Send + 'static,
    D: FnOnce(JobOutcome<T>) + Send + 'static,
{
    fn run(self: Arc<Self>) -> Option<Instant> {
        let Some((job, done)) = self.claim(RUNNING) else {
            return None; // cancelled while queued: already delivered and released
        };
        let ctx = &self.ctx;
        let ledger = &*ctx.ledger;
        let start = Instant::now();
        if ctx.is_cancelled() {
            self.finish_unstarted(job, done, JobError::Cancelled, DONE);
            return None;
        }
        if ctx.deadline.is_some_and(|at| start >= at) {
            self.finish_unstarted(job, done, JobError::TimedOut, DONE);
            return None;
        }
        // One RMW moves the job from `queued` to `running`.
        ledger.started(nanos(start - ctx.submitted_at));
        let result = catch_unwind(AssertUnwindSafe(|| job(ctx)));
        let end = Instant::now();
        ledger.ran(nanos(end - start));
        let outcome = match result {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(JobError::from_kernel(e)),
            Err(payload) => Err(JobError::Panicked(panic_message(&*payload))),
        };
        ctx.state.store(DONE, Ordering::Release);
        deliver(ledger, done, outcome);
        ledger.release(true);
        Some(end)
    }

    fn cancel(&self) -> bool {
        self.ctx.cancel.store(true, Ordering::Release);
        match self.claim(CANCELLED) {
            Some((job, done)) => {
                self.finish_unstarted(job, done, JobError::Cancelled, CANCELLED);
                true
            }
            None => false,
        }
    }

    fn is_finished(&self) -> bool {
        matches!(self.ctx.state.load(Ordering::Acquire), DONE | CANCELLED)
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}

/// Cancels one job. Cheap to clone; holding it keeps only the job's small header alive.
#[derive(Clone)]
pub struct JobHandle {
    pub(crate) job: Arc<dyn ErasedJob>,
}

impl JobHandle {
    /// Cancels the job. A queued job is dropped at once: its `on_done` runs with
    /// `Cancelled` on this thread before `cancel` returns, and it never runs (→ `true`).
    /// A running job sees the flag at its next `ctx.check()` (→ `false`) and, if it
    /// returns that error, is delivered as `Cancelled`; if it finishes without checking,
    /// its own result is delivered. A finished job is unaffected (→ `false`). Idempotent.
    pub fn cancel(&self) -> bool {
        self.job.cancel()
    }

    /// `on_done` has been called, or is being called right now.
    pub fn is_finished(&self) -> bool {
        self.job.is_finished()
    }
}

impl std::fmt::Debug for JobHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}
