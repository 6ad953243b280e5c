//! Bounds-checked views over an encoded message. Every constructor validates the
//! bytes it will later hand out, so item accessors are infallible and cheap.

use super::column::Column;
use super::error::ReadError;
use super::le::Le;
use super::source::Source;
use super::{ARRAY_ALIGN, ARRAY_HEADER_SIZE, DYNAMIC_HEADER_SIZE, STRUCT_ALIGN};
use core::marker::PhantomData;

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

/// The bytes of one struct: `used` bytes from `start`, all inside the message.
/// Fields past `used` (written by an older schema) read as zero. `S` is where the
/// message is ([`Source`]): a slice by default.
#[derive(Clone, Copy, Debug)]
pub struct StructView<'a, S = &'a [u8]> {
    pub(super) buf: S,
    pub(super) start: usize,
    pub(super) used: usize,
    pub(super) depth: u32,
    pub(super) opts: ReadOptions,
    pub(super) life: PhantomData<&'a [u8]>,
}

pub(super) fn oob(offset: usize, len: usize, buf_len: usize) -> ReadError {
    ReadError::OutOfBounds {
        offset: offset as u64,
        len: len as u64,
        buf_len: buf_len as u64,
    }
}

/// Checks that `len` bytes at `offset` lie in `buf` (R0001).
pub(super) fn inside<'a, S: Source<'a>>(
    buf: &S,
    offset: usize,
    len: usize,
) -> Result<(), ReadError> {
    match offset.checked_add(len) {
        Some(end) if end <= buf.len() => Ok(()),
        _ => Err(oob(offset, len, buf.len())),
    }
}

/// The `len` bytes at `offset` of a slice (R0001 when they are not all in it).
pub(super) fn range(buf: &[u8], offset: usize, len: usize) -> Result<&[u8], ReadError> {
    inside(&buf, offset, len)?;
    Ok(&buf[offset..offset + len])
}

fn u32_at<'a, S: Source<'a>>(buf: &S, offset: usize) -> Result<u32, ReadError> {
    inside(buf, offset, 4)?;
    Ok(buf.load::<u32>(offset))
}

/// `a * b`, or an out-of-bounds error when it does not fit (wasm32's usize is 32-bit).
pub(super) fn mul(a: usize, b: usize, buf_len: usize) -> Result<usize, ReadError> {
    a.checked_mul(b)
        .ok_or_else(|| oob(usize::MAX, usize::MAX, buf_len))
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

pub(super) fn array_header<'a, S: Source<'a>>(
    buf: &S,
    at: usize,
) -> Result<ArrayHeader, ReadError> {
    aligned(at, ARRAY_ALIGN)?;
    inside(buf, at, ARRAY_HEADER_SIZE)?;
    let count = buf.load::<u32>(at);
    let capacity = buf.load::<u32>(at + 4);
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
        a: buf.load::<u32>(at + 8),
        b: buf.load::<u32>(at + 12),
    })
}

impl<'a> StructView<'a> {
    /// The dynamic struct at offset 0 of `buf`.
    pub fn root_dynamic(buf: &'a [u8], opts: ReadOptions) -> Result<Self, ReadError> {
        Self::open_dynamic(buf, opts)
    }

    /// The inline struct of `size` bytes at offset 0 of `buf`.
    pub fn root_inline(buf: &'a [u8], size: usize, opts: ReadOptions) -> Result<Self, ReadError> {
        Self::open_inline(buf, size, opts)
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
        let h = array_header(&self.buf, ptr)?;
        let (tags, ptrs) = (h.a as usize, h.b as usize);
        aligned(tags, ARRAY_ALIGN)?;
        aligned(ptrs, ARRAY_ALIGN)?;
        let n = self.buf.len();
        let tags = range(self.buf, tags, mul(h.count, Tag::SIZE, n)?)?;
        let ptrs = range(self.buf, ptrs, mul(h.count, 4, n)?)?;
        Ok((Column::from_bytes(tags), Column::from_bytes(ptrs)))
    }
}

impl<'a, S: Source<'a>> StructView<'a, S> {
    /// The dynamic struct at offset 0 of the message `buf`.
    pub fn open_dynamic(buf: S, opts: ReadOptions) -> Result<Self, ReadError> {
        Self::dynamic_at(buf, 0, 0, opts)
    }

    /// The inline struct of `size` bytes at offset 0 of the message `buf`.
    pub fn open_inline(buf: S, size: usize, opts: ReadOptions) -> Result<Self, ReadError> {
        inside(&buf, 0, size)?;
        Ok(Self {
            buf,
            start: 0,
            used: size,
            depth: 0,
            opts,
            life: PhantomData,
        })
    }

    /// Where the message is.
    pub fn source(&self) -> S {
        self.buf
    }

    fn dynamic_at(buf: S, at: usize, depth: u32, opts: ReadOptions) -> Result<Self, ReadError> {
        aligned(at, STRUCT_ALIGN)?;
        let header = u32_at(&buf, at)?;
        let units = (header & 0x1fff_ffff) as usize;
        let wasted = (header >> 29) as usize;
        let size = units * 8;
        if size < 8 || size - wasted < DYNAMIC_HEADER_SIZE {
            return Err(ReadError::BadStructHeader {
                offset: at as u64,
                header,
            });
        }
        inside(&buf, at, size)?;
        Ok(Self {
            buf,
            start: at,
            used: size - wasted,
            depth,
            opts,
            life: PhantomData,
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
            self.buf.load::<T>(self.start + off)
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
    pub fn inline(&self, off: usize, size: usize) -> Self {
        let used = self.used.saturating_sub(off).min(size);
        let start = if used == 0 {
            self.start
        } else {
            self.start + off
        };
        Self {
            used,
            start,
            ..*self
        }
    }

    pub(super) fn ptr(&self, off: usize) -> usize {
        self.read::<u32>(off) as usize
    }

    /// The dynamic struct the offset at `off` points to; `None` when the offset is 0.
    pub fn dynamic(&self, off: usize) -> Result<Option<Self>, ReadError> {
        self.deref_dynamic(self.ptr(off))
    }

    /// The dynamic struct at absolute offset `ptr`; `None` when `ptr` is 0.
    pub fn deref_dynamic(&self, ptr: usize) -> Result<Option<Self>, ReadError> {
        if ptr == 0 {
            return Ok(None);
        }
        Self::dynamic_at(self.buf, ptr, self.child_depth()?, self.opts).map(Some)
    }

    /// The inline struct of `size` bytes at absolute offset `ptr`; `None` when `ptr` is 0.
    pub fn deref_inline(&self, ptr: usize, size: usize) -> Result<Option<Self>, ReadError> {
        if ptr == 0 {
            return Ok(None);
        }
        let depth = self.child_depth()?;
        aligned(ptr, STRUCT_ALIGN)?;
        inside(&self.buf, ptr, size)?;
        Ok(Some(Self {
            start: ptr,
            used: size,
            depth,
            ..*self
        }))
    }

    /// The union at `off`: its tag (0 = empty) and the absolute offset of its value.
    pub fn union_tag_ptr<Tag: Le + Into<u32>>(&self, off: usize) -> (u32, usize) {
        (self.read::<Tag>(off).into(), self.ptr(off + 4))
    }

    /// The array of `T` the offset at `off` points to, checked: `None` when the offset
    /// is 0, else where its items start and how many there are.
    fn array_of<T: Le>(&self, off: usize) -> Result<Option<(usize, usize)>, ReadError> {
        let ptr = self.ptr(off);
        if ptr == 0 {
            return Ok(None);
        }
        self.child_depth()?;
        let h = array_header(&self.buf, ptr)?;
        if h.b as usize != T::SIZE {
            return Err(ReadError::BadElementSize {
                expected: T::SIZE as u32,
                found: h.b,
            });
        }
        let data = h.a as usize;
        aligned(data, ARRAY_ALIGN)?;
        inside(&self.buf, data, mul(h.count, T::SIZE, self.buf.len())?)?;
        Ok(Some((data, h.count)))
    }

    /// The slice of scalars the offset at `off` points to (empty when 0): a
    /// [`Column`] over a slice.
    pub fn scalars<T: Le>(&self, off: usize) -> Result<S::Column<T>, ReadError> {
        Ok(match self.array_of::<T>(off)? {
            Some((data, count)) => self.buf.column::<T>(data, count),
            None => S::empty_column::<T>(),
        })
    }

    /// The `#string` slice of `u8` at `off` as UTF-8 (a `&str` over a slice).
    pub fn utf8(&self, off: usize) -> Result<S::Text, ReadError> {
        let Some((data, count)) = self.array_of::<u8>(off)? else {
            return Ok(S::empty_text());
        };
        self.buf
            .text(data, count)
            .ok_or_else(|| ReadError::InvalidString {
                offset: self.ptr(off) as u64,
            })
    }

    /// The `#string` slice of `u16` at `off` as UTF-16 (decoded into a `String`).
    pub fn utf16(&self, off: usize) -> Result<String, ReadError> {
        let Some((data, count)) = self.array_of::<u16>(off)? else {
            return Ok(String::new());
        };
        let units = (0..count).map(|i| self.buf.load::<u16>(data + 2 * i));
        char::decode_utf16(units)
            .collect::<Result<String, _>>()
            .map_err(|_| ReadError::InvalidString {
                offset: self.ptr(off) as u64,
            })
    }
}
