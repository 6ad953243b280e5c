//! The append-only builder the generated writers fill. Allocation order is part of
//! the format's canonical encoding (docs/schema-format.md): the Rust and TS writers
//! allocate in the same order, so they produce byte-identical buffers.

use super::error::WriteError;
use super::le::Le;
use super::{ARRAY_ALIGN, ARRAY_HEADER_SIZE, DYNAMIC_HEADER_SIZE, STRUCT_ALIGN, align_up};

/// The header word of a dynamic struct whose fields end at `used` bytes:
/// size in 8-byte units (low 29 bits) and the unused bytes of the last unit (high 3).
pub const fn dynamic_header(used: usize) -> u32 {
    let size = align_up(used, STRUCT_ALIGN);
    ((size / 8) as u32) | (((size - used) as u32) << 29)
}

/// A zero-filled output: a growing `Vec` ([`Builder::new`]) or a caller's slice written
/// in place ([`Builder::on_slice`], e.g. WASM linear memory). Offsets are `usize` here
/// and checked to fit 32 bits when allocated.
#[derive(Debug, Default)]
pub struct Builder<'a> {
    out: Out<'a>,
    len: usize,
}

#[derive(Debug)]
enum Out<'a> {
    Vec(Vec<u8>),
    Slice(&'a mut [u8]),
}

impl Default for Out<'_> {
    fn default() -> Self {
        Out::Vec(Vec::new())
    }
}

/// Where [`Builder::soa`] put each column, in the order the columns were given.
#[derive(Debug)]
pub struct SoaColumns {
    /// Offset of the array header (what the parent field stores).
    pub header: usize,
    /// Absolute offset of each column (of the offsets, for a variable-length one).
    pub columns: Vec<usize>,
    /// Absolute offset of each variable-length column's values area (0 for the others).
    pub values: Vec<usize>,
}

/// One column of [`Builder::soa_columns`].
#[derive(Clone, Copy, Debug)]
pub enum ColumnSpec {
    /// `item_bytes` per item.
    Fixed { hash: u32, item_bytes: usize },
    /// `count + 1` u32 offsets, then `values` elements of `elem_bytes` each.
    Var {
        hash: u32,
        elem_bytes: usize,
        values: usize,
    },
}

/// Where [`Builder::union_soa`] put its parts.
#[derive(Debug)]
pub struct UnionSoaColumns {
    pub header: usize,
    pub tags: usize,
    pub ptrs: usize,
}

impl Builder<'static> {
    /// An empty builder over a growing `Vec`.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty builder over a `Vec` with room for `bytes`.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            out: Out::Vec(Vec::with_capacity(bytes)),
            len: 0,
        }
    }
}

impl<'a> Builder<'a> {
    /// A builder that writes into `out` in place, from its start; allocations past its
    /// end fail with [`WriteError::BufferTooSmall`]. Bytes are zeroed as they are
    /// allocated, so stale contents never leak into padding.
    pub fn on_slice(out: &'a mut [u8]) -> Self {
        Self {
            out: Out::Slice(out),
            len: 0,
        }
    }

    fn bytes(&mut self) -> &mut [u8] {
        match &mut self.out {
            Out::Vec(v) => v,
            Out::Slice(s) => s,
        }
    }

    /// Reserves `size` zeroed bytes at the next multiple of `align`; returns the offset.
    pub fn alloc(&mut self, size: usize, align: usize) -> Result<usize, WriteError> {
        let at = align_up(self.len, align);
        let end = at as u64 + size as u64;
        if end > u64::from(u32::MAX) {
            return Err(WriteError::TooLarge { needed: end });
        }
        let end = end as usize;
        match &mut self.out {
            Out::Vec(v) => v.resize(end, 0),
            Out::Slice(s) => {
                let available = s.len() as u64;
                let fresh = s.get_mut(self.len..end).ok_or(WriteError::BufferTooSmall {
                    needed: end as u64,
                    available,
                })?;
                fresh.fill(0);
            }
        }
        self.len = end;
        Ok(at)
    }

    /// Writes `v` at absolute offset `at` (inside an earlier allocation).
    #[inline]
    pub fn put<T: Le>(&mut self, at: usize, v: T) {
        v.write_le(&mut self.bytes()[at..at + T::SIZE]);
    }

    /// Writes a bool as one byte.
    #[inline]
    pub fn put_bool(&mut self, at: usize, v: bool) {
        self.bytes()[at] = u8::from(v);
    }

    /// Writes a fixed array of scalars.
    pub fn put_array<T: Le>(&mut self, at: usize, v: &[T]) {
        for (i, x) in v.iter().enumerate() {
            self.put(at + i * T::SIZE, *x);
        }
    }

    /// Writes an offset (as `u32`) at `at`.
    #[inline]
    pub fn put_ptr(&mut self, at: usize, ptr: usize) {
        // alloc() guarantees every offset fits 32 bits.
        self.put(at, ptr as u32);
    }

    /// Reserves a dynamic struct whose fields end at `used` and writes its header.
    pub fn dynamic_struct(&mut self, used: usize) -> Result<usize, WriteError> {
        debug_assert!(used >= DYNAMIC_HEADER_SIZE);
        let at = self.alloc(align_up(used, STRUCT_ALIGN), STRUCT_ALIGN)?;
        self.put(at, dynamic_header(used));
        Ok(at)
    }

    /// Reserves an inline struct of `size` bytes (used out of line, e.g. a union value).
    pub fn inline_struct(&mut self, size: usize) -> Result<usize, WriteError> {
        self.alloc(size, STRUCT_ALIGN)
    }

    fn array_header(&mut self, count: usize, a: usize, b: usize) -> Result<usize, WriteError> {
        let count = u32::try_from(count).map_err(|_| WriteError::TooLarge {
            needed: count as u64,
        })?;
        let at = self.alloc(ARRAY_HEADER_SIZE, ARRAY_ALIGN)?;
        self.put(at, count);
        self.put(at + 4, count); // capacity: the canonical encoding leaves no spare room
        self.put(at + 8, a as u32);
        self.put(at + 12, b as u32);
        Ok(at)
    }

    fn fix_header_word(&mut self, header: usize, word: usize, v: usize) {
        self.put(header + word, v as u32);
    }

    /// Writes a slice of scalars; returns the header offset, or 0 when `items` is empty.
    pub fn scalars<T: Le>(&mut self, items: &[T]) -> Result<usize, WriteError> {
        if items.is_empty() {
            return Ok(0);
        }
        let header = self.array_header(items.len(), 0, T::SIZE)?;
        let data = self.alloc(align_up(items.len() * T::SIZE, ARRAY_ALIGN), ARRAY_ALIGN)?;
        self.fix_header_word(header, 8, data);
        for (i, x) in items.iter().enumerate() {
            self.put(data + i * T::SIZE, *x);
        }
        Ok(header)
    }

    /// Writes a slice of bools as bytes.
    pub fn bools(&mut self, items: &[bool]) -> Result<usize, WriteError> {
        let bytes: Vec<u8> = items.iter().map(|b| u8::from(*b)).collect();
        self.scalars(&bytes)
    }

    /// Reserves an AoS array of `count` items of `stride` bytes; returns (header, data).
    /// Returns (0, 0) when `count` is 0.
    pub fn aos(&mut self, count: usize, stride: usize) -> Result<(usize, usize), WriteError> {
        if count == 0 {
            return Ok((0, 0));
        }
        let header = self.array_header(count, 0, stride)?;
        let bytes = count
            .checked_mul(stride)
            .ok_or(WriteError::TooLarge { needed: u64::MAX })?;
        let data = self.alloc(align_up(bytes, ARRAY_ALIGN), ARRAY_ALIGN)?;
        self.fix_header_word(header, 8, data);
        Ok((header, data))
    }

    /// Reserves a SoA array of `count` items with one column per `(hash, item_bytes)`:
    /// header, lookup table (hashes, then column offsets in 64-byte blocks), columns.
    /// Returns `None` when `count` is 0 (the parent stores offset 0).
    pub fn soa(
        &mut self,
        count: usize,
        columns: &[(u32, usize)],
    ) -> Result<Option<SoaColumns>, WriteError> {
        let specs: Vec<ColumnSpec> = columns
            .iter()
            .map(|&(hash, item_bytes)| ColumnSpec::Fixed { hash, item_bytes })
            .collect();
        self.soa_columns(count, &specs)
    }

    /// [`Self::soa`] with variable-length columns: each is its offsets column followed,
    /// at the next 64-byte boundary, by its values area (where readers look for it).
    pub fn soa_columns(
        &mut self,
        count: usize,
        columns: &[ColumnSpec],
    ) -> Result<Option<SoaColumns>, WriteError> {
        if count == 0 {
            return Ok(None);
        }
        let n = columns.len();
        let header = self.array_header(count, n, 0)?;
        let table_bytes = align_up(n * 4, ARRAY_ALIGN);
        let table = self.alloc(2 * table_bytes, ARRAY_ALIGN)?;
        self.fix_header_word(header, 12, table);
        let too_large = WriteError::TooLarge { needed: u64::MAX };
        let mut offsets = Vec::with_capacity(n);
        let mut values = Vec::with_capacity(n);
        for (i, spec) in columns.iter().enumerate() {
            let (hash, bytes, var) = match *spec {
                ColumnSpec::Fixed { hash, item_bytes } => {
                    (hash, count.checked_mul(item_bytes), None)
                }
                ColumnSpec::Var {
                    hash,
                    elem_bytes,
                    values,
                } => (
                    hash,
                    (count + 1).checked_mul(4),
                    Some(values.checked_mul(elem_bytes)),
                ),
            };
            let at = self.alloc(
                align_up(bytes.ok_or(too_large.clone())?, ARRAY_ALIGN),
                ARRAY_ALIGN,
            )?;
            let values_at = match var {
                Some(v) => self.alloc(
                    align_up(v.ok_or(too_large.clone())?, ARRAY_ALIGN),
                    ARRAY_ALIGN,
                )?,
                None => 0,
            };
            self.put(table + i * 4, hash);
            self.put(table + table_bytes + i * 4, (at / ARRAY_ALIGN) as u32);
            offsets.push(at);
            values.push(values_at);
        }
        Ok(Some(SoaColumns {
            header,
            columns: offsets,
            values,
        }))
    }

    /// Fills a variable-length column reserved by [`Self::soa_columns`]: item `i`'s
    /// elements go to the values area, and the running total to offset `i + 1`.
    /// The elements must number what was reserved.
    pub fn put_var<T: Le, I: IntoIterator<Item = T>>(
        &mut self,
        offsets: usize,
        values: usize,
        items: impl IntoIterator<Item = I>,
    ) {
        let mut n = 0usize;
        for (i, item) in items.into_iter().enumerate() {
            for x in item {
                self.put(values + n * T::SIZE, x);
                n += 1;
            }
            self.put(offsets + (i + 1) * 4, n as u32);
        }
    }

    /// [`Self::put_var`] for byte items (UTF-8 strings, `[]u8`), copied whole.
    pub fn put_var_bytes<'b>(
        &mut self,
        offsets: usize,
        values: usize,
        items: impl IntoIterator<Item = &'b [u8]>,
    ) {
        let mut n = 0usize;
        for (i, item) in items.into_iter().enumerate() {
            self.bytes()[values + n..values + n + item.len()].copy_from_slice(item);
            n += item.len();
            self.put(offsets + (i + 1) * 4, n as u32);
        }
    }

    /// Reserves a SoA union slice: header, tag column, offset column.
    /// Returns `None` when `count` is 0.
    pub fn union_soa(
        &mut self,
        count: usize,
        tag_size: usize,
    ) -> Result<Option<UnionSoaColumns>, WriteError> {
        if count == 0 {
            return Ok(None);
        }
        let header = self.array_header(count, 0, 0)?;
        let tags = self.alloc(align_up(count * tag_size, ARRAY_ALIGN), ARRAY_ALIGN)?;
        let ptrs = self.alloc(align_up(count * 4, ARRAY_ALIGN), ARRAY_ALIGN)?;
        self.fix_header_word(header, 8, tags);
        self.fix_header_word(header, 12, ptrs);
        Ok(Some(UnionSoaColumns { header, tags, ptrs }))
    }

    /// Reserves a BoVoA/BoVoS union slice of `count` items in all: header and a table
    /// of `variants` (tag, array offset) entries; returns (header, table).
    /// The caller fills the entries in declaration order. `(0, 0)` when `count` is 0.
    pub fn variant_table(
        &mut self,
        count: usize,
        variants: usize,
    ) -> Result<(usize, usize), WriteError> {
        if count == 0 {
            return Ok((0, 0));
        }
        let header = self.array_header(count, variants, 0)?;
        let table = self.alloc(variants * 8, ARRAY_ALIGN)?;
        self.fix_header_word(header, 12, table);
        Ok((header, table))
    }

    /// Bytes written so far (the message length).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The encoded message (copied out when the builder writes into a slice).
    pub fn finish(self) -> Vec<u8> {
        match self.out {
            Out::Vec(v) => v,
            Out::Slice(s) => s[..self.len].to_vec(),
        }
    }
}
