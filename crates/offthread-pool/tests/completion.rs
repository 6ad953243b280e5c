//! `CompletionQueue`: wake-up on empty → non-empty only, order per producer, no lost wake.

use std::sync::mpsc::channel;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use offthread_pool::CompletionQueue;

#[test]
fn push_reports_only_the_empty_to_non_empty_transition() {
    let q = CompletionQueue::new();
    assert!(q.is_empty());
    assert!(q.push(1));
    assert!(!q.push(2));
    assert!(!q.push(3));
    assert_eq!(q.len(), 3);
    assert_eq!(q.drain(), [1, 2, 3]);
    assert!(q.drain().is_empty());
    assert!(q.push(4), "empty again after a drain");
    let mut out = Vec::with_capacity(16);
    q.drain_into(&mut out);
    assert_eq!(out, [4]);
    assert!(q.push(5));
    q.drain_into(&mut out);
    assert_eq!(out, [4, 5], "drain_into appends");
}

/// Producers wake the consumer only when `push` returns true; the consumer drains on
/// each wake. Every item must arrive (no lost wake-up), in push order per producer.
#[test]
fn concurrent_producers_one_consumer_no_lost_wakeup_and_order_per_producer() {
    const PRODUCERS: usize = 4;
    const PER: u64 = 50_000;
    let q = Arc::new(CompletionQueue::new());
    let (wake_tx, wake_rx) = channel::<()>();
    let start = Arc::new(Barrier::new(PRODUCERS));
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let (q, wake, start) = (Arc::clone(&q), wake_tx.clone(), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                let mut wakes = 0;
                for seq in 0..PER {
                    if q.push((p, seq)) {
                        wake.send(()).unwrap();
                        wakes += 1;
                    }
                }
                wakes
            })
        })
        .collect();
    drop(wake_tx);
    let mut next = [0u64; PRODUCERS];
    let mut total = 0;
    let mut batches = 0;
    let mut buf = Vec::new();
    // Only a wake-up may trigger a drain: a lost one leaves items behind and the
    // channel's timeout fails the test.
    while total < PRODUCERS as u64 * PER {
        wake_rx
            .recv_timeout(Duration::from_secs(20))
            .expect("a wake-up for every non-empty queue");
        q.drain_into(&mut buf);
        batches += 1;
        for &(p, seq) in &buf {
            assert_eq!(seq, next[p], "producer {p} out of order");
            next[p] += 1;
        }
        total += buf.len() as u64;
        buf.clear();
    }
    let wakes: usize = producers.into_iter().map(|t| t.join().unwrap()).sum();
    assert!(q.is_empty());
    assert_eq!(next, [PER; PRODUCERS]);
    // Every wake is followed by one drain (some drains may find an already-drained batch).
    assert!(wakes >= batches && wakes <= batches + wake_rx.try_iter().count());
}

/// A push made while the consumer spins in `wait_briefly` hands the batch to the
/// spinner (no wake-up asked for) and the spinner reports it; once the spinner has
/// left, the next batch asks for a wake-up again.
#[test]
fn a_spinning_consumer_takes_the_batch_without_a_wakeup() {
    let q = Arc::new(CompletionQueue::new());
    let producer = {
        let q = Arc::clone(&q);
        std::thread::spawn(move || {
            // Wait until the consumer spins (not a timing guess: the state is observed).
            while !q.consumer_spinning() {
                std::hint::spin_loop();
            }
            q.push(7)
        })
    };
    assert!(
        q.wait_briefly(Duration::from_secs(60)),
        "the spinner saw the push"
    );
    assert!(
        !producer.join().unwrap(),
        "a push to a spinner asks for no wake-up"
    );
    assert!(!q.consumer_spinning());
    assert_eq!(q.drain(), [7]);
    assert!(
        q.push(8),
        "nobody spins now: the transition asks for a wake-up"
    );
    assert!(
        q.wait_briefly(Duration::ZERO),
        "an item already queued is reported at once"
    );
}

/// Many producers against a consumer that alternates short spins and wake-ups: every
/// item arrives, and each batch is announced exactly once (by a wake-up or to a spinner).
#[test]
fn spins_and_wakeups_mixed_lose_nothing() {
    const PRODUCERS: usize = 3;
    const PER: u64 = 30_000;
    let q = Arc::new(CompletionQueue::new());
    let (wake_tx, wake_rx) = channel::<()>();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let (q, wake) = (Arc::clone(&q), wake_tx.clone());
            std::thread::spawn(move || {
                for seq in 0..PER {
                    if q.push((p, seq)) {
                        wake.send(()).unwrap();
                    }
                }
            })
        })
        .collect();
    drop(wake_tx);
    let mut next = [0u64; PRODUCERS];
    let mut total = 0;
    let mut round = 0u64;
    while total < PRODUCERS as u64 * PER {
        round += 1;
        // Every other round: spin a little first; a batch handed to the spin is drained
        // now, otherwise only a wake-up may trigger the drain.
        let handed = round.is_multiple_of(2) && q.wait_briefly(Duration::from_micros(50));
        if !handed {
            wake_rx
                .recv_timeout(Duration::from_secs(30))
                .expect("a batch was announced to nobody (lost wake-up)");
        }
        for (p, seq) in q.drain() {
            assert_eq!(seq, next[p], "producer {p} out of order");
            next[p] += 1;
            total += 1;
        }
    }
    for p in producers {
        p.join().unwrap();
    }
}
