//! The records of a CSV piece read in place: what csv-core's reader gives for them, with
//! fields borrowed from the input instead of copied out byte by byte.
//!
//! csv-core runs a DFA over every byte and copies each field's bytes to an output buffer;
//! a piece of the stream (csv_split.rs) starts at a record boundary and, but for the
//! last, ends at one, so its records can be read here directly: an unquoted field, and a
//! quoted one without `""` or text after its closing quote, is a slice of the input;
//! only the others are built in a scratch buffer. The rules are csv-core's (with the
//! default CRLF terminator, `""` doubling, no escape, no comments — what the record
//! filters build): `\r`, `\n` and `\r\n` end a record, blank lines are skipped, a quote
//! opens a quoted field only at the field's start, text after a closing quote joins the
//! field (`"ab"c` is `abc`), a quote inside an unquoted field is text. The property
//! tests in tests/csv_pieces.rs hold a parse through here against csv-core's sequential
//! one on random CSVs of every such case.

/// Where a field's bytes are: `start..end` of the input, or, from `base` on, of the
/// scratch buffer (`base` = the input's length: one span type for both).
pub(crate) type Span = (usize, usize);

/// One record: its fields' spans and the line it starts on.
pub(crate) struct Fields<'a> {
    input: &'a [u8],
    scratch: &'a [u8],
    spans: &'a [Span],
}

impl<'a> Fields<'a> {
    pub(crate) fn count(&self) -> usize {
        self.spans.len()
    }

    /// Field `i`'s bytes.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> &'a [u8] {
        let (start, end) = self.spans[i];
        let n = self.input.len();
        // An input span ends before the input does (its record was ended by a byte after it).
        if start >= n {
            &self.scratch[start - n..end - n]
        } else {
            &self.input[start..end]
        }
    }
}

/// Reads the records of `input`, which starts at a record boundary after `lines`
/// newlines, calling `record` with each and the line it starts on (1-based); `lines`
/// goes on counting. Returns where the first record that `input` does not finish
/// starts (`input.len()`: none): csv-core reads those bytes, as it reads the end of a
/// stream. `scratch` and `spans` are the caller's, kept between calls.
pub(crate) fn read_records<E>(
    input: &[u8],
    delimiter: u8,
    quote: u8,
    lines: &mut u64,
    scratch: &mut Vec<u8>,
    spans: &mut Vec<Span>,
    mut record: impl FnMut(&Fields<'_>, u64) -> Result<(), E>,
) -> Result<usize, E> {
    let n = input.len();
    let is_term = |b: u8| b == b'\n' || b == b'\r';
    // Ends an unquoted run: a delimiter or a terminator (a quote there is text). Eight
    // bytes at a time: a byte-by-byte loop was half of the reading (perf).
    let stops = [delimiter, b'\n', b'\r'].map(|b| u64::from_ne_bytes([b; 8]));
    let is_stop = |b: u8| b == delimiter || b == b'\n' || b == b'\r';
    let unquoted_end = |mut j: usize| {
        while let Some(word) = input.get(j..j + 8) {
            let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            let hits =
                zero_bytes(w ^ stops[0]) | zero_bytes(w ^ stops[1]) | zero_bytes(w ^ stops[2]);
            if hits != 0 {
                return j + (hits.trailing_zeros() / 8) as usize;
            }
            j += 8;
        }
        while j < n && !is_stop(input[j]) {
            j += 1;
        }
        j
    };
    let mut i = 0;
    loop {
        // Between records: terminators are blank lines.
        while i < n && is_term(input[i]) {
            *lines += u64::from(input[i] == b'\n');
            i += 1;
        }
        if i == n {
            return Ok(n);
        }
        let start = i;
        let line = *lines + 1;
        let mut newlines = 0u64;
        spans.clear();
        scratch.clear();
        // Each field, from its first byte; None: the input ends inside the record.
        let ended = loop {
            let Some(&b) = input.get(i) else { break None };
            if b == quote {
                let open = i;
                let Some((span, next)) = quoted(input, i + 1, quote, &unquoted_end, scratch) else {
                    break None;
                };
                newlines += crate::lines::newlines(&input[open..next]);
                spans.push(span);
                i = next;
            } else {
                let end = unquoted_end(i);
                spans.push((i, end));
                i = end;
            }
            match input.get(i) {
                None => break None,
                Some(&c) if c == delimiter => i += 1,
                Some(_) => break Some(()),
            }
        };
        if ended.is_none() {
            // The caller's csv-core reads this record from its start.
            *lines = line - 1;
            return Ok(start);
        }
        // The terminator: `\n`, or `\r` and a `\n` after it (a blank line to csv-core).
        if input[i] == b'\r' {
            i += 1;
        }
        if input.get(i) == Some(&b'\n') {
            newlines += 1;
            i += 1;
        }
        *lines += newlines;
        let fields = Fields {
            input,
            scratch,
            spans,
        };
        record(&fields, line)?;
    }
}

/// A quoted field whose text starts at `i` (after the opening quote): its span and where
/// the delimiter or terminator after it is; None when the input ends first.
fn quoted(
    input: &[u8],
    mut i: usize,
    quote: u8,
    unquoted_end: &impl Fn(usize) -> usize,
    scratch: &mut Vec<u8>,
) -> Option<(Span, usize)> {
    let n = input.len();
    let text = i;
    // Set once a `""` or text after the closing quote makes the field differ from a
    // slice of the input: its bytes go to the scratch buffer from then on.
    let mut built: Option<usize> = None;
    let mut from = i;
    loop {
        let q = i + memchr::memchr(quote, &input[i..])?;
        let after = *input.get(q + 1)?;
        if after == quote {
            // `""`: one quote of text.
            built.get_or_insert(scratch.len());
            scratch.extend_from_slice(&input[from..=q]);
            i = q + 2;
            from = i;
            continue;
        }
        // The closing quote; anything but a delimiter or terminator after it is text
        // up to the next one (a quote there included).
        let end = unquoted_end(q + 1);
        if end == n {
            return None;
        }
        if built.is_none() && end == q + 1 {
            return Some(((text, q), end));
        }
        let at = *built.get_or_insert(scratch.len());
        scratch.extend_from_slice(&input[from..q]);
        scratch.extend_from_slice(&input[q + 1..end]);
        return Some(((n + at, n + scratch.len()), end));
    }
}

/// The high bit of each zero byte of `x`, exact up to the first one (a borrow may mark
/// bytes after it, never before): its lowest set bit is the first zero byte.
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080
}

#[cfg(test)]
mod tests {
    use super::read_records;

    /// A field ends at the first delimiter or terminator wherever it falls in a word of
    /// eight bytes, or in the bytes after the last whole word.
    #[test]
    fn fields_end_at_each_stop_wherever_it_falls() {
        for len in 0..20 {
            for stop in [b',', b'\n', b'\r'] {
                let mut input = vec![b'x'; len];
                input.push(stop);
                input.extend_from_slice(b"y\n");
                let (mut lines, mut scratch, mut spans) = (0, Vec::new(), Vec::new());
                let mut got: Vec<Vec<Vec<u8>>> = Vec::new();
                let read = read_records::<()>(
                    &input,
                    b',',
                    b'"',
                    &mut lines,
                    &mut scratch,
                    &mut spans,
                    |f, _| {
                        got.push((0..f.count()).map(|i| f.get(i).to_vec()).collect());
                        Ok(())
                    },
                );
                assert_eq!(read, Ok(input.len()));
                let x = vec![b'x'; len];
                let want = match (stop, len) {
                    (b',', _) => vec![vec![x, b"y".to_vec()]],
                    // A terminator first is a blank line.
                    (_, 0) => vec![vec![b"y".to_vec()]],
                    _ => vec![vec![x], vec![b"y".to_vec()]],
                };
                assert_eq!(got, want, "{len} bytes, then {stop:?}");
            }
        }
    }
}
