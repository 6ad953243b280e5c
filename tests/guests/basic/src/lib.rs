//! The basic test and benchmark guest: exports `echo` (with misbehaviour on request),
//! `counter` (single), `crunch` (pool) and `scan` (fanout over a shared input).

#[rustfmt::skip]
#[path = "../../generated/guests_guest.rs"]
pub mod guest;
#[rustfmt::skip]
#[path = "../../generated/guests.rs"]
pub mod schema;

use guest::{counter, crunch, echo, scan};
use offthread_guest::Error;
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

/// FNV-1a 64 of `bytes`.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl scan::Scan for Basic {
    fn checksum(&mut self, input: BlobRef<'_>) -> Result<Count, Error> {
        let data = input.data().map_err(Error::read)?;
        let bytes = data
            .as_slice()
            .ok_or_else(|| Error::new("unaligned input"))?;
        Ok(Count { value: fnv(bytes) })
    }

    /// Writes over its copy of the read-only input, then checksums it: the host must
    /// keep every other exporter's view of the input intact.
    fn scribble(&mut self, input: BlobRef<'_>) -> Result<Count, Error> {
        let data = input.data().map_err(Error::read)?;
        let data = data
            .as_slice()
            .ok_or_else(|| Error::new("unaligned input"))?;
        let ptr = data.as_ptr() as *mut u8;
        // SAFETY: deliberately writes through a shared reference into this guest's
        // own copy of the input (it lives in the guest's memory, allocated for this
        // call); this is the misbehaviour the host must contain.
        unsafe { core::ptr::write_bytes(ptr, 0xee, data.len()) };
        // SAFETY: the same bytes, read back.
        let after = unsafe { core::slice::from_raw_parts(ptr, data.len()) };
        Ok(Count { value: fnv(after) })
    }
}

offthread_guest::export_guest!(
    Basic,
    exports: [echo::Export, counter::Export, crunch::Export, scan::Export],
    imports: [],
);
