//! Table 6 of the Karmem paper (seed 003) in one wasm32 module: the schema bench's
//! TemperatureBatch read inside WebAssembly by our generated Rust reader and by the
//! `flatbuffers` crate (flatc-generated accessors), each doing what the JS readers of
//! bench/experiments/schema-child.mjs do: count, average, min and max of `value`.
//!
//! The host writes the message bytes (the same writers as the JS rows) into memory from
//! `alloc`, then calls `<reader>_read(ptr, len)` once per read, or `<reader>_loop(ptr, len,
//! iters)` to run `iters` reads in one call. Readers return the count (or -1 when the
//! bytes do not read) and leave `[count, average, min, max]` as four f64 at `result()`.

#[allow(warnings, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/table6_generated.rs"));
}

use generated::table_6::{StructBatch, TableBatch};
use offthread_schema_rt::generated::temperature::TemperatureBatchRef;
use offthread_schema_rt::Column;
use std::alloc::Layout;
use std::hint::black_box;

/// `[count, average, min, max]`, as the JS readers return them.
type Stats = [f64; 4];

static mut RESULT: Stats = [0.0; 4];

/// The same fold as the JS readers and `stats.temperature`: f32 values summed in f64,
/// in order, so every reader's average is bit-identical.
#[inline(always)]
fn summarise(values: impl Iterator<Item = f32>) -> Stats {
    let (mut count, mut sum, mut min, mut max) = (0u32, 0f64, f32::INFINITY, f32::NEG_INFINITY);
    for v in values {
        count += 1;
        sum += f64::from(v);
        if v < min {
            min = v;
        }
        if v > max {
            max = v;
        }
    }
    [
        f64::from(count),
        sum / f64::from(count),
        f64::from(min),
        f64::from(max),
    ]
}

/// Ours: validates the header, every offset and the column's bounds, then views
/// `value` as `&[f32]` in place (a slice when the bytes are 4-aligned).
#[inline(always)]
fn ours(bytes: &[u8]) -> Option<Stats> {
    let readings = TemperatureBatchRef::from_bytes(bytes)
        .ok()?
        .readings()
        .ok()?;
    Some(match readings.value().ok()? {
        Column::Slice(values) => summarise(values.iter().copied()),
        other => summarise(other.iter()),
    })
}

/// FlatBuffers, a vector of 16-byte structs (the JS flatbuffers row's bytes), through
/// the verifier (`root`, what flatc's `root_as_…` runs).
#[inline(always)]
fn fb_struct(bytes: &[u8]) -> Option<Stats> {
    let batch = flatbuffers::root::<StructBatch>(bytes).ok()?;
    Some(summarise(batch.readings()?.iter().map(|r| r.value())))
}

/// The same bytes without the verifier (`root_unchecked`): what the JS and Go runtimes
/// do, which check no offset.
#[inline(always)]
fn fb_struct_unchecked(bytes: &[u8]) -> Option<Stats> {
    // SAFETY: the export's contract: bytes the verified reader accepts (the host checks
    // every reader's result before timing; the test does too).
    let batch = unsafe { flatbuffers::root_unchecked::<StructBatch>(bytes) };
    Some(summarise(batch.readings()?.iter().map(|r| r.value())))
}

/// FlatBuffers, a table per reading (the paper's §5.2 layout), verified.
#[inline(always)]
fn fb_table(bytes: &[u8]) -> Option<Stats> {
    let batch = flatbuffers::root::<TableBatch>(bytes).ok()?;
    Some(summarise(batch.readings()?.iter().map(|r| r.value())))
}

/// The table layout without the verifier.
#[inline(always)]
fn fb_table_unchecked(bytes: &[u8]) -> Option<Stats> {
    // SAFETY: as in `fb_struct_unchecked`.
    let batch = unsafe { flatbuffers::root_unchecked::<TableBatch>(bytes) };
    Some(summarise(batch.readings()?.iter().map(|r| r.value())))
}

/// # Safety
/// `ptr..ptr + len` is memory the host filled from `alloc`.
unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    // SAFETY: the caller's contract.
    unsafe { core::slice::from_raw_parts(ptr, len) }
}

fn publish(stats: Option<Stats>) -> i32 {
    match stats {
        Some(s) => {
            // SAFETY: single-threaded module; nothing else holds RESULT.
            unsafe { RESULT = s };
            s[0] as i32
        }
        None => -1,
    }
}

/// Runs `read` `iters` times in one call. `black_box` hides the input from the
/// optimiser each time round, so no read is hoisted or merged; summing the averages
/// keeps every result live.
#[inline(always)]
fn repeat(ptr: *const u8, len: usize, iters: u32, read: fn(&[u8]) -> Option<Stats>) -> f64 {
    let mut acc = 0.0;
    for _ in 0..iters {
        // SAFETY: the caller's contract, as in `bytes`.
        let input = unsafe { bytes(black_box(ptr), black_box(len)) };
        match read(input) {
            Some(s) => acc += s[1],
            None => return -1.0,
        }
    }
    black_box(acc)
}

macro_rules! readers {
    ($($read:ident, $loop:ident => $f:ident;)*) => {$(
        /// One read; see the module docs.
        ///
        /// # Safety
        /// `ptr..ptr + len` is memory the host filled from `alloc`; for the unchecked
        /// readers, a message the matching verified reader accepts.
        #[no_mangle]
        pub unsafe extern "C" fn $read(ptr: *const u8, len: usize) -> i32 {
            // SAFETY: the caller's contract, as in `bytes`.
            publish($f(unsafe { bytes(ptr, len) }))
        }

        /// `iters` reads in one call; the sum of their averages (-1 on a bad message).
        ///
        /// # Safety
        /// As for the single read.
        #[no_mangle]
        pub unsafe extern "C" fn $loop(ptr: *const u8, len: usize, iters: u32) -> f64 {
            repeat(ptr, len, iters, $f)
        }
    )*};
}

readers! {
    ours_read, ours_loop => ours;
    fb_struct_read, fb_struct_loop => fb_struct;
    fb_struct_unchecked_read, fb_struct_unchecked_loop => fb_struct_unchecked;
    fb_table_read, fb_table_loop => fb_table;
    fb_table_unchecked_read, fb_table_unchecked_loop => fb_table_unchecked;
}

/// An export that does nothing with two arguments: the cost of a call from the host.
#[no_mangle]
pub extern "C" fn empty(_ptr: *const u8, _len: usize) -> i32 {
    0
}

/// Where the last read left `[count, average, min, max]` (four f64).
#[no_mangle]
pub extern "C" fn result() -> *const f64 {
    // The address only; the host reads it between calls.
    core::ptr::addr_of!(RESULT).cast()
}

/// `len` bytes, 64-byte aligned (as a writer in this memory would leave a message), never
/// freed: the host allocates once per message.
#[no_mangle]
pub extern "C" fn alloc(len: usize) -> *mut u8 {
    match Layout::from_size_align(len.max(1), 64) {
        // SAFETY: the layout is non-zero-sized.
        Ok(layout) => unsafe { std::alloc::alloc(layout) },
        Err(_) => core::ptr::null_mut(),
    }
}
