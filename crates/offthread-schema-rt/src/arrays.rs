//! The array views a [`StructView`] hands out: AoS, SoA (with its lookup table) and
//! the variant table of BoVoA/BoVoS union slices. Their constructors in `read.rs`
//! validate every byte they cover, so item access here is infallible or cheap.

use super::ARRAY_ALIGN;
use super::column::Column;
use super::error::ReadError;
use super::le::Le;
use super::read::{
    ArrayHeader, ReadOptions, StructView, aligned, array_header, inside, mul, oob, range,
};
use super::source::Source;
use super::{STRUCT_ALIGN, align_up};
use core::marker::PhantomData;

/// An array of structs stored one after another, `stride` bytes apart, in a message
/// at `S` ([`Source`]).
#[derive(Clone, Copy, Debug)]
pub struct AosView<'a, S = &'a [u8]> {
    pub(super) buf: S,
    pub(super) data: usize,
    pub(super) count: usize,
    pub(super) stride: usize,
    pub(super) depth: u32,
    pub(super) opts: ReadOptions,
    pub(super) life: PhantomData<&'a [u8]>,
}

impl<'a, S: Source<'a>> AosView<'a, S> {
    /// Number of items.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when there are no items.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Item `i` as a struct view of `stride` bytes.
    pub fn get(&self, i: usize) -> Option<StructView<'a, S>> {
        (i < self.count).then(|| StructView {
            buf: self.buf,
            start: self.data + i * self.stride,
            used: self.stride,
            depth: self.depth,
            opts: self.opts,
            life: PhantomData,
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
        let len = mul(self.count, per_item, self.buf.len())?;
        let Some(start) = self.column_start(hash)? else {
            return Ok(Column::Zero(len));
        };
        Ok(Column::from_bytes(range(
            self.buf,
            start,
            mul(len, T::SIZE, self.buf.len())?,
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
            .map_err(|_| oob(usize::MAX, 0, self.buf.len()))
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

/// Where a struct's array fields lead: the views above. Here, not in read.rs, so the
/// struct reader does not depend on the array views (no import circle). Arrays of
/// structs are read from any [`Source`]; SoA arrays and union tables from a slice.
impl<'a, S: Source<'a>> StructView<'a, S> {
    /// The AoS array at `off`. Inline items must have exactly `item_size` bytes;
    /// dynamic items (`evolving`) may be longer or shorter (fields past the stride read as zero).
    pub fn aos(
        &self,
        off: usize,
        item_size: usize,
        evolving: bool,
    ) -> Result<AosView<'a, S>, ReadError> {
        self.aos_at(self.ptr(off), item_size, evolving)
    }

    /// [`Self::aos`] for the array header at absolute offset `ptr` (0: empty).
    pub fn aos_at(
        &self,
        ptr: usize,
        item_size: usize,
        evolving: bool,
    ) -> Result<AosView<'a, S>, ReadError> {
        let depth = self.child_depth()?;
        let empty = AosView {
            buf: self.buf,
            data: 0,
            count: 0,
            stride: item_size,
            depth,
            opts: self.opts,
            life: PhantomData,
        };
        if ptr == 0 {
            return Ok(empty);
        }
        let h = array_header(&self.buf, ptr)?;
        let stride = h.b as usize;
        let stride_ok = if evolving {
            stride >= 8 && stride.is_multiple_of(STRUCT_ALIGN)
        } else {
            stride == item_size
        };
        if !stride_ok {
            return Err(ReadError::BadElementSize {
                expected: item_size as u32,
                found: h.b,
            });
        }
        let data = h.a as usize;
        aligned(data, ARRAY_ALIGN)?;
        inside(&self.buf, data, mul(h.count, stride, self.buf.len())?)?;
        Ok(AosView {
            data,
            count: h.count,
            stride,
            ..empty
        })
    }
}

impl<'a> StructView<'a> {
    /// The SoA array at `off`, with its lookup table validated.
    pub fn soa(&self, off: usize) -> Result<SoaView<'a>, ReadError> {
        self.soa_at(self.ptr(off))
    }

    /// [`Self::soa`] for the array header at absolute offset `ptr` (0: empty).
    pub fn soa_at(&self, ptr: usize) -> Result<SoaView<'a>, ReadError> {
        let empty = SoaView {
            buf: self.buf,
            count: 0,
            hashes: &[],
            blocks: &[],
        };
        if ptr == 0 {
            return Ok(empty);
        }
        let h = self.table_header(ptr)?;
        let columns = h.a as usize;
        let table = h.b as usize;
        aligned(table, ARRAY_ALIGN)?;
        let hashes = range(self.buf, table, columns * 4)?;
        let blocks = range(
            self.buf,
            table + align_up(columns * 4, ARRAY_ALIGN),
            columns * 4,
        )?;
        // Every column a writer wrote holds >= 1 byte per item (structs are never empty), so
        // a count no column can hold is forged: an empty table would otherwise make `count`
        // zero-filled items out of nothing, decode work and allocation unbounded by the input.
        if h.count > 0 && columns == 0 {
            return Err(ReadError::CountTooLarge {
                count: h.count as u32,
                buf_len: self.buf.len() as u64,
            });
        }
        for b in blocks.chunks_exact(4) {
            let start = u32::read_le(b) as u64 * ARRAY_ALIGN as u64;
            let start = usize::try_from(start).map_err(|_| oob(usize::MAX, 0, self.buf.len()))?;
            range(self.buf, start, h.count)?;
        }
        Ok(SoaView {
            count: h.count,
            hashes,
            blocks,
            ..empty
        })
    }

    /// The header of a child array whose `a` field counts table entries (SoA columns,
    /// union variants): one level deeper, and at most `max_soa_columns` entries.
    fn table_header(&self, ptr: usize) -> Result<ArrayHeader, ReadError> {
        self.child_depth()?;
        let h = array_header(&self.buf, ptr)?;
        if h.a > self.opts.max_soa_columns {
            return Err(ReadError::TooManyColumns {
                columns: h.a,
                limit: self.opts.max_soa_columns,
            });
        }
        Ok(h)
    }

    /// The BoVoA/BoVoS union slice at `off`: its table of (tag, array offset) per variant.
    pub fn variant_table(&self, off: usize) -> Result<VariantTable<'a>, ReadError> {
        let ptr = self.ptr(off);
        if ptr == 0 {
            return Ok(VariantTable {
                view: *self,
                count: 0,
                entries: &[],
            });
        }
        let h = self.table_header(ptr)?;
        let table = h.b as usize;
        aligned(table, ARRAY_ALIGN)?;
        let entries = range(self.buf, table, h.a as usize * 8)?;
        Ok(VariantTable {
            view: *self,
            count: h.count,
            entries,
        })
    }
}
