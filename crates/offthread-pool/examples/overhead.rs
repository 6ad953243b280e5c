//! Per-job overhead of the pool with no-op jobs.
//!
//! Rows:
//! - **phases**: rounds of 1,000 jobs submitted while the only worker is held
//!   (producer cost), then released and drained (worker cost: dequeue, run, account,
//!   `on_done`). Holding/releasing the worker is outside both timings, the wake-ups at
//!   the start and end of each drain are inside (≈ a few ns per job).
//! - **K in flight** (K = 1 and 1,000): one thread submits with at most K outstanding;
//!   completions are delivered the way the Node binding does it: `on_done` pushes to a
//!   `CompletionQueue`, the push that makes it non-empty unparks the submitting thread
//!   (standing in for `uv_async_send`), which drains the whole batch and tops up. Timed
//!   from the first submit to the last drained completion. Same for raw rayon
//!   `spawn_fifo` (the floor a spawn-per-job design starts from).
//! - **burst**: submit everything, then `wait_idle`.
//!
//! Each row runs `REPEATS` times after one warm-up; it prints the median and the best.
//! On a shared machine the best is the overhead, the median shows the noise.
//!
//!     cargo run --release -p offthread-pool --example overhead [-- jobs [threads [filter]]]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc::channel;
use std::thread::Thread;
use std::time::{Duration, Instant};

use offthread_pool::{CompletionQueue, JobOptions, Pool, PoolConfig};

const REPEATS: usize = 7;

struct Delivery {
    queue: CompletionQueue<u64>,
    consumer: Thread,
}

impl Delivery {
    fn push(&self, v: u64) {
        if self.queue.push(v) {
            self.consumer.unpark();
        }
    }
}

type Submit<'a> = &'a dyn Fn(u64, Arc<Delivery>);

/// `n` jobs with at most `k` in flight; ns per job and, for k = 1, round trips (ns).
fn windowed(n: u64, k: u64, submit: Submit<'_>) -> (f64, Vec<u64>) {
    let d = Arc::new(Delivery {
        queue: CompletionQueue::new(),
        consumer: std::thread::current(),
    });
    let mut buf = Vec::with_capacity(k as usize);
    let mut rtt = Vec::new();
    let (mut submitted, mut completed) = (0, 0);
    let t0 = Instant::now();
    let mut sent_at = t0;
    while completed < n {
        while submitted < n && submitted - completed < k {
            sent_at = Instant::now();
            submit(submitted, Arc::clone(&d));
            submitted += 1;
        }
        loop {
            d.queue.drain_into(&mut buf);
            if !buf.is_empty() {
                break;
            }
            std::thread::park();
        }
        if k == 1 {
            rtt.push(sent_at.elapsed().as_nanos() as u64);
        }
        completed += buf.len() as u64;
        buf.clear();
    }
    (t0.elapsed().as_nanos() as f64 / n as f64, rtt)
}

/// (submit ns/job, drain ns/job) over `rounds` rounds of 1,000 jobs on a 1-thread pool.
fn phases(one: &Pool, rounds: u64) -> (f64, f64) {
    let counter = Arc::new(AtomicU64::new(0));
    let (mut submit, mut drain) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..rounds {
        let (release_tx, release_rx) = channel::<()>();
        let (started_tx, started_rx) = channel();
        one.submit(
            JobOptions::default(),
            move |_| {
                started_tx.send(()).unwrap();
                release_rx.recv().unwrap();
                Ok(())
            },
            |_| {},
        )
        .unwrap();
        started_rx.recv().unwrap();
        let t0 = Instant::now();
        for i in 0..1000 {
            let c = Arc::clone(&counter);
            one.submit(
                JobOptions::default(),
                move |_| Ok(i),
                move |_| {
                    c.fetch_add(1, Relaxed);
                },
            )
            .unwrap();
        }
        let t1 = Instant::now();
        release_tx.send(()).unwrap();
        assert!(one.wait_idle(None));
        submit += t1 - t0;
        drain += t1.elapsed();
    }
    let jobs = rounds as f64 * 1000.0;
    (
        submit.as_nanos() as f64 / jobs,
        drain.as_nanos() as f64 / jobs,
    )
}

fn burst(pool: &Pool, n: u64) -> f64 {
    let t0 = Instant::now();
    for i in 0..n {
        pool.submit(JobOptions::default(), move |_| Ok(i), |_| {})
            .unwrap();
    }
    assert!(pool.wait_idle(None));
    t0.elapsed().as_nanos() as f64 / n as f64
}

/// Median and minimum.
fn summary(mut xs: Vec<f64>) -> (f64, f64) {
    xs.sort_by(f64::total_cmp);
    (xs[xs.len() / 2], xs[0])
}

fn row(name: &str, ns: Vec<f64>, extra: &str) {
    let (med, best) = summary(ns);
    println!(
        "{name:<40} median {med:>6.0} ns/job ({:>9.0} jobs/s)   best {best:>6.0} ns/job ({:>9.0} jobs/s){extra}",
        1e9 / med,
        1e9 / best
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(1_000_000, |a| a.parse().expect("jobs"));
    let threads: usize = args.next().map_or(2, |a| a.parse().expect("threads"));
    let only = args.next().unwrap_or_default(); // rows whose name contains this
    println!(
        "no-op jobs, {threads} worker threads + the submitting thread, {} cores, load average {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split(' ')
            .next()
            .unwrap_or("?")
    );
    let wanted = |name: &str| name.contains(only.as_str());

    if wanted("phases") {
        let one = Pool::new(PoolConfig {
            threads: Some(1),
            ..PoolConfig::default()
        })
        .unwrap();
        let rounds = (n / 1000).max(10);
        phases(&one, rounds / 10);
        let runs: Vec<(f64, f64)> = (0..REPEATS).map(|_| phases(&one, rounds)).collect();
        let (s_med, s_best) = summary(runs.iter().map(|r| r.0).collect());
        let (d_med, d_best) = summary(runs.iter().map(|r| r.1).collect());
        println!(
            "{:<40} median {s_med:.0} + {d_med:.0} ns/job   best {s_best:.0} + {d_best:.0} ns/job   (submit + dequeue→on_done, 1 worker, 1,000 queued)",
            "phases"
        );
    }

    let pool = Pool::new(PoolConfig {
        threads: Some(threads),
        ..PoolConfig::default()
    })
    .unwrap();
    let via_pool = |i: u64, d: Arc<Delivery>| {
        pool.submit(
            JobOptions::default(),
            move |_| Ok(i),
            move |o| d.push(o.unwrap()),
        )
        .unwrap();
    };
    let rayon_pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let via_rayon = |i: u64, d: Arc<Delivery>| {
        rayon_pool.spawn_fifo(move || d.push(std::hint::black_box(i)));
    };
    for k in [1, 1_000] {
        let jobs = if k == 1 { (n / 20).max(1000) } else { n };
        for (name, submit) in [
            ("offthread-pool", &via_pool as Submit<'_>),
            ("rayon spawn_fifo", &via_rayon),
        ] {
            let name = format!("{name}, {k} in flight");
            if !wanted(&name) {
                continue;
            }
            windowed(jobs / 10, k, submit);
            let mut rtts = Vec::new();
            let ns = (0..REPEATS)
                .map(|_| {
                    let (ns, rtt) = windowed(jobs, k, submit);
                    rtts.extend(rtt);
                    ns
                })
                .collect();
            let extra = if rtts.is_empty() {
                String::new()
            } else {
                rtts.sort_unstable();
                let p = |q: f64| rtts[((rtts.len() - 1) as f64 * q) as usize] as f64 / 1e3;
                format!("   round trip p50 {:.1} µs p99 {:.1} µs", p(0.5), p(0.99))
            };
            row(&name, ns, &extra);
        }
    }

    if wanted("burst") {
        burst(&pool, n / 10);
        row(
            "offthread-pool, burst",
            (0..REPEATS).map(|_| burst(&pool, n)).collect(),
            "",
        );
    }
    let st = pool.stats();
    println!(
        "pool stats: completed {} · wait p50 {} ns p99 {} ns · run p50 {} ns p99 {} ns",
        st.completed, st.wait_time.p50, st.wait_time.p99, st.run_time.p50, st.run_time.p99
    );
}
