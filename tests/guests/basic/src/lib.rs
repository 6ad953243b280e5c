//! The basic test and benchmark guest: exports `echo` (with misbehaviour on request),
//! `counter` (single), `crunch` (pool) and `scan` (fanout over a shared input, read in
//! place where the host can: `checksum` through the generated typed reader over
//! [`Input`], `checksum_in_place` by byte offset through [`Input`] itself).

#[rustfmt::skip]
#[path = "../../generated/guests_guest.rs"]
pub mod guest;
#[rustfmt::skip]
#[path = "../../generated/guests.rs"]
pub mod schema;

use guest::{counter, crunch, echo, scan};
use offthread_guest::{Error, InPlace, Input};
use schema::{Blob, BlobRef, Count, CountRef};

/// Allocation failures (the host's memory limit) are reported as such.
#[global_allocator]
static ALLOC: offthread_guest::Alloc<std::alloc::System> =
    offthread_guest::Alloc(std::alloc::System);

#[derive(Default)]
pub struct Basic {
    next: u64,
    hoard: Vec<Vec<u8>>,
}

impl echo::Echo for Basic {
    fn echo(&mut self, input: BlobRef<'_>) -> Result<Blob, Error> {
        let data = input.data().map_err(Error::read)?;
        Ok(Blob {
            data: data.to_vec(),
        })
    }

    fn empty(&mut self) -> Result<(), Error> {
        Ok(())
    }

    #[allow(clippy::empty_loop)]
    fn spin(&mut self) -> Result<(), Error> {
        loop {}
    }

    fn trap(&mut self) -> Result<(), Error> {
        panic!("asked to trap")
    }

    /// Allocates `value` bytes and keeps them: grows memory until the host's limit.
    fn grow(&mut self, input: CountRef<'_>) -> Result<Count, Error> {
        let n = input.value() as usize;
        let mut block = Vec::with_capacity(n);
        block.resize(n, 1u8);
        self.hoard.push(block);
        let held: usize = self.hoard.iter().map(Vec::len).sum();
        Ok(Count { value: held as u64 })
    }
}

impl counter::Counter for Basic {
    fn next(&mut self) -> Result<Count, Error> {
        self.next += 1;
        Ok(Count { value: self.next })
    }
}

impl crunch::Crunch for Basic {
    /// `value` rounds of a xorshift: CPU-bound, no memory traffic.
    fn work(&mut self, input: CountRef<'_>) -> Result<Count, Error> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..input.value() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        Ok(Count { value: x })
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv_step(h: u64, b: u8) -> u64 {
    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
}

/// FNV-1a 64 of `bytes`.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET, |h, &b| fnv_step(h, b))
}

/// FNV-1a 64 of a `blob`'s `data`, read by offset through [`Input`] (in place or not):
/// the root struct at 0 has `data`'s pointer at +4, to an array header with the count
/// at +0, the data's offset at +8 and the element size at +12. Every read is bounded by
/// the input's length, so a malformed message is an error, never a read elsewhere.
fn blob_checksum(input: &Input<'_>) -> Result<u64, Error> {
    let bad = |why: &str| Error::new(format!("invalid input: {why}"));
    let header = input.u32_at(4).ok_or_else(|| bad("shorter than a blob"))? as usize;
    if header == 0 {
        return Ok(FNV_OFFSET); // no data
    }
    let field = |at: usize| input.u32_at(header.checked_add(at)?);
    let count = field(0).ok_or_else(|| bad("array header out of bounds"))? as usize;
    let data = field(8).ok_or_else(|| bad("array header out of bounds"))? as usize;
    if field(12) != Some(1) {
        return Err(bad("data is not a byte array"));
    }
    if data.checked_add(count).is_none_or(|end| end > input.len()) {
        return Err(bad("data out of bounds"));
    }
    let mut h = FNV_OFFSET;
    let mut i = 0;
    // Eight bytes a load: in place, each is one i64.load from the input memory.
    while i + 8 <= count {
        let word = input.u64_at(data + i).unwrap_or(0); // in bounds: checked above
        h = word.to_le_bytes().into_iter().fold(h, fnv_step);
        i += 8;
    }
    while i < count {
        h = fnv_step(h, input.u8_at(data + i).unwrap_or(0));
        i += 1;
    }
    Ok(h)
}

/// `scan` reads its inputs where the host put them (`InPlace`): in place in the input
/// memory on a host with multi-memory, a copy in this guest's memory otherwise.
impl scan::Scan<InPlace> for Basic {
    /// FNV-1a 64 of a `blob`'s `data`, through the generated reader: over a copy, the
    /// zero-copy slice; in place, a load per byte from the input memory (no copy).
    fn checksum(&mut self, input: BlobRef<'_, Input<'_>>) -> Result<Count, Error> {
        let data = input.data().map_err(Error::read)?;
        let value = match data.as_slice() {
            Some(bytes) => fnv(bytes),
            None => data.iter().fold(FNV_OFFSET, fnv_step),
        };
        Ok(Count { value })
    }

    /// Writes over its copy of the read-only input, then checksums it: the host must
    /// keep every other exporter's view of the input intact. In place there is no copy
    /// to write over (and the input memory cannot be written: refused at load), so it
    /// writes over one of its own.
    fn scribble(&mut self, input: BlobRef<'_, Input<'_>>) -> Result<Count, Error> {
        let data = input.data().map_err(Error::read)?;
        let Some(data) = data.as_slice() else {
            let mut own = data.to_vec();
            own.fill(0xee);
            return Ok(Count { value: fnv(&own) });
        };
        let ptr = data.as_ptr() as *mut u8;
        // SAFETY: deliberately writes through a shared reference into this guest's
        // own copy of the input (it lives in the guest's memory, allocated for this
        // call); this is the misbehaviour the host must contain.
        unsafe { core::ptr::write_bytes(ptr, 0xee, data.len()) };
        // SAFETY: the same bytes, read back.
        let after = unsafe { core::slice::from_raw_parts(ptr, data.len()) };
        Ok(Count { value: fnv(after) })
    }

    /// The same checksum, read by byte offset through [`Input`] (eight bytes a load).
    fn checksum_in_place(&mut self, input: BlobRef<'_, Input<'_>>) -> Result<Count, Error> {
        let value = blob_checksum(&input.view().source())?;
        Ok(Count { value })
    }
}

offthread_guest::export_guest!(
    Basic,
    exports: [echo::Export, counter::Export, crunch::Export, scan::Export<InPlace>],
    imports: [],
);
