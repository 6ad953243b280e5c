//! A call's input where the host put it (docs/guest-abi.md, "Reading the input in place").
//!
//! A fanout's input can live outside this guest's memory: the host writes it once into
//! a shared memory that every exporter imports, and a guest reads it through the
//! `offthread.input` accessors, whose calls the host rewrites at load into plain loads
//! from that memory (where the engine has multi-memory). Rust cannot address a second
//! memory itself (LLVM has no address space for one), hence accessors rather than a
//! slice. When the host copies the input instead (Node 20, Safari, `sharedInput: false`,
//! direct calls), [`Input`] reads the copy in this guest's memory directly.
//!
//! [`Input`] is an [`rt::Source`]: the generated `…Ref` readers read it in place, with
//! the same checks as over a slice (the views make them, the source only loads). What
//! a slice would hand out as a view, an in-place input hands out as an [`InputColumn`]
//! (read by index) or, for text, an owned copy of just that field.

use alloc::string::String;
use alloc::vec::Vec;

use crate::rt;
use rt::Le;

/// Bit 31 of `offthread_call`'s `export`: the input is in place, in the input memory.
pub const IN_PLACE: u32 = 1 << 31;

#[cfg(target_arch = "wasm32")]
mod accessors {
    #[link(wasm_import_module = "offthread.input")]
    unsafe extern "C" {
        pub fn load_u8(addr: u32) -> u8;
        pub fn load_u16(addr: u32) -> u16;
        pub fn load_u32(addr: u32) -> u32;
        pub fn load_u64(addr: u32) -> u64;
        pub fn load_f32(addr: u32) -> f32;
        pub fn load_f64(addr: u32) -> f64;
        pub fn copy(dst: *mut u8, src: u32, len: u32);
    }
}

/// Outside wasm32 there is no input memory: an in-place [`Input`] cannot be made there
/// (the tests below give it one).
#[cfg(all(not(target_arch = "wasm32"), not(test)))]
mod accessors {
    pub unsafe fn load_u8(_: u32) -> u8 {
        0
    }
    pub unsafe fn load_u16(_: u32) -> u16 {
        0
    }
    pub unsafe fn load_u32(_: u32) -> u32 {
        0
    }
    pub unsafe fn load_u64(_: u32) -> u64 {
        0
    }
    pub unsafe fn load_f32(_: u32) -> f32 {
        0.0
    }
    pub unsafe fn load_f64(_: u32) -> f64 {
        0.0
    }
    pub unsafe fn copy(_: *mut u8, _: u32, _: u32) {}
}

/// For the tests: an input memory of this thread, read as the rewritten accessors read
/// theirs (little-endian, any alignment), counting what [`copy`] takes out of it.
#[cfg(all(not(target_arch = "wasm32"), test))]
pub(crate) mod accessors {
    use std::cell::{Cell, RefCell};
    use std::vec::Vec;

    std::thread_local! {
        pub static MEMORY: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
        pub static COPIED: Cell<usize> = const { Cell::new(0) };
    }

    fn bytes<const N: usize>(addr: u32) -> [u8; N] {
        MEMORY.with(|m| {
            let at = addr as usize;
            m.borrow()[at..at + N].try_into().expect("N bytes")
        })
    }

    pub unsafe fn load_u8(addr: u32) -> u8 {
        u8::from_le_bytes(bytes(addr))
    }
    pub unsafe fn load_u16(addr: u32) -> u16 {
        u16::from_le_bytes(bytes(addr))
    }
    pub unsafe fn load_u32(addr: u32) -> u32 {
        u32::from_le_bytes(bytes(addr))
    }
    pub unsafe fn load_u64(addr: u32) -> u64 {
        u64::from_le_bytes(bytes(addr))
    }
    pub unsafe fn load_f32(addr: u32) -> f32 {
        f32::from_le_bytes(bytes(addr))
    }
    pub unsafe fn load_f64(addr: u32) -> f64 {
        f64::from_le_bytes(bytes(addr))
    }
    pub unsafe fn copy(dst: *mut u8, src: u32, len: u32) {
        COPIED.with(|c| c.set(c.get() + len as usize));
        MEMORY.with(|m| {
            let at = src as usize;
            let from = &m.borrow()[at..at + len as usize];
            // SAFETY: the caller's `dst` holds `len` bytes.
            unsafe { core::ptr::copy_nonoverlapping(from.as_ptr(), dst, from.len()) }
        })
    }
}

#[derive(Clone, Copy, Debug)]
enum Place<'a> {
    /// A copy in this guest's memory.
    Local(&'a [u8]),
    /// `len` bytes at `at` of the input memory.
    Shared { at: u32, len: u32 },
}

/// A call's input, read by byte offset: every read is bounds-checked against the
/// input's length (`None` past its end), little-endian, any alignment.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a>(Place<'a>);

macro_rules! reader {
    ($name:ident, $t:ty, $size:expr, $load:ident) => {
        #[doc = concat!("The `", stringify!($t), "` at byte `offset` (little-endian), or `None` past the end.")]
        #[inline]
        pub fn $name(&self, offset: usize) -> Option<$t> {
            let end = offset.checked_add($size)?;
            if end > self.len() {
                return None;
            }
            match self.0 {
                Place::Local(bytes) => {
                    let mut b = [0u8; $size];
                    b.copy_from_slice(&bytes[offset..end]);
                    Some(<$t>::from_le_bytes(b))
                }
                // SAFETY: within the input's region of the input memory (checked above);
                // the accessor is a load from that memory once the host rewrote the call.
                Place::Shared { at, .. } => Some(unsafe { accessors::$load(at + offset as u32) }),
            }
        }
    };
}

impl<'a> Input<'a> {
    /// An input copied into this guest's memory.
    pub fn local(bytes: &'a [u8]) -> Self {
        Self(Place::Local(bytes))
    }

    /// An input in place: `len` bytes at `at` of the input memory.
    ///
    /// # Safety
    /// Only what the host passed to `offthread_call` with [`IN_PLACE`] (the host wrote
    /// that region and keeps it until the call returns).
    #[doc(hidden)]
    pub unsafe fn in_place(at: u32, len: u32) -> Self {
        Self(Place::Shared { at, len })
    }

    #[inline]
    pub fn len(&self) -> usize {
        match self.0 {
            Place::Local(bytes) => bytes.len(),
            Place::Shared { len, .. } => len as usize,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether it is read in place (false: a copy in this guest's memory).
    pub fn in_place_now(&self) -> bool {
        matches!(self.0, Place::Shared { .. })
    }

    /// The bytes, when they are in this guest's memory (a copy); `None` in place.
    pub fn local_bytes(&self) -> Option<&'a [u8]> {
        match self.0 {
            Place::Local(bytes) => Some(bytes),
            Place::Shared { .. } => None,
        }
    }

    reader!(u8_at, u8, 1, load_u8);
    reader!(u16_at, u16, 2, load_u16);
    reader!(u32_at, u32, 4, load_u32);
    reader!(u64_at, u64, 8, load_u64);
    reader!(f32_at, f32, 4, load_f32);
    reader!(f64_at, f64, 8, load_f64);

    /// Copies `dst.len()` bytes from `offset` into `dst` (in place: one `memory.copy`);
    /// `None` if they are not all inside the input.
    pub fn copy_to(&self, offset: usize, dst: &mut [u8]) -> Option<()> {
        let end = offset.checked_add(dst.len())?;
        if end > self.len() {
            return None;
        }
        match self.0 {
            Place::Local(bytes) => dst.copy_from_slice(&bytes[offset..end]),
            // SAFETY: `dst` is valid for `dst.len()` bytes of this guest's memory and the
            // source lies within the input's region (checked above).
            Place::Shared { at, .. } => unsafe {
                accessors::copy(dst.as_mut_ptr(), at + offset as u32, dst.len() as u32)
            },
        }
        Some(())
    }

    /// The whole input as an owned vector (not 64-byte aligned: a slice reader that wants
    /// aligned columns needs [`crate::dispatch_copied`]'s copy; the readers over `Input` need none).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = alloc::vec![0u8; self.len()];
        let _ = self.copy_to(0, &mut out);
        out
    }
}

/// The generated readers over an input wherever it is: the checks are the views' own
/// (as over a slice); loads go through the accessors when in place.
impl<'a> rt::Source<'a> for Input<'a> {
    type Column<T: Le> = InputColumn<'a, T>;
    type Text = String;

    fn len(&self) -> usize {
        Input::len(self)
    }

    #[inline]
    fn load<T: Le>(&self, at: usize) -> T {
        match self.0 {
            Place::Local(bytes) => T::read_le(&bytes[at..]),
            // One accessor of T's size (a single load once rewritten); in bounds: the
            // views checked `at + T::SIZE <= len`.
            Place::Shared { .. } => match T::SIZE {
                1 => T::read_le(&[self.u8_at(at).unwrap_or(0)]),
                2 => T::read_le(&self.u16_at(at).unwrap_or(0).to_le_bytes()),
                4 => T::read_le(&self.u32_at(at).unwrap_or(0).to_le_bytes()),
                _ => T::read_le(&self.u64_at(at).unwrap_or(0).to_le_bytes()),
            },
        }
    }

    fn column<T: Le>(&self, at: usize, count: usize) -> InputColumn<'a, T> {
        match self.0 {
            Place::Local(bytes) => InputColumn::Local(bytes.column(at, count)),
            Place::Shared { .. } => InputColumn::Shared {
                input: *self,
                at,
                count,
                item: core::marker::PhantomData,
            },
        }
    }

    fn empty_column<T: Le>() -> InputColumn<'a, T> {
        InputColumn::Local(rt::Column::Zero(0))
    }

    /// In place, an owned copy of just these bytes (one `memory.copy`).
    fn text(&self, at: usize, len: usize) -> Option<String> {
        match self.0 {
            Place::Local(bytes) => bytes.text(at, len).map(String::from),
            Place::Shared { .. } => {
                let mut copy = alloc::vec![0u8; len];
                self.copy_to(at, &mut copy)?;
                String::from_utf8(copy).ok()
            }
        }
    }

    fn empty_text() -> String {
        String::new()
    }
}

/// A column of `T` in an [`Input`]: over a copy, the slice reader's [`rt::Column`]; in
/// place, read item by item from the input memory (a load each).
#[derive(Clone, Copy, Debug)]
pub enum InputColumn<'a, T: Le> {
    /// In this guest's memory.
    Local(rt::Column<'a, T>),
    /// `count` items from byte `at` of an input in place.
    Shared {
        input: Input<'a>,
        at: usize,
        count: usize,
        item: core::marker::PhantomData<T>,
    },
}

impl<'a, T: Le> InputColumn<'a, T> {
    /// Number of items.
    pub fn len(&self) -> usize {
        match self {
            Self::Local(c) => c.len(),
            Self::Shared { count, .. } => *count,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Item `i`, or `None` past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<T> {
        match self {
            Self::Local(c) => c.get(i),
            Self::Shared {
                input, at, count, ..
            } => (i < *count).then(|| rt::Source::load::<T>(input, at + i * T::SIZE)),
        }
    }

    /// The zero-copy slice: only over a copy in this guest's memory (and aligned).
    pub fn as_slice(&self) -> Option<&'a [T]> {
        match self {
            Self::Local(c) => c.as_slice(),
            Self::Shared { .. } => None,
        }
    }

    /// Iterates the items (in place, items narrower than 8 bytes come 8 bytes a load).
    pub fn iter(&self) -> InputIter<'a, T> {
        InputIter {
            column: *self,
            next: 0,
            word: 0,
            left: 0,
        }
    }

    /// Copies the items out (in place: read item by item, no `memory.copy` of the input).
    pub fn to_vec(&self) -> Vec<T> {
        match self {
            Self::Local(c) => c.to_vec(),
            Self::Shared { .. } => self.iter().collect(),
        }
    }
}

/// Iterator over an [`InputColumn`]. In place, a load per item costs a call's worth
/// of checks and an accessor each; narrow items are taken from one `u64` load instead
/// (one `i64.load` once rewritten), the last few one at a time.
#[derive(Clone, Debug)]
pub struct InputIter<'a, T: Le> {
    column: InputColumn<'a, T>,
    next: usize,
    /// Items still in `word`, lowest first.
    word: u64,
    left: usize,
}

impl<T: Le> Iterator for InputIter<'_, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        let InputColumn::Shared {
            input, at, count, ..
        } = self.column
        else {
            let item = self.column.get(self.next)?;
            self.next += 1;
            return Some(item);
        };
        if self.next >= count {
            return None;
        }
        let per_word = 8 / T::SIZE;
        if per_word > 1 && self.left == 0 && self.next + per_word <= count {
            // In bounds: the column's items lie in the input (checked when opened).
            self.word = input.u64_at(at + self.next * T::SIZE).unwrap_or(0);
            self.left = per_word;
        }
        let item = if self.left > 0 {
            let item = T::read_le(&self.word.to_le_bytes()[..T::SIZE]);
            // `left > 0` only when T is narrower than 8 bytes: the shift is below 64.
            self.word >>= 8 * T::SIZE;
            self.left -= 1;
            item
        } else {
            rt::Source::load::<T>(&input, at + self.next * T::SIZE)
        };
        self.next += 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.column.len().saturating_sub(self.next);
        (left, Some(left))
    }

    /// In place, whole words in one loop with no per-item branch on where the column
    /// is (what `iter().fold(…)` and `sum()` reach).
    #[inline]
    fn fold<B, F: FnMut(B, T) -> B>(mut self, init: B, mut f: F) -> B {
        let mut acc = init;
        let per_word = 8 / T::SIZE;
        if let InputColumn::Shared {
            input, at, count, ..
        } = self.column
            && per_word > 1
        {
            while self.left > 0 {
                let Some(item) = self.next() else { break };
                acc = f(acc, item);
            }
            while self.next + per_word <= count {
                let word = input.u64_at(at + self.next * T::SIZE).unwrap_or(0);
                let bytes = word.to_le_bytes();
                for k in 0..per_word {
                    acc = f(acc, T::read_le(&bytes[k * T::SIZE..]));
                }
                self.next += per_word;
            }
        }
        // The rest (a local column, or the last narrow items) item by item.
        for item in self {
            acc = f(acc, item);
        }
        acc
    }
}

impl<T: Le> ExactSizeIterator for InputIter<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_reads_are_little_endian_and_bounded() {
        let bytes = [1u8, 2, 3, 4, 5, 6, 7, 8, 9];
        let input = Input::local(&bytes);
        assert_eq!(input.len(), 9);
        assert!(!input.in_place_now());
        assert_eq!(input.u8_at(8), Some(9));
        assert_eq!(input.u8_at(9), None);
        assert_eq!(input.u16_at(0), Some(0x0201));
        assert_eq!(input.u32_at(1), Some(0x0504_0302));
        assert_eq!(input.u64_at(1), Some(0x0908_0706_0504_0302));
        assert_eq!(input.u64_at(2), None);
        assert_eq!(input.u64_at(usize::MAX), None);
        let mut dst = [0u8; 3];
        assert_eq!(input.copy_to(6, &mut dst), Some(()));
        assert_eq!(dst, [7, 8, 9]);
        assert_eq!(input.copy_to(7, &mut dst), None);
        assert_eq!(input.to_vec(), bytes);
        assert_eq!(Input::local(&1.5f64.to_le_bytes()).f64_at(0), Some(1.5));
        assert_eq!(Input::local(&2.5f32.to_le_bytes()).f32_at(0), Some(2.5));
    }
}
