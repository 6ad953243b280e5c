//! The compiler's limits. Each bounds the work and memory of one compile, so a hostile
//! source gets a located diagnostic (stable code) in bounded time and memory instead of
//! a stack overflow, a trap or gigabytes of output (docs/schema-format.md §4.1).

/// Longest source, in bytes (E0020). Real schemas are a few KiB. It also bounds one
/// declaration's code (a struct of 30,000 fields), which is built before its size is
/// checked against [`MAX_GENERATED_BYTES`].
pub const MAX_SOURCE_BYTES: usize = 512 << 10;

/// Longest identifier, in bytes (E0020): names are quoted in diagnostics and generated
/// code, so a megabyte name would be copied into both many times.
pub const MAX_NAME_BYTES: usize = 256;

/// Deepest `[`…`]` nesting in one type (E0019). A valid type has at most one level
/// (`[]T`, `[N]T`); the parser recurses per level.
pub const MAX_TYPE_DEPTH: usize = 8;

/// Longest chain of inline structs embedded in one another (E0019). Layout and SoA
/// flattening recurse along it.
pub const MAX_INLINE_DEPTH: usize = 32;

/// Most lookup-table entries one SoA array (columns after flattening) or one
/// `#bovoa`/`#bovos` slice (variants) may have (E0018). Equal to the readers' default
/// `max_soa_columns` (Rust `ReadOptions`, TS `ReadOptions.maxSoaColumns`), so whatever
/// a generated writer produces its generated reader accepts.
pub const MAX_SOA_COLUMNS: usize = 256;

/// Most generated code, in bytes over all files of one build (E0021).
pub const MAX_GENERATED_BYTES: usize = 16 << 20;

/// Most diagnostics reported: the rest are dropped (each renders a source line).
pub const MAX_DIAGNOSTICS: usize = 100;
