use std::fmt;

/// Stable error codes. The strings are part of the public contract: they are
/// `err.code` in JS and are listed in docs/errors.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    InvalidSamples,
    InvalidSeed,
    InvalidArgument,
    Aborted,
    Timeout,
}

impl ErrorCode {
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::InvalidSamples,
        ErrorCode::InvalidSeed,
        ErrorCode::InvalidArgument,
        ErrorCode::Aborted,
        ErrorCode::Timeout,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidSamples => "ERR_INVALID_SAMPLES",
            ErrorCode::InvalidSeed => "ERR_INVALID_SEED",
            ErrorCode::InvalidArgument => "ERR_INVALID_ARG",
            ErrorCode::Aborted => "ERR_ABORTED",
            ErrorCode::Timeout => "ERR_TIMEOUT",
        }
    }
}

/// A kernel failure: a stable code plus a human message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelError {
    pub code: ErrorCode,
    pub message: String,
}

impl KernelError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for KernelError {}
