//! The runtime the generated readers and writers call. No allocation on the read
//! path, no `unsafe` (aligned column casts go through `bytemuck`), no panics on
//! malformed input: every failure is a [`ReadError`] with a stable code.
//!
//! The byte layout is specified in `docs/schema-format.md`.

mod arrays;
mod column;
mod error;
mod hash;
mod le;
mod read;
mod write;

pub use arrays::{AosView, SoaView, VariantTable};
pub use column::{Column, ColumnIter};
pub use error::{ReadError, WriteError};
pub use hash::{FIELD_PATH_SEED, field_path_hash};
pub use le::Le;
pub use read::{Budget, ReadOptions, StructView};
pub use write::{Builder, SoaColumns, UnionSoaColumns, dynamic_header};

/// Alignment of every array header, lookup table and column (one AVX-512 line).
pub const ARRAY_ALIGN: usize = 64;
/// Alignment and size granularity of every struct.
pub const STRUCT_ALIGN: usize = 8;
/// Bytes of an array header: count, capacity and two kind-specific words.
pub const ARRAY_HEADER_SIZE: usize = 16;
/// Bytes of a dynamic struct header (size in 8-byte units + unused bytes).
pub const DYNAMIC_HEADER_SIZE: usize = 4;

/// Rounds `n` up to a multiple of `align` (a power of two).
pub const fn align_up(n: usize, align: usize) -> usize {
    (n + align - 1) & !(align - 1)
}
