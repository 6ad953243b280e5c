//! Filter failures: a stable registry code (docs/errors.md) and a message.

use std::fmt;

/// Invalid UTF-8 in strict mode (also a sequence cut off at the end of the stream).
pub const INVALID_UTF8: &str = "ERR_FILTER_INVALID_UTF8";
/// Invalid UTF-16LE in strict mode: a lone surrogate or an odd byte at the end.
pub const INVALID_UTF16: &str = "ERR_FILTER_INVALID_UTF16";
/// A character the target encoding cannot hold (latin1 above U+00FF), strict mode.
pub const UNMAPPABLE: &str = "ERR_FILTER_UNMAPPABLE";
/// Compressed input that does not decode (bad header, bad data, bad checksum, truncated).
pub const CORRUPT_DATA: &str = "ERR_FILTER_CORRUPT_DATA";
/// A CSV/NDJSON record that does not fit the schema (field count, type, range, missing key).
pub const BAD_RECORD: &str = "ERR_FILTER_BAD_RECORD";
/// A filter description the library does not know (encoding, level, column type).
pub const INVALID_SPEC: &str = "ERR_FILTER_INVALID_SPEC";
/// A sequential filter was pushed a chunk while the previous one was still running.
pub const BUSY: &str = "ERR_FILTER_BUSY";
/// The filter has finished or failed; it takes no more chunks.
pub const CLOSED: &str = "ERR_FILTER_CLOSED";
/// A batch would exceed the schema format's 4 GiB message limit.
pub const TOO_LARGE: &str = "ERR_FILTER_TOO_LARGE";
/// CSV input that ends inside a quoted field (csv-parse: CSV_QUOTE_NOT_CLOSED).
pub const QUOTE_NOT_CLOSED: &str = "ERR_FILTER_QUOTE_NOT_CLOSED";
/// A zstd frame needs a larger window than the decoder's limit (windowLogMax).
pub const WINDOW_TOO_LARGE: &str = "ERR_FILTER_WINDOW_TOO_LARGE";

/// Every code a filter can fail with (the bindings list them for the registry check).
pub const ERROR_CODES: &[&str] = &[
    INVALID_UTF8,
    INVALID_UTF16,
    UNMAPPABLE,
    CORRUPT_DATA,
    BAD_RECORD,
    INVALID_SPEC,
    BUSY,
    CLOSED,
    TOO_LARGE,
    QUOTE_NOT_CLOSED,
    WINDOW_TOO_LARGE,
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    pub code: &'static str,
    pub message: String,
}

impl FilterError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for FilterError {}

pub type FilterResult<T> = Result<T, FilterError>;
