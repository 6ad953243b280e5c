//! Helpers shared by the pool's integration tests.
#![allow(dead_code)]

use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;

use offthread_pool::{JobOptions, Pool, PoolConfig};

/// Generous bound for "eventually": far above any expected latency, only there so a
/// bug fails instead of hanging.
pub const EVENTUALLY: Duration = Duration::from_secs(20);

pub fn pool(threads: usize, max_queue: Option<usize>) -> Pool {
    Pool::new(PoolConfig {
        threads: Some(threads),
        max_queue,
        thread_name: "offthread-test".to_owned(),
    })
    .expect("valid config")
}

/// Occupies one worker until the returned sender is dropped or sent to. Returns once
/// the blocking job is running.
pub fn block_one_worker(pool: &Pool) -> Sender<()> {
    let (release_tx, release_rx) = channel::<()>();
    let (started_tx, started_rx) = channel();
    pool.submit(
        JobOptions::default(),
        move |_| {
            started_tx.send(()).unwrap();
            let _ = release_rx.recv();
            Ok(())
        },
        |_| {},
    )
    .expect("accepted");
    started_rx
        .recv_timeout(EVENTUALLY)
        .expect("the blocking job started");
    release_tx
}

pub fn recv<T>(rx: &Receiver<T>) -> T {
    rx.recv_timeout(EVENTUALLY).expect("outcome delivered")
}
