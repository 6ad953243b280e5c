//! Brotli (RFC 7932) both ways, as Node's zlib.createBrotliCompress /
//! createBrotliDecompress read and write it, on the pure-Rust `brotli` crate: the same
//! quality levels (0–11) and window (lgwin 10–24) as Google's C library in Node.
//!
//! The decoder is the strict RFC 7932 one (no "large window" extension, as Node by
//! default), so its window, and so a stream's memory, is at most 16 MiB. A push stops
//! once [`PIECE`] bytes are out, as the other decompressors do.

use std::io::Write;

use ::brotli::enc::StandardAlloc;
use ::brotli::{BrotliDecompressStream, BrotliResult, BrotliState, CompressorWriter};

use crate::compress::{HOLD_BACK, PIECE};
use crate::error::{CORRUPT_DATA, FilterError, FilterResult};

/// Node's BROTLI_DEFAULT_QUALITY and BROTLI_DEFAULT_WINDOW.
pub const DEFAULT_QUALITY: u32 = 11;
pub const DEFAULT_WINDOW: u32 = 22;
pub const QUALITY_RANGE: std::ops::RangeInclusive<u32> = 0..=11;
pub const WINDOW_RANGE: std::ops::RangeInclusive<u32> = 10..=24;

/// The encoder's output buffer: output goes to the push's Vec in writes of this size.
const BUFFER: usize = 64 * 1024;

pub struct BrotliCompressor {
    quality: u32,
    window: u32,
    /// Made once `HOLD_BACK` bytes came in (an encoder at quality 11 holds tens of MiB;
    /// a short stream never has one between chunks, as gzip's).
    writer: Option<CompressorWriter<Vec<u8>>>,
    held: Vec<u8>,
}

impl BrotliCompressor {
    pub fn new(quality: u32, window: u32) -> Self {
        Self {
            quality,
            window,
            writer: None,
            held: Vec::new(),
        }
    }

    fn write(&mut self, input: &[u8]) -> FilterResult<Vec<u8>> {
        let (q, w) = (self.quality, self.window);
        let writer = self
            .writer
            .get_or_insert_with(|| CompressorWriter::new(Vec::new(), BUFFER, q, w));
        writer
            .write_all(input)
            .map_err(|e| FilterError::new(CORRUPT_DATA, e.to_string()))?;
        Ok(std::mem::take(writer.get_mut()))
    }
}

impl BrotliCompressor {
    pub fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        if self.writer.is_none() && self.held.len() + chunk.len() < HOLD_BACK {
            self.held.extend_from_slice(chunk);
            return Ok(Vec::new());
        }
        let held = std::mem::take(&mut self.held);
        let mut out = self.write(&held)?;
        out.extend(self.write(chunk)?);
        Ok(out)
    }

    /// Encodes what was held back and the last meta-block; the encoder is freed.
    pub fn finish(&mut self) -> FilterResult<Vec<u8>> {
        let held = std::mem::take(&mut self.held);
        let mut out = self.write(&held)?;
        let writer = self.writer.take().expect("made by write");
        out.extend(writer.into_inner());
        Ok(out)
    }
}

type State = BrotliState<StandardAlloc, StandardAlloc, StandardAlloc>;

pub struct BrotliDecompressor {
    state: Box<State>,
    ended: bool,
    /// Input not decoded yet (a push stopped at [`PIECE`]), from `at`.
    input: Vec<u8>,
    at: usize,
}

fn corrupt(what: impl std::fmt::Display) -> FilterError {
    FilterError::new(CORRUPT_DATA, format!("corrupt brotli data: {what}"))
}

impl Default for BrotliDecompressor {
    fn default() -> Self {
        Self::new()
    }
}

impl BrotliDecompressor {
    pub fn new() -> Self {
        // new_strict: RFC 7932 windows only (≤ 16 MiB); `new` would take large-window
        // streams (up to 1 GiB).
        let state = State::new_strict(
            StandardAlloc::default(),
            StandardAlloc::default(),
            StandardAlloc::default(),
        );
        Self {
            state: Box::new(state),
            ended: false,
            input: Vec::new(),
            at: 0,
        }
    }

    /// Decodes `input` into `out` until `out` holds [`PIECE`] bytes or the input is
    /// used up; returns the bytes of `input` used.
    fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) -> FilterResult<usize> {
        let mut at = 0;
        while out.len() < PIECE {
            if self.ended {
                if at < input.len() {
                    return Err(corrupt("data after the end of the stream"));
                }
                break;
            }
            let start = out.len();
            // Grow from a guess, never past PIECE.
            let room = ((input.len() - at) * 4 + BUFFER).min(PIECE - start);
            out.resize(start + room, 0);
            let (mut avail_in, mut in_at) = (input.len() - at, at);
            let (mut avail_out, mut out_at, mut total) = (room, start, 0);
            let result = BrotliDecompressStream(
                &mut avail_in,
                &mut in_at,
                input,
                &mut avail_out,
                &mut out_at,
                out,
                &mut total,
                &mut self.state,
            );
            out.truncate(out_at);
            at = in_at;
            match result {
                BrotliResult::ResultSuccess => self.ended = true,
                BrotliResult::NeedsMoreOutput => {}
                BrotliResult::NeedsMoreInput => break,
                BrotliResult::ResultFailure => {
                    return Err(corrupt(format!("{:?}", self.state.error_code)));
                }
            }
        }
        Ok(at)
    }

    /// Up to [`PIECE`] bytes of output (exactly PIECE: more may come; an empty push
    /// goes on with the input kept back).
    pub fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        let mut out = Vec::new();
        if self.at == self.input.len() {
            // The common case: no copy of the chunk unless a piece fills up.
            let used = self.decode(chunk, &mut out)?;
            self.input.clear();
            self.at = 0;
            self.input.extend_from_slice(&chunk[used..]);
        } else {
            self.input.extend_from_slice(chunk);
            let input = std::mem::take(&mut self.input);
            let used = self.decode(&input[self.at..], &mut out);
            self.input = input;
            self.at += used?;
        }
        if self.at == self.input.len() && self.input.capacity() > PIECE {
            self.input = Vec::new();
            self.at = 0;
        }
        Ok(out)
    }

    /// The end of the input: a stream cut before its last meta-block is corrupt.
    pub fn finish(&mut self) -> FilterResult<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let piece = self.push(&[])?;
            let full = piece.len() == PIECE;
            out.extend(piece);
            if !full {
                break;
            }
        }
        if !self.ended {
            return Err(corrupt(
                "the input ends before the stream's last meta-block (truncated: unexpected end of file)",
            ));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compress(data: &[u8], chunk: usize, quality: u32) -> Vec<u8> {
        let mut c = BrotliCompressor::new(quality, DEFAULT_WINDOW);
        let mut out = Vec::new();
        for piece in data.chunks(chunk.max(1)) {
            out.extend(c.push(piece).unwrap());
        }
        out.extend(c.finish().unwrap());
        out
    }

    fn decompress(data: &[u8], chunk: usize) -> FilterResult<Vec<u8>> {
        let mut d = BrotliDecompressor::new();
        let mut out = Vec::new();
        for piece in data.chunks(chunk.max(1)) {
            let mut got = d.push(piece)?;
            while got.len() == PIECE {
                out.extend(got);
                got = d.push(&[])?;
            }
            out.extend(got);
        }
        out.extend(d.finish()?);
        Ok(out)
    }

    fn text(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| b"the quick brown fox jumps over the lazy dog\n"[i % 44] ^ (i / 997 % 3) as u8)
            .collect()
    }

    #[test]
    fn round_trips_in_any_chunking() {
        let data = text(300_000);
        for chunk in [1, 777, HOLD_BACK, data.len()] {
            let z = compress(&data, chunk.max(4096), 5);
            assert!(z.len() < data.len() / 4);
            assert_eq!(decompress(&z, chunk).unwrap(), data, "chunk {chunk}");
        }
        assert_eq!(decompress(&compress(b"", 1, 11), 1).unwrap(), b"");
        assert_eq!(decompress(&compress(b"x", 1, 0), 1).unwrap(), b"x");
    }

    #[test]
    fn truncated_corrupt_and_trailing_input_fail() {
        let z = compress(&text(100_000), 1 << 16, 5);
        for cut in [0, 1, z.len() / 2, z.len() - 1] {
            let e = decompress(&z[..cut], 1000).unwrap_err();
            assert_eq!(e.code, CORRUPT_DATA, "cut at {cut}: {e}");
        }
        let mut junk = z.clone();
        junk.push(0);
        assert_eq!(decompress(&junk, 1 << 16).unwrap_err().code, CORRUPT_DATA);
        let bad = vec![0xffu8; 64];
        assert_eq!(decompress(&bad, 64).unwrap_err().code, CORRUPT_DATA);
    }

    #[test]
    fn a_bomb_comes_out_in_pieces() {
        let zeros = vec![0u8; 20 << 20];
        let z = compress(&zeros, zeros.len(), 9);
        assert!(z.len() < 64 * 1024, "{}", z.len());
        let mut d = BrotliDecompressor::new();
        assert_eq!(d.push(&z).unwrap().len(), PIECE);
        let mut total = PIECE;
        loop {
            let n = d.push(&[]).unwrap().len();
            total += n;
            if n < PIECE {
                break;
            }
        }
        assert_eq!(total, zeros.len());
        assert!(d.finish().unwrap().is_empty());
    }
}
