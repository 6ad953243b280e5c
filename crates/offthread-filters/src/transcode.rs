//! Transcoding between UTF-8, UTF-16LE and latin1, and UTF-8 validation (UTF-8 → UTF-8).
//!
//! [`Transcoder::cut`] runs in stream order and keeps back the bytes of a character
//! that the chunk does not finish (at most 3 bytes of UTF-8, a high surrogate and an
//! odd byte of UTF-16LE). Every [`Piece`] it returns therefore starts and ends at a
//! boundary where decoding may restart, and converting the pieces separately — in any
//! order, on any thread — gives the same bytes as converting the whole stream at once.
//! Invalid input is replaced by U+FFFD (the WHATWG decoders' rule) or, in strict mode,
//! fails with the stream offset of the first bad byte.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use crate::error::{FilterError, FilterResult, INVALID_UTF8, INVALID_UTF16, TOO_LARGE, UNMAPPABLE};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16le,
    Latin1,
}

impl Encoding {
    /// Node's names for the three encodings (`utf8`, `utf16le`/`ucs2`, `latin1`/`binary`).
    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "utf8" | "utf-8" => Some(Encoding::Utf8),
            "utf16le" | "utf-16le" | "ucs2" | "ucs-2" => Some(Encoding::Utf16le),
            "latin1" | "binary" | "iso-8859-1" => Some(Encoding::Latin1),
            _ => None,
        }
    }
}

/// What one piece is converted with; `Copy`, so each work item carries its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conversion {
    pub from: Encoding,
    pub to: Encoding,
    /// Fail on invalid or unmappable input instead of replacing it.
    pub strict: bool,
}

/// A run of input that starts and ends where decoding may restart.
#[derive(Debug)]
pub struct Piece {
    pub bytes: Vec<u8>,
    /// Offset of `bytes[0]` in the whole stream (for error messages).
    pub offset: u64,
    /// The end of the stream: an unfinished character here is invalid.
    pub last: bool,
}

/// Input buffers that converted pieces gave back ([`Transcoder::recycle`]), for the
/// next cuts: a fresh 64 KiB allocation per chunk cost the JS thread a page fault per
/// 4 KiB whenever the allocator had handed the previous one back to the kernel.
pub type Spares = Arc<Mutex<Vec<Vec<u8>>>>;

/// Spare input buffers kept per stream (a few more than the chunks in flight).
const MAX_SPARES: usize = 16;

/// The ordered half of a transcoding stream: cuts chunks into [`Piece`]s.
#[derive(Debug)]
pub struct Transcoder {
    pub conversion: Conversion,
    carry: Vec<u8>,
    offset: u64,
    spares: Spares,
}

impl Transcoder {
    pub fn new(conversion: Conversion) -> Self {
        Self {
            conversion,
            carry: Vec::new(),
            offset: 0,
            spares: Spares::default(),
        }
    }

    /// Where converted pieces return their input buffers (see [`recycle`]).
    pub fn spares(&self) -> Spares {
        Arc::clone(&self.spares)
    }

    /// The bytes kept back and the stream offset (for [`restore`](Self::restore)).
    pub fn checkpoint(&self) -> (Vec<u8>, u64) {
        (self.carry.clone(), self.offset)
    }

    /// Back to a [`checkpoint`](Self::checkpoint): the cuts since are undone.
    pub fn restore(&mut self, (carry, offset): (Vec<u8>, u64)) {
        self.carry = carry;
        self.offset = offset;
    }

    /// Bytes the next [`cut`](Self::cut) of a `chunk_len`-byte chunk may hold.
    pub fn next_piece_len(&self, chunk_len: usize) -> usize {
        self.carry.len() + chunk_len
    }

    /// The bytes of `carry ‖ chunk` up to the last character boundary; the rest is
    /// kept for the next chunk.
    pub fn cut(&mut self, chunk: &[u8]) -> Piece {
        let mut bytes = take_spare(&self.spares);
        bytes.reserve_exact(self.carry.len() + chunk.len());
        bytes.extend_from_slice(&self.carry);
        bytes.extend_from_slice(chunk);
        let at = match self.conversion.from {
            Encoding::Utf8 => utf8_boundary(&bytes),
            Encoding::Utf16le => utf16_boundary(&bytes),
            Encoding::Latin1 => bytes.len(),
        };
        self.carry.clear();
        self.carry.extend_from_slice(&bytes[at..]);
        bytes.truncate(at);
        let offset = self.offset;
        self.offset += at as u64;
        Piece {
            bytes,
            offset,
            last: false,
        }
    }

    /// [`cut`](Self::cut) straight into `out` (at least `next_piece_len` bytes): the
    /// piece is `out[..n]`; returns `n` and the piece's stream offset. For in-place
    /// conversions ([`Conversion::in_place`]): no buffer of our own at all.
    pub fn cut_into(&mut self, chunk: &[u8], out: &mut [u8]) -> FilterResult<(usize, u64)> {
        let len = self.carry.len() + chunk.len();
        let Some(out) = out.get_mut(..len) else {
            return Err(FilterError::new(
                TOO_LARGE,
                format!(
                    "an output buffer of {} bytes for a piece of {len} bytes",
                    out.len()
                ),
            ));
        };
        out[..self.carry.len()].copy_from_slice(&self.carry);
        out[self.carry.len()..].copy_from_slice(chunk);
        let at = match self.conversion.from {
            Encoding::Utf8 => utf8_boundary(out),
            Encoding::Utf16le => utf16_boundary(out),
            Encoding::Latin1 => len,
        };
        self.carry.clear();
        self.carry.extend_from_slice(&out[at..]);
        let offset = self.offset;
        self.offset += at as u64;
        Ok((at, offset))
    }

    /// The bytes kept back at the end of the stream.
    pub fn cut_end(&mut self) -> Piece {
        let bytes = std::mem::take(&mut self.carry);
        let offset = self.offset;
        self.offset += bytes.len() as u64;
        Piece {
            bytes,
            offset,
            last: true,
        }
    }
}

/// An empty input buffer: one `spares` holds (already allocated and warm), or a new one.
pub fn take_spare(spares: &Spares) -> Vec<u8> {
    let mut bytes = spares
        .lock()
        .ok()
        .and_then(|mut s| s.pop())
        .unwrap_or_default();
    bytes.clear();
    bytes
}

/// Gives an input buffer back to its stream for a later push.
pub fn give_back(spares: &Spares, bytes: Vec<u8>) {
    if let Ok(mut s) = spares.lock()
        && s.len() < MAX_SPARES
    {
        s.push(bytes);
    }
}

/// Gives a converted piece's input buffer back to its stream for a later cut.
pub fn recycle(spares: &Spares, piece: Piece) {
    give_back(spares, piece.bytes);
}

/// Where the last UTF-8 sequence that `bytes` may not finish starts (else its length).
/// Cutting before any non-continuation byte is safe: no sequence, valid or not, runs
/// across one, so the pieces decode as the whole would.
pub fn utf8_boundary(bytes: &[u8]) -> usize {
    let n = bytes.len();
    for back in 1..=n.min(3) {
        let lead = bytes[n - back];
        if lead & 0xC0 != 0x80 {
            let needs = match lead {
                0x00..=0x7F => 1,
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
            };
            return if needs > back { n - back } else { n };
        }
    }
    n
}

/// An even length, less a trailing high surrogate (its low half may follow).
pub fn utf16_boundary(bytes: &[u8]) -> usize {
    let even = bytes.len() & !1;
    if even >= 2 && is_high(u16::from_le_bytes([bytes[even - 2], bytes[even - 1]])) {
        even - 2
    } else {
        even
    }
}

fn is_high(u: u16) -> bool {
    (0xD800..0xDC00).contains(&u)
}

fn is_low(u: u16) -> bool {
    (0xDC00..0xE000).contains(&u)
}

impl Conversion {
    /// The output is the input, checked (latin1 → latin1; strict UTF-8 → UTF-8, i.e.
    /// validation): a push copies the piece straight into the host's output buffer on
    /// the caller's thread and the work item only checks it there
    /// ([`Transcoder::cut_into`], [`check_in_place`](Self::check_in_place)).
    pub fn in_place(&self) -> bool {
        self.from == self.to
            && (self.from == Encoding::Latin1 || (self.from == Encoding::Utf8 && self.strict))
    }

    /// Room the output of a piece of `len` bytes needs in a host's buffer
    /// ([`run_into`](Self::run_into), or in place), or `None`: this conversion only
    /// returns its output as a new `Vec` ([`run`](Self::run)). Conversions to UTF-16LE
    /// write at most twice the input; in-place ones exactly the input. Output to UTF-8
    /// could grow threefold, so those return a `Vec`.
    pub fn output_bound(&self, len: usize) -> Option<usize> {
        match (self.from, self.to) {
            _ if self.in_place() => Some(len),
            // encoding_rs wants one unit more than the input's length.
            (Encoding::Utf8, Encoding::Utf16le) => Some(2 * (len + 1)),
            (Encoding::Latin1, Encoding::Utf16le) => Some(2 * len),
            _ => None,
        }
    }

    /// The work of an in-place push: `bytes` (the piece, already in the output buffer,
    /// starting at stream offset `offset`) checked; latin1 needs no check.
    pub fn check_in_place(&self, bytes: &[u8], offset: u64) -> FilterResult<()> {
        if self.from == Encoding::Utf8 && self.strict {
            self.check_utf8(bytes, offset, false)?;
        }
        Ok(())
    }

    /// Converts one piece into `out` (at least [`output_bound`](Self::output_bound)
    /// bytes) and returns how many bytes it wrote: the same bytes as [`run`](Self::run),
    /// without allocating (the host hands in a buffer it owns, e.g. a JS Buffer that
    /// becomes the output chunk). Conversions without a bound fail with TOO_LARGE.
    pub fn run_into(&self, piece: &Piece, out: &mut [u8]) -> FilterResult<usize> {
        let bytes = &piece.bytes[..];
        let too_small = || {
            FilterError::new(
                TOO_LARGE,
                format!(
                    "an output buffer of {} bytes for a piece of {} bytes",
                    out.len(),
                    bytes.len()
                ),
            )
        };
        match self.output_bound(bytes.len()) {
            Some(bound) if bound <= out.len() => {}
            _ => return Err(too_small()),
        }
        match (self.from, self.to) {
            (Encoding::Utf8, Encoding::Utf16le) => fill_utf16(out, bytes.len() + 1, |units| {
                self.utf8_units(bytes, piece.offset, piece.last, units)
            }),
            (Encoding::Latin1, Encoding::Utf16le) => fill_utf16(out, bytes.len(), |units| {
                encoding_rs::mem::convert_latin1_to_utf16(bytes, &mut units[..bytes.len()]);
                Ok(bytes.len())
            }),
            // output_bound is None for every other pair (checked above).
            _ => Err(too_small()),
        }
    }

    /// UTF-8 → UTF-16 code units into `units` (room for `bytes.len() + 1`). Strict input
    /// fails at its first invalid byte, found by the conversion itself: validating first
    /// was a second pass over the piece (59 µs against 45 µs a 64 KiB piece of the
    /// streams bench's text, this host).
    fn utf8_units(
        &self,
        bytes: &[u8],
        offset: u64,
        last: bool,
        units: &mut [u16],
    ) -> FilterResult<usize> {
        if self.strict {
            if let Some(n) =
                encoding_rs::mem::convert_utf8_to_utf16_without_replacement(bytes, units)
            {
                return Ok(n);
            }
            // The error, naming the first invalid byte (the same test as the conversion's).
            self.check_utf8(bytes, offset, last)?;
        }
        Ok(encoding_rs::mem::convert_utf8_to_utf16(bytes, units))
    }

    /// Strict UTF-8 input: the first invalid byte (or, converting to latin1, an
    /// unmappable character before it) as an error.
    fn check_utf8(&self, bytes: &[u8], offset: u64, last: bool) -> FilterResult<()> {
        let valid = encoding_rs::Encoding::utf8_valid_up_to(bytes);
        if valid == bytes.len() {
            return Ok(());
        }
        // The first error in stream order: an unmappable character before the invalid
        // byte wins.
        if self.to == Encoding::Latin1 {
            let text = std::str::from_utf8(&bytes[..valid]).unwrap_or_default();
            chars_to_latin1(text.char_indices(), valid, offset, true)?;
        }
        let what = if last && utf8_boundary(&bytes[valid..]) == 0 {
            "a UTF-8 sequence cut off by the end of the stream"
        } else {
            "invalid UTF-8"
        };
        Err(FilterError::new(
            INVALID_UTF8,
            format!("{what} at byte {}", offset + valid as u64),
        ))
    }

    /// Converts one piece (any thread, any order).
    pub fn run(&self, piece: Piece) -> FilterResult<Vec<u8>> {
        let Piece {
            bytes,
            offset,
            last,
        } = piece;
        match self.from {
            Encoding::Utf8 => {
                if self.to == Encoding::Utf16le {
                    return with_utf16_out(bytes.len() + 1, |units| {
                        self.utf8_units(&bytes, offset, last, units)
                    });
                }
                if self.strict {
                    self.check_utf8(&bytes, offset, last)?;
                }
                if self.to == Encoding::Latin1 {
                    let text = String::from_utf8_lossy(&bytes);
                    return chars_to_latin1(text.char_indices(), text.len(), offset, self.strict);
                }
                Ok(match String::from_utf8_lossy(&bytes) {
                    Cow::Borrowed(_) => bytes,
                    Cow::Owned(fixed) => fixed.into_bytes(),
                })
            }
            Encoding::Utf16le => {
                let (mut units, odd) = (utf16_units(&bytes), bytes.len() % 2 == 1);
                // A high surrogate, then an odd last byte: the WHATWG decoder ends with
                // both pending and reports one error for them (one U+FFFD, the tail's).
                if odd && !self.strict && units.last().is_some_and(|&u| is_high(u)) {
                    let n = units.len() - 1;
                    units = match units {
                        Cow::Borrowed(u) => Cow::Borrowed(&u[..n]),
                        Cow::Owned(mut u) => {
                            u.truncate(n);
                            Cow::Owned(u)
                        }
                    };
                }
                if self.strict {
                    if let Some(i) = lone_surrogate(&units) {
                        if self.to == Encoding::Latin1 {
                            let before = char::decode_utf16(units[..i].iter().copied());
                            let mut at = 0usize;
                            let positions = before.map(|c| {
                                let c = c.unwrap_or(char::REPLACEMENT_CHARACTER);
                                let p = at;
                                at += 2 * c.len_utf16();
                                (p, c)
                            });
                            chars_to_latin1(positions, i, offset, true)?;
                        }
                        return Err(FilterError::new(
                            INVALID_UTF16,
                            format!("a lone surrogate at byte {}", offset + 2 * i as u64),
                        ));
                    }
                    if odd {
                        return Err(FilterError::new(
                            INVALID_UTF16,
                            format!(
                                "an odd byte at the end of the stream (byte {})",
                                offset + bytes.len() as u64 - 1
                            ),
                        ));
                    }
                }
                // The WHATWG UTF-16LE decoder turns a trailing odd byte into U+FFFD.
                let tail = if odd { "\u{FFFD}" } else { "" };
                match self.to {
                    Encoding::Utf8 => {
                        let mut out = vec![0u8; units.len() * 3 + tail.len()];
                        let n = encoding_rs::mem::convert_utf16_to_utf8(&units, &mut out);
                        out.truncate(n);
                        out.extend_from_slice(tail.as_bytes());
                        Ok(out)
                    }
                    Encoding::Utf16le => {
                        let mut out = Vec::with_capacity(bytes.len() + 1);
                        for c in char::decode_utf16(units.iter().copied()) {
                            let c = c.unwrap_or(char::REPLACEMENT_CHARACTER);
                            let mut buf = [0u16; 2];
                            for u in c.encode_utf16(&mut buf) {
                                out.extend_from_slice(&u.to_le_bytes());
                            }
                        }
                        if odd {
                            out.extend_from_slice(&0xFFFDu16.to_le_bytes());
                        }
                        Ok(out)
                    }
                    Encoding::Latin1 => {
                        let mut text: String = char::decode_utf16(units.iter().copied())
                            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                            .collect();
                        text.push_str(tail);
                        // Offsets of unmappable characters count UTF-16 bytes.
                        let mut at = 0usize;
                        let positions = text.chars().map(|c| {
                            let i = at;
                            at += 2 * c.len_utf16();
                            (i, c)
                        });
                        chars_to_latin1(positions, text.len(), offset, self.strict)
                    }
                }
            }
            Encoding::Latin1 => match self.to {
                Encoding::Latin1 => Ok(bytes),
                Encoding::Utf8 => {
                    let mut out = vec![0u8; bytes.len() * 2];
                    let n = encoding_rs::mem::convert_latin1_to_utf8(&bytes, &mut out);
                    out.truncate(n);
                    Ok(out)
                }
                Encoding::Utf16le => with_utf16_out(bytes.len(), |units| {
                    encoding_rs::mem::convert_latin1_to_utf16(&bytes, &mut units[..bytes.len()]);
                    Ok(bytes.len())
                }),
            },
        }
    }
}

/// Runs `fill` on room for `capacity` u16 units and returns the first `n` it reports
/// as little-endian bytes (a new `Vec`).
fn with_utf16_out(
    capacity: usize,
    fill: impl FnOnce(&mut [u16]) -> FilterResult<usize>,
) -> FilterResult<Vec<u8>> {
    let mut out = vec![0u8; capacity * 2];
    let n = fill_utf16(&mut out, capacity, fill)?;
    out.truncate(n);
    Ok(out)
}

/// Runs `fill` on room for `capacity` u16 units at the start of `out` (at least
/// `2 * capacity` bytes) and returns how many bytes of little-endian units it wrote.
/// Writes into `out` directly when it is 2-aligned (every allocator here; JS buffers
/// at an even offset), else through a u16 buffer and a copy.
fn fill_utf16(
    out: &mut [u8],
    capacity: usize,
    fill: impl FnOnce(&mut [u16]) -> FilterResult<usize>,
) -> FilterResult<usize> {
    let out = &mut out[..capacity * 2];
    let n = match bytemuck::try_cast_slice_mut::<u8, u16>(out) {
        Ok(units) => {
            let n = fill(units)?;
            if cfg!(target_endian = "big") {
                for u in &mut units[..n] {
                    *u = u.to_le();
                }
            }
            n
        }
        Err(_) => {
            let mut units = vec![0u16; capacity];
            let n = fill(&mut units)?;
            for (dst, u) in out.chunks_exact_mut(2).zip(&units[..n]) {
                dst.copy_from_slice(&u.to_le_bytes());
            }
            n
        }
    };
    Ok(n * 2)
}

/// The UTF-16LE code units of `bytes` (an odd last byte ignored): borrowed when the
/// bytes are aligned on a little-endian host.
fn utf16_units(bytes: &[u8]) -> Cow<'_, [u16]> {
    let even = &bytes[..bytes.len() & !1];
    if cfg!(target_endian = "little")
        && let Ok(units) = bytemuck::try_cast_slice::<u8, u16>(even)
    {
        return Cow::Borrowed(units);
    }
    Cow::Owned(
        even.chunks_exact(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect(),
    )
}

/// Index of the first unit that is half of a surrogate pair without its other half.
fn lone_surrogate(units: &[u16]) -> Option<usize> {
    let mut i = 0;
    while i < units.len() {
        let u = units[i];
        if is_high(u) {
            if i + 1 < units.len() && is_low(units[i + 1]) {
                i += 2;
                continue;
            }
            return Some(i);
        }
        if is_low(u) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Characters (with their input positions) → latin1; above U+00FF: an error in strict
/// mode, else `?` (as iconv's //TRANSLIT does for what it cannot map).
fn chars_to_latin1(
    chars: impl Iterator<Item = (usize, char)>,
    hint: usize,
    offset: u64,
    strict: bool,
) -> FilterResult<Vec<u8>> {
    let mut out = Vec::with_capacity(hint);
    for (at, c) in chars {
        match u8::try_from(u32::from(c)) {
            Ok(b) => out.push(b),
            Err(_) if strict => {
                return Err(FilterError::new(
                    UNMAPPABLE,
                    format!(
                        "U+{:04X} at byte {} has no latin1 form",
                        u32::from(c),
                        offset + at as u64
                    ),
                ));
            }
            Err(_) => out.push(b'?'),
        }
    }
    Ok(out)
}
