use core::fmt;

/// Why a buffer could not be read. Each variant has a stable code (`R00xx`),
/// documented in `docs/schema-format.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadError {
    /// A header, table or column reaches past the end of the buffer.
    OutOfBounds { offset: u64, len: u64, buf_len: u64 },
    /// A dynamic struct header is impossible (zero size or more unused bytes than room).
    BadStructHeader { offset: u64, header: u32 },
    /// An array header, table or column offset is not on its required alignment.
    Misaligned { offset: u64, align: u32 },
    /// An array says it holds more items than its capacity.
    CountExceedsCapacity { count: u32, capacity: u32 },
    /// A SoA lookup table has more columns than `ReadOptions::max_soa_columns`.
    TooManyColumns { columns: u32, limit: u32 },
    /// Nesting deeper than `ReadOptions::max_depth`.
    DepthLimit { limit: u32 },
    /// An array's element size or stride disagrees with the schema.
    BadElementSize { expected: u32, found: u32 },
    /// A `#string` slice of `u8` is not UTF-8, or of `u16` is not UTF-16.
    InvalidString { offset: u64 },
    /// An array claims more items than the buffer has bytes.
    CountTooLarge { count: u32, buf_len: u64 },
    /// Decoding into owned values visited more items than `ReadOptions::max_traversal`.
    TraversalLimit { limit: u64 },
    /// A variable-length SoA column's offsets do not start at 0, or decrease.
    BadOffsets { offset: u64 },
}

impl ReadError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            Self::OutOfBounds { .. } => "R0001",
            Self::BadStructHeader { .. } => "R0002",
            Self::Misaligned { .. } => "R0003",
            Self::CountExceedsCapacity { .. } => "R0004",
            Self::TooManyColumns { .. } => "R0005",
            Self::DepthLimit { .. } => "R0006",
            Self::BadElementSize { .. } => "R0007",
            Self::InvalidString { .. } => "R0008",
            Self::CountTooLarge { .. } => "R0009",
            Self::TraversalLimit { .. } => "R0010",
            Self::BadOffsets { .. } => "R0011",
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.code())?;
        match self {
            Self::OutOfBounds {
                offset,
                len,
                buf_len,
            } => write!(
                f,
                "{len} bytes at offset {offset} reach past the end of a {buf_len}-byte buffer"
            ),
            Self::BadStructHeader { offset, header } => {
                write!(
                    f,
                    "invalid dynamic struct header {header:#010x} at offset {offset}"
                )
            }
            Self::Misaligned { offset, align } => {
                write!(f, "offset {offset} is not {align}-byte aligned")
            }
            Self::CountExceedsCapacity { count, capacity } => {
                write!(f, "array count {count} exceeds its capacity {capacity}")
            }
            Self::TooManyColumns { columns, limit } => {
                write!(f, "SoA table has {columns} columns, the limit is {limit}")
            }
            Self::DepthLimit { limit } => write!(f, "nesting deeper than {limit}"),
            Self::BadElementSize { expected, found } => {
                write!(f, "array element size {found}, the schema says {expected}")
            }
            Self::InvalidString { offset } => write!(f, "invalid string at offset {offset}"),
            Self::CountTooLarge { count, buf_len } => {
                write!(
                    f,
                    "array count {count} is larger than the {buf_len}-byte buffer"
                )
            }
            Self::TraversalLimit { limit } => write!(f, "decoding visited more than {limit} items"),
            Self::BadOffsets { offset } => write!(
                f,
                "offsets column at {offset} does not start at 0 or decreases"
            ),
        }
    }
}

impl std::error::Error for ReadError {}

/// Why a value could not be written.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteError {
    /// The message would pass 4 GiB: offsets are 32-bit (WASM's address space).
    TooLarge { needed: u64 },
    /// The output slice is smaller than the encoded message (`needed` is where the
    /// allocation that did not fit would have ended: a lower bound).
    BufferTooSmall { needed: u64, available: u64 },
    /// An in-place resize asked for more items than the array's capacity (or to grow a
    /// SoA array with a column this schema does not know).
    BeyondCapacity { count: u64, capacity: u64 },
}

impl WriteError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            Self::TooLarge { .. } => "W0001",
            Self::BufferTooSmall { .. } => "W0002",
            Self::BeyondCapacity { .. } => "W0010",
        }
    }
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.code())?;
        match self {
            Self::TooLarge { needed } => {
                write!(
                    f,
                    "message needs {needed} bytes, past the 32-bit offset limit"
                )
            }
            Self::BufferTooSmall { needed, available } => {
                write!(
                    f,
                    "message needs at least {needed} bytes, the output has {available}"
                )
            }
            Self::BeyondCapacity { count, capacity } => {
                write!(
                    f,
                    "cannot resize to {count} items in place: the array has room for {capacity}"
                )
            }
        }
    }
}

impl std::error::Error for WriteError {}
