//! The pool: configuration, submission, accounting, close/destroy, idle waiting and
//! thread lifetime.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*, fence};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_deque::{Injector, Steal};
use offthread_core::KernelError;

use crate::error::PoolError;
use crate::job::{
    ErasedJob, Job, JobContext, JobHandle, JobOptions, JobOutcome, Ledger, report_callback_panic,
};
use crate::stats::{Outcome, Percentiles, WorkerStats};

/// How often a drain loop yields to other rayon work (see `Shared::drain`).
const YIELD_EVERY: Duration = Duration::from_micros(50);
/// How long a drain loop that emptied the queue waits for the next job before giving its
/// thread back to rayon. A caller that submits one job at a time (a JS `await` loop)
/// gets its next job picked up here, without a rayon spawn and a futex wake on its own
/// thread (async bench, 100 in flight: 889,000 → 1,010,000 tasks/s). The 1-in-flight
/// round trip stays bimodal on 2-core VMs (≈7 or ≈22 µs, ARCHITECTURE.md).
const LINGER: Duration = Duration::from_micros(30);

/// Upper bound for `threads` (a typo like `threads: 1e6` must not fork-bomb the host).
pub const MAX_THREADS: usize = 1024;
/// Upper bound for `max_queue` (the queued count is 32 bits wide).
pub const MAX_QUEUE: usize = u32::MAX as usize;

/// Pool construction options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    /// Worker threads, 1..=[`MAX_THREADS`]. `None`: `std::thread::available_parallelism()`.
    pub threads: Option<usize>,
    /// Most jobs waiting to start (running ones do not count), 1..=[`MAX_QUEUE`].
    /// Past it `submit` fails with `QueueFull`. `None`: unbounded.
    pub max_queue: Option<usize>,
    /// Threads are named `{thread_name}-{index}`.
    pub thread_name: String,
    /// Scheduling niceness of the workers (Unix `nice`, 0..=19; `None`: inherit).
    /// A positive value keeps the host's own thread (a JS event loop) responsive while
    /// the pool saturates every core: the OS then prefers the host thread when it wakes.
    pub nice: Option<i32>,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self {
            threads: None,
            max_queue: None,
            thread_name: "offthread".to_owned(),
            nice: None,
        }
    }
}

/// A snapshot of the pool's counters. Counts are read one after the other while jobs
/// move, so they add up exactly only once the pool is idle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    pub threads: usize,
    /// Accepted, not started yet.
    pub queued: usize,
    /// Running their closure now. A job whose closure returned and whose `on_done` is
    /// still delivering the outcome is not counted: its result may already be in the
    /// caller's hands, and the caller may have started other work on the strength of it.
    pub running: usize,
    /// Finished with `Ok`.
    pub completed: u64,
    /// Finished with a kernel error or a panic.
    pub failed: u64,
    /// Cancelled (handle, destroy, `ERR_ABORTED`) or timed out, queued or running.
    pub cancelled: u64,
    /// Submit → start, of jobs that started.
    pub wait_time: Percentiles,
    /// Start → end of the job closure (excludes `on_done`).
    pub run_time: Percentiles,
}

/// `load` holds `queued` in its low 32 bits, `running` in bits 32..48 and `delivering`
/// (closure returned, `on_done` not yet) in bits 48..64 — both ≤ `MAX_THREADS` — so
/// moving a job from one to the next is one atomic add and "idle" is `load == 0`.
const QUEUED_ONE: u64 = 1;
const RUNNING_ONE: u64 = 1 << 32;
const DELIVERING_ONE: u64 = 1 << 48;
const QUEUED_MASK: u64 = RUNNING_ONE - 1;
const _: () = assert!(
    MAX_THREADS < 1 << 16,
    "running and delivering have 16 bits each"
);

/// `running` out of a `load` word.
fn running_of(load: u64) -> usize {
    ((load >> 32) & 0xFFFF) as usize
}

/// Keeps a hot atomic on its own cache line (128: adjacent-line prefetch on x86).
#[repr(align(128))]
struct Padded<T>(T);

/// State shared by handles, queued jobs and workers.
pub(crate) struct Shared {
    id: u64,
    threads: usize,
    max_queue: Option<usize>,
    destroyed: AtomicBool,
    closed: AtomicBool,
    queue: Injector<Arc<dyn ErasedJob>>,
    load: Padded<AtomicU64>,
    /// Drain loops running or spawned, at most `threads`.
    drainers: Padded<AtomicUsize>,
    /// Drain loops lingering on an empty queue (see [`LINGER`]).
    lingering: Padded<AtomicUsize>,
    pub(crate) stats: WorkerStats,
    /// Threads in `wait_idle` plus pending `on_idle` callbacks: finishing the last job
    /// takes the lock only when this is non-zero.
    idle_waiters: Padded<AtomicUsize>,
    idle_callbacks: Mutex<Vec<Box<dyn FnOnce() + Send>>>,
    idle_cv: Condvar,
}

impl Ledger for Shared {
    fn is_destroyed(&self) -> bool {
        self.destroyed.load(Relaxed)
    }

    fn started(&self, waited_ns: u64) {
        // One RMW moves the job from `queued` to `running`.
        self.load.0.fetch_add(RUNNING_ONE - QUEUED_ONE, SeqCst);
        self.stats.record_wait(waited_ns);
    }

    fn ran(&self, ran_ns: u64) {
        // One RMW moves the job from `running` to `delivering`.
        self.load.0.fetch_add(DELIVERING_ONE - RUNNING_ONE, SeqCst);
        self.stats.record_run(ran_ns);
    }

    fn count(&self, outcome: Outcome) {
        self.stats.count(outcome);
    }

    fn release(&self, running: bool) {
        self.release_slot(if running { DELIVERING_ONE } else { QUEUED_ONE });
    }
}

impl Shared {
    fn reserve(&self) -> Result<(), PoolError> {
        match self.max_queue {
            None => {
                self.load.0.fetch_add(QUEUED_ONE, SeqCst);
                Ok(())
            }
            Some(max) => self
                .load
                .0
                .fetch_update(SeqCst, SeqCst, |l| {
                    ((l & QUEUED_MASK) < max as u64).then_some(l + QUEUED_ONE)
                })
                .map(drop)
                .map_err(|_| PoolError::QueueFull { max_queue: max }),
        }
    }

    /// Jobs waiting to start (reserved, not yet running).
    fn queued(&self) -> u64 {
        self.load.0.load(SeqCst) & QUEUED_MASK
    }

    /// Frees a queued (`QUEUED_ONE`) or delivering (`DELIVERING_ONE`) slot after `on_done`
    /// returned; wakes idle waiters when that was the last one.
    fn release_slot(&self, one: u64) {
        // SeqCst pairs with `idle_waiters` (Dekker): either we see the waiter, or the
        // waiter sees `load == 0`.
        if self.load.0.fetch_sub(one, SeqCst) == one && self.idle_waiters.0.load(SeqCst) > 0 {
            self.notify_idle();
        }
    }

    fn lock_idle(&self) -> MutexGuard<'_, Vec<Box<dyn FnOnce() + Send>>> {
        self.idle_callbacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    #[cold]
    fn notify_idle(&self) {
        let callbacks = {
            let mut pending = self.lock_idle();
            if self.load.0.load(SeqCst) != 0 {
                return; // new work arrived; its completion will notify
            }
            self.idle_cv.notify_all();
            std::mem::take(&mut *pending)
        };
        self.idle_waiters.0.fetch_sub(callbacks.len(), SeqCst);
        for cb in callbacks {
            report_callback_panic("on_idle", catch_unwind(AssertUnwindSafe(cb)));
        }
    }

    /// After a push: claims a drainer slot if fewer than `threads` drain loops run; the
    /// caller must then spawn one.
    fn want_drainer(&self) -> bool {
        // Pairs with the fence in `drain` (Dekker): either a drainer that is about to
        // stop sees our entry, or we see its slot freed.
        fence(SeqCst);
        let mut active = self.drainers.0.load(Relaxed);
        while active < self.threads {
            match self
                .drainers
                .0
                .compare_exchange_weak(active, active + 1, SeqCst, Relaxed)
            {
                Ok(_) => return true,
                Err(now) => active = now,
            }
        }
        false
    }

    /// Waits up to [`LINGER`] for a job to appear; true if one did. While lingering this
    /// loop counts in `lingering`, and `submit` spawns no drain loop for a job it can take.
    /// At most one loop lingers at a time.
    fn linger(&self) -> bool {
        // One lingering loop is enough to take the next job; a second would only spin on
        // a core the submitter may need.
        if self.lingering.0.fetch_add(1, SeqCst) > 0 {
            self.lingering.0.fetch_sub(1, SeqCst);
            return false;
        }
        let deadline = Instant::now() + LINGER;
        let mut found = false;
        'wait: loop {
            for _ in 0..64 {
                if !self.queue.is_empty() {
                    found = true;
                    break 'wait;
                }
                std::hint::spin_loop();
            }
            if Instant::now() >= deadline || self.destroyed.load(Relaxed) {
                break;
            }
            // Let a thread that shares this core (the submitter) run first.
            std::thread::yield_now();
        }
        // Pairs with the fence in `submit` (Dekker): after this, either that submitter saw
        // us gone and spawned a loop, or our exit check sees its job.
        self.lingering.0.fetch_sub(1, SeqCst);
        found
    }

    /// A drain loop: the body of the rayon task spawned by `submit`. Runs queued jobs
    /// oldest first until the queue is empty, so a busy pool costs no rayon spawn per
    /// job. Every [`YIELD_EVERY`] it lets rayon run other pending work on this thread
    /// (`install` calls, chunks of a running job's `par_iter`) so new jobs do not
    /// starve them.
    ///
    /// Drain loops never nest. rayon may start one on a thread that is already draining
    /// (inside our `yield_now`, or while a job waits in `join`); if that one ran jobs,
    /// this thread would hold two drainer slots while another thread sleeps, and jobs
    /// would run one at a time with a core idle (seen through HTTP: 2 clients, 1.07×
    /// the throughput of one). A nested start gives its slot back instead.
    fn drain(self: &Arc<Self>) {
        match DRAIN_STATE.with(Cell::get) {
            DrainState::Idle => {}
            DrainState::BetweenJobs => {
                // Our own yield: this thread's loop takes the queue as soon as we return.
                self.drainers.0.fetch_sub(1, SeqCst);
                return;
            }
            DrainState::InJob => {
                // A job of this thread waits in rayon: let another thread drain.
                self.drainers.0.fetch_sub(1, SeqCst);
                fence(SeqCst);
                if !self.queue.is_empty() && self.want_drainer() {
                    let shared = Arc::clone(self);
                    rayon::spawn_fifo(move || shared.drain());
                }
                return;
            }
        }
        DRAIN_STATE.with(|d| d.set(DrainState::BetweenJobs));
        let mut last_yield = Instant::now();
        loop {
            loop {
                match self.queue.steal() {
                    Steal::Success(job) => {
                        DRAIN_STATE.with(|d| d.set(DrainState::InJob));
                        let end = job.run();
                        DRAIN_STATE.with(|d| d.set(DrainState::BetweenJobs));
                        if let Some(end) = end
                            && end.saturating_duration_since(last_yield) >= YIELD_EVERY
                        {
                            last_yield = end;
                            rayon::yield_now();
                        }
                    }
                    Steal::Empty => break,
                    Steal::Retry => std::hint::spin_loop(),
                }
            }
            if self.linger() {
                continue;
            }
            self.drainers.0.fetch_sub(1, SeqCst);
            fence(SeqCst);
            // A job pushed after our last steal, whose submitter saw no free slot.
            if self.queue.is_empty() || !self.want_drainer() {
                DRAIN_STATE.with(|d| d.set(DrainState::Idle));
                return;
            }
        }
    }
}

/// What the drain loop of this thread is doing (see `Shared::drain`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum DrainState {
    Idle,
    BetweenJobs,
    InJob,
}

thread_local! {
    static DRAIN_STATE: Cell<DrainState> = const { Cell::new(DrainState::Idle) };
}

thread_local! {
    /// Id of the pool this thread works for (0: none).
    static WORKER_OF: Cell<u64> = const { Cell::new(0) };
}

fn on_worker_of(id: u64) -> bool {
    WORKER_OF.with(Cell::get) == id
}

/// Owns the threads. Field order matters: `rayon` drops first (its threads exit once
/// their pending tasks are done), then `_join` waits for them.
struct Inner {
    shared: Arc<Shared>,
    rayon: rayon::ThreadPool,
    _join: Joiner,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.shared.closed.store(true, SeqCst);
    }
}

struct Joiner {
    id: u64,
    handles: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Drop for Joiner {
    fn drop(&mut self) {
        let handles =
            std::mem::take(&mut *self.handles.lock().unwrap_or_else(PoisonError::into_inner));
        // Dropped from inside one of our own jobs (a handle moved into `on_done`): joining
        // would wait for ourselves. The threads still exit once their work is done.
        if on_worker_of(self.id) {
            return;
        }
        for h in handles {
            let _ = h.join();
        }
    }
}

/// A work-stealing job pool. Cheap to clone (an `Arc`); `Send + Sync`.
///
/// Dropping the last clone closes the pool, lets queued and running jobs finish, and
/// joins the threads: it blocks until then (call [`destroy`](Self::destroy) first to
/// make that quick). Dropped from one of the pool's own threads it does not join.
#[derive(Clone)]
pub struct Pool {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("threads", &self.threads())
            .field("max_queue", &self.inner.shared.max_queue)
            .finish_non_exhaustive()
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Pool {
    pub fn new(cfg: PoolConfig) -> Result<Pool, PoolError> {
        let threads = match cfg.threads {
            Some(n) if n == 0 || n > MAX_THREADS => {
                return Err(PoolError::InvalidConfig(format!(
                    "threads must be an integer from 1 to {MAX_THREADS}, got {n}"
                )));
            }
            Some(n) => n,
            None => std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS)),
        };
        if let Some(q) = cfg.max_queue.filter(|&q| q == 0 || q > MAX_QUEUE) {
            return Err(PoolError::InvalidConfig(format!(
                "maxQueue must be an integer from 1 to {MAX_QUEUE}, got {q}"
            )));
        }
        if let Some(n) = cfg.nice.filter(|n| !(0..=19).contains(n)) {
            return Err(PoolError::InvalidConfig(format!(
                "nice must be an integer from 0 to 19, got {n}"
            )));
        }
        if cfg.thread_name.contains('\0') {
            return Err(PoolError::InvalidConfig(
                "threadName must not contain NUL characters".to_owned(),
            ));
        }
        let id = NEXT_ID.fetch_add(1, Relaxed);
        let handles = Arc::new(Mutex::new(Vec::with_capacity(threads)));
        let spawned = Arc::clone(&handles);
        let name = cfg.thread_name;
        let nice = cfg.nice;
        let rayon = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(move |i| format!("{name}-{i}"))
            // Jobs and callbacks are wrapped in catch_unwind; this only keeps rayon from
            // aborting the process should anything else unwind.
            .panic_handler(|_| {})
            .spawn_handler(move |t| {
                let mut b = std::thread::Builder::new();
                if let Some(name) = t.name() {
                    b = b.name(name.to_owned());
                }
                if let Some(size) = t.stack_size() {
                    b = b.stack_size(size);
                }
                let h = b.spawn(move || {
                    if let Some(n) = nice {
                        crate::priority::lower_current_thread(n);
                    }
                    WORKER_OF.with(|w| w.set(id));
                    t.run();
                })?;
                spawned
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(h);
                Ok(())
            })
            .build()
            .map_err(|e| PoolError::Spawn(e.to_string()))?;
        let shared = Arc::new(Shared {
            id,
            threads,
            max_queue: cfg.max_queue,
            destroyed: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            queue: Injector::new(),
            load: Padded(AtomicU64::new(0)),
            drainers: Padded(AtomicUsize::new(0)),
            lingering: Padded(AtomicUsize::new(0)),
            stats: WorkerStats::new(threads),
            idle_waiters: Padded(AtomicUsize::new(0)),
            idle_callbacks: Mutex::new(Vec::new()),
            idle_cv: Condvar::new(),
        });
        Ok(Pool {
            inner: Arc::new(Inner {
                shared,
                rayon,
                _join: Joiner { id, handles },
            }),
        })
    }

    pub fn threads(&self) -> usize {
        self.inner.shared.threads
    }

    /// Queues `job`; `on_done` later receives its outcome, exactly once: on the worker
    /// that ran (or dropped) it, or on the thread that cancelled it while queued
    /// ([`JobHandle::cancel`], [`destroy`](Self::destroy)). Jobs start in FIFO order.
    ///
    /// On `Err` (`QueueFull`, `Closed`) nothing was queued and `on_done` is dropped
    /// without being called. `job` and `on_done` must not block on the pool (no
    /// `wait_idle`, no waiting for another job's result).
    pub fn submit<T, F, D>(
        &self,
        opts: JobOptions,
        job: F,
        on_done: D,
    ) -> Result<JobHandle, PoolError>
    where
        T: Send + 'static,
        F: FnOnce(&JobContext) -> Result<T, KernelError> + Send + 'static,
        D: FnOnce(JobOutcome<T>) + Send + 'static,
    {
        let shared = &self.inner.shared;
        if shared.closed.load(Acquire) {
            return Err(PoolError::Closed);
        }
        shared.reserve()?;
        let job: Arc<dyn ErasedJob> = Arc::new(Job::new(
            Arc::clone(shared) as Arc<dyn Ledger>,
            opts,
            job,
            on_done,
        ));
        let handle = JobHandle {
            job: Arc::clone(&job),
        };
        shared.queue.push(job);
        fence(SeqCst);
        // A lingering drain loop takes the job; spawn one only for jobs beyond them.
        let lingering = shared.lingering.0.load(SeqCst) as u64;
        if shared.queued() > lingering && shared.want_drainer() {
            let shared = Arc::clone(shared);
            self.inner.rayon.spawn_fifo(move || shared.drain());
        }
        Ok(handle)
    }

    /// Runs `f` on one of the pool's threads and waits for it: rayon parallel iterators
    /// inside `f` use this pool's threads. Works after `close`/`destroy` too.
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.inner.rayon.install(f)
    }

    /// Jobs accepted and not started yet: one atomic load (cheaper than [`stats`](Self::stats),
    /// e.g. for choosing sync vs async per call).
    pub fn queued(&self) -> usize {
        self.inner.shared.queued() as usize
    }

    /// Jobs running their closure now: one atomic load.
    pub fn running(&self) -> usize {
        running_of(self.inner.shared.load.0.load(Relaxed))
    }

    /// Counters and latency percentiles. Merges every worker's histograms:
    /// O(threads × 496) loads, a few µs — fine for a metrics endpoint, not per job.
    pub fn stats(&self) -> PoolStats {
        let s = &self.inner.shared;
        let load = s.load.0.load(SeqCst);
        let (completed, failed, cancelled) = s.stats.counts();
        PoolStats {
            threads: s.threads,
            queued: (load & QUEUED_MASK) as usize,
            running: running_of(load),
            completed,
            failed,
            cancelled,
            wait_time: s.stats.wait(),
            run_time: s.stats.run(),
        }
    }

    /// Stops accepting jobs (`submit` → `Closed`); queued and running jobs finish.
    /// Pair with [`wait_idle`](Self::wait_idle) or [`on_idle`](Self::on_idle) to drain.
    pub fn close(&self) {
        self.inner.shared.closed.store(true, SeqCst);
    }

    /// Stops accepting jobs and cancels all of them: every queued job's `on_done` runs
    /// with `Cancelled` on this thread before `destroy` returns; running jobs see the
    /// cancel at their next `ctx.check()`. Threads stay up until the last handle drops.
    pub fn destroy(&self) {
        let s = &self.inner.shared;
        s.closed.store(true, SeqCst);
        s.destroyed.store(true, SeqCst);
        loop {
            match s.queue.steal() {
                Steal::Success(job) => {
                    job.cancel();
                }
                Steal::Empty => break,
                Steal::Retry => std::hint::spin_loop(),
            }
        }
    }

    pub fn is_closed(&self) -> bool {
        self.inner.shared.closed.load(SeqCst)
    }

    /// Nothing queued or running (every accepted job's `on_done` has returned).
    pub fn is_idle(&self) -> bool {
        self.inner.shared.load.0.load(SeqCst) == 0
    }

    /// Blocks until [`is_idle`](Self::is_idle) or `timeout`; returns whether idle.
    /// Called from one of the pool's own threads it cannot wait for itself: it returns
    /// `is_idle()` at once.
    pub fn wait_idle(&self, timeout: Option<Duration>) -> bool {
        let s = &self.inner.shared;
        if on_worker_of(s.id) {
            return self.is_idle();
        }
        let until = timeout.and_then(|t| Instant::now().checked_add(t));
        s.idle_waiters.0.fetch_add(1, SeqCst);
        let mut guard = s.lock_idle();
        let idle = loop {
            if s.load.0.load(SeqCst) == 0 {
                break true;
            }
            guard = match until {
                None => s
                    .idle_cv
                    .wait(guard)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(at) => {
                    let now = Instant::now();
                    if now >= at {
                        break false;
                    }
                    s.idle_cv
                        .wait_timeout(guard, at - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        };
        drop(guard);
        s.idle_waiters.0.fetch_sub(1, SeqCst);
        idle
    }

    /// Calls `f` once the pool is idle: right now on this thread if it already is,
    /// else on the thread that finishes the last job (after its `on_done`). For an
    /// async `close()`: `close(); on_idle(resolve)`.
    pub fn on_idle(&self, f: impl FnOnce() + Send + 'static) {
        let s = &self.inner.shared;
        s.idle_waiters.0.fetch_add(1, SeqCst);
        let mut pending = s.lock_idle();
        if s.load.0.load(SeqCst) == 0 {
            drop(pending);
            s.idle_waiters.0.fetch_sub(1, SeqCst);
            f();
        } else {
            pending.push(Box::new(f));
        }
    }
}
