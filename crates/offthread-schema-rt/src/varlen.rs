//! Variable-length SoA columns (strings and `[]T` fields of a SoA item), the Arrow
//! way: an offsets column of `count + 1` u32 (in elements) and, at the next 64-byte
//! boundary after it, the values area. Opening a column validates every offset, so
//! item access is infallible.

use super::arrays::SoaView;
use super::column::Column;
use super::error::ReadError;
use super::le::Le;
use super::read::{mul, range};
use super::{ARRAY_ALIGN, align_up};

/// A variable-length column of `T`: item `i` is `values[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Copy, Debug)]
pub struct VarColumn<'a, T: Le> {
    offsets: Column<'a, u32>,
    values: Column<'a, T>,
}

impl<'a, T: Le> VarColumn<'a, T> {
    /// Number of items.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// True when the column has no items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `count + 1` offsets (zeros when the writer's schema had no such column).
    pub fn offsets(&self) -> Column<'a, u32> {
        self.offsets
    }

    /// Every item's values, back to back.
    pub fn values(&self) -> Column<'a, T> {
        self.values
    }

    /// Item `i`'s values (zero-copy), or `None` past the end.
    pub fn get(&self, i: usize) -> Option<Column<'a, T>> {
        let start = self.offsets.get(i)? as usize;
        let end = self.offsets.get(i.checked_add(1)?)? as usize;
        self.values.sub(start, end)
    }

    /// Iterates the items.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Column<'a, T>> + 'a {
        let c = *self;
        (0..c.len()).map(move |i| c.get(i).unwrap_or(Column::Zero(0)))
    }
}

/// A `#string` column of UTF-8 text, validated when opened.
#[derive(Clone, Copy, Debug)]
pub struct StrColumn<'a> {
    raw: VarColumn<'a, u8>,
}

impl<'a> StrColumn<'a> {
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// The offsets and the UTF-8 bytes, for columnar consumers.
    pub fn raw(&self) -> VarColumn<'a, u8> {
        self.raw
    }

    /// String `i`, or `None` past the end.
    pub fn get(&self, i: usize) -> Option<&'a str> {
        // Validated in `utf8_column`; the fallback is never taken.
        self.raw.get(i).map(|c| utf8(c).unwrap_or_default())
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'a str> + 'a {
        let c = *self;
        (0..c.len()).map(move |i| c.get(i).unwrap_or_default())
    }
}

/// A `#string` column of UTF-16 text, validated when opened.
#[derive(Clone, Copy, Debug)]
pub struct Utf16Column<'a> {
    raw: VarColumn<'a, u16>,
}

impl<'a> Utf16Column<'a> {
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// The offsets and the UTF-16 code units.
    pub fn raw(&self) -> VarColumn<'a, u16> {
        self.raw
    }

    /// String `i` (decoded), or `None` past the end.
    pub fn get(&self, i: usize) -> Option<String> {
        let units = self.raw.get(i)?;
        Some(
            char::decode_utf16(units.iter())
                .map(|c| c.unwrap_or('\u{fffd}'))
                .collect(),
        )
    }
}

/// The bytes of a `u8` column (a `u8` column is never `Zero` once it has items).
fn utf8(c: Column<'_, u8>) -> Option<&str> {
    match c {
        Column::Slice(b) | Column::Bytes(b) => core::str::from_utf8(b).ok(),
        Column::Zero(_) => Some(""),
    }
}

impl<'a> SoaView<'a> {
    /// The variable-length column with path hash `hash`. Checks: the offsets column and
    /// the values area lie in the buffer (R0001), offsets start at 0 and never decrease
    /// (R0011). Absent (older writer): `len()` empty items.
    pub fn var_column<T: Le>(&self, hash: u32) -> Result<VarColumn<'a, T>, ReadError> {
        let n = self.count + 1;
        let Some(start) = self.column_start(hash)? else {
            return Ok(VarColumn {
                offsets: Column::Zero(n),
                values: Column::Zero(0),
            });
        };
        let bytes = range(self.buf, start, mul(n, 4, self.buf.len())?)?;
        let mut prev = 0;
        for (i, o) in bytes.chunks_exact(4).map(u32::read_le).enumerate() {
            if (i == 0 && o != 0) || o < prev {
                return Err(ReadError::BadOffsets {
                    offset: start as u64,
                });
            }
            prev = o;
        }
        let values_at = align_up(start + bytes.len(), ARRAY_ALIGN);
        let values_len = mul(prev as usize, T::SIZE, self.buf.len())?;
        let values = range(self.buf, values_at, values_len)?;
        Ok(VarColumn {
            offsets: Column::from_bytes(bytes),
            values: Column::from_bytes(values),
        })
    }

    /// A `#string` column of UTF-8: [`Self::var_column`], then every item must be
    /// valid UTF-8 on its own (R0008).
    pub fn utf8_column(&self, hash: u32) -> Result<StrColumn<'a>, ReadError> {
        let raw = self.var_column::<u8>(hash)?;
        for i in 0..raw.len() {
            if raw.get(i).and_then(utf8).is_none() {
                return Err(invalid(raw, i));
            }
        }
        Ok(StrColumn { raw })
    }

    /// A `#string` column of UTF-16: every item must be valid UTF-16 (R0008).
    pub fn utf16_column(&self, hash: u32) -> Result<Utf16Column<'a>, ReadError> {
        let raw = self.var_column::<u16>(hash)?;
        for i in 0..raw.len() {
            let units = raw.get(i).unwrap_or(Column::Zero(0));
            if char::decode_utf16(units.iter()).any(|c| c.is_err()) {
                return Err(invalid(raw, i));
            }
        }
        Ok(Utf16Column { raw })
    }
}

/// R0008 for item `i`, pointing at its first value.
fn invalid<T: Le>(raw: VarColumn<'_, T>, i: usize) -> ReadError {
    ReadError::InvalidString {
        offset: u64::from(raw.offsets.get(i).unwrap_or(0)),
    }
}
