//! The guest side of the guest ABI (crates/offthread-guest, docs/guest-abi.md) over
//! untrusted bytes. A guest decodes two things the host copies into its memory: a
//! call's input (`offthread_call` → the generated dispatch → the `…Ref` zero-copy
//! readers of tests/guests) and the answer of a guest-to-guest call (`Message`, read
//! with the same readers). This target drives both the way `export_guest!` does, with
//! a guest that reads every field, plus the descriptor exports at any index and the
//! packed-buffer helpers. No panic, no out-of-bounds read, work bounded by the input;
//! a result the guest produced must decode to what it read.
//!
//! Input: byte 0 picks the export and function (and the descriptor index), the rest is
//! the message (copied into a 64-byte aligned buffer, as the host does, and also read
//! in place at an odd offset, as an unaligned answer would be).
#![no_main]

#[rustfmt::skip]
#[path = "../../tests/guests/generated/guests.rs"]
#[allow(clippy::all, dead_code)]
mod schema;
#[rustfmt::skip]
#[path = "../../tests/guests/generated/guests_guest.rs"]
mod guest;

use guest::{counter, crunch, echo, relay, scan};
use libfuzzer_sys::fuzz_target;
use offthread_guest::{Cell, Error, Interface, alloc_bytes, pack, run_call, unpack};
use schema::{Blob, BlobRef, Count, CountRef};

/// Reads every field it is given; never spins, traps or hoards (those are the host's
/// business: its timeout and memory limit), so every input's work is bounded.
#[derive(Default)]
struct Reader {
    next: u64,
    /// The length of the current call's input (no column may be longer).
    len: usize,
}

/// Every item of `data`, three ways, which must agree (and stay inside the message).
fn read_all(input: BlobRef<'_>, message: usize) -> Result<Vec<u8>, Error> {
    let data = input.data().map_err(Error::read)?;
    assert!(data.len() <= message, "a column longer than its message");
    let items: Vec<u8> = (0..data.len())
        .map(|i| data.get(i).expect("in range"))
        .collect();
    assert!(data.get(data.len()).is_none());
    assert_eq!(items, data.to_vec());
    if let Some(slice) = data.as_slice() {
        assert_eq!(slice, &items[..]);
    }
    Ok(items)
}

impl echo::Echo for Reader {
    fn echo(&mut self, input: BlobRef<'_>) -> Result<Blob, Error> {
        Ok(Blob {
            data: read_all(input, self.len)?,
        })
    }
    fn empty(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn spin(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn trap(&mut self) -> Result<(), Error> {
        Err(Error::new("asked to trap"))
    }
    fn grow(&mut self, input: CountRef<'_>) -> Result<Count, Error> {
        Ok(Count {
            value: input.value(),
        })
    }
}

impl counter::Counter for Reader {
    fn next(&mut self) -> Result<Count, Error> {
        self.next += 1;
        Ok(Count { value: self.next })
    }
}

impl crunch::Crunch for Reader {
    fn work(&mut self, input: CountRef<'_>) -> Result<Count, Error> {
        Ok(Count {
            value: input.value().min(1 << 10),
        })
    }
}

impl scan::Scan for Reader {
    fn checksum(&mut self, input: BlobRef<'_>) -> Result<Count, Error> {
        let data = read_all(input, self.len)?;
        Ok(Count {
            value: data.len() as u64,
        })
    }
    fn scribble(&mut self, input: BlobRef<'_>) -> Result<Count, Error> {
        self.checksum(input)
    }
    fn checksum_in_place(&mut self, input: BlobRef<'_>) -> Result<Count, Error> {
        self.checksum(input)
    }
}

impl relay::Relay for Reader {
    /// As tests/guests/relay does: forward through the host (outside wasm32 `invoke`
    /// always fails, so this covers the client's encoding and its error path).
    fn relay(&mut self, input: BlobRef<'_>) -> Result<Blob, Error> {
        let data = read_all(input, self.len)?;
        let answer = echo::Client.echo(&Blob { data })?;
        let back = BlobRef::from_bytes(answer.bytes()).map_err(Error::read)?;
        Ok(Blob {
            data: read_all(back, answer.bytes().len())?,
        })
    }
}

// The ABI's exports around the reader (offthread_init / _export / _import are called
// below; its offthread_call takes 32-bit pointers, so natively `call` mirrors it).
offthread_guest::export_guest!(
    Reader,
    exports: [echo::Export, counter::Export, crunch::Export, scan::Export, relay::Export],
    imports: [echo::Import],
);

static STATE: Cell<Reader> = Cell::new();
static LAST: Cell<Vec<u8>> = Cell::new();

/// What `offthread_call` does: the same dispatch order as `export_guest!`.
fn dispatch(g: &mut Reader, export: u32, function: u32, input: &[u8]) -> Result<Vec<u8>, Error> {
    g.len = input.len();
    match export {
        0 => <echo::Export as Interface<Reader>>::dispatch(g, function, input),
        1 => <counter::Export as Interface<Reader>>::dispatch(g, function, input),
        2 => <crunch::Export as Interface<Reader>>::dispatch(g, function, input),
        3 => <scan::Export as Interface<Reader>>::dispatch(g, function, input),
        4 => <relay::Export as Interface<Reader>>::dispatch(g, function, input),
        _ => Err(Error::new(format!("no export #{export}"))),
    }
}

/// The answer of a guest-to-guest call, read as relay reads one (any bytes: the
/// exporter may be hostile), and as the other result type.
fn read_answer(bytes: &[u8]) {
    if let Ok(r) = BlobRef::from_bytes(bytes) {
        let _ = read_all(r, bytes.len());
    }
    if let Ok(v) = Blob::from_bytes(bytes) {
        assert!(v.data.len() <= bytes.len());
    }
    if let Ok(r) = CountRef::from_bytes(bytes) {
        let _ = r.value();
        assert_eq!(
            Count::from_bytes(bytes).map(|c| c.value).ok(),
            Some(r.value())
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, message)) = data.split_first() else {
        return;
    };
    // SAFETY: one call at a time (libFuzzer runs inputs in sequence on one thread).
    let state = unsafe { STATE.get() }.get_or_insert_with(Reader::default);
    assert_eq!(offthread_init(), (1 << 16) | 5);
    // Descriptors at any index: -1 or a whole descriptor.
    let index = u32::from(sel) % 8;
    for (r, descriptors) in [(offthread_export(index), 5), (offthread_import(index), 1)] {
        assert_eq!(r == -1, index >= descriptors, "descriptor #{index}: {r}");
        assert!(r == -1 || unpack(r).1 > 0);
    }

    // A call, with the input in a 64-byte aligned buffer the call then owns.
    let (export, function) = (u32::from(sel >> 5), u32::from((sel >> 2) & 7));
    let ptr = alloc_bytes(message.len());
    assert!(!ptr.is_null() && (ptr as usize).is_multiple_of(offthread_guest::ALIGN));
    // SAFETY: `ptr` holds `message.len()` bytes (at least one).
    unsafe { core::ptr::copy_nonoverlapping(message.as_ptr(), ptr, message.len()) };
    // SAFETY: `ptr` came from alloc_bytes(len); nothing else is running.
    let r = unsafe {
        run_call(&LAST, ptr, message.len(), |input| {
            dispatch(state, export, function, input)
        })
    };
    if r != -1 {
        // SAFETY: run_call returned, nothing else holds the slot.
        let out = unsafe { LAST.get() }.as_ref().expect("a result is kept");
        assert_eq!(unpack(r), unpack(pack(out.as_ptr(), out.len())));
        // What the guest wrote is a valid message: echo answers what it read.
        match (export, function) {
            (0, 0) => {
                let sent = read_all(
                    BlobRef::from_bytes(message).expect("it was read"),
                    message.len(),
                );
                let got = read_all(BlobRef::from_bytes(out).expect("own result"), out.len());
                assert_eq!(sent.ok(), got.ok());
            }
            (0, 1 | 2) => assert!(out.is_empty()),
            _ => read_answer(out),
        }
    }

    // An answer copied in by the host (aligned) and the same bytes one byte off.
    read_answer(message);
    if message.len() > 1 {
        read_answer(&message[1..]);
    }
    let v = i64::from_le_bytes(core::array::from_fn(|i| {
        message.get(i).copied().unwrap_or(0)
    }));
    let (p, l) = unpack(v);
    assert!(p <= u32::MAX as usize && l <= u32::MAX as usize);
    assert_eq!(pack(p as *const u8, l), v);
});
