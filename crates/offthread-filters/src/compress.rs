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

/// Input a compressor holds back before it makes its deflate state. A deflate state is
/// ~256 KiB (window, hash chains, pending output) and much of it is touched at once, so
/// 10,000 small streams open together would hold gigabytes (zlib's known failure with
/// unbounded concurrency); a stream shorter than this never has one between chunks:
/// it is deflated in one go by its finishing job, and only a pool's worth of jobs run.
/// zlib buffers output until a block is full anyway, so nothing comes out later.
pub const HOLD_BACK: usize = 64 * 1024;

pub struct Compressor {
    format: Format,
    level: Compression,
    /// Made once `HOLD_BACK` bytes came in (or at the finish); dropped after it.
    stream: Option<Compress>,
    held: Vec<u8>,
}

impl Compressor {
    /// `level` 0–9 (zlib's; 6 is its default).
    pub fn new(format: Format, level: u32) -> Self {
        Self {
            format,
            level: Compression::new(level),
            stream: None,
            held: Vec::new(),
        }
    }

    fn stream(&mut self) -> &mut Compress {
        let (format, level) = (self.format, self.level);
        self.stream.get_or_insert_with(|| match format {
            Format::Gzip => Compress::new_gzip(level, WINDOW_BITS),
            Format::Zlib => Compress::new(level, true),
            Format::Raw => Compress::new(level, false),
        })
    }

    pub fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        if self.stream.is_none() && self.held.len() + chunk.len() < HOLD_BACK {
            self.held.extend_from_slice(chunk);
            return Ok(Vec::new());
        }
        let held = std::mem::take(&mut self.held);
        let mut out = Vec::with_capacity((held.len() + chunk.len()) / 2 + GROW);
        self.deflate(&held, &mut out)?;
        self.deflate(chunk, &mut out)?;
        Ok(out)
    }

    fn deflate(&mut self, mut input: &[u8], out: &mut Vec<u8>) -> FilterResult<()> {
        let stream = self.stream();
        while !input.is_empty() {
            if out.len() == out.capacity() {
                out.reserve(GROW.max(input.len() / 2));
            }
            let before = stream.total_in();
            stream
                .compress_vec(input, out, FlushCompress::None)
                .map_err(|e| FilterError::new(CORRUPT_DATA, e.to_string()))?;
            input = &input[(stream.total_in() - before) as usize..];
        }
        Ok(())
    }

    /// Deflates what was held back, flushes the last block and writes the trailer (CRC
    /// and length for gzip); the deflate state is freed.
    pub fn finish(&mut self) -> FilterResult<Vec<u8>> {
        let held = std::mem::take(&mut self.held);
        // Room for the whole output at once (zlib's compressBound, header and trailer):
        // a small stream's bytes go to JS in this allocation, keep it near their size.
        let n = held.len();
        let mut out = Vec::with_capacity(n + (n >> 12) + (n >> 14) + 64);
        self.deflate(&held, &mut out)?;
        let stream = self.stream();
        loop {
            if out.len() == out.capacity() {
                out.reserve(GROW);
            }
            let status = stream
                .compress_vec(&[], &mut out, FlushCompress::Finish)
                .map_err(|e| FilterError::new(CORRUPT_DATA, e.to_string()))?;
            if status == Status::StreamEnd {
                self.stream = None;
                if out.capacity() - out.len() > 4096 {
                    out.shrink_to_fit();
                }
                return Ok(out);
            }
        }
    }
}

/// The most a decompressor's push hands back at once. Inflate can expand 1032 times
/// (4 MB of gzip is 4 GiB of zeros), so a push stops once this much has come out and
/// keeps the rest of its input; pushes of an empty chunk go on from there. A push
/// whose output is exactly this long may have more to come; a shorter one has used
/// all its input. (Node's zlib hands out 16 KiB chunks the same way.)
pub const PIECE: usize = 1 << 20;

pub struct Decompressor {
    format: Format,
    stream: Decompress,
    /// The current member ended (its trailer checked); more input starts a new one.
    ended: bool,
    /// Zero bytes after a gzip member: padding (gzip(1) and zlib skip it); only more
    /// zeros may follow.
    padding: bool,
    /// Input not decompressed yet (a push stopped at [`PIECE`]), from `pending_at`.
    pending: Vec<u8>,
    pending_at: usize,
}

impl Decompressor {
    pub fn new(format: Format) -> Self {
        Self {
            format,
            stream: Self::stream(format),
            ended: false,
            padding: false,
            pending: Vec::new(),
            pending_at: 0,
        }
    }

    fn stream(format: Format) -> Decompress {
        match format {
            Format::Gzip => Decompress::new_gzip(WINDOW_BITS),
            Format::Zlib => Decompress::new(true),
            Format::Raw => Decompress::new(false),
        }
    }

    /// Input kept from earlier pushes, not decompressed yet.
    pub fn pending(&self) -> usize {
        self.pending.len() - self.pending_at
    }

    /// Up to [`PIECE`] bytes of output: from the input kept back first, then `chunk`
    /// (an empty chunk: go on with what was kept). Input left over is kept.
    pub fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        let mut out = Vec::new();
        if self.pending() == 0 {
            // The common case: no copy of the chunk unless a piece fills up.
            let used = self.inflate(chunk, &mut out)?;
            self.pending.clear();
            self.pending_at = 0;
            self.pending.extend_from_slice(&chunk[used..]);
        } else {
            self.pending.extend_from_slice(chunk);
            let pending = std::mem::take(&mut self.pending);
            let used = self.inflate(&pending[self.pending_at..], &mut out);
            self.pending = pending;
            self.pending_at += used?;
            if self.pending_at == self.pending.len() {
                self.pending.clear();
                self.pending_at = 0;
            }
        }
        if self.pending() == 0 && self.pending.capacity() > PIECE {
            self.pending = Vec::new(); // a large chunk's copy is not kept for the stream's life
        }
        Ok(out)
    }

    /// Decompresses `input` into `out` until `out` holds [`PIECE`] bytes or the input
    /// is used up; returns the bytes of `input` used.
    fn inflate(&mut self, input: &[u8], out: &mut Vec<u8>) -> FilterResult<usize> {
        let mut at = 0;
        while at < input.len() && out.len() < PIECE {
            if self.padding || (self.ended && input[at] == 0 && self.format == Format::Gzip) {
                // Zero padding after a member, as gzip(1) and zlib read it.
                self.padding = true;
                match input[at..].iter().any(|&b| b != 0) {
                    false => return Ok(input.len()),
                    true => {
                        return Err(corrupt(
                            "data after the zero padding that follows a gzip member",
                        ));
                    }
                }
            }
            if self.ended {
                if self.format != Format::Gzip {
                    return Err(corrupt("data after the end of the compressed stream"));
                }
                // Another gzip member (`cat a.gz b.gz`), as gunzip and Node read it.
                self.stream = Self::stream(self.format);
                self.ended = false;
            }
            if out.len() == out.capacity() {
                // Grow by doubling from a guess, never past PIECE.
                let want = out.len().max((input.len() - at) * 3 + GROW);
                out.reserve_exact(want.min(PIECE - out.len()));
            }
            let (before_in, before_out) = (self.stream.total_in(), out.len());
            let status = self
                .stream
                .decompress_vec(&input[at..], out, FlushDecompress::None)
                .map_err(|e| corrupt(&e.to_string()))?;
            let used = (self.stream.total_in() - before_in) as usize;
            at += used;
            if status == Status::StreamEnd {
                self.ended = true;
            } else if used == 0 && out.len() == before_out && out.len() < out.capacity() {
                // zlib took nothing and wrote nothing with room to write: never drop
                // the rest silently.
                return Err(corrupt("the decoder made no progress"));
            }
        }
        Ok(at)
    }

    /// The end of the input: a stream that stopped before its end is corrupt. Input
    /// still kept back is decompressed here (a host that did not drain the pushes).
    pub fn finish(&mut self) -> FilterResult<Vec<u8>> {
        let mut out = Vec::new();
        while self.pending() > 0 {
            out.extend(self.push(&[])?);
        }
        if !self.ended && !self.padding {
            return Err(corrupt("the compressed stream ends before its last block"));
        }
        Ok(out)
    }
}

fn corrupt(what: &str) -> FilterError {
    FilterError::new(CORRUPT_DATA, format!("corrupt compressed data: {what}"))
}
