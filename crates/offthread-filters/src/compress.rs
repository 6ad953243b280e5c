//! gzip / zlib ("deflate" in Node) / raw deflate, both ways, on flate2's zlib-rs
//! backend: zlib's own stream API, so the output is what zlib writes and Node's zlib,
//! `gzip -d` and browsers read it. The deflate state lives between chunks; each push
//! hands back the bytes that are ready.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

use crate::error::{CORRUPT_DATA, FilterError, FilterResult};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// RFC 1952 (Node's createGzip / createGunzip; concatenated members are read in turn).
    Gzip,
    /// RFC 1950 (Node's createDeflate / createInflate).
    Zlib,
    /// RFC 1951 (Node's createDeflateRaw / createInflateRaw).
    Raw,
}

/// zlib's largest window (what Node and `gzip` use).
const WINDOW_BITS: u8 = 15;
/// Output grows by at least this much when zlib runs out of room.
const GROW: usize = 32 * 1024;

pub struct Compressor {
    stream: Compress,
}

impl Compressor {
    /// `level` 0–9 (zlib's; 6 is its default).
    pub fn new(format: Format, level: u32) -> Self {
        let level = Compression::new(level);
        let stream = match format {
            Format::Gzip => Compress::new_gzip(level, WINDOW_BITS),
            Format::Zlib => Compress::new(level, true),
            Format::Raw => Compress::new(level, false),
        };
        Self { stream }
    }

    pub fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        let mut out = Vec::with_capacity(chunk.len() / 2 + GROW);
        let mut input = chunk;
        while !input.is_empty() {
            if out.len() == out.capacity() {
                out.reserve(GROW.max(input.len() / 2));
            }
            let before = self.stream.total_in();
            self.stream
                .compress_vec(input, &mut out, FlushCompress::None)
                .map_err(|e| FilterError::new(CORRUPT_DATA, e.to_string()))?;
            input = &input[(self.stream.total_in() - before) as usize..];
        }
        Ok(out)
    }

    /// Flushes the last block and writes the trailer (CRC and length for gzip).
    pub fn finish(&mut self) -> FilterResult<Vec<u8>> {
        let mut out = Vec::with_capacity(GROW);
        loop {
            if out.len() == out.capacity() {
                out.reserve(GROW);
            }
            let status = self
                .stream
                .compress_vec(&[], &mut out, FlushCompress::Finish)
                .map_err(|e| FilterError::new(CORRUPT_DATA, e.to_string()))?;
            if status == Status::StreamEnd {
                return Ok(out);
            }
        }
    }
}

pub struct Decompressor {
    format: Format,
    stream: Decompress,
    /// The current member ended (its trailer checked); more input starts a new one.
    ended: bool,
}

impl Decompressor {
    pub fn new(format: Format) -> Self {
        Self {
            format,
            stream: Self::stream(format),
            ended: false,
        }
    }

    fn stream(format: Format) -> Decompress {
        match format {
            Format::Gzip => Decompress::new_gzip(WINDOW_BITS),
            Format::Zlib => Decompress::new(true),
            Format::Raw => Decompress::new(false),
        }
    }

    pub fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        let mut out = Vec::with_capacity(chunk.len() * 3 + GROW);
        let mut input = chunk;
        while !input.is_empty() {
            if self.ended {
                if self.format != Format::Gzip {
                    return Err(corrupt("data after the end of the compressed stream"));
                }
                // Another gzip member (`cat a.gz b.gz`), as gunzip and Node read it.
                self.stream = Self::stream(self.format);
                self.ended = false;
            }
            if out.len() == out.capacity() {
                out.reserve(GROW.max(input.len() * 2));
            }
            let (before_in, before_out) = (self.stream.total_in(), out.len());
            let status = self
                .stream
                .decompress_vec(input, &mut out, FlushDecompress::None)
                .map_err(|e| corrupt(&e.to_string()))?;
            let used = (self.stream.total_in() - before_in) as usize;
            input = &input[used..];
            if status == Status::StreamEnd {
                self.ended = true;
            } else if used == 0 && out.len() == before_out && out.len() < out.capacity() {
                // zlib took nothing and wrote nothing with room to write: never drop
                // the rest silently.
                return Err(corrupt("the decoder made no progress"));
            }
        }
        Ok(out)
    }

    /// The end of the input: a stream that stopped before its end is corrupt.
    pub fn finish(&mut self) -> FilterResult<Vec<u8>> {
        if !self.ended {
            return Err(corrupt("the compressed stream ends before its last block"));
        }
        Ok(Vec::new())
    }
}

fn corrupt(what: &str) -> FilterError {
    FilterError::new(CORRUPT_DATA, format!("corrupt compressed data: {what}"))
}
