//! Bounds-checked views over an encoded message. Every constructor validates the
//! bytes it will later hand out, so item accessors are infallible and cheap.

use super::column::Column;
use super::error::ReadError;
use super::le::Le;
use super::{ARRAY_ALIGN, ARRAY_HEADER_SIZE, DYNAMIC_HEADER_SIZE, STRUCT_ALIGN};

/// Limits that keep a hostile buffer from exhausting the reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Deepest chain of offsets followed from the root.
    pub max_depth: u32,
    /// Most columns a SoA lookup table may list (the paper's bound on the linear search).
    pub max_soa_columns: u32,
    /// Most items an owned decode may visit; `None` means 8 per buffer byte + 1024, which
    /// stops a DAG of shared offsets from decoding exponentially many times.
    pub max_traversal: Option<u64>,
}

impl ReadOptions {
    /// 64 levels, 256 columns, the default traversal budget.
    pub const DEFAULT: Self = Self {
        max_depth: 64,
        max_soa_columns: 256,
        max_traversal: None,
    };

    /// The traversal budget for a buffer of `buf_len` bytes.
    pub fn budget(&self, buf_len: usize) -> Budget {
        let limit = self
            .max_traversal
            .unwrap_or((buf_len as u64).saturating_mul(8) + 1024);
        Budget { left: limit, limit }
    }
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Items an owned decode may still visit.
#[derive(Debug)]
pub struct Budget {
    left: u64,
    limit: u64,
}

impl Budget {
    /// Spends `n` items, failing once the budget is gone.
    pub fn spend(&mut self, n: u64) -> Result<(), ReadError> {
        match self.left.checked_sub(n) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(ReadError::TraversalLimit { limit: self.limit }),
        }
    }
}

/// The bytes of one struct: `used` bytes from `start`, all inside the buffer.
/// Fields past `used` (written by an older schema) read as zero.
#[derive(Clone, Copy, Debug)]
pub struct StructView<'a> {
    pub(super) buf: &'a [u8],
    pub(super) start: usize,
    pub(super) used: usize,
    pub(super) depth: u32,
    pub(super) opts: ReadOptions,
}

pub(super) fn oob(offset: usize, len: usize, buf: &[u8]) -> ReadError {
    ReadError::OutOfBounds {
        offset: offset as u64,
        len: len as u64,
        buf_len: buf.len() as u64,
    }
}

pub(super) fn range(buf: &[u8], offset: usize, len: usize) -> Result<&[u8], ReadError> {
    offset
        .checked_add(len)
        .and_then(|end| buf.get(offset..end))
        .ok_or_else(|| oob(offset, len, buf))
}

fn u32_at(buf: &[u8], offset: usize) -> Result<u32, ReadError> {
    range(buf, offset, 4).map(u32::read_le)
}

/// `a * b`, or an out-of-bounds error when it does not fit (wasm32's usize is 32-bit).
pub(super) fn mul(a: usize, b: usize, buf: &[u8]) -> Result<usize, ReadError> {
    a.checked_mul(b)
        .ok_or_else(|| oob(usize::MAX, usize::MAX, buf))
}

pub(super) fn aligned(offset: usize, align: usize) -> Result<(), ReadError> {
    if offset.is_multiple_of(align) {
        Ok(())
    } else {
        Err(ReadError::Misaligned {
            offset: offset as u64,
            align: align as u32,
        })
    }
}

/// A validated array header: `count` items and the two kind-specific words.
pub(super) struct ArrayHeader {
    pub(super) count: usize,
    pub(super) a: u32,
    pub(super) b: u32,
}

pub(super) fn array_header(buf: &[u8], at: usize) -> Result<ArrayHeader, ReadError> {
    aligned(at, ARRAY_ALIGN)?;
    let h = range(buf, at, ARRAY_HEADER_SIZE)?;
    let count = u32::read_le(&h[0..4]);
    let capacity = u32::read_le(&h[4..8]);
    if count > capacity {
        return Err(ReadError::CountExceedsCapacity { count, capacity });
    }
    // Every item takes at least one byte somewhere in the buffer.
    if count as usize > buf.len() {
        return Err(ReadError::CountTooLarge {
            count,
            buf_len: buf.len() as u64,
        });
    }
    Ok(ArrayHeader {
        count: count as usize,
        a: u32::read_le(&h[8..12]),
        b: u32::read_le(&h[12..16]),
    })
}

impl<'a> StructView<'a> {
    /// The dynamic struct at offset 0 of `buf`.
    pub fn root_dynamic(buf: &'a [u8], opts: ReadOptions) -> Result<Self, ReadError> {
        Self::dynamic_at(buf, 0, 0, opts)
    }

    /// The inline struct of `size` bytes at offset 0 of `buf`.
    pub fn root_inline(buf: &'a [u8], size: usize, opts: ReadOptions) -> Result<Self, ReadError> {
        range(buf, 0, size)?;
        Ok(Self {
            buf,
            start: 0,
            used: size,
            depth: 0,
            opts,
        })
    }

    fn dynamic_at(
        buf: &'a [u8],
        at: usize,
        depth: u32,
        opts: ReadOptions,
    ) -> Result<Self, ReadError> {
        aligned(at, STRUCT_ALIGN)?;
        let header = u32_at(buf, at)?;
        let units = (header & 0x1fff_ffff) as usize;
        let wasted = (header >> 29) as usize;
        let size = units * 8;
        if size < 8 || size - wasted < DYNAMIC_HEADER_SIZE {
            return Err(ReadError::BadStructHeader {
                offset: at as u64,
                header,
            });
        }
        range(buf, at, size)?;
        Ok(Self {
            buf,
            start: at,
            used: size - wasted,
            depth,
            opts,
        })
    }

    pub(super) fn child_depth(&self) -> Result<u32, ReadError> {
        if self.depth >= self.opts.max_depth {
            return Err(ReadError::DepthLimit {
                limit: self.opts.max_depth,
            });
        }
        Ok(self.depth + 1)
    }

    /// The limits this view was opened with.
    pub fn options(&self) -> ReadOptions {
        self.opts
    }

    /// Bytes of this struct the writer filled (header included for dynamic structs).
    pub fn used(&self) -> usize {
        self.used
    }

    /// The scalar at `off`; zero when the writer's struct ended before it.
    #[inline]
    pub fn read<T: Le>(&self, off: usize) -> T {
        if off + T::SIZE <= self.used {
            T::read_le(&self.buf[self.start + off..])
        } else {
            T::default()
        }
    }

    /// The bool at `off` (stored as one byte, non-zero is true).
    #[inline]
    pub fn read_bool(&self, off: usize) -> bool {
        self.read::<u8>(off) != 0
    }

    /// The fixed array of `N` scalars at `off`.
    pub fn read_array<T: Le, const N: usize>(&self, off: usize) -> [T; N] {
        core::array::from_fn(|i| self.read::<T>(off + i * T::SIZE))
    }

    /// The inline struct of `size` bytes embedded at `off`.
    pub fn inline(&self, off: usize, size: usize) -> StructView<'a> {
        let used = self.used.saturating_sub(off).min(size);
        let start = if used == 0 {
            self.start
        } else {
            self.start + off
        };
        StructView {
            used,
            start,
            ..*self
        }
    }

    pub(super) fn ptr(&self, off: usize) -> usize {
        self.read::<u32>(off) as usize
    }

    /// The dynamic struct the offset at `off` points to; `None` when the offset is 0.
    pub fn dynamic(&self, off: usize) -> Result<Option<StructView<'a>>, ReadError> {
        self.deref_dynamic(self.ptr(off))
    }

    /// The dynamic struct at absolute offset `ptr`; `None` when `ptr` is 0.
    pub fn deref_dynamic(&self, ptr: usize) -> Result<Option<StructView<'a>>, ReadError> {
        if ptr == 0 {
            return Ok(None);
        }
        Self::dynamic_at(self.buf, ptr, self.child_depth()?, self.opts).map(Some)
    }

    /// The inline struct of `size` bytes at absolute offset `ptr`; `None` when `ptr` is 0.
    pub fn deref_inline(
        &self,
        ptr: usize,
        size: usize,
    ) -> Result<Option<StructView<'a>>, ReadError> {
        if ptr == 0 {
            return Ok(None);
        }
        let depth = self.child_depth()?;
        aligned(ptr, STRUCT_ALIGN)?;
        range(self.buf, ptr, size)?;
        Ok(Some(StructView {
            buf: self.buf,
            start: ptr,
            used: size,
            depth,
            opts: self.opts,
        }))
    }

    /// The union at `off`: its tag (0 = empty) and the absolute offset of its value.
    pub fn union_tag_ptr<Tag: Le + Into<u32>>(&self, off: usize) -> (u32, usize) {
        (self.read::<Tag>(off).into(), self.ptr(off + 4))
    }

    /// The slice of scalars the offset at `off` points to (empty when 0).
    pub fn scalars<T: Le>(&self, off: usize) -> Result<Column<'a, T>, ReadError> {
        let ptr = self.ptr(off);
        if ptr == 0 {
            return Ok(Column::Zero(0));
        }
        self.child_depth()?;
        let h = array_header(self.buf, ptr)?;
        if h.b as usize != T::SIZE {
            return Err(ReadError::BadElementSize {
                expected: T::SIZE as u32,
                found: h.b,
            });
        }
        let data = h.a as usize;
        aligned(data, ARRAY_ALIGN)?;
        Ok(Column::from_bytes(range(
            self.buf,
            data,
            mul(h.count, T::SIZE, self.buf)?,
        )?))
    }

    /// The `#string` slice of `u8` at `off` as UTF-8.
    pub fn utf8(&self, off: usize) -> Result<&'a str, ReadError> {
        let bytes = match self.scalars::<u8>(off)? {
            Column::Slice(s) | Column::Bytes(s) => s,
            Column::Zero(_) => return Ok(""),
        };
        core::str::from_utf8(bytes).map_err(|_| ReadError::InvalidString {
            offset: self.ptr(off) as u64,
        })
    }

    /// The `#string` slice of `u16` at `off` as UTF-16 (decoded into a `String`).
    pub fn utf16(&self, off: usize) -> Result<String, ReadError> {
        let units = self.scalars::<u16>(off)?;
        char::decode_utf16(units.iter())
            .collect::<Result<String, _>>()
            .map_err(|_| ReadError::InvalidString {
                offset: self.ptr(off) as u64,
            })
    }

    /// The SoA union slice at `off`: its tag column and its offset column.
    pub fn union_soa<Tag: Le>(
        &self,
        off: usize,
    ) -> Result<(Column<'a, Tag>, Column<'a, u32>), ReadError> {
        let ptr = self.ptr(off);
        if ptr == 0 {
            return Ok((Column::Zero(0), Column::Zero(0)));
        }
        self.child_depth()?;
        let h = array_header(self.buf, ptr)?;
        let (tags, ptrs) = (h.a as usize, h.b as usize);
        aligned(tags, ARRAY_ALIGN)?;
        aligned(ptrs, ARRAY_ALIGN)?;
        let tags = range(self.buf, tags, mul(h.count, Tag::SIZE, self.buf)?)?;
        let ptrs = range(self.buf, ptrs, mul(h.count, 4, self.buf)?)?;
        Ok((Column::from_bytes(tags), Column::from_bytes(ptrs)))
    }
}
