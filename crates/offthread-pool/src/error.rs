//! The pool's errors, each with a stable code (`err.code` in JS, listed in docs/errors.md).

use std::fmt;

use offthread_core::{ErrorCode, KernelError};

/// Why a job did not produce a value. Delivered to the job's `on_done`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobError {
    /// The kernel returned an error other than abort/timeout; its code passes through.
    Kernel(KernelError),
    /// Cancelled through its [`JobHandle`](crate::JobHandle) or by [`Pool::destroy`](crate::Pool::destroy),
    /// or the kernel returned `ERR_ABORTED`.
    Cancelled,
    /// The deadline passed while queued or running, or the kernel returned `ERR_TIMEOUT`.
    TimedOut,
    /// The job panicked; the message is the panic payload when it is a string.
    Panicked(String),
}

impl JobError {
    /// Stable code: `ERR_ABORTED`, `ERR_TIMEOUT`, `ERR_KERNEL_PANIC`, or the kernel's own.
    pub fn code(&self) -> &'static str {
        match self {
            JobError::Kernel(e) => e.code.as_str(),
            JobError::Cancelled => ErrorCode::Aborted.as_str(),
            JobError::TimedOut => ErrorCode::Timeout.as_str(),
            JobError::Panicked(_) => ERR_KERNEL_PANIC,
        }
    }

    /// A kernel's `ERR_ABORTED` / `ERR_TIMEOUT` (what [`JobContext`](crate::JobContext)'s
    /// `check()` returns) become `Cancelled` / `TimedOut`; other codes stay `Kernel`.
    pub fn from_kernel(e: KernelError) -> Self {
        match e.code {
            ErrorCode::Aborted => JobError::Cancelled,
            ErrorCode::Timeout => JobError::TimedOut,
            _ => JobError::Kernel(e),
        }
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobError::Kernel(e) => e.fmt(f),
            JobError::Cancelled => write!(f, "{}: the operation was aborted", self.code()),
            JobError::TimedOut => write!(f, "{}: the operation timed out", self.code()),
            JobError::Panicked(m) => write!(f, "{}: the kernel panicked: {m}", self.code()),
        }
    }
}

impl std::error::Error for JobError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            JobError::Kernel(e) => Some(e),
            _ => None,
        }
    }
}

/// Why the pool refused a request. Returned synchronously; the job never ran and its
/// `on_done` is dropped without being called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoolError {
    /// `threads` or `max_queue` out of range (0, or above the limits).
    InvalidConfig(String),
    /// `max_queue` jobs are already queued (running jobs do not count).
    QueueFull { max_queue: usize },
    /// `close()` or `destroy()` was called.
    Closed,
    /// The operating system refused to start the worker threads.
    Spawn(String),
}

/// Code of [`JobError::Panicked`].
pub const ERR_KERNEL_PANIC: &str = "ERR_KERNEL_PANIC";
/// Code of [`PoolError::InvalidConfig`].
pub const ERR_INVALID_POOL_OPTIONS: &str = "ERR_INVALID_POOL_OPTIONS";
/// Code of [`PoolError::QueueFull`].
pub const ERR_QUEUE_FULL: &str = "ERR_QUEUE_FULL";
/// Code of [`PoolError::Closed`].
pub const ERR_POOL_CLOSED: &str = "ERR_POOL_CLOSED";
/// Code of [`PoolError::Spawn`].
pub const ERR_POOL_SPAWN: &str = "ERR_POOL_SPAWN";

/// Every code this crate adds to the registry (the kernel codes `ERR_ABORTED` and
/// `ERR_TIMEOUT` are reused, not redefined). For the docs-completeness test.
pub const ERROR_CODES: &[&str] = &[
    ERR_KERNEL_PANIC,
    ERR_INVALID_POOL_OPTIONS,
    ERR_QUEUE_FULL,
    ERR_POOL_CLOSED,
    ERR_POOL_SPAWN,
];

impl PoolError {
    pub fn code(&self) -> &'static str {
        match self {
            PoolError::InvalidConfig(_) => ERR_INVALID_POOL_OPTIONS,
            PoolError::QueueFull { .. } => ERR_QUEUE_FULL,
            PoolError::Closed => ERR_POOL_CLOSED,
            PoolError::Spawn(_) => ERR_POOL_SPAWN,
        }
    }
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = self.code();
        match self {
            PoolError::InvalidConfig(m) => write!(f, "{code}: {m}"),
            PoolError::QueueFull { max_queue } => {
                write!(f, "{code}: the queue is full ({max_queue} jobs waiting)")
            }
            PoolError::Closed => write!(f, "{code}: the pool is closed"),
            PoolError::Spawn(m) => write!(f, "{code}: could not start the pool's threads: {m}"),
        }
    }
}

impl std::error::Error for PoolError {}
