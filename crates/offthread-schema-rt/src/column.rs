use super::le::Le;

/// A read-only column of `T`: the zero-copy slice when the bytes are aligned for `T`
/// (always, when the buffer itself is 64-byte aligned — see the format's 64-byte
/// rule), a checked element-by-element view otherwise, or zeros when the column is
/// absent (data written by an older schema).
#[derive(Clone, Copy, Debug)]
pub enum Column<'a, T: Le> {
    /// Aligned, little-endian host: the column as a plain slice.
    Slice(&'a [T]),
    /// Unaligned (or big-endian host): `len * T::SIZE` bytes decoded on access.
    Bytes(&'a [u8]),
    /// The writer's schema had no such column: `len` zeros.
    Zero(usize),
}

impl<'a, T: Le> Column<'a, T> {
    /// Views `bytes` (exactly `len * T::SIZE` long; the caller checked) as a column.
    pub(crate) fn from_bytes(bytes: &'a [u8]) -> Self {
        // Casting is only a reinterpretation on little-endian hosts (all WASM hosts are).
        if cfg!(target_endian = "little")
            && let Ok(slice) = bytemuck::try_cast_slice::<u8, T>(bytes)
        {
            return Self::Slice(slice);
        }
        Self::Bytes(bytes)
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        match self {
            Self::Slice(s) => s.len(),
            Self::Bytes(b) => b.len() / T::SIZE,
            Self::Zero(n) => *n,
        }
    }

    /// True when the column has no items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Item `i`, or `None` past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<T> {
        match self {
            Self::Slice(s) => s.get(i).copied(),
            Self::Bytes(b) => {
                let start = i.checked_mul(T::SIZE)?;
                b.get(start..start.checked_add(T::SIZE)?).map(T::read_le)
            }
            Self::Zero(n) => (i < *n).then(T::default),
        }
    }

    /// Items `start..end` as a column of their own, or `None` when out of range.
    pub fn sub(&self, start: usize, end: usize) -> Option<Self> {
        if start > end || end > self.len() {
            return None;
        }
        Some(match self {
            Self::Slice(s) => Self::Slice(&s[start..end]),
            Self::Bytes(b) => Self::Bytes(&b[start * T::SIZE..end * T::SIZE]),
            Self::Zero(_) => Self::Zero(end - start),
        })
    }

    /// The zero-copy slice, when the column is aligned and present.
    pub fn as_slice(&self) -> Option<&'a [T]> {
        match self {
            Self::Slice(s) => Some(s),
            _ => None,
        }
    }

    /// Iterates the items.
    pub fn iter(&self) -> ColumnIter<'a, T> {
        ColumnIter {
            column: *self,
            next: 0,
        }
    }

    /// Copies the items out.
    pub fn to_vec(&self) -> Vec<T> {
        match self {
            Self::Slice(s) => s.to_vec(),
            _ => self.iter().collect(),
        }
    }
}

/// Iterator over a [`Column`].
#[derive(Clone, Debug)]
pub struct ColumnIter<'a, T: Le> {
    column: Column<'a, T>,
    next: usize,
}

impl<T: Le> Iterator for ColumnIter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        let item = self.column.get(self.next)?;
        self.next += 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.column.len().saturating_sub(self.next);
        (left, Some(left))
    }
}

impl<T: Le> ExactSizeIterator for ColumnIter<'_, T> {}

impl<'a, T: Le> IntoIterator for Column<'a, T> {
    type Item = T;
    type IntoIter = ColumnIter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}
