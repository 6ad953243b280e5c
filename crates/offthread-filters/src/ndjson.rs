//! One NDJSON line → one row of the batch's columns, in a single pass over the line: the
//! user's keys are decoded straight into their column builders, every other value is
//! checked against the JSON grammar (RFC 8259) and skipped, never built. No
//! `serde_json::Value` per line (a map and a string per field) and no second pass.
//!
//! The rules (docs/streams.md, NDJSON):
//! - a line is one JSON object (any other JSON value: "not a JSON object"; not JSON text,
//!   invalid UTF-8 included: "not JSON");
//! - a duplicate key: the last value wins (as `JSON.parse`); an earlier bad value for it
//!   is forgotten;
//! - integer columns take any JSON number with an integral value, exponent or fraction
//!   form included (`1e3`, `2.50e1`, `7.0`), checked against the type's range exactly
//!   (no rounding through f64); float columns take any number that is finite as f64;
//!   `f32` rounds through f64, as `Math.fround(JSON.parse(…))`;
//! - a column whose key is missing, or whose value has the wrong type, fails the row; the
//!   first such column in the schema's order is reported;
//! - skipped values are scanned iteratively: no nesting limit.

use crate::columns::{ColumnData, ColumnType, INFER_BYTES, RecordColumn, simple_f64};

/// Why a line gives no row.
pub(crate) enum LineError {
    /// Not JSON text; says what and where.
    Syntax(String),
    /// JSON, but not an object.
    NotObject,
    /// Column `.0` has no value, or one of the wrong type.
    Column(usize, String),
}

type Scan<T> = Result<T, LineError>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Unseen,
    Set,
    Bad,
    /// `null` for a column that takes one (nullable, or with a default).
    Null,
}

/// Per-line scratch, kept between lines.
#[derive(Default)]
pub(crate) struct NdjsonRows {
    /// What each column holds for the line being read.
    slots: Vec<Slot>,
    /// The message of each `Bad` slot.
    bad: Vec<String>,
    /// Containers open in a skipped value (true: an object).
    stack: Vec<bool>,
    /// A key with escapes, decoded.
    key: Vec<u8>,
    /// The column the next key most likely names (lines tend to repeat their key order).
    hint: usize,
    /// Which columns the last row left null (read by the caller's validity bitmaps).
    nulls: Vec<bool>,
    /// The next line is known to be UTF-8 (the caller checked its whole input).
    pub(crate) utf8: bool,
}

impl NdjsonRows {
    /// Column `c` of the last row read is null.
    pub(crate) fn is_null(&self, c: usize) -> bool {
        self.nulls.get(c).copied().unwrap_or(false)
    }

    /// Reads `line` into one more row of `data` (which holds `rows` rows). On an error
    /// the columns may hold part of the row: the caller truncates them.
    pub(crate) fn row(
        &mut self,
        line: &[u8],
        columns: &[RecordColumn],
        data: &mut [ColumnData],
        rows: usize,
    ) -> Scan<()> {
        // No UTF-8 pass over the line: outside strings only ASCII fits the grammar, and
        // strings are checked as they are scanned (those that hold non-ASCII bytes).
        self.hint = 0;
        self.slots.clear();
        self.slots.resize(columns.len(), Slot::Unseen);
        self.bad.resize(columns.len(), String::new());
        let mut cur = Cursor {
            b: line,
            i: 0,
            utf8: self.utf8,
        };
        cur.ws();
        if cur.peek() != Some(b'{') {
            cur.skip_value(&mut self.stack)?;
            cur.end()?;
            return Err(LineError::NotObject);
        }
        cur.i += 1;
        cur.ws();
        if cur.peek() == Some(b'}') {
            cur.i += 1;
        } else {
            loop {
                let col = self.key(&mut cur, columns)?;
                cur.ws();
                cur.eat(b':')?;
                cur.ws();
                match col {
                    Some(c) => {
                        // A duplicate key replaces what the earlier one wrote.
                        if self.slots[c] != Slot::Unseen {
                            data[c].truncate_rows(rows, columns[c].ty);
                        }
                        let fills = columns[c].nullable || columns[c].default.is_some();
                        if fills && cur.peek() == Some(b'n') {
                            cur.literal(b"null")?;
                            self.slots[c] = Slot::Null;
                        } else {
                            match cur.column_value(columns[c].ty, &mut data[c], &mut self.stack)? {
                                Ok(()) => self.slots[c] = Slot::Set,
                                Err(what) => {
                                    data[c].truncate_rows(rows, columns[c].ty);
                                    self.slots[c] = Slot::Bad;
                                    self.bad[c] = what;
                                }
                            }
                        }
                    }
                    None => {
                        cur.skip_value(&mut self.stack)?;
                    }
                }
                cur.ws();
                match cur.peek() {
                    Some(b',') => {
                        cur.i += 1;
                        cur.ws();
                    }
                    Some(b'}') => {
                        cur.i += 1;
                        break;
                    }
                    _ => return Err(cur.err("expected , or }")),
                }
            }
        }
        cur.end()?;
        self.nulls.clear();
        self.nulls.resize(columns.len(), false);
        for (c, slot) in self.slots.iter().enumerate() {
            let col = &columns[c];
            match slot {
                Slot::Set => {}
                // A missing key is a null too, for a column that takes one.
                Slot::Unseen | Slot::Null if col.nullable || col.default.is_some() => {
                    data[c].fill_item(col.ty, col.default.as_deref());
                    self.nulls[c] = col.default.is_none();
                }
                Slot::Unseen | Slot::Null => {
                    return Err(LineError::Column(c, format!("no \"{}\"", col.name)));
                }
                Slot::Bad => return Err(LineError::Column(c, std::mem::take(&mut self.bad[c]))),
            }
        }
        for (c, d) in data.iter_mut().enumerate() {
            d.end_text_row()
                .map_err(|what| LineError::Column(c, what))?;
        }
        Ok(())
    }

    /// The key at the cursor, as the index of the column it names.
    fn key(&mut self, cur: &mut Cursor<'_>, columns: &[RecordColumn]) -> Scan<Option<usize>> {
        if cur.peek() != Some(b'"') {
            return Err(cur.err("expected a key"));
        }
        let start = cur.i + 1;
        let plain = cur.b[start..]
            .iter()
            .position(|&c| c == b'"' || c == b'\\' || c < 0x20);
        let name = match plain {
            Some(n) if cur.b[start + n] == b'"' => {
                let name = &cur.b[start..start + n];
                if !name.is_ascii() {
                    cur.utf8(start, start + n)?;
                }
                cur.i = start + n + 1;
                name
            }
            // Escapes (or an error): decode the slow way.
            _ => {
                self.key.clear();
                cur.string(Some(&mut self.key))?;
                &self.key[..]
            }
        };
        let hint = self.hint;
        let found = match columns.get(hint) {
            Some(c) if c.name.as_bytes() == name => Some(hint),
            _ => columns.iter().position(|c| c.name.as_bytes() == name),
        };
        if let Some(c) = found {
            self.hint = c + 1;
        }
        Ok(found)
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
    /// `b` is known to be UTF-8: strings need no check.
    utf8: bool,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn err(&self, what: &str) -> LineError {
        LineError::Syntax(format!("{what} at column {}", self.i + 1))
    }

    /// Checks `b[start..end]` (part of a string) is UTF-8.
    fn utf8(&self, start: usize, end: usize) -> Scan<()> {
        if self.utf8 {
            return Ok(());
        }
        match std::str::from_utf8(&self.b[start..end]) {
            Ok(_) => Ok(()),
            Err(e) => {
                let at = start + e.valid_up_to() + 1;
                Err(LineError::Syntax(format!("invalid UTF-8 at column {at}")))
            }
        }
    }

    fn eat(&mut self, c: u8) -> Scan<()> {
        if self.peek() != Some(c) {
            return Err(self.err(&format!("expected {}", c as char)));
        }
        self.i += 1;
        Ok(())
    }

    /// Only whitespace may follow the value.
    fn end(&mut self) -> Scan<()> {
        self.ws();
        if self.i < self.b.len() {
            return Err(self.err("trailing characters"));
        }
        Ok(())
    }

    /// The string at the cursor (at its opening quote), checked to be UTF-8; its
    /// decoded bytes are appended to `out` when given. (A UTF-8 sequence never holds
    /// `"`, `\\` or a control byte, so checking the runs between them is enough.)
    fn string(&mut self, mut out: Option<&mut Vec<u8>>) -> Scan<()> {
        self.i += 1;
        loop {
            let start = self.i;
            let mut high = 0;
            while let Some(&c) = self.b.get(self.i) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                high |= c;
                self.i += 1;
            }
            if high >= 0x80 {
                self.utf8(start, self.i)?;
            }
            if let Some(o) = out.as_deref_mut() {
                o.extend_from_slice(&self.b[start..self.i]);
            }
            match self.peek() {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.i += 1;
                    self.escape(out.as_deref_mut())?;
                }
                Some(_) => return Err(self.err("control character in a string")),
                None => return Err(self.err("unterminated string")),
            }
        }
    }

    /// The escape after a backslash. Surrogates must pair (the column is UTF-8).
    fn escape(&mut self, out: Option<&mut Vec<u8>>) -> Scan<()> {
        let byte = match self.peek() {
            Some(b'"') => b'"',
            Some(b'\\') => b'\\',
            Some(b'/') => b'/',
            Some(b'b') => 8,
            Some(b'f') => 12,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'u') => {
                self.i += 1;
                let mut cp = self.hex4()?;
                if (0xD800..0xDC00).contains(&cp) {
                    if self.b.get(self.i..self.i + 2) != Some(b"\\u") {
                        return Err(self.err("lone surrogate in a \\u escape"));
                    }
                    self.i += 2;
                    let low = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(self.err("lone surrogate in a \\u escape"));
                    }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                } else if (0xDC00..0xE000).contains(&cp) {
                    return Err(self.err("lone surrogate in a \\u escape"));
                }
                if let Some(o) = out {
                    let ch = char::from_u32(cp).expect("surrogates were paired");
                    o.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                }
                return Ok(());
            }
            _ => return Err(self.err("invalid escape")),
        };
        self.i += 1;
        if let Some(o) = out {
            o.push(byte);
        }
        Ok(())
    }

    fn hex4(&mut self) -> Scan<u32> {
        let mut v = 0;
        for _ in 0..4 {
            let d = self.peek().and_then(|c| (c as char).to_digit(16));
            let Some(d) = d else {
                return Err(self.err("invalid \\u escape"));
            };
            v = v * 16 + d;
            self.i += 1;
        }
        Ok(v)
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    /// The number at the cursor (JSON grammar), as its text.
    fn number(&mut self) -> Scan<&'a [u8]> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        Ok(&self.b[start..self.i])
    }

    fn literal(&mut self, word: &[u8]) -> Scan<()> {
        if !self.b[self.i..].starts_with(word) {
            return Err(self.err("expected a value"));
        }
        self.i += word.len();
        Ok(())
    }

    /// One scalar value (not an array or object).
    fn scalar(&mut self) -> Scan<()> {
        match self.peek() {
            Some(b'"') => self.string(None),
            Some(b'-' | b'0'..=b'9') => self.number().map(drop),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            _ => Err(self.err("expected a value")),
        }
    }

    /// `"key" :` inside a skipped object.
    fn member_key(&mut self) -> Scan<()> {
        if self.peek() != Some(b'"') {
            return Err(self.err("expected a key"));
        }
        self.string(None)?;
        self.ws();
        self.eat(b':')
    }

    /// Skips one value of any kind, checking its grammar; returns its text.
    fn skip_value(&mut self, stack: &mut Vec<bool>) -> Scan<&'a [u8]> {
        stack.clear();
        let start = self.i;
        loop {
            self.ws();
            match self.peek() {
                Some(open @ (b'{' | b'[')) => {
                    let object = open == b'{';
                    self.i += 1;
                    self.ws();
                    if self.peek() == Some(if object { b'}' } else { b']' }) {
                        self.i += 1;
                    } else {
                        stack.push(object);
                        if object {
                            self.member_key()?;
                        }
                        continue;
                    }
                }
                _ => self.scalar()?,
            }
            // After a value: close containers until one takes a next item.
            loop {
                let Some(&object) = stack.last() else {
                    return Ok(&self.b[start..self.i]);
                };
                self.ws();
                match self.peek() {
                    Some(b',') => {
                        self.i += 1;
                        if object {
                            self.ws();
                            self.member_key()?;
                        }
                        break;
                    }
                    Some(b'}') if object => {
                        self.i += 1;
                        stack.pop();
                    }
                    Some(b']') if !object => {
                        self.i += 1;
                        stack.pop();
                    }
                    _ => {
                        return Err(self.err(if object {
                            "expected , or }"
                        } else {
                            "expected , or ]"
                        }));
                    }
                }
            }
        }
    }

    /// A column's value, appended to `data`: Ok(Err(message)) when the value is JSON of
    /// the wrong type or range (nothing appended then).
    fn column_value(
        &mut self,
        ty: ColumnType,
        data: &mut ColumnData,
        stack: &mut Vec<bool>,
    ) -> Scan<Result<(), String>> {
        let first = self.peek();
        match data {
            ColumnData::Text { bytes, .. } if first == Some(b'"') => {
                self.string(Some(bytes))?;
                return Ok(Ok(()));
            }
            ColumnData::Fixed(out) => {
                if let Some(b'-' | b'0'..=b'9') = first {
                    let text = self.number()?;
                    return Ok(push_number(out, ty, text));
                }
                if ty == ColumnType::Bool && matches!(first, Some(b't' | b'f')) {
                    let v = first == Some(b't');
                    self.literal(if v { b"true" } else { b"false" })?;
                    out.push(u8::from(v));
                    return Ok(Ok(()));
                }
            }
            ColumnData::Text { .. } => {}
        }
        let text = shown(self.skip_value(stack)?);
        Ok(Err(match ty {
            ColumnType::String => format!("expected a string, got {text}"),
            ColumnType::Bool => format!("{text} is not a bool"),
            ColumnType::F32 | ColumnType::F64 => format!("{text} is not a number"),
            _ => format!("{text} is not a {}", ty.name()),
        }))
    }
}

/// What a key held in the lines columns are inferred from (bits: a key may hold several).
const NULL: u8 = 1;
const BOOL: u8 = 2;
const NUMBER: u8 = 4;
const STRING: u8 = 8;
/// An object or an array: no column holds one.
const NESTED: u8 = 16;

/// Line `line`'s text: without its CR, and the first line without a UTF-8 BOM (not
/// part of it).
pub(crate) fn line_text(line: &[u8], first: bool) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if first {
        line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
    } else {
        line
    }
}

/// The lines columns are inferred from: the first `limit` non-blank lines of `input`
/// that are whole (ended by a newline, or by the end of the input when `end`), each
/// without its CR and the first without a BOM.
fn sample(input: &[u8], limit: usize, end: bool) -> impl Iterator<Item = &[u8]> {
    let whole = match memchr::memrchr(b'\n', input) {
        _ if end => input,
        Some(nl) => &input[..nl],
        None => &[][..],
    };
    // An empty `whole` splits into one empty line, which is blank: no line.
    whole
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, line)| line_text(line, i == 0))
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .take(limit)
}

#[cfg(test)]
thread_local! {
    /// Calls of sample_complete on this thread: each scans all the bytes held.
    pub(crate) static SCANS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Enough of the stream is in `input` to infer its columns from: `limit` lines, or
/// INFER_BYTES and a whole line (a stream of few, long lines is typed from what fits,
/// but never from no line at all).
pub(crate) fn sample_complete(input: &[u8], limit: usize) -> bool {
    #[cfg(test)]
    SCANS.with(|s| s.set(s.get() + 1));
    (input.len() >= INFER_BYTES && memchr::memchr(b'\n', input).is_some())
        || sample(input, limit, false).count() >= limit
}

/// The columns of an NDJSON stream, typed from its first `limit` lines in `input`
/// (only whole ones, unless `end`: then the last line needs no newline), as CSV's are
/// from its first rows: each top-level key, in the order keys first appear, is `bool`
/// when every non-null value of it is `true`/`false`, `f64` when every one is a
/// number, `string` when every one is a string (or all are null); a key that holds
/// objects or arrays, or values of two kinds, is no column (declare it to read it).
/// Every inferred column is nullable: a missing key or `null`, here or later, is a null.
/// Lines that are not JSON objects are not typed from (they are bad rows later).
/// At most `max` columns (what a batch's readers take).
pub(crate) fn infer_columns(
    input: &[u8],
    limit: usize,
    end: bool,
    max: usize,
) -> Vec<RecordColumn> {
    use std::collections::HashMap;
    let mut keys: Vec<(Vec<u8>, u8)> = Vec::new();
    let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut line_keys: Vec<(Vec<u8>, u8)> = Vec::new();
    let mut line_index: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut stack = Vec::new();
    for line in sample(input, limit, end) {
        line_keys.clear();
        line_index.clear();
        if object_kinds(line, &mut line_keys, &mut line_index, &mut stack).is_err() {
            continue;
        }
        for (key, kind) in line_keys.drain(..) {
            match index.get(&key) {
                Some(&at) => keys[at].1 |= kind,
                None => {
                    index.insert(key.clone(), keys.len());
                    keys.push((key, kind));
                }
            }
        }
    }
    keys.into_iter()
        .filter_map(|(key, kinds)| {
            let ty = match kinds & !NULL {
                0 | STRING => ColumnType::String,
                BOOL => ColumnType::Bool,
                NUMBER => ColumnType::F64,
                _ => return None,
            };
            Some((String::from_utf8_lossy(&key).into_owned(), ty))
        })
        .take(max)
        .enumerate()
        .map(|(i, (name, ty))| {
            let mut column = RecordColumn::new(name, ty, i as u32);
            column.nullable = true;
            column
        })
        .collect()
}

/// The top-level keys of the JSON object `line` and what each holds (a duplicate key:
/// its last value, as the row reader takes it), in the order they first appear.
fn object_kinds(
    line: &[u8],
    out: &mut Vec<(Vec<u8>, u8)>,
    index: &mut std::collections::HashMap<Vec<u8>, usize>,
    stack: &mut Vec<bool>,
) -> Scan<()> {
    let mut cur = Cursor {
        b: line,
        i: 0,
        utf8: false,
    };
    cur.ws();
    cur.eat(b'{')?;
    cur.ws();
    if cur.peek() == Some(b'}') {
        cur.i += 1;
        return cur.end();
    }
    loop {
        if cur.peek() != Some(b'"') {
            return Err(cur.err("expected a key"));
        }
        let mut key = Vec::new();
        cur.string(Some(&mut key))?;
        cur.ws();
        cur.eat(b':')?;
        cur.ws();
        let kind = match cur.peek() {
            Some(b'"') => STRING,
            Some(b'-' | b'0'..=b'9') => NUMBER,
            Some(b't' | b'f') => BOOL,
            Some(b'n') => NULL,
            _ => NESTED,
        };
        cur.skip_value(stack)?;
        match index.get(&key) {
            Some(&at) => out[at].1 = kind,
            None => {
                index.insert(key.clone(), out.len());
                out.push((key, kind));
            }
        }
        cur.ws();
        match cur.peek() {
            Some(b',') => {
                cur.i += 1;
                cur.ws();
            }
            Some(b'}') => {
                cur.i += 1;
                return cur.end();
            }
            _ => return Err(cur.err("expected , or }")),
        }
    }
}

/// A value's text for a message, cut short when long.
fn shown(text: &[u8]) -> String {
    const MAX: usize = 60;
    let text = std::str::from_utf8(text).expect("a scanned value is UTF-8");
    if text.len() <= MAX {
        return text.to_owned();
    }
    let mut cut = MAX;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}

/// Appends the number `text` (JSON grammar, checked) to a fixed column.
fn push_number(out: &mut Vec<u8>, ty: ColumnType, text: &[u8]) -> Result<(), String> {
    // Made only when needed: a check per number was a tenth of a line's reading.
    let s = || std::str::from_utf8(text).expect("a number is ASCII");
    if let ColumnType::F32 | ColumnType::F64 = ty {
        let x: f64 =
            simple_f64(text).unwrap_or_else(|| s().parse().expect("JSON numbers are Rust floats"));
        if !x.is_finite() {
            return Err(format!("{} is out of range for f64", s()));
        }
        if ty == ColumnType::F32 {
            out.extend_from_slice(&(x as f32).to_le_bytes());
        } else {
            out.extend_from_slice(&x.to_le_bytes());
        }
        return Ok(());
    }
    let bad = || format!("{} is not a {}", s(), ty.name());
    let v = exact_integer(text).ok_or_else(bad)?;
    macro_rules! put {
        ($t:ty) => {
            out.extend_from_slice(&<$t>::try_from(v).map_err(|_| bad())?.to_le_bytes())
        };
    }
    match ty {
        ColumnType::U8 => put!(u8),
        ColumnType::U16 => put!(u16),
        ColumnType::U32 => put!(u32),
        ColumnType::U64 => put!(u64),
        ColumnType::I8 => put!(i8),
        ColumnType::I16 => put!(i16),
        ColumnType::I32 => put!(i32),
        ColumnType::I64 => put!(i64),
        ColumnType::Bool => return Err(format!("{} is not a bool", s())),
        ColumnType::F32 | ColumnType::F64 | ColumnType::String => {
            unreachable!("handled above / a text column")
        }
    }
    Ok(())
}

/// The integer a JSON number's text denotes, exactly: `1e3`, `2.50e1` and `-0` are
/// integers, `0.5` is not. None also beyond ±u64::MAX (no column holds more).
pub(crate) fn exact_integer(text: &[u8]) -> Option<i128> {
    let (negative, t) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    // Plain digits (most integers): at most 19 of them fit an i64, no scan for `.`/`e`.
    if !t.is_empty() && t.len() <= 19 && t.iter().all(u8::is_ascii_digit) {
        let v = t.iter().fold(0i128, |v, &d| v * 10 + i128::from(d - b'0'));
        return Some(if negative { -v } else { v });
    }
    let e_at = t.iter().position(|&c| c == b'e' || c == b'E');
    let (mantissa, exp_text) = t.split_at(e_at.unwrap_or(t.len()));
    // The exponent saturates: a huge one only matters when the digits are not all 0.
    let mut exp: i64 = 0;
    if let Some((_, e)) = exp_text.split_first() {
        let (sign, digits) = match e.split_first() {
            Some((b'-', d)) => (-1, d),
            Some((b'+', d)) => (1, d),
            _ => (1, e),
        };
        for &d in digits {
            exp = (exp * 10 + i64::from(d - b'0')).min(1 << 40);
        }
        exp *= sign;
    }
    let dot = mantissa.iter().position(|&c| c == b'.');
    let (int, frac) = match dot {
        Some(p) => (&mantissa[..p], &mantissa[p + 1..]),
        None => (mantissa, &[][..]),
    };
    let digits = || int.iter().chain(frac);
    let total = int.len() + frac.len();
    let zeros = digits().rev().take_while(|&&d| d == b'0').count();
    if zeros == total {
        return Some(0);
    }
    // value = digits[..total - zeros] × 10^exp
    exp += zeros as i64 - frac.len() as i64;
    if !(0..=20).contains(&exp) {
        return None;
    }
    let limit = u128::from(u64::MAX);
    let mut v: u128 = 0;
    for &d in digits().take(total - zeros) {
        v = v * 10 + u128::from(d - b'0');
        if v > limit {
            return None;
        }
    }
    for _ in 0..exp {
        v *= 10;
        if v > limit {
            return None;
        }
    }
    let v = v as i128;
    Some(if negative { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::exact_integer;

    #[test]
    fn exact_integers() {
        for (text, want) in [
            ("0", Some(0)),
            ("-0", Some(0)),
            ("0.000e5", Some(0)),
            ("12", Some(12)),
            ("1e3", Some(1000)),
            ("1E+3", Some(1000)),
            ("2.50e1", Some(25)),
            ("7.0", Some(7)),
            ("1500e-2", Some(15)),
            ("-4.2e1", Some(-42)),
            ("0.5", None),
            ("1e-1", None),
            ("1.05e1", None),
            ("18446744073709551615", Some(u64::MAX as i128)),
            ("1.8446744073709551615e19", Some(u64::MAX as i128)),
            ("18446744073709551616", None),
            ("-18446744073709551615", Some(-(u64::MAX as i128))),
            ("1e20", None),
            ("1e19", Some(10_000_000_000_000_000_000)),
            ("1e999999999999999999999", None),
            ("0e999999999999999999999", Some(0)),
            (
                "100000000000000000000000e-5",
                Some(1_000_000_000_000_000_000),
            ),
        ] {
            assert_eq!(exact_integer(text.as_bytes()), want, "{text}");
        }
    }
}
