//! Where a reader's bytes are: a [`Source`]. A slice is the usual one; a guest's call
//! input read in place (`offthread_guest::Input`, in a memory Rust cannot address) is
//! another. The views (`StructView`, `AosView`) do every check — R0001 to R0011 —
//! through this trait, so a message gets the same answer from every source; only what
//! a source hands out for a column or a string differs (a zero-copy slice here).

use super::column::Column;
use super::le::Le;

/// The bytes of one message, read by offset. The views check every offset against
/// [`Source::len`] before they read it; a source only loads.
pub trait Source<'a>: Copy + core::fmt::Debug + 'a {
    /// What [`StructView::scalars`](crate::StructView::scalars) hands out: a column of `T`.
    type Column<T: Le>;
    /// What [`StructView::utf8`](crate::StructView::utf8) hands out: valid UTF-8 text.
    type Text;

    /// Bytes in the message.
    fn len(&self) -> usize;

    /// True when the message has no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `T` at `at` (little-endian). The caller checked `at + T::SIZE <= len()`.
    fn load<T: Le>(&self, at: usize) -> T;

    /// The `count` items of `T` at `at`. The caller checked that they lie inside and
    /// that `at` is 64-byte aligned.
    fn column<T: Le>(&self, at: usize, count: usize) -> Self::Column<T>;

    /// An empty column (a null offset).
    fn empty_column<T: Le>() -> Self::Column<T>;

    /// The `len` bytes at `at` (checked inside) as text; `None` when they are not UTF-8.
    fn text(&self, at: usize, len: usize) -> Option<Self::Text>;

    /// Empty text (a null offset).
    fn empty_text() -> Self::Text;
}

/// A message in memory this code can address: columns and strings are zero-copy views.
impl<'a> Source<'a> for &'a [u8] {
    type Column<T: Le> = Column<'a, T>;
    type Text = &'a str;

    #[inline]
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }

    #[inline]
    fn load<T: Le>(&self, at: usize) -> T {
        T::read_le(&self[at..])
    }

    fn column<T: Le>(&self, at: usize, count: usize) -> Column<'a, T> {
        Column::from_bytes(&self[at..at + count * T::SIZE])
    }

    fn empty_column<T: Le>() -> Column<'a, T> {
        Column::Zero(0)
    }

    fn text(&self, at: usize, len: usize) -> Option<&'a str> {
        core::str::from_utf8(&self[at..at + len]).ok()
    }

    fn empty_text() -> &'a str {
        ""
    }
}
