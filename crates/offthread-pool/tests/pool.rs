//! Behaviour of `Pool`: values, queue bound, cancel, deadlines, panics, close/destroy,
//! install, stats, config validation, thread lifetime.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc::channel;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use common::{EVENTUALLY, block_one_worker, pool, recv};
use offthread_kernels::{ErrorCode, Interrupt, KernelError, pi};
use offthread_pool::{JobError, JobOptions, MAX_THREADS, Pool, PoolConfig, PoolError};
use rayon::prelude::*;

#[test]
fn thousands_of_concurrent_jobs_complete_with_their_values() {
    const N: u64 = 20_000;
    let pool = pool(2, None);
    let (tx, rx) = channel();
    // Several producers at once, as nested submits from jobs would do.
    std::thread::scope(|s| {
        for p in 0..4u64 {
            let (pool, tx) = (pool.clone(), tx.clone());
            s.spawn(move || {
                for i in (p..N).step_by(4) {
                    let tx = tx.clone();
                    pool.submit(
                        JobOptions::default(),
                        move |_| Ok(i * i),
                        move |out| tx.send((i, out)).unwrap(),
                    )
                    .expect("unbounded queue accepts");
                }
            });
        }
    });
    drop(tx);
    let mut seen = vec![false; N as usize];
    for (i, out) in rx.iter() {
        assert_eq!(out, Ok(i * i));
        assert!(
            !std::mem::replace(&mut seen[i as usize], true),
            "job {i} delivered twice"
        );
    }
    assert!(seen.iter().all(|&s| s), "every job delivered");
    assert!(pool.wait_idle(Some(EVENTUALLY)));
    let st = pool.stats();
    assert_eq!((st.completed, st.failed, st.cancelled), (N, 0, 0));
    assert_eq!((st.queued, st.running), (0, 0));
    assert_eq!(st.wait_time.count, N);
    assert_eq!(st.run_time.count, N);
    assert!(st.run_time.p50 <= st.run_time.p99 && st.run_time.p99 <= st.run_time.max);
}

#[test]
fn queue_full_is_immediate_and_accepted_jobs_still_complete() {
    let pool = pool(1, Some(4));
    let release = block_one_worker(&pool); // running: does not count against max_queue
    let (tx, rx) = channel();
    for i in 0..4 {
        let tx = tx.clone();
        pool.submit(
            JobOptions::default(),
            move |_| Ok(i),
            move |o| tx.send(o).unwrap(),
        )
        .expect("within max_queue");
    }
    assert_eq!(pool.stats().queued, 4);
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&dropped);
    let err = pool
        .submit(
            JobOptions::default(),
            |_| Ok(()),
            move |_| flag.store(true, SeqCst),
        )
        .unwrap_err();
    assert_eq!(err, PoolError::QueueFull { max_queue: 4 });
    assert_eq!(err.code(), "ERR_QUEUE_FULL");
    drop(release);
    let mut got: Vec<i32> = (0..4).map(|_| recv(&rx).unwrap()).collect();
    got.sort_unstable();
    assert_eq!(got, [0, 1, 2, 3]);
    assert!(pool.wait_idle(Some(EVENTUALLY)));
    assert!(
        !dropped.load(SeqCst),
        "a rejected job's on_done is never called"
    );
    // The slots are free again.
    pool.submit(JobOptions::default(), |_| Ok(()), |_| {})
        .unwrap();
}

#[test]
fn cancelling_a_queued_job_fires_cancelled_at_once_and_it_never_runs() {
    let pool = pool(1, Some(1));
    let release = block_one_worker(&pool);
    let ran = Arc::new(AtomicUsize::new(0));
    let delivered = Arc::new(std::sync::Mutex::new(None));
    let (r, d) = (Arc::clone(&ran), Arc::clone(&delivered));
    let handle = pool
        .submit(
            JobOptions::default(),
            move |_| {
                r.fetch_add(1, SeqCst);
                Ok(())
            },
            move |o| *d.lock().unwrap() = Some(o),
        )
        .unwrap();
    assert!(!handle.is_finished());
    assert!(handle.cancel(), "it was queued");
    // Delivered on this thread, before cancel returned.
    assert_eq!(*delivered.lock().unwrap(), Some(Err(JobError::Cancelled)));
    assert!(handle.is_finished());
    assert!(!handle.cancel(), "idempotent");
    // No slot leaked: max_queue is 1 and it is free again.
    assert_eq!(pool.stats().queued, 0);
    pool.submit(JobOptions::default(), |_| Ok(()), |_| {})
        .expect("slot freed");
    drop(release);
    assert!(pool.wait_idle(Some(EVENTUALLY)));
    assert_eq!(ran.load(SeqCst), 0, "a cancelled queued job never runs");
    let st = pool.stats();
    assert_eq!(
        (st.completed, st.cancelled, st.queued, st.running),
        (2, 1, 0, 0)
    );
}

/// A job that loops on `ctx.check()`, counting iterations; tells `started` when it runs.
fn looping_job(
    iterations: Arc<AtomicUsize>,
    started: std::sync::mpsc::Sender<()>,
) -> impl FnOnce(&offthread_pool::JobContext) -> Result<(), KernelError> + Send + 'static {
    move |ctx| {
        let _ = started.send(());
        loop {
            ctx.check()?;
            iterations.fetch_add(1, SeqCst);
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

#[test]
fn cancelling_a_running_job_stops_it_at_its_next_check() {
    let pool = pool(2, None);
    let (iterations, (started_tx, started_rx), (tx, rx)) =
        (Arc::new(AtomicUsize::new(0)), channel(), channel());
    let h = pool
        .submit(
            JobOptions::default(),
            looping_job(Arc::clone(&iterations), started_tx),
            move |o| tx.send(o).unwrap(),
        )
        .unwrap();
    recv(&started_rx);
    while iterations.load(SeqCst) < 3 {
        std::thread::yield_now();
    }
    assert!(!h.cancel(), "running: cancel only sets the flag");
    let at_cancel = iterations.load(SeqCst);
    assert_eq!(recv(&rx), Err(JobError::Cancelled));
    // At most the iteration already past its check when the flag was set.
    assert!(iterations.load(SeqCst) <= at_cancel + 1);
    assert!(pool.wait_idle(Some(EVENTUALLY)));
    assert_eq!(pool.stats().cancelled, 1);
}

#[test]
fn deadline_passed_while_queued_times_out_without_running() {
    let pool = pool(1, None);
    let release = block_one_worker(&pool);
    let ran = Arc::new(AtomicUsize::new(0));
    let (r, (tx, rx)) = (Arc::clone(&ran), channel());
    pool.submit(
        JobOptions::timeout(Duration::from_millis(10)),
        move |_| {
            r.fetch_add(1, SeqCst);
            Ok(())
        },
        move |o| tx.send(o).unwrap(),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(30));
    drop(release);
    let out = recv(&rx);
    assert_eq!(out, Err(JobError::TimedOut));
    assert_eq!(out.unwrap_err().code(), "ERR_TIMEOUT");
    assert_eq!(ran.load(SeqCst), 0);
    assert!(pool.wait_idle(Some(EVENTUALLY)));
    assert_eq!(pool.stats().cancelled, 1);
}

#[test]
fn deadline_passed_while_running_times_out_at_the_next_check() {
    let pool = pool(1, None);
    let (iterations, (started_tx, started_rx), (tx, rx)) =
        (Arc::new(AtomicUsize::new(0)), channel(), channel());
    let t0 = Instant::now();
    pool.submit(
        // Generous: the job must start before it (a loaded CI box is slow to schedule).
        JobOptions::timeout(Duration::from_millis(300)),
        looping_job(Arc::clone(&iterations), started_tx),
        move |o| tx.send(o).unwrap(),
    )
    .unwrap();
    recv(&started_rx);
    assert_eq!(recv(&rx), Err(JobError::TimedOut));
    assert!(t0.elapsed() >= Duration::from_millis(300));
    assert!(iterations.load(SeqCst) > 0, "it did run until the deadline");
}

#[test]
fn a_panicking_job_fails_and_the_pool_goes_on() {
    let pool = pool(1, None);
    let (tx, rx) = channel();
    let tx2 = tx.clone();
    pool.submit(
        JobOptions::default(),
        |_| -> Result<u32, KernelError> { panic!("boom {}", 42) },
        move |o| tx2.send(o).unwrap(),
    )
    .unwrap();
    let err = recv(&rx).unwrap_err();
    assert_eq!(err, JobError::Panicked("boom 42".to_owned()));
    assert_eq!(err.code(), "ERR_KERNEL_PANIC");
    // A panic in on_done is contained as well.
    pool.submit(JobOptions::default(), |_| Ok(0), |_| panic!("in on_done"))
        .unwrap();
    for i in 0..100 {
        let tx = tx.clone();
        pool.submit(
            JobOptions::default(),
            move |_| Ok(i),
            move |o| tx.send(o).unwrap(),
        )
        .unwrap();
    }
    for i in 0..100 {
        assert_eq!(recv(&rx), Ok(i), "same single worker, FIFO order");
    }
    assert!(pool.wait_idle(Some(EVENTUALLY)));
    let st = pool.stats();
    assert_eq!((st.completed, st.failed), (101, 1));
}

#[test]
fn kernel_errors_pass_through_with_their_code() {
    let pool = pool(1, None);
    let (tx, rx) = channel();
    pool.submit(
        JobOptions::default(),
        |ctx| {
            pi::estimate(
                pi::PiOptions {
                    samples: u64::MAX,
                    seed: 1,
                },
                pi::Method::Fast,
                ctx,
            )
        },
        move |o| tx.send(o).unwrap(),
    )
    .unwrap();
    let err = recv(&rx).unwrap_err();
    assert!(matches!(&err, JobError::Kernel(e) if e.code == ErrorCode::InvalidSamples));
    assert_eq!(err.code(), "ERR_INVALID_SAMPLES");
    assert!(pool.wait_idle(Some(EVENTUALLY)));
    assert_eq!(pool.stats().failed, 1);
}

#[test]
fn close_lets_queued_work_finish_and_rejects_new_jobs() {
    let pool = pool(1, None);
    let release = block_one_worker(&pool);
    let (tx, rx) = channel();
    for i in 0..10 {
        let tx = tx.clone();
        pool.submit(
            JobOptions::default(),
            move |_| Ok(i),
            move |o| tx.send(o).unwrap(),
        )
        .unwrap();
    }
    pool.close();
    assert!(pool.is_closed());
    let err = pool
        .submit(JobOptions::default(), |_| Ok(()), |_| {})
        .unwrap_err();
    assert_eq!(err, PoolError::Closed);
    assert_eq!(err.code(), "ERR_POOL_CLOSED");
    let idle = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&idle);
    pool.on_idle(move || flag.store(true, SeqCst));
    assert!(!idle.load(SeqCst), "work is still queued");
    assert!(
        !pool.wait_idle(Some(Duration::from_millis(20))),
        "blocked job still running"
    );
    drop(release);
    assert!(pool.wait_idle(Some(EVENTUALLY)));
    // on_idle runs on the worker that finished last, right after it released its slot.
    let t0 = Instant::now();
    while !idle.load(SeqCst) {
        assert!(t0.elapsed() < EVENTUALLY, "on_idle never fired");
        std::thread::yield_now();
    }
    for i in 0..10 {
        assert_eq!(recv(&rx), Ok(i));
    }
    let st = pool.stats();
    assert_eq!((st.completed, st.cancelled), (11, 0));
    // Already idle: called at once.
    let now = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&now);
    pool.on_idle(move || flag.store(true, SeqCst));
    assert!(now.load(SeqCst));
}

#[test]
fn destroy_cancels_queued_jobs_at_once_and_running_ones_at_their_check() {
    let pool = pool(2, None);
    let (done_tx, done_rx) = channel();
    let (started_tx, started_rx) = channel();
    let iterations = Arc::new(AtomicUsize::new(0));
    for _ in 0..2 {
        let tx = done_tx.clone();
        pool.submit(
            JobOptions::default(),
            looping_job(Arc::clone(&iterations), started_tx.clone()),
            move |o| tx.send(("running", o)).unwrap(),
        )
        .unwrap();
    }
    recv(&started_rx);
    recv(&started_rx);
    let ran = Arc::new(AtomicUsize::new(0));
    let queued_cancelled = Arc::new(AtomicUsize::new(0));
    for _ in 0..50 {
        let (r, c) = (Arc::clone(&ran), Arc::clone(&queued_cancelled));
        pool.submit(
            JobOptions::default(),
            move |_| {
                r.fetch_add(1, SeqCst);
                Ok(())
            },
            move |o| {
                assert_eq!(o, Err(JobError::Cancelled));
                c.fetch_add(1, SeqCst);
            },
        )
        .unwrap();
    }
    pool.destroy();
    assert_eq!(
        queued_cancelled.load(SeqCst),
        50,
        "delivered before destroy returned"
    );
    assert_eq!(recv(&done_rx), ("running", Err(JobError::Cancelled)));
    assert_eq!(recv(&done_rx), ("running", Err(JobError::Cancelled)));
    assert!(pool.wait_idle(Some(EVENTUALLY)));
    assert_eq!(ran.load(SeqCst), 0);
    assert_eq!(
        pool.submit(JobOptions::default(), |_| Ok(()), |_| {})
            .unwrap_err(),
        PoolError::Closed
    );
    let st = pool.stats();
    assert_eq!((st.cancelled, st.completed, st.failed), (52, 0, 0));
    // install still works on a destroyed pool (threads live until the last handle).
    assert_eq!(pool.install(|| 7), 7);
}

#[test]
fn install_runs_par_iter_on_the_pools_threads() {
    let pool = Pool::new(PoolConfig {
        threads: Some(2),
        max_queue: None,
        thread_name: "inst".to_owned(),
        nice: None,
    })
    .unwrap();
    let seen: Vec<(Option<usize>, String)> = pool.install(|| {
        (0..10_000)
            .into_par_iter()
            .map(|_| {
                let t = std::thread::current();
                (
                    rayon::current_thread_index(),
                    t.name().unwrap_or("").to_owned(),
                )
            })
            .collect()
    });
    for (index, name) in seen {
        let index = index.expect("on a pool thread");
        assert!(index < pool.threads());
        assert!(name.starts_with("inst-"), "{name}");
    }
    assert_eq!(pool.install(rayon::current_num_threads), 2);
}

#[test]
fn nested_parallel_kernel_in_a_job_uses_the_pool_and_matches_sequential() {
    let pool = pool(2, None);
    let opts = pi::PiOptions {
        samples: 100_000,
        seed: 1,
    };
    let (tx, rx) = channel();
    pool.submit(
        JobOptions::default(),
        move |ctx| {
            assert_eq!(rayon::current_num_threads(), 2);
            pi::estimate_parallel(opts, ctx)
        },
        move |o| tx.send(o).unwrap(),
    )
    .unwrap();
    assert_eq!(recv(&rx).unwrap().inside, 78_463);
    // Sync variant through install, cancelled through a plain flag.
    let r = pool.install(|| pi::estimate_parallel(opts, &offthread_kernels::Never));
    assert_eq!(r.unwrap().inside, 78_463);
    let aborted = std::sync::atomic::AtomicBool::new(true);
    let err = pool
        .install(|| pi::estimate_parallel(opts, &aborted))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Aborted);
    assert!(aborted.check().is_err());
}

#[test]
fn stats_add_up_after_a_mixed_workload() {
    let pool = pool(2, None);
    let submitted = AtomicUsize::new(0);
    let submit = |opts, job: Box<dyn FnOnce() -> Result<u32, KernelError> + Send>| {
        submitted.fetch_add(1, SeqCst);
        pool.submit(opts, move |_| job(), |_| {}).unwrap()
    };
    let release = block_one_worker(&pool);
    submitted.fetch_add(1, SeqCst);
    let release2 = block_one_worker(&pool);
    submitted.fetch_add(1, SeqCst);
    let mut handles = Vec::new();
    for i in 0..300u32 {
        let job: Box<dyn FnOnce() -> Result<u32, KernelError> + Send> = match i % 5 {
            0 => Box::new(move || Ok(i)),
            1 => Box::new(|| Err(KernelError::new(ErrorCode::InvalidArgument, "bad"))),
            2 => Box::new(|| panic!("expected panic (test)")),
            _ => Box::new(move || Ok(i)),
        };
        let opts = if i % 5 == 4 {
            JobOptions {
                deadline: Some(Instant::now()),
            } // already passed at dequeue
        } else {
            JobOptions::default()
        };
        handles.push((i, submit(opts, job)));
    }
    for (i, h) in &handles {
        if i % 5 == 3 {
            assert!(h.cancel());
        }
    }
    drop((release, release2));
    assert!(pool.wait_idle(Some(EVENTUALLY)));
    let st = pool.stats();
    assert_eq!(
        st.completed + st.failed + st.cancelled,
        submitted.load(SeqCst) as u64
    );
    assert_eq!(st.completed, 60 + 2);
    assert_eq!(st.failed, 120);
    assert_eq!(st.cancelled, 120);
    assert_eq!((st.queued, st.running), (0, 0));
    // Started jobs only: ok, error, panic, and the two blockers.
    assert_eq!(st.wait_time.count, 182);
    assert!(handles.iter().all(|(_, h)| h.is_finished()));
}

#[test]
fn zero_threads_or_zero_queue_is_an_invalid_config() {
    for (threads, max_queue) in [
        (Some(0), None),
        (Some(2), Some(0)),
        (Some(MAX_THREADS + 1), None),
    ] {
        let err = Pool::new(PoolConfig {
            threads,
            max_queue,
            ..PoolConfig::default()
        })
        .unwrap_err();
        assert!(matches!(err, PoolError::InvalidConfig(_)), "{err:?}");
        assert_eq!(err.code(), "ERR_INVALID_POOL_OPTIONS");
    }
    let p = Pool::new(PoolConfig::default()).unwrap();
    let expect = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(p.threads(), expect.min(MAX_THREADS));
}

#[test]
fn error_codes_are_stable_and_distinct() {
    let mut codes = offthread_pool::ERROR_CODES.to_vec();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), offthread_pool::ERROR_CODES.len());
    assert_eq!(JobError::Cancelled.code(), "ERR_ABORTED");
    assert_eq!(JobError::TimedOut.code(), "ERR_TIMEOUT");
    assert_eq!(JobError::Panicked(String::new()).code(), "ERR_KERNEL_PANIC");
    assert_eq!(
        JobError::Kernel(KernelError::new(ErrorCode::InvalidSeed, "x")).code(),
        "ERR_INVALID_SEED"
    );
    assert!(JobError::TimedOut.to_string().starts_with("ERR_TIMEOUT: "));
}

#[test]
fn wait_idle_from_inside_a_job_does_not_deadlock() {
    let pool = pool(1, None);
    let (tx, rx) = channel();
    let p = pool.clone();
    pool.submit(
        JobOptions::default(),
        move |_| Ok(p.wait_idle(None)),
        move |o| tx.send(o).unwrap(),
    )
    .unwrap();
    assert_eq!(recv(&rx), Ok(false));
}

#[test]
fn many_threads_racing_cancel_against_start_deliver_exactly_once() {
    let pool = pool(2, None);
    let delivered = Arc::new(AtomicUsize::new(0));
    let barrier = Arc::new(Barrier::new(2));
    for _ in 0..2_000 {
        let d = Arc::clone(&delivered);
        let h = pool
            .submit(
                JobOptions::default(),
                |_| Ok(()),
                move |_| {
                    d.fetch_add(1, SeqCst);
                },
            )
            .unwrap();
        let b = Arc::clone(&barrier);
        let t = std::thread::spawn(move || {
            b.wait();
            h.cancel()
        });
        barrier.wait();
        t.join().unwrap();
    }
    assert!(pool.wait_idle(Some(EVENTUALLY)));
    assert_eq!(delivered.load(SeqCst), 2_000);
    let st = pool.stats();
    assert_eq!(st.completed + st.cancelled, 2_000);
}

/// Drain loops stop when the queue looks empty; a submit racing with that must still
/// get its job run (no lost wake-up). One job in flight at a time hits the race on
/// every iteration.
#[test]
fn one_job_at_a_time_never_stalls() {
    let pool = pool(2, None);
    let (tx, rx) = channel();
    for i in 0..20_000u32 {
        let tx = tx.clone();
        pool.submit(
            JobOptions::default(),
            move |_| Ok(i),
            move |o| tx.send(o).unwrap(),
        )
        .unwrap();
        assert_eq!(recv(&rx), Ok(i));
    }
    // And from several threads with bursts in between.
    std::thread::scope(|s| {
        for _ in 0..3 {
            let pool = pool.clone();
            s.spawn(move || {
                let (tx, rx) = channel();
                for round in 0..300u32 {
                    for i in 0..round % 7 + 1 {
                        let tx = tx.clone();
                        pool.submit(
                            JobOptions::default(),
                            move |_| Ok(i),
                            move |o| {
                                tx.send(o).unwrap();
                            },
                        )
                        .unwrap();
                    }
                    for _ in 0..round % 7 + 1 {
                        recv(&rx).unwrap();
                    }
                }
            });
        }
    });
    assert!(pool.wait_idle(Some(EVENTUALLY)));
}

/// A long queue of jobs must not starve `install` (the sync parallel variant): the
/// drain loops yield to other rayon work between jobs.
#[test]
fn install_is_not_starved_by_a_long_queue() {
    let pool = pool(2, None);
    for _ in 0..2_000 {
        pool.submit(
            JobOptions::default(),
            |_| {
                std::thread::sleep(Duration::from_micros(100));
                Ok(())
            },
            |_| {},
        )
        .unwrap();
    }
    let sum: u64 = pool.install(|| (0..1_000u64).into_par_iter().sum());
    assert_eq!(sum, 499_500);
    assert!(
        pool.stats().queued > 0,
        "install waited for the whole queue (≈100 ms of jobs)"
    );
    pool.destroy();
    assert!(pool.wait_idle(Some(EVENTUALLY)));
}

#[test]
fn jobs_may_submit_follow_up_jobs_and_read_cheap_counts() {
    let pool = pool(2, None);
    let (tx, rx) = channel();
    let (p, inner_tx) = (pool.clone(), tx.clone());
    pool.submit(
        JobOptions::default(),
        move |_| {
            // From inside a drain loop: no extra drain loop needed, still runs.
            let tx2 = inner_tx.clone();
            p.submit(
                JobOptions::default(),
                |_| Ok(2),
                move |o| tx2.send(o).unwrap(),
            )
            .unwrap();
            assert!(p.running() >= 1);
            Ok(1)
        },
        move |o| tx.send(o).unwrap(),
    )
    .unwrap();
    let mut got = [recv(&rx).unwrap(), recv(&rx).unwrap()];
    got.sort_unstable();
    assert_eq!(got, [1, 2]);
    assert!(pool.wait_idle(Some(EVENTUALLY)));
    assert_eq!((pool.queued(), pool.running()), (0, 0));
}

/// Submitters, cancellers and a destroy racing: every accepted job is delivered exactly
/// once, rejected ones never, and the counters add up.
#[test]
fn submit_cancel_destroy_race_delivers_each_accepted_job_exactly_once() {
    const PER: usize = 4_000;
    let pool = pool(2, Some(1_000));
    let deliveries: Arc<Vec<AtomicUsize>> =
        Arc::new((0..4 * PER).map(|_| AtomicUsize::new(0)).collect());
    let (accepted, attempts) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let (handles_tx, handles_rx) = channel();
    std::thread::scope(|s| {
        for p in 0..4 {
            let (pool, deliveries, handles_tx, accepted, attempts) = (
                pool.clone(),
                Arc::clone(&deliveries),
                handles_tx.clone(),
                &accepted,
                &attempts,
            );
            s.spawn(move || {
                for i in 0..PER {
                    let id = p * PER + i;
                    attempts.fetch_add(1, SeqCst);
                    let d = Arc::clone(&deliveries);
                    let r = pool.submit(
                        JobOptions::default(),
                        move |ctx| {
                            for _ in 0..(id % 50) {
                                ctx.check()?;
                                std::hint::spin_loop();
                            }
                            if id.is_multiple_of(97) {
                                panic!("expected panic (test)");
                            }
                            Ok(id)
                        },
                        move |_| {
                            d[id].fetch_add(1, SeqCst);
                        },
                    );
                    match r {
                        Ok(h) => {
                            accepted.fetch_add(1, SeqCst);
                            if id.is_multiple_of(3) {
                                let _ = handles_tx.send(h);
                            }
                        }
                        Err(PoolError::QueueFull { .. } | PoolError::Closed) => {
                            deliveries[id].fetch_add(1000, SeqCst); // marks "rejected"
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
            });
        }
        drop(handles_tx);
        s.spawn(move || {
            for h in handles_rx.iter() {
                h.cancel();
            }
        });
        s.spawn(|| {
            // Halfway through the submissions (some may be rejected: QueueFull).
            while attempts.load(SeqCst) < 2 * PER {
                std::thread::yield_now();
            }
            pool.destroy();
        });
    });
    assert!(pool.wait_idle(Some(EVENTUALLY)));
    for (id, d) in deliveries.iter().enumerate() {
        let d = d.load(SeqCst);
        assert!(d == 1 || d == 1000, "job {id}: {d} deliveries");
    }
    let st = pool.stats();
    assert_eq!(
        st.completed + st.failed + st.cancelled,
        accepted.load(SeqCst) as u64
    );
    // (How many were cancelled depends on timing; exactly-once is what is checked.)
}

#[test]
fn handles_are_send_sync_and_clone() {
    fn send_sync_clone<T: Send + Sync + Clone>() {}
    send_sync_clone::<Pool>();
    send_sync_clone::<offthread_pool::JobHandle>();
    send_sync_clone::<JobError>();
    send_sync_clone::<PoolError>();
    fn send_sync<T: Send + Sync>() {}
    send_sync::<offthread_pool::JobContext>();
    send_sync::<offthread_pool::CompletionQueue<String>>();
}

#[test]
fn run_and_wait_percentiles_reflect_the_jobs() {
    let pool = pool(1, None);
    for _ in 0..20 {
        pool.submit(
            JobOptions::default(),
            |_| {
                std::thread::sleep(Duration::from_millis(2));
                Ok(())
            },
            |_| {},
        )
        .unwrap();
    }
    assert!(pool.wait_idle(Some(EVENTUALLY)));
    let st = pool.stats();
    assert_eq!((st.run_time.count, st.wait_time.count), (20, 20));
    assert!(st.run_time.p50 >= 2_000_000, "{:?}", st.run_time);
    assert!(st.run_time.p50 <= st.run_time.p99 && st.run_time.p99 <= st.run_time.max);
    // One worker: the last job waited behind the 19 others (≥ 19 × 2 ms).
    assert!(st.wait_time.max >= 38_000_000, "{:?}", st.wait_time);
}

/// The nice value of the calling thread, from /proc/thread-self/stat (field 19).
#[cfg(target_os = "linux")]
fn current_thread_nice() -> i32 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
    after_comm
        .split_whitespace()
        .nth(16)
        .unwrap()
        .parse()
        .unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn workers_run_at_the_configured_nice_value() {
    let pool = Pool::new(PoolConfig {
        threads: Some(2),
        nice: Some(7),
        ..PoolConfig::default()
    })
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    for _ in 0..4 {
        let tx = tx.clone();
        pool.submit(
            JobOptions::default(),
            |_| Ok(current_thread_nice()),
            move |r| {
                tx.send(r.unwrap()).unwrap();
            },
        )
        .unwrap();
    }
    for _ in 0..4 {
        assert_eq!(rx.recv().unwrap(), 7);
    }
    assert_eq!(
        current_thread_nice(),
        0,
        "the host thread keeps its priority"
    );
}

#[test]
fn nice_out_of_range_is_invalid_config() {
    for nice in [-1, 20] {
        let err = Pool::new(PoolConfig {
            nice: Some(nice),
            ..PoolConfig::default()
        })
        .unwrap_err();
        assert_eq!(err.code(), "ERR_INVALID_POOL_OPTIONS");
    }
}

/// A job that waits inside rayon (here `yield_now`, as a `join` does) must not pick up
/// the drain loop spawned for the next job: that job would run nested on the same
/// thread, after it, while the other thread sleeps.
#[test]
fn a_job_waiting_in_rayon_does_not_run_the_next_job_on_its_thread() {
    let pool = pool(2, None);
    let (submitted_tx, submitted_rx) = channel::<()>();
    let started = Arc::new(Mutex::new(None::<String>));
    let (done_tx, done_rx) = channel();
    let seen = Arc::clone(&started);
    let tx = done_tx.clone();
    pool.submit(
        JobOptions::default(),
        move |_| {
            submitted_rx.recv().unwrap();
            let me = std::thread::current().name().map(str::to_owned);
            let deadline = Instant::now() + Duration::from_secs(5);
            // Wait for job 2 to start elsewhere, yielding to rayon all the while.
            while seen.lock().unwrap().is_none() && Instant::now() < deadline {
                rayon::yield_now();
            }
            Ok(me)
        },
        move |o| tx.send(o.unwrap()).unwrap(),
    )
    .unwrap();
    let seen = Arc::clone(&started);
    pool.submit(
        JobOptions::default(),
        move |_| {
            *seen.lock().unwrap() = std::thread::current().name().map(str::to_owned);
            Ok(None)
        },
        move |o| done_tx.send(o.unwrap()).unwrap(),
    )
    .unwrap();
    submitted_tx.send(()).unwrap();
    let outcomes = [recv(&done_rx), recv(&done_rx)];
    let job1_thread = outcomes.into_iter().flatten().next();
    let job2_thread = started.lock().unwrap().clone();
    assert!(job2_thread.is_some(), "job 2 never started");
    assert_ne!(
        job1_thread, job2_thread,
        "job 2 ran nested on job 1's thread"
    );
    pool.destroy();
}

/// Two clients, each submitting its next job shortly after the last one finished (an
/// HTTP server with two users): on two threads their jobs overlap.
#[test]
fn two_clients_keep_two_threads_busy() {
    let pool = pool(2, None);
    let running = Arc::new(AtomicUsize::new(0));
    let overlapped = Arc::new(AtomicUsize::new(0));
    const JOBS: usize = 30;
    std::thread::scope(|s| {
        for _ in 0..2 {
            let (pool, running, overlapped) =
                (pool.clone(), Arc::clone(&running), Arc::clone(&overlapped));
            s.spawn(move || {
                for _ in 0..JOBS {
                    let (tx, rx) = channel();
                    let (r, o) = (Arc::clone(&running), Arc::clone(&overlapped));
                    pool.submit(
                        JobOptions::default(),
                        move |_| {
                            let at_start = r.fetch_add(1, SeqCst) + 1;
                            std::thread::sleep(Duration::from_millis(5));
                            if at_start > 1 || r.load(SeqCst) > 1 {
                                o.fetch_add(1, SeqCst);
                            }
                            r.fetch_sub(1, SeqCst);
                            Ok(())
                        },
                        move |o| tx.send(o).unwrap(),
                    )
                    .unwrap();
                    recv(&rx).unwrap();
                    std::thread::sleep(Duration::from_micros(200));
                }
            });
        }
    });
    let overlapped = overlapped.load(SeqCst);
    assert!(
        overlapped >= JOBS,
        "only {overlapped} of {} jobs ran alongside another",
        2 * JOBS
    );
    pool.destroy();
}

#[test]
fn a_job_delivering_its_outcome_no_longer_counts_as_running() {
    // A caller may act on a result inside `on_done` (the Node binding hands it to JS,
    // which may start other work at once): by then the job's thread runs no closure.
    let pool = pool(2, None);
    let (tx, rx) = channel();
    let p = pool.clone();
    pool.submit(
        JobOptions::default(),
        |_| Ok(1),
        move |o| tx.send((o, p.running(), p.stats().running)).unwrap(),
    )
    .unwrap();
    let (outcome, running, stats_running) = recv(&rx);
    assert_eq!(outcome.unwrap(), 1);
    assert_eq!((running, stats_running), (0, 0));
    assert!(
        pool.wait_idle(Some(EVENTUALLY)),
        "delivering still counts for idle"
    );
}
