//! Lock-free wait/run-time histograms: one recorder per worker thread, merged on read.
//!
//! Buckets are log-linear (8 per power of two, so a reported value is at most 12.5 %
//! above the true one; `max` is exact). Recording is a plain relaxed load + store on
//! the worker's own cache lines (one writer per recorder): workers never write to
//! shared lines, so recording does not serialise them. Reading ([`crate::Pool::stats`]) walks every bucket: O(threads · 496).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

const SUB_BITS: u32 = 3;
const SUB: usize = 1 << SUB_BITS;
/// 8 exact buckets for 0..8, then 8 per power of two from 2^3 to 2^63.
const BUCKETS: usize = SUB + (64 - SUB_BITS as usize) * SUB;

/// Latency summary in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Percentiles {
    /// Number of samples recorded.
    pub count: u64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

fn bucket_of(v: u64) -> usize {
    if v < SUB as u64 {
        v as usize
    } else {
        let e = 63 - v.leading_zeros(); // ≥ SUB_BITS
        let sub = (v >> (e - SUB_BITS)) as usize & (SUB - 1);
        (e - SUB_BITS + 1) as usize * SUB + sub
    }
}

/// Largest value that falls in bucket `i`.
fn bucket_high(i: usize) -> u64 {
    if i < SUB {
        return i as u64;
    }
    let group = (i / SUB) as u32; // ≥ 1
    let sub = (i % SUB) as u64;
    let shift = group - 1; // e − SUB_BITS
    let low = (SUB as u64 + sub) << shift;
    low.saturating_add((1u64 << shift) - 1)
}

pub(crate) struct Histogram {
    counts: Box<[AtomicU64]>,
    max: AtomicU64,
}

impl Histogram {
    fn new() -> Self {
        Self {
            counts: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            max: AtomicU64::new(0),
        }
    }

    /// Single writer: only the owning worker records (see [`WorkerStats::record_wait`]),
    /// so plain loads and stores suffice — no locked instruction, no CAS loop. Readers
    /// may see a sample in `counts` before `max`; both are monotonic.
    #[inline]
    fn record(&self, v: u64) {
        let c = &self.counts[bucket_of(v)];
        c.store(c.load(Relaxed) + 1, Relaxed);
        if v > self.max.load(Relaxed) {
            self.max.store(v, Relaxed);
        }
    }
}

/// Merges histograms and reads the percentiles.
fn summarize<'a>(hists: impl Iterator<Item = &'a Histogram> + Clone) -> Percentiles {
    let mut merged = vec![0u64; BUCKETS];
    let mut max = 0;
    for h in hists {
        for (m, c) in merged.iter_mut().zip(h.counts.iter()) {
            *m += c.load(Relaxed);
        }
        max = max.max(h.max.load(Relaxed));
    }
    let count: u64 = merged.iter().sum();
    if count == 0 {
        return Percentiles::default();
    }
    let at_rank = |q_num: u64, q_den: u64| {
        let rank = (count * q_num).div_ceil(q_den).max(1);
        let mut seen = 0;
        for (i, &c) in merged.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bucket_high(i).min(max);
            }
        }
        max
    };
    Percentiles {
        count,
        p50: at_rank(50, 100),
        p99: at_rank(99, 100),
        max,
    }
}

/// One worker's counters and histograms, on their own cache lines.
#[repr(align(128))]
struct Recorder {
    completed: AtomicU64,
    failed: AtomicU64,
    cancelled: AtomicU64,
    wait: Histogram,
    run: Histogram,
}

/// Outcome counters and latency histograms, one [`Recorder`] per worker.
pub(crate) struct WorkerStats {
    per_worker: Box<[Recorder]>,
}

/// Which counter an outcome goes to.
#[derive(Clone, Copy)]
pub(crate) enum Outcome {
    Completed,
    Failed,
    Cancelled,
}

impl WorkerStats {
    pub(crate) fn new(workers: usize) -> Self {
        Self {
            per_worker: (0..workers.max(1))
                .map(|_| Recorder {
                    completed: AtomicU64::new(0),
                    failed: AtomicU64::new(0),
                    cancelled: AtomicU64::new(0),
                    wait: Histogram::new(),
                    run: Histogram::new(),
                })
                .collect(),
        }
    }

    #[inline]
    pub(crate) fn count(&self, outcome: Outcome) {
        let r = self.mine();
        match outcome {
            Outcome::Completed => &r.completed,
            Outcome::Failed => &r.failed,
            Outcome::Cancelled => &r.cancelled,
        }
        .fetch_add(1, Relaxed);
    }

    /// (completed, failed, cancelled)
    pub(crate) fn counts(&self) -> (u64, u64, u64) {
        self.per_worker.iter().fold((0, 0, 0), |(c, f, x), r| {
            (
                c + r.completed.load(Relaxed),
                f + r.failed.load(Relaxed),
                x + r.cancelled.load(Relaxed),
            )
        })
    }

    /// The calling worker's recorder (index from rayon). Other threads (a canceller)
    /// share slot 0, which stays correct because recording is atomic.
    #[inline]
    fn mine(&self) -> &Recorder {
        let i = rayon::current_thread_index().unwrap_or(0);
        &self.per_worker[i % self.per_worker.len()]
    }

    /// Only from a worker of this pool (in `Job::run`): each recorder then has one
    /// writer, which `Histogram::record` relies on.
    #[inline]
    pub(crate) fn record_wait(&self, ns: u64) {
        self.mine().wait.record(ns);
    }

    /// Same single-writer rule as [`Self::record_wait`].
    #[inline]
    pub(crate) fn record_run(&self, ns: u64) {
        self.mine().run.record(ns);
    }

    pub(crate) fn wait(&self) -> Percentiles {
        summarize(self.per_worker.iter().map(|r| &r.wait))
    }

    pub(crate) fn run(&self) -> Percentiles {
        summarize(self.per_worker.iter().map(|r| &r.run))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_bound_their_values() {
        let mut prev = 0;
        for v in (0..100_000u64).chain([u64::MAX / 3, u64::MAX - 1, u64::MAX]) {
            let b = bucket_of(v);
            assert!(b < BUCKETS, "{v} → {b}");
            assert!(b >= prev || v > 100_000, "buckets must be monotonic");
            prev = b;
            assert!(
                bucket_high(b) >= v,
                "{v} above its bucket's high {}",
                bucket_high(b)
            );
            if b > 0 {
                assert!(bucket_high(b - 1) < v, "{v} also fits bucket {}", b - 1);
            }
            // ≤ 12.5 % relative error.
            assert!(bucket_high(b) - v <= v / 8 + 1);
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        assert_eq!(bucket_high(BUCKETS - 1), u64::MAX);
    }

    #[test]
    fn percentiles_of_a_known_distribution() {
        let h = Histogram::new();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let p = summarize(std::iter::once(&h));
        assert_eq!(p.count, 1000);
        assert_eq!(p.max, 1_000_000);
        assert!((500_000..=500_000 + 500_000 / 8).contains(&p.p50), "{p:?}");
        assert!((990_000..=1_000_000).contains(&p.p99), "{p:?}");
        assert_eq!(summarize(std::iter::empty()), Percentiles::default());
    }
}
