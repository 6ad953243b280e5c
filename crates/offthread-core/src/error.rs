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
    /// Text that a kernel cannot take (e.g. bytes that are not UTF-8 where a string
    /// is required).
    InvalidText,
    /// Text over a kernel's capacity (a QR symbol's, for the chosen ECC level).
    TextTooLong,
    /// MD5 loop round count out of range.
    InvalidRounds,
    /// QR options out of range (size, margin, ECC level).
    InvalidQrOptions,
    InvalidBuffer,
}

impl ErrorCode {
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::InvalidSamples,
        ErrorCode::InvalidSeed,
        ErrorCode::InvalidArgument,
        ErrorCode::Aborted,
        ErrorCode::Timeout,
        ErrorCode::InvalidText,
        ErrorCode::TextTooLong,
        ErrorCode::InvalidRounds,
        ErrorCode::InvalidQrOptions,
        ErrorCode::InvalidBuffer,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidSamples => "ERR_INVALID_SAMPLES",
            ErrorCode::InvalidSeed => "ERR_INVALID_SEED",
            ErrorCode::InvalidArgument => "ERR_INVALID_ARG",
            ErrorCode::Aborted => "ERR_ABORTED",
            ErrorCode::Timeout => "ERR_TIMEOUT",
            ErrorCode::InvalidText => "ERR_INVALID_TEXT",
            ErrorCode::TextTooLong => "ERR_TEXT_TOO_LONG",
            ErrorCode::InvalidRounds => "ERR_INVALID_ROUNDS",
            ErrorCode::InvalidQrOptions => "ERR_INVALID_QR_OPTIONS",
            ErrorCode::InvalidBuffer => "ERR_INVALID_BUFFER",
        }
    }

    /// What a wasm export returns for this code: `-(1 + index in ALL)`, so the JS side
    /// reads the code back from the same list.
    pub fn wasm_return(self) -> i32 {
        let index = Self::ALL.iter().position(|&c| c == self).unwrap_or(0);
        -1 - index as i32
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

#[cfg(test)]
mod tests {
    use super::ErrorCode;

    #[test]
    fn wasm_return_is_minus_one_minus_the_index_in_all() {
        assert_eq!(ErrorCode::InvalidSamples.wasm_return(), -1);
        assert_eq!(ErrorCode::InvalidArgument.wasm_return(), -3);
        for (i, &c) in ErrorCode::ALL.iter().enumerate() {
            assert_eq!(c.wasm_return(), -1 - i as i32, "{}", c.as_str());
        }
    }
}
