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
        data.push(self, text.as_bytes())?;
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

    /// Appends one CSV field's text, checked against the column's type.
    pub(crate) fn push(&mut self, c: &RecordColumn, cell: &[u8]) -> Result<(), String> {
        match self {
            ColumnData::Text { bytes, .. } => {
                std::str::from_utf8(cell).map_err(|e| format!("not UTF-8 ({e})"))?;
                bytes.extend_from_slice(cell);
                self.end_text_row()
            }
            ColumnData::Fixed(out) => {
                let cell = trim_number(cell);
                let s = std::str::from_utf8(cell).map_err(|_| "not UTF-8".to_owned())?;
                push_text(out, c.ty, s)
            }
        }
    }
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
