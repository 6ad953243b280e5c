//! Giving freed memory back to the OS. When a pool's idle timeout stops its workers,
//! their isolates' memory is freed into glibc's per-thread arenas, which keep it: 1,000
//! dropped pools left 250–370 MiB of RSS after their threads were gone, and
//! `malloc_trim(0)` (which walks every arena) brought 165 MiB back to 83 (measured with
//! bench/experiments/dropped-pools.mjs's shape). Elsewhere (musl, other OSes) a no-op.
//!
//! At most one trim thread runs at a time: a request made while one runs is folded into
//! one more pass of that thread, and the thread ends when no request is left. One thread
//! per request let trims asked for by a burst of collected pools overlap, each one more
//! thread in the process's count (issue 31: the thread count read back at the end of a
//! run caught an `offthread-trim` in flight); a thread kept for the process's life would
//! be one more thread for good, in every process that ever trimmed.

use napi_derive::napi;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod trim {
    use std::sync::{Mutex, MutexGuard, PoisonError};

    /// `running`: a trim thread is up. `again`: a request came while it ran.
    struct State {
        running: bool,
        again: bool,
    }

    static STATE: Mutex<State> = Mutex::new(State {
        running: false,
        again: false,
    });

    // Two flags, no invariant a panic could break half-way: a poisoned lock is still usable.
    fn state() -> MutexGuard<'static, State> {
        STATE.lock().unwrap_or_else(PoisonError::into_inner)
    }

    unsafe extern "C" {
        fn malloc_trim(pad: usize) -> i32;
    }

    pub fn request() {
        {
            let mut s = state();
            if s.running {
                s.again = true;
                return;
            }
            s.running = true;
        }
        let spawned = std::thread::Builder::new()
            .name("offthread-trim".to_owned())
            // It only calls malloc_trim: the default 2 MiB stack is not needed.
            .stack_size(64 * 1024)
            .spawn(run);
        // No thread to spare: skip it; the memory is only kept, not lost.
        if spawned.is_err() {
            state().running = false;
        }
    }

    fn run() {
        loop {
            // SAFETY: malloc_trim takes the allocator's own locks; any thread may call it.
            unsafe {
                malloc_trim(0);
            }
            let mut s = state();
            if !s.again {
                s.running = false;
                return;
            }
            s.again = false;
        }
    }
}

/// Returns freed heap memory to the OS, on a thread of its own: trimming large arenas
/// takes milliseconds the event loop should not wait for.
#[napi]
pub fn trim_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    trim::request();
}
