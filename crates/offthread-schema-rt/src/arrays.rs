//! The array views a [`StructView`] hands out: AoS, SoA (with its lookup table) and
//! the variant table of BoVoA/BoVoS union slices. Their constructors in `read.rs`
//! validate every byte they cover, so item access here is infallible or cheap.

use super::ARRAY_ALIGN;
use super::column::Column;
use super::error::ReadError;
use super::le::Le;
use super::read::{ReadOptions, StructView, mul, oob, range};

/// An array of structs stored one after another, `stride` bytes apart.
#[derive(Clone, Copy, Debug)]
pub struct AosView<'a> {
    pub(super) buf: &'a [u8],
    pub(super) data: usize,
    pub(super) count: usize,
    pub(super) stride: usize,
    pub(super) depth: u32,
    pub(super) opts: ReadOptions,
}

impl<'a> AosView<'a> {
    /// Number of items.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when there are no items.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Item `i` as a struct view of `stride` bytes.
    pub fn get(&self, i: usize) -> Option<StructView<'a>> {
        (i < self.count).then(|| StructView {
            buf: self.buf,
            start: self.data + i * self.stride,
            used: self.stride,
            depth: self.depth,
            opts: self.opts,
        })
    }
}

/// A struct-of-arrays: `count` items, one column per flattened field, found through
/// the lookup table of field-path hashes.
#[derive(Clone, Copy, Debug)]
pub struct SoaView<'a> {
    pub(super) buf: &'a [u8],
    pub(super) count: usize,
    pub(super) hashes: &'a [u8],
    pub(super) blocks: &'a [u8],
}

impl<'a> SoaView<'a> {
    /// Number of items.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when there are no items.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The column with path hash `hash`, holding `per_item` values of `T` per item
    /// (more than one for fixed arrays). Zeros when the writer had no such column.
    pub fn column<T: Le>(&self, hash: u32, per_item: usize) -> Result<Column<'a, T>, ReadError> {
        let len = mul(self.count, per_item, self.buf)?;
        let Some(start) = self.column_start(hash)? else {
            return Ok(Column::Zero(len));
        };
        Ok(Column::from_bytes(range(
            self.buf,
            start,
            mul(len, T::SIZE, self.buf)?,
        )?))
    }

    /// Where the column with path hash `hash` starts; `None` when the table lacks it.
    pub(super) fn column_start(&self, hash: u32) -> Result<Option<usize>, ReadError> {
        let Some(i) = self
            .hashes
            .chunks_exact(4)
            .position(|h| u32::read_le(h) == hash)
        else {
            return Ok(None);
        };
        let block = u32::read_le(&self.blocks[i * 4..]) as u64;
        let start = block * ARRAY_ALIGN as u64;
        usize::try_from(start)
            .map(Some)
            .map_err(|_| oob(usize::MAX, 0, self.buf))
    }
}

/// A union slice stored as one array per variant (BoVoA / BoVoS): `count` items in all.
#[derive(Clone, Copy, Debug)]
pub struct VariantTable<'a> {
    pub(super) view: StructView<'a>,
    pub(super) count: usize,
    pub(super) entries: &'a [u8],
}

impl<'a> VariantTable<'a> {
    /// Items over all variants.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Offset of the array for `tag`; 0 when the variant has no items.
    fn array(&self, tag: u32) -> usize {
        self.entries
            .chunks_exact(8)
            .find(|e| u32::read_le(&e[..4]) == tag)
            .map_or(0, |e| u32::read_le(&e[4..]) as usize)
    }

    /// The AoS array of variant `tag` (BoVoA).
    pub fn aos(
        &self,
        tag: u32,
        item_size: usize,
        evolving: bool,
    ) -> Result<AosView<'a>, ReadError> {
        self.view.aos_at(self.array(tag), item_size, evolving)
    }

    /// The SoA array of variant `tag` (BoVoS).
    pub fn soa(&self, tag: u32) -> Result<SoaView<'a>, ReadError> {
        self.view.soa_at(self.array(tag))
    }
}
