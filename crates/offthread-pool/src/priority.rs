//! Worker scheduling priority. Linux schedules threads individually, so a worker can
//! lower its own priority (raise its nice value) without privileges and without
//! touching the host thread.

/// Sets the calling thread's nice value to `nice` (0..=19). Best effort: on failure or
/// on other systems the thread keeps its priority.
#[cfg(target_os = "linux")]
pub fn lower_current_thread(nice: i32) {
    // SAFETY: gettid takes no arguments; setpriority with PRIO_PROCESS and a thread id
    // changes only that thread's nice value, and raising it needs no privilege.
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice);
    }
}

#[cfg(not(target_os = "linux"))]
pub fn lower_current_thread(_nice: i32) {}
