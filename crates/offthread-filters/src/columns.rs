//! The columns a record batch is built from: the field types a column can have, the
//! user's column list, and the values of one column while a batch fills. Shared by the
//! CSV parser (records.rs) and the NDJSON scanner (ndjson.rs).

/// A field type a record column can have: the scalars and UTF-8 text (`[]u8 #string`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    Bool,
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
    String,
}

impl ColumnType {
    /// The schema language's type names (`string` for `[]u8 #string`).
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "bool" => ColumnType::Bool,
            "u8" => ColumnType::U8,
            "u16" => ColumnType::U16,
            "u32" => ColumnType::U32,
            "u64" => ColumnType::U64,
            "i8" => ColumnType::I8,
            "i16" => ColumnType::I16,
            "i32" => ColumnType::I32,
            "i64" => ColumnType::I64,
            "f32" => ColumnType::F32,
            "f64" => ColumnType::F64,
            "string" => ColumnType::String,
            _ => return None,
        })
    }

    /// The type's name in the schema language (`string` for text).
    pub fn name(self) -> &'static str {
        match self {
            ColumnType::Bool => "bool",
            ColumnType::U8 => "u8",
            ColumnType::U16 => "u16",
            ColumnType::U32 => "u32",
            ColumnType::U64 => "u64",
            ColumnType::I8 => "i8",
            ColumnType::I16 => "i16",
            ColumnType::I32 => "i32",
            ColumnType::I64 => "i64",
            ColumnType::F32 => "f32",
            ColumnType::F64 => "f64",
            ColumnType::String => "string",
        }
    }

    pub(crate) fn item_bytes(self) -> usize {
        match self {
            ColumnType::Bool | ColumnType::U8 | ColumnType::I8 => 1,
            ColumnType::U16 | ColumnType::I16 => 2,
            ColumnType::U32 | ColumnType::I32 | ColumnType::F32 => 4,
            ColumnType::U64 | ColumnType::I64 | ColumnType::F64 => 8,
            // Var columns: 1-byte elements.
            ColumnType::String => 1,
        }
    }
}

/// One field of the row struct that the records fill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordColumn {
    /// CSV header / NDJSON key it is read from.
    pub name: String,
    pub ty: ColumnType,
    /// Declaration index of the field in the row struct (its column hash is `[field]`).
    pub field: u32,
    /// An empty cell (CSV), a missing key or `null` (NDJSON) is a null: the item is
    /// zero (text: empty) and its bit in the column's validity bitmap is 0.
    pub nullable: bool,
    /// What an empty cell / missing key / `null` holds instead (the item's bytes:
    /// little-endian for numbers, UTF-8 for text). Never null then.
    pub default: Option<Vec<u8>>,
}

impl RecordColumn {
    /// A column that must have a value in every row.
    pub fn new(name: impl Into<String>, ty: ColumnType, field: u32) -> Self {
        Self {
            name: name.into(),
            ty,
            field,
            nullable: false,
            default: None,
        }
    }

    /// The item bytes of `text` as this column's type (a default's), or why not.
    pub fn encode(&self, text: &str) -> Result<Vec<u8>, String> {
        let mut data = ColumnData::empty(self.ty);
        data.push(self, text.as_bytes(), false)?;
        Ok(match data {
            ColumnData::Fixed(b) => b,
            ColumnData::Text { bytes, .. } => bytes,
        })
    }
}

/// Spaces and tabs around a number are not part of it (`" 12"` is 12).
pub(crate) fn trim_number(cell: &[u8]) -> &[u8] {
    let start = cell.iter().position(|b| !matches!(b, b' ' | b'\t'));
    let Some(start) = start else { return &[] };
    let end = cell
        .iter()
        .rposition(|b| !matches!(b, b' ' | b'\t'))
        .unwrap_or(start);
    &cell[start..=end]
}

/// The values of one column for the rows of the batch being built.
#[derive(Clone)]
pub(crate) enum ColumnData {
    /// Little-endian items of `item_bytes` each.
    Fixed(Vec<u8>),
    /// `offsets[i]..offsets[i + 1]` of `bytes` is row i (offsets starts with 0).
    Text { offsets: Vec<u32>, bytes: Vec<u8> },
}

impl ColumnData {
    pub(crate) fn empty(ty: ColumnType) -> Self {
        match ty {
            ColumnType::String => ColumnData::Text {
                offsets: vec![0],
                bytes: Vec::new(),
            },
            _ => ColumnData::Fixed(Vec::new()),
        }
    }

    pub(crate) fn bytes(&self) -> usize {
        match self {
            ColumnData::Fixed(b) => b.len(),
            ColumnData::Text { offsets, bytes } => offsets.len() * 4 + bytes.len(),
        }
    }

    /// Drops whatever was appended after the first `rows` rows (a failed row's part).
    pub(crate) fn truncate_rows(&mut self, rows: usize, ty: ColumnType) {
        match self {
            ColumnData::Fixed(b) => b.truncate(rows * ty.item_bytes()),
            ColumnData::Text { offsets, bytes } => {
                offsets.truncate(rows + 1);
                bytes.truncate(offsets[rows] as usize);
            }
        }
    }

    /// Appends a default's item bytes (or, `None`, a null's zero item / empty text)
    /// and ends the row.
    pub(crate) fn push_fill(&mut self, ty: ColumnType, fill: Option<&[u8]>) -> Result<(), String> {
        self.fill_item(ty, fill);
        self.end_text_row()
    }

    /// [`push_fill`](Self::push_fill) without ending a text row (NDJSON ends every
    /// column's row once the line is read).
    pub(crate) fn fill_item(&mut self, ty: ColumnType, fill: Option<&[u8]>) {
        match self {
            ColumnData::Fixed(out) => match fill {
                Some(b) => out.extend_from_slice(b),
                None => out.resize(out.len() + ty.item_bytes(), 0),
            },
            ColumnData::Text { bytes, .. } => bytes.extend_from_slice(fill.unwrap_or_default()),
        }
    }

    /// Ends a text column's row (the bytes are in): its end offset. Fixed: nothing.
    pub(crate) fn end_text_row(&mut self) -> Result<(), String> {
        if let ColumnData::Text { offsets, bytes } = self {
            let end = u32::try_from(bytes.len())
                .map_err(|_| "over 4 GiB of text in one batch".to_owned())?;
            offsets.push(end);
        }
        Ok(())
    }

    /// Appends one CSV field's text, checked against the column's type. `utf8`: the
    /// cell is known to be UTF-8 (its whole piece was checked at once).
    pub(crate) fn push(&mut self, c: &RecordColumn, cell: &[u8], utf8: bool) -> Result<(), String> {
        match self {
            ColumnData::Text { bytes, .. } => {
                if !utf8 {
                    std::str::from_utf8(cell).map_err(|e| format!("not UTF-8 ({e})"))?;
                }
                bytes.extend_from_slice(cell);
                self.end_text_row()
            }
            ColumnData::Fixed(out) => {
                let cell = trim_number(cell);
                if push_plain(out, c.ty, cell) {
                    return Ok(());
                }
                let s = std::str::from_utf8(cell).map_err(|_| "not UTF-8".to_owned())?;
                push_text(out, c.ty, s)
            }
        }
    }
}

/// The common forms of a number or bool read straight from the bytes: `true`/`false`/
/// `1`/`0`, `[+-]digits` in range, and [`simple_f64`]'s decimals. False (nothing
/// appended) for anything else: `str::parse` then reads it, or says why not.
fn push_plain(out: &mut Vec<u8>, ty: ColumnType, cell: &[u8]) -> bool {
    macro_rules! int {
        ($t:ty, $signed:expr) => {{
            let Some(v) = plain_integer(cell).and_then(|v| <$t>::try_from(v).ok()) else {
                return false;
            };
            // `str::parse` refuses a `-` on unsigned types, `-0` included.
            if !$signed && cell[0] == b'-' {
                return false;
            }
            out.extend_from_slice(&v.to_le_bytes());
            true
        }};
    }
    match ty {
        ColumnType::Bool => {
            let v = match cell {
                b"1" => 1,
                b"0" => 0,
                _ if cell.eq_ignore_ascii_case(b"true") => 1,
                _ if cell.eq_ignore_ascii_case(b"false") => 0,
                _ => return false,
            };
            out.push(v);
            true
        }
        ColumnType::F64 => match simple_f64(cell) {
            Some(v) => {
                out.extend_from_slice(&v.to_le_bytes());
                true
            }
            None => false,
        },
        ColumnType::U8 => int!(u8, false),
        ColumnType::U16 => int!(u16, false),
        ColumnType::U32 => int!(u32, false),
        ColumnType::U64 => int!(u64, false),
        ColumnType::I8 => int!(i8, true),
        ColumnType::I16 => int!(i16, true),
        ColumnType::I32 => int!(i32, true),
        ColumnType::I64 => int!(i64, true),
        ColumnType::F32 | ColumnType::String => false,
    }
}

/// `[+-]digits`, at most 18 digits (so it fits an i64 whatever they are); None otherwise.
fn plain_integer(cell: &[u8]) -> Option<i64> {
    let (negative, digits) = match cell.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, cell),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(d - b'0');
    }
    Some(if negative { -v } else { v })
}

macro_rules! parse_into {
    ($out:expr, $s:expr, $t:ty) => {{
        let v: $t = $s
            .parse()
            .map_err(|_| format!("\"{}\" is not a {}", $s, stringify!($t)))?;
        $out.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }};
}

fn push_text(out: &mut Vec<u8>, ty: ColumnType, s: &str) -> Result<(), String> {
    match ty {
        ColumnType::Bool => {
            let v = match s {
                "1" => 1,
                "0" => 0,
                _ if s.eq_ignore_ascii_case("true") => 1,
                _ if s.eq_ignore_ascii_case("false") => 0,
                _ => return Err(format!("\"{s}\" is not a bool (true/false/1/0)")),
            };
            out.push(v);
            Ok(())
        }
        ColumnType::U8 => parse_into!(out, s, u8),
        ColumnType::U16 => parse_into!(out, s, u16),
        ColumnType::U32 => parse_into!(out, s, u32),
        ColumnType::U64 => parse_into!(out, s, u64),
        ColumnType::I8 => parse_into!(out, s, i8),
        ColumnType::I16 => parse_into!(out, s, i16),
        ColumnType::I32 => parse_into!(out, s, i32),
        ColumnType::I64 => parse_into!(out, s, i64),
        ColumnType::F32 => parse_into!(out, s, f32),
        ColumnType::F64 => parse_into!(out, s, f64),
        ColumnType::String => unreachable!("text columns are ColumnData::Text"),
    }
}

/// Exact powers of ten as f64 (10^22 is the last one an f64 holds exactly).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `[+-]digits[.digits]` with at most 15 digits (and one at least), no exponent: the
/// bulk of CSV numbers, read without `str::parse`'s general path. The digits make an
/// integer below 2^53 and 10^fraction digits is exact, so the one division is correctly
/// rounded: the same f64 `str::parse` gives. None for anything else (parse it then).
pub(crate) fn simple_f64(s: &[u8]) -> Option<f64> {
    let (negative, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    let (mut m, mut seen, mut frac): (u64, usize, Option<usize>) = (0, 0, None);
    for (i, &b) in digits.iter().enumerate() {
        match b {
            b'0'..=b'9' => {
                m = m * 10 + u64::from(b - b'0');
                seen += 1;
            }
            b'.' if frac.is_none() => frac = Some(digits.len() - i - 1),
            _ => return None,
        }
    }
    if seen == 0 || seen > 15 {
        return None;
    }
    let v = m as f64 / POW10[frac.unwrap_or(0)];
    Some(if negative { -v } else { v })
}

/// Most bytes held back to infer columns from, CSV's and NDJSON's alike (a header and
/// rows longer than this are typed from what fits).
pub(crate) const INFER_BYTES: usize = 4 << 20;

#[cfg(test)]
mod tests {
    use super::simple_f64;

    /// The short path reads exactly what `str::parse` reads, and leaves the rest to it.
    #[test]
    fn simple_f64_agrees_with_str_parse() {
        let cases = [
            "0",
            "-0",
            "+0",
            "1",
            "-1",
            "3.5",
            "-123.456",
            "0.1",
            "0.3",
            ".5",
            "5.",
            "-.5",
            "123456789012345",
            "1234567890.12345",
            "999999999999999",
            "0.000000000000001",
            "9007199254740993",
            "1e3",
            "1.2.3",
            "",
            "-",
            ".",
            "+",
            "12a",
            "1_0",
            " 1",
            "1234567890123456",
            "0.30000000000000004",
        ];
        for text in cases {
            let want: Option<f64> = text.parse().ok();
            if let Some(got) = simple_f64(text.as_bytes()) {
                let want = want.unwrap_or_else(|| panic!("{text:?}: parse refuses it"));
                assert_eq!(got.to_bits(), want.to_bits(), "{text:?}");
            }
        }
        // Seeded values of the shapes a CSV writer prints.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = (x % 15 + 1) as usize;
            let m = x >> 4;
            let text = format!("{}", m % 10u64.pow(digits as u32));
            let point = (x >> 60) as usize % (text.len() + 1);
            let text = format!(
                "{}{}.{}",
                if x & 1 == 1 { "-" } else { "" },
                &text[..point],
                &text[point..]
            );
            let want: f64 = text.parse().unwrap();
            assert_eq!(
                simple_f64(text.as_bytes()).map(f64::to_bits),
                Some(want.to_bits()),
                "{text:?}"
            );
        }
    }
}
