//! Monte Carlo π on WebAssembly threads: the seed's (seed 000) browser mechanism.
//!
//! One module, one shared memory, one instance per Web Worker on that memory. The job
//! and its result live in [`JOB`], in the shared memory: the page writes a job
//! (`pi_begin`) and wakes the workers; each worker claims chunks with an atomic counter
//! and adds its count into `inside` atomically; the last worker to leave sets
//! `finished`, which the page waits on. No message carries a count.
//!
//! The counting is the browser `wasm` rows' own kernel: `pi_simd.rs` of offthread-wasm,
//! included verbatim, over the same jump-ahead stream (`offthread_kernels::pi`), so a
//! count equals the single-thread kernel's for every split.

use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};

use offthread_kernels::ErrorCode;
use offthread_kernels::pi::{CHUNK_SAMPLES, PiOptions, state_at};

#[path = "../../../crates/offthread-wasm/src/pi_simd.rs"]
#[allow(dead_code, unreachable_pub)]
mod pi_simd;

/// Fewest samples in a chunk (as `piChunks` in the TS package: ≈ 10 µs of work).
const MIN_CHUNK: u64 = 1 << 14;

/// The job, at a fixed address in the shared memory. The two first words are the ones
/// JS waits on (`Atomics.wait` / `waitAsync` need i32 words): `pi_job()` is their address.
#[repr(C)]
pub struct Job {
    /// Bumped by `pi_begin`; a parked worker waits for it to change.
    generation: AtomicU32,
    /// 0 while a job runs; 1 once every worker has left it.
    finished: AtomicU32,
    /// Workers taking part: `finished` is set when this many have left.
    workers: AtomicU32,
    /// Workers that have left the current job.
    left: AtomicU32,
    /// Bit `id` set when worker `id` counted at least one chunk of the current job.
    counted_by: AtomicU32,
    seed: AtomicI64,
    samples: AtomicU64,
    chunk: AtomicU64,
    chunks: AtomicU64,
    /// The next chunk to claim.
    next: AtomicU64,
    /// The job's count so far.
    inside: AtomicU64,
}

pub static JOB: Job = Job {
    generation: AtomicU32::new(0),
    finished: AtomicU32::new(1),
    workers: AtomicU32::new(0),
    left: AtomicU32::new(0),
    counted_by: AtomicU32::new(0),
    seed: AtomicI64::new(1),
    samples: AtomicU64::new(0),
    chunk: AtomicU64::new(MIN_CHUNK),
    chunks: AtomicU64::new(0),
    next: AtomicU64::new(0),
    inside: AtomicU64::new(0),
};

/// The address of [`JOB`]: word 0 is `generation`, word 1 `finished`.
#[unsafe(no_mangle)]
pub extern "C" fn pi_job() -> *const Job {
    &JOB
}

/// Writes a job: `samples` of `seed`'s stream over `workers` workers, in chunks of
/// ≈ samples / (4·workers), from [`MIN_CHUNK`] to [`CHUNK_SAMPLES`]. Returns the number
/// of chunks, or a negative error: bad samples or seed, or a job still running (the
/// page starts one only after every worker has left the last one, so no worker still
/// reads the old job). Bumps `generation`; the caller then wakes the parked workers
/// (`Atomics.notify` on word 0).
#[unsafe(no_mangle)]
pub extern "C" fn pi_begin(samples: f64, seed: f64, workers: u32) -> i32 {
    let opts = match PiOptions::from_f64(samples, seed) {
        Ok(o) => o,
        Err(e) => return e.code.wasm_return(),
    };
    if workers == 0 || workers > 32 || JOB.finished.load(Ordering::Acquire) == 0 {
        return ErrorCode::InvalidArgument.wasm_return();
    }
    let w = u64::from(workers);
    let chunk = opts.samples.div_ceil(4 * w).clamp(MIN_CHUNK, CHUNK_SAMPLES);
    let chunks = opts.samples.div_ceil(chunk);
    JOB.seed.store(opts.seed, Ordering::Relaxed);
    JOB.samples.store(opts.samples, Ordering::Relaxed);
    JOB.chunk.store(chunk, Ordering::Relaxed);
    JOB.chunks.store(chunks, Ordering::Relaxed);
    JOB.next.store(0, Ordering::Relaxed);
    JOB.inside.store(0, Ordering::Relaxed);
    JOB.workers.store(workers, Ordering::Relaxed);
    JOB.left.store(0, Ordering::Relaxed);
    JOB.counted_by.store(0, Ordering::Relaxed);
    JOB.finished.store(0, Ordering::Relaxed);
    // Release: a worker that sees the new generation sees the job above.
    JOB.generation.fetch_add(1, Ordering::Release);
    chunks.min(i32::MAX as u64) as i32
}

/// One worker's part of the current job: claims and counts chunks until none are
/// left, then leaves. Returns 1 if it was the last to leave (`finished` is now 1 and
/// `inside` final: the caller notifies the page), else 0.
#[unsafe(no_mangle)]
pub extern "C" fn pi_work(id: u32) -> u32 {
    let seed = JOB.seed.load(Ordering::Relaxed);
    let samples = JOB.samples.load(Ordering::Relaxed);
    let chunk = JOB.chunk.load(Ordering::Relaxed);
    let chunks = JOB.chunks.load(Ordering::Relaxed);
    let mut counted = false;
    loop {
        let i = JOB.next.fetch_add(1, Ordering::Relaxed);
        if i >= chunks {
            break;
        }
        let first = i * chunk;
        let n = (samples - first).min(chunk);
        let c = pi_simd::count_inside(state_at(seed, first), n);
        JOB.inside.fetch_add(c, Ordering::Relaxed);
        counted = true;
    }
    if counted {
        JOB.counted_by.fetch_or(1 << (id % 32), Ordering::Relaxed);
    }
    // AcqRel: the last to leave sees every other worker's `inside` additions.
    if JOB.left.fetch_add(1, Ordering::AcqRel) + 1 == JOB.workers.load(Ordering::Relaxed) {
        JOB.finished.store(1, Ordering::Release);
        1
    } else {
        0
    }
}

/// The finished job's count (exact below 2^53).
#[unsafe(no_mangle)]
pub extern "C" fn pi_inside() -> f64 {
    JOB.inside.load(Ordering::Acquire) as f64
}

/// Which workers counted a chunk of the last job (bit `id`).
#[unsafe(no_mangle)]
pub extern "C" fn pi_counted_by() -> u32 {
    JOB.counted_by.load(Ordering::Acquire)
}
