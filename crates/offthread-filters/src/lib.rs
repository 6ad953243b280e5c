//! offthread-filters: stream filters that run chunk by chunk, with the state a stream
//! needs carried from one chunk to the next (a UTF-8 sequence split between chunks, a
//! running digest, a deflate stream, a CSV record cut in half). Plain Rust: the Node
//! and WASM bindings run [`Work`] items on their pools and hand the bytes back.
//!
//! A [`FilterHandle`] splits every push into two parts: a cheap, ordered step on the
//! caller's thread ([`FilterHandle::prepare_push`]) and a [`Work`] item that can run
//! anywhere. Transcoding and validation cut each chunk at a character boundary in that
//! first step, so their work items are independent and may run in parallel; the other
//! filters are sequential (one work item in flight at a time, [`BUSY`] otherwise).

mod brotli;
mod columns;
mod compress;
mod csv_fields;
mod csv_split;
mod digest;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod handle;
mod lines;
mod ndjson;
mod records;
mod spec;
mod transcode;
mod zstd;

pub use columns::{ColumnType, RecordColumn};
pub use compress::{Compressor, Decompressor, Format, PIECE as DECOMPRESS_PIECE};
pub use digest::{Digest, DigestKind};
pub use error::*;
pub use handle::{Checkpoint, Filter, FilterHandle, Work, WorkInto};
pub use records::{
    CsvOptions, Layout, MAX_SKIPPED_LINES, OnError, REPORT_MAGIC, RecordFormat, RecordOptions,
    RecordParser, VALIDITY,
};
pub use spec::FilterSpec;
pub use transcode::{
    Conversion, Encoding, Piece, Spares, Transcoder, recycle, utf8_boundary, utf16_boundary,
};
