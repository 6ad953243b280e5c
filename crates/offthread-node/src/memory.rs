//! Giving freed memory back to the OS. When a pool's idle timeout stops its workers,
//! their isolates' memory is freed into glibc's per-thread arenas, which keep it: 1,000
//! dropped pools left 250–370 MiB of RSS after their threads were gone, and
//! `malloc_trim(0)` (which walks every arena) brought 165 MiB back to 83 (measured with
//! bench/experiments/dropped-pools.mjs's shape). Elsewhere (musl, other OSes) a no-op.

use napi_derive::napi;

/// Returns freed heap memory to the OS, on a thread of its own: trimming large arenas
/// takes milliseconds the event loop should not wait for.
#[napi]
pub fn trim_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // No thread to spare: skip it; the memory is only kept, not lost.
        let _ = std::thread::Builder::new()
            .name("offthread-trim".to_owned())
            // SAFETY: malloc_trim takes the allocator's own locks; any thread may call it.
            .spawn(|| unsafe {
                malloc_trim(0);
            });
    }
}
