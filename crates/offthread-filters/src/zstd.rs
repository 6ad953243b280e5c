//! Zstandard (RFC 8878) both ways, as Node's zlib.createZstdCompress / createZstdDecompress
//! read and write it, on the pure-Rust `ruzstd` (see Cargo.toml for why not libzstd).
//!
//! ruzstd's encoder compresses a whole input at once (it pulls from a reader until the
//! end), so the compressor cuts the stream into frames of [`FRAME`] bytes: a
//! concatenation of frames is one zstd stream to every decoder (RFC 8878 §3.1, `zstd -d`,
//! Node). Its window is 128 KiB, so a new frame every 1 MiB loses little.
//!
//! The decompressor parses frame and block headers itself and hands ruzstd one whole
//! block at a time: a block is at most 128 KiB of output, so a push stops once
//! [`PIECE`] bytes are out (a zstd bomb comes out at the reader's pace, as gzip does),
//! and a frame whose window is past the limit is refused before anything is allocated.

use ruzstd::decoding::FrameDecoder;
use ruzstd::encoding::{CompressionLevel, compress_to_vec};

use crate::compress::PIECE;
use crate::error::{CORRUPT_DATA, FilterError, FilterResult, WINDOW_TOO_LARGE};

/// Input per frame, and so the input a stream holds at most. Measured on the streams
/// bench's 100 MiB text: 1 MiB frames write 0.006 % more than one frame (128 KiB ones
/// 0.05 %); the encoder's own 128 KiB window is what limits its matches.
pub const FRAME: usize = 1 << 20;

/// libzstd's default ZSTD_d_windowLogMax (27: 128 MiB), which Node keeps.
pub const DEFAULT_WINDOW_LOG_MAX: u32 = 27;
/// The range of `windowLogMax` (ZSTD_WINDOWLOG_MIN … ZSTD_WINDOWLOG_MAX_64).
pub const WINDOW_LOG_RANGE: std::ops::RangeInclusive<u32> = 10..=31;

const MAGIC: u32 = 0xFD2F_B528;
/// Skippable frames: 0x184D2A50 … 0x184D2A5F, then a 4-byte length.
const SKIPPABLE: u32 = 0x184D_2A50;
const MAX_BLOCK: usize = 128 * 1024;

pub struct ZstdCompressor {
    held: Vec<u8>,
    /// A frame was written: an empty stream still gets one (an empty frame).
    wrote: bool,
}

impl ZstdCompressor {
    pub fn new() -> Self {
        Self {
            held: Vec::new(),
            wrote: false,
        }
    }

    fn frame(&mut self, input: &[u8], out: &mut Vec<u8>) {
        out.extend(compress_to_vec(input, CompressionLevel::Fastest));
        self.wrote = true;
    }
}

impl Default for ZstdCompressor {
    fn default() -> Self {
        Self::new()
    }
}

impl ZstdCompressor {
    pub fn push(&mut self, mut chunk: &[u8]) -> FilterResult<Vec<u8>> {
        let mut out = Vec::new();
        if !self.held.is_empty() {
            let take = chunk.len().min(FRAME - self.held.len());
            self.held.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            if self.held.len() < FRAME {
                return Ok(out);
            }
            let held = std::mem::take(&mut self.held);
            self.frame(&held, &mut out);
        }
        // Whole frames straight from the chunk, no copy; the rest waits.
        while chunk.len() >= FRAME {
            self.frame(&chunk[..FRAME], &mut out);
            chunk = &chunk[FRAME..];
        }
        self.held.extend_from_slice(chunk);
        Ok(out)
    }

    pub fn finish(&mut self) -> FilterResult<Vec<u8>> {
        let mut out = Vec::new();
        let held = std::mem::take(&mut self.held);
        if !held.is_empty() || !self.wrote {
            self.frame(&held, &mut out);
        }
        Ok(out)
    }
}

enum Stage {
    /// Between frames: a magic number comes next.
    Magic,
    /// Inside a skippable frame: this many bytes to skip.
    Skip(u64),
    /// Inside a frame: a block header comes next.
    Blocks { checksum: bool },
}

pub struct ZstdDecompressor {
    window_log_max: u32,
    decoder: FrameDecoder,
    stage: Stage,
    /// Frames (not skippable ones) read to their end.
    frames: u64,
    /// Input not used yet, from `at`.
    input: Vec<u8>,
    at: usize,
    /// Output past a piece, handed out first by the next push.
    spill: Vec<u8>,
}

fn corrupt(what: impl std::fmt::Display) -> FilterError {
    FilterError::new(CORRUPT_DATA, format!("corrupt zstd data: {what}"))
}

impl ZstdDecompressor {
    pub fn new(window_log_max: u32) -> Self {
        let mut decoder = FrameDecoder::new();
        decoder.set_max_window_size(1u64 << window_log_max);
        Self {
            window_log_max,
            decoder,
            stage: Stage::Magic,
            frames: 0,
            input: Vec::new(),
            at: 0,
            spill: Vec::new(),
        }
    }

    fn available(&self) -> &[u8] {
        &self.input[self.at..]
    }

    /// One step (a frame header, a block, bytes skipped); false: more input is needed.
    fn step(&mut self, out: &mut Vec<u8>) -> FilterResult<bool> {
        let input = &self.input[self.at..];
        match self.stage {
            Stage::Magic => {
                let Some(magic) = input.get(..4) else {
                    return Ok(false);
                };
                let magic = u32::from_le_bytes(magic.try_into().expect("4 bytes"));
                if magic & 0xFFFF_FFF0 == SKIPPABLE {
                    let Some(len) = input.get(4..8) else {
                        return Ok(false);
                    };
                    let len = u32::from_le_bytes(len.try_into().expect("4 bytes"));
                    self.stage = Stage::Skip(u64::from(len));
                    self.at += 8;
                    return Ok(true);
                }
                if magic != MAGIC {
                    return Err(corrupt(format!(
                        "{} not a zstd frame (magic number {magic:#010x})",
                        if self.frames == 0 {
                            "the input is"
                        } else {
                            "data after the last frame is"
                        }
                    )));
                }
                let Some(&fhd) = input.get(4) else {
                    return Ok(false);
                };
                let single_segment = fhd & 0x20 != 0;
                if fhd & 0x08 != 0 {
                    return Err(corrupt("a frame header's reserved bit is set"));
                }
                let did_len = [0, 1, 2, 4][usize::from(fhd & 3)];
                let fcs_len = match fhd >> 6 {
                    0 => usize::from(single_segment),
                    1 => 2,
                    2 => 4,
                    _ => 8,
                };
                let wd_at = 5;
                let fcs_at = wd_at + usize::from(!single_segment) + did_len;
                let header_len = fcs_at + fcs_len;
                let Some(header) = input.get(..header_len) else {
                    return Ok(false);
                };
                let window = if single_segment {
                    // The window is the whole content (Frame_Content_Size).
                    let mut fcs = [0u8; 8];
                    fcs[..fcs_len].copy_from_slice(&header[fcs_at..]);
                    u64::from_le_bytes(fcs) + if fcs_len == 2 { 256 } else { 0 }
                } else {
                    let wd = header[wd_at];
                    let log = 10 + u32::from(wd >> 3);
                    let base = 1u64 << log;
                    base + (base / 8) * u64::from(wd & 7)
                };
                if window > 1u64 << self.window_log_max {
                    return Err(FilterError::new(
                        WINDOW_TOO_LARGE,
                        format!(
                            "a zstd frame needs a {window}-byte window, past the limit of 2^{} bytes (windowLogMax)",
                            self.window_log_max
                        ),
                    ));
                }
                self.decoder.init(header).map_err(corrupt)?;
                self.stage = Stage::Blocks {
                    checksum: fhd & 0x04 != 0,
                };
                self.at += header_len;
                Ok(true)
            }
            Stage::Skip(left) => {
                if input.is_empty() {
                    return Ok(false);
                }
                let n = (input.len() as u64).min(left);
                self.at += n as usize;
                self.stage = if n == left {
                    Stage::Magic
                } else {
                    Stage::Skip(left - n)
                };
                Ok(true)
            }
            Stage::Blocks { checksum } => {
                let Some(h) = input.get(..3) else {
                    return Ok(false);
                };
                let h = u32::from(h[0]) | u32::from(h[1]) << 8 | u32::from(h[2]) << 16;
                let last = h & 1 != 0;
                let size = (h >> 3) as usize;
                let wire = match (h >> 1) & 3 {
                    0 | 2 => size, // raw, compressed
                    1 => 1,        // RLE: one byte repeated `size` times
                    _ => return Err(corrupt("a block of the reserved type")),
                };
                if size > MAX_BLOCK {
                    return Err(corrupt(format!("a {size}-byte block (128 KiB at most)")));
                }
                // The last block is handed over with the checksum after it, so the frame
                // ends in one call.
                let need = 3 + wire + if last && checksum { 4 } else { 0 };
                let Some(block) = input.get(..need) else {
                    return Ok(false);
                };
                let (used, _) = self
                    .decoder
                    .decode_from_to(block, &mut [])
                    .map_err(corrupt)?;
                if used != need {
                    return Err(corrupt("a block shorter than its header says"));
                }
                self.at += need;
                self.decoder
                    .collect_to_writer(&mut *out)
                    .map_err(|e| corrupt(format!("{e:?}")))?;
                if last {
                    if checksum {
                        let want = self.decoder.get_checksum_from_data();
                        if want != self.decoder.get_calculated_checksum() {
                            return Err(corrupt("a frame's content checksum does not match"));
                        }
                    }
                    self.frames += 1;
                    self.stage = Stage::Magic;
                }
                Ok(true)
            }
        }
    }

    /// Up to [`PIECE`] bytes of output (exactly PIECE: more may come from the input
    /// kept back; an empty push goes on with it).
    pub fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        let mut out = std::mem::take(&mut self.spill);
        if self.at == self.input.len() {
            self.input.clear();
            self.at = 0;
        } else if self.at > 0 && self.at >= self.input.len() / 2 {
            self.input.drain(..self.at);
            self.at = 0;
        }
        self.input.extend_from_slice(chunk);
        while out.len() < PIECE && self.step(&mut out)? {}
        if out.len() > PIECE {
            self.spill = out.split_off(PIECE);
        }
        if self.available().is_empty() && self.input.capacity() > 4 * PIECE {
            self.input = Vec::new(); // a large chunk's copy is not kept for the stream's life
        }
        Ok(out)
    }

    /// The end of the input: a frame cut short is corrupt (truncated), as is an empty
    /// input (Node's zlib: "unexpected end of file").
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
        match self.stage {
            Stage::Magic if self.available().is_empty() && self.frames > 0 => Ok(out),
            Stage::Magic if self.available().is_empty() => Err(corrupt(
                "the input ends before its first frame (unexpected end of file)",
            )),
            _ => Err(corrupt(
                "the input ends inside a frame (truncated: unexpected end of file)",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compress(data: &[u8], chunk: usize) -> Vec<u8> {
        let mut c = ZstdCompressor::new();
        let mut out = Vec::new();
        for piece in data.chunks(chunk.max(1)) {
            out.extend(c.push(piece).unwrap());
        }
        out.extend(c.finish().unwrap());
        out
    }

    fn decompress(data: &[u8], chunk: usize) -> FilterResult<Vec<u8>> {
        let mut d = ZstdDecompressor::new(DEFAULT_WINDOW_LOG_MAX);
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
    fn round_trips_across_frames_and_chunkings() {
        let data = text(3 * FRAME + 12345);
        for chunk in [1, 7, 65536, FRAME + 1, data.len()] {
            let z = compress(&data, chunk);
            assert!(z.len() < data.len() / 4, "compresses: {}", z.len());
            assert_eq!(decompress(&z, chunk).unwrap(), data, "chunk {chunk}");
        }
        // 1-byte chunks on the compressed side only (the compressor's output is the same
        // for any chunking).
        let z = compress(&data, 65536);
        assert_eq!(z, compress(&data, 1));
    }

    #[test]
    fn empty_stream_is_one_empty_frame() {
        let z = compress(b"", 1);
        assert_eq!(&z[..4], &MAGIC.to_le_bytes());
        assert_eq!(decompress(&z, 1).unwrap(), b"");
        let e = decompress(b"", 1).unwrap_err();
        assert_eq!(e.code, CORRUPT_DATA);
    }

    #[test]
    fn truncated_and_corrupt_input_fail() {
        let data = text(300_000);
        let z = compress(&data, 1 << 16);
        for cut in [1, 4, 6, z.len() / 2, z.len() - 1] {
            let e = decompress(&z[..cut], 1000).unwrap_err();
            assert_eq!(e.code, CORRUPT_DATA, "cut at {cut}: {e}");
        }
        let mut bad = z.clone();
        let n = bad.len();
        bad[n - 2] ^= 0x40; // the checksum
        assert_eq!(decompress(&bad, 1 << 16).unwrap_err().code, CORRUPT_DATA);
        let mut junk = z.clone();
        junk.extend_from_slice(b"garbage!");
        assert_eq!(decompress(&junk, 1 << 16).unwrap_err().code, CORRUPT_DATA);
    }

    #[test]
    fn skippable_frames_are_skipped() {
        let mut z = Vec::from(0x184D_2A53u32.to_le_bytes());
        z.extend_from_slice(&5u32.to_le_bytes());
        z.extend_from_slice(b"hello");
        z.extend(compress(b"abc", 1));
        assert_eq!(decompress(&z, 1).unwrap(), b"abc");
    }

    #[test]
    fn a_window_past_the_limit_is_refused() {
        // A frame header declaring a 2^30-byte window (exponent 20), then nothing.
        let mut z = Vec::from(MAGIC.to_le_bytes());
        z.extend_from_slice(&[0x00, 20 << 3]);
        let mut d = ZstdDecompressor::new(DEFAULT_WINDOW_LOG_MAX);
        assert_eq!(d.push(&z).unwrap_err().code, WINDOW_TOO_LARGE);
        let mut d = ZstdDecompressor::new(30);
        assert!(d.push(&z).unwrap().is_empty());
    }

    #[test]
    fn a_bomb_comes_out_in_pieces() {
        // One frame of 64 RLE blocks of 128 KiB zeros: 8 MiB from ~200 bytes.
        let mut z = Vec::from(MAGIC.to_le_bytes());
        z.extend_from_slice(&[0x00, 7 << 3]); // window 2^17
        for i in 0..64u32 {
            let h = u32::from(i == 63) | 1 << 1 | (128 * 1024) << 3;
            z.extend_from_slice(&h.to_le_bytes()[..3]);
            z.push(0);
        }
        let mut d = ZstdDecompressor::new(DEFAULT_WINDOW_LOG_MAX);
        let mut total = d.push(&z).unwrap().len();
        assert_eq!(total, PIECE);
        loop {
            let n = d.push(&[]).unwrap().len();
            assert!(n <= PIECE);
            total += n;
            if n < PIECE {
                break;
            }
        }
        assert_eq!(total, 8 << 20);
        assert!(d.finish().unwrap().is_empty());
    }
}
