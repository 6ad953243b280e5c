//! Thread lifetime: dropping the last handle drains the queue and joins the threads.
//! Kept in its own test binary (one test) so no other test's threads muddy the count.
//!
//! "Joined" is checked exactly, with a thread-local whose destructor runs when a worker
//! thread finishes (before `join` can return). `/proc/self/task` is not exact: the
//! kernel may still list a thread for a moment after `join` returned (CI saw
//! `threads_named("lkC-") == 1` right after the drops), so the /proc checks wait for
//! the count, within a bound.

mod common;

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};

use common::{EVENTUALLY, recv};
use offthread_pool::{JobOptions, Pool, PoolConfig};

/// Threads of this process whose name starts with `prefix` (`/proc/self/task/*/comm`).
fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("Linux /proc")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|comm| comm.starts_with(prefix))
        .count()
}

/// Waits until `threads_named(prefix) == n` (threads name themselves once started).
fn eventually_named(prefix: &str, n: usize) {
    let t0 = Instant::now();
    while threads_named(prefix) != n {
        assert!(
            t0.elapsed() < EVENTUALLY,
            "/proc/self/task lists {} threads named {prefix}* after {EVENTUALLY:?}, want {n}",
            threads_named(prefix)
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Counts, when dropped, the worker thread that held it as having finished.
struct ExitProbe(Arc<AtomicUsize>);

impl Drop for ExitProbe {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

thread_local! {
    static PROBE: RefCell<Option<ExitProbe>> = const { RefCell::new(None) };
}

/// Gives every worker of `pool` a probe that adds one to `exited` when the thread
/// finishes (its thread-locals are destroyed before `join` returns).
fn arm_exit_probes(pool: &Pool, exited: &Arc<AtomicUsize>) {
    pool.install(|| {
        rayon::broadcast(|_| {
            let probe = ExitProbe(Arc::clone(exited));
            PROBE.with(|p| assert!(p.borrow_mut().replace(probe).is_none()));
        });
    });
}

fn threads_in_process() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn named_pool(name: &str, threads: usize) -> Pool {
    Pool::new(PoolConfig {
        threads: Some(threads),
        max_queue: None,
        thread_name: name.to_owned(),
        nice: None,
    })
    .unwrap()
}

#[test]
fn dropping_the_last_handle_finishes_queued_jobs_and_joins_threads() {
    let before = threads_in_process();

    // 1. Plain drop: threads are joined before drop returns; queued jobs ran first.
    let pool = named_pool("lkA", 3);
    eventually_named("lkA-", 3);
    let exited = Arc::new(AtomicUsize::new(0));
    arm_exit_probes(&pool, &exited);
    let ran = Arc::new(AtomicUsize::new(0));
    for _ in 0..200 {
        let r = Arc::clone(&ran);
        pool.submit(
            JobOptions::default(),
            |_| {
                std::thread::sleep(Duration::from_micros(50));
                Ok(())
            },
            move |_| {
                r.fetch_add(1, SeqCst);
            },
        )
        .unwrap();
    }
    let clone = pool.clone();
    drop(pool);
    assert_eq!(threads_named("lkA-"), 3, "a clone keeps the pool alive");
    assert_eq!(exited.load(SeqCst), 0, "a clone keeps the threads running");
    drop(clone);
    assert_eq!(
        ran.load(SeqCst),
        200,
        "queued jobs finished before drop returned"
    );
    assert_eq!(
        exited.load(SeqCst),
        3,
        "every thread finished before drop returned"
    );
    eventually_named("lkA-", 0);

    // 2. Last handle dropped inside on_done, on a worker: no self-join, threads still exit.
    let pool = named_pool("lkB", 2);
    let (tx, rx) = std::sync::mpsc::channel();
    let p = pool.clone();
    drop(pool);
    let keep = p.clone();
    keep.submit(
        JobOptions::default(),
        |_| Ok(()),
        move |_| {
            drop(p);
            tx.send(()).unwrap();
        },
    )
    .unwrap();
    drop(keep); // blocks until the job is done, with the last handle in on_done…
    recv(&rx);
    eventually_named("lkB-", 0);

    // 3. Many pools created and dropped: the process thread count comes back.
    let exited = Arc::new(AtomicUsize::new(0));
    for _ in 0..20 {
        let p = named_pool("lkC", 2);
        arm_exit_probes(&p, &exited);
        p.submit(JobOptions::default(), |_| Ok(()), |_| {}).unwrap();
    }
    assert_eq!(
        exited.load(SeqCst),
        40,
        "each drop joined its pool's 2 threads"
    );
    eventually_named("lkC-", 0);
    // Detached exits (part 2) may still be being reaped: allow time, not extra threads.
    let t0 = Instant::now();
    while threads_in_process() != before {
        let names: Vec<String> = std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .collect();
        assert!(
            t0.elapsed() < EVENTUALLY,
            "{before} threads before, now {names:?}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}
