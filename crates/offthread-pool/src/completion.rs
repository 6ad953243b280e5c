//! Batched delivery of finished jobs to one consumer (the JS thread).

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Many producers [`push`](Self::push), one consumer drains everything at once.
///
/// `push` reports the empty → non-empty transition, so the producers wake the consumer
/// once per batch, not once per item: after a wake-up the consumer drains, and every
/// item pushed before that drain rides along; the first push after it wakes it again.
/// No wake-up is lost, at worst one finds the queue already drained (empty batch).
///
/// While the consumer spins in [`wait_briefly`](Self::wait_briefly), the push that makes
/// the queue non-empty hands the batch to the spinner instead (one compare-and-swap)
/// and reports no wake-up: the spinner is already there to drain, and a wake-up would
/// cost the consumer an extra, empty round through its event loop.
///
/// Items from one producer come out in push order. The critical section is a `Vec`
/// push (or a pointer swap in [`drain_into`](Self::drain_into)), so a plain mutex
/// beats a lock-free list here: no allocation per item, and contention is short.
#[derive(Debug)]
pub struct CompletionQueue<T> {
    items: Mutex<Vec<T>>,
    /// Mirrors `!items.is_empty()` (written under the lock), so a consumer can wait
    /// for the next item without taking the lock in a loop.
    ready: AtomicBool,
    /// IDLE, SPINNING (the consumer is in `wait_briefly`) or HANDED (a producer left the
    /// wake-up to that spinner).
    consumer: AtomicU8,
}

const IDLE: u8 = 0;
const SPINNING: u8 = 1;
const HANDED: u8 = 2;

impl<T> Default for CompletionQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> CompletionQueue<T> {
    pub const fn new() -> Self {
        Self {
            items: Mutex::new(Vec::new()),
            ready: AtomicBool::new(false),
            consumer: AtomicU8::new(IDLE),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<T>> {
        // A panic cannot happen while the lock is held (only Vec::push / swap).
        self.items.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends `item`. Returns `true` when the caller must wake the consumer: the queue
    /// was empty before and the consumer is not spinning for it.
    pub fn push(&self, item: T) -> bool {
        let was_empty = {
            let mut items = self.lock();
            let was_empty = items.is_empty();
            items.push(item);
            self.ready.store(true, Ordering::Release);
            was_empty
        };
        // The spinner sees `ready` (stored above) before it leaves, or learns from HANDED
        // that it must drain: either way nobody waits for a wake-up that never comes.
        was_empty
            && self
                .consumer
                .compare_exchange(SPINNING, HANDED, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
    }

    /// Takes every queued item, oldest first.
    pub fn drain(&self) -> Vec<T> {
        let mut items = self.lock();
        self.ready.store(false, Ordering::Relaxed);
        std::mem::take(&mut *items)
    }

    /// Spins until an item is queued or `budget` has passed; returns whether one is.
    /// For a consumer that expects a completion within microseconds: sleeping in the
    /// OS and being woken costs more than the wait (ARCHITECTURE.md, one job at a time).
    /// Pushes meanwhile wake nobody: when this returns true the caller must drain.
    pub fn wait_briefly(&self, budget: Duration) -> bool {
        let start = Instant::now();
        self.consumer.store(SPINNING, Ordering::SeqCst);
        'spin: loop {
            for _ in 0..64 {
                if self.ready.load(Ordering::Acquire) {
                    break 'spin;
                }
                std::hint::spin_loop();
            }
            if start.elapsed() >= budget {
                break;
            }
        }
        // HANDED implies `ready`: the producer stored it before its compare-and-swap,
        // and this swap acquires that.
        self.consumer.swap(IDLE, Ordering::AcqRel);
        self.ready.load(Ordering::Acquire)
    }

    /// Appends every queued item to `out`, oldest first. When `out` is empty the two
    /// buffers are swapped, so a consumer that clears and reuses `out` allocates nothing
    /// in steady state.
    pub fn drain_into(&self, out: &mut Vec<T>) {
        let mut items = self.lock();
        self.ready.store(false, Ordering::Relaxed);
        if out.is_empty() {
            std::mem::swap(out, &mut *items);
        } else {
            out.append(&mut items);
        }
    }

    /// Whether the consumer is in [`wait_briefly`](Self::wait_briefly) right now (tests).
    #[doc(hidden)]
    pub fn consumer_spinning(&self) -> bool {
        self.consumer.load(Ordering::Acquire) != IDLE
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}
