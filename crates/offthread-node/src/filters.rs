//! Stream filters (crates/offthread-filters) on the pool. A `NativeFilter` is one
//! stream's filter; `NativePool.submitFilter` takes the next chunk in stream order on
//! the JS thread (copying it: the job owns its bytes, a transfer of the JS buffer
//! cannot pull them away — see bytes.rs) and runs the filter's work on the pool.
//! Filter failures complete the job with their registry code (ERR_FILTER_*).
//!
//! Transcoding can also write straight into the output chunk (`submitFilterPushInto`):
//! the TS package allocates an uninitialised Buffer of `outputBound(len)` bytes, keeps
//! it to itself until the job completes with the byte count, then hands out a view of
//! it. No Rust allocation, no zeroing, no external buffer and no finalizer per chunk.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offthread_filters::{FilterError, FilterHandle, Work, WorkInto};

use crate::arg::{Arg, Expected};
use crate::error::{Code, CodedError, coded};
use crate::runtime::{NativePool, Outcome};

fn to_js(e: FilterError) -> CodedError {
    coded(e.code, e.message)
}

/// One stream's filter (`spec`: the JSON the TS package writes, checked in Rust).
#[napi]
pub struct NativeFilter {
    handle: FilterHandle,
    /// Output buffers jobs write into, referenced until their job is done: the memory
    /// outlives a JS side that gave up early (a destroyed pool rejects at once while
    /// the job may still run). Released on the JS thread at the next submit.
    lent: Vec<Lent>,
}

struct Lent {
    done: Arc<AtomicBool>,
    buffer: Uint8Array,
}

impl NativeFilter {
    fn release_done(&mut self) {
        self.lent.retain(|l| !l.done.load(Ordering::Acquire));
    }
}

impl Drop for NativeFilter {
    fn drop(&mut self) {
        // A job still writing keeps its buffer: leak the reference rather than free
        // memory under it (only a pool destroyed mid-stream gets here).
        for l in self.lent.drain(..) {
            if !l.done.load(Ordering::Acquire) {
                std::mem::forget(l.buffer);
            }
        }
    }
}

/// Marks a lent buffer free when its job is dropped: after running, or unrun.
struct Finished(Arc<AtomicBool>);

impl Drop for Finished {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Where a job writes its output: the bytes of a Buffer held by [`Lent`].
struct OutBytes(*mut u8, usize);

// SAFETY: the pointer is only dereferenced by the one job it was made for, while the
// Buffer it points into is kept alive by `Lent` and not read by JS (see `submit_filter_push_into`).
unsafe impl Send for OutBytes {}

impl OutBytes {
    /// # Safety
    /// The memory is alive and written by nobody else for as long as the slice is used.
    unsafe fn bytes<'a>(self) -> &'a mut [u8] {
        // SAFETY: forwarded from the caller.
        unsafe { std::slice::from_raw_parts_mut(self.0, self.1) }
    }
}

#[napi]
impl NativeFilter {
    #[napi(constructor, ts_args_type = "spec: string")]
    pub fn new(Arg(spec): Arg<String>) -> Result<Self, Code> {
        FilterHandle::from_json(&spec)
            .map(|handle| Self {
                handle,
                lent: Vec::new(),
            })
            .map_err(to_js)
    }

    /// Several chunks may be in flight at once (transcoding); else one at a time.
    #[napi(getter)]
    pub fn parallel(&self) -> bool {
        self.handle.parallel()
    }

    /// The output Buffer size `submitFilterPushInto` needs for a chunk of `len` bytes
    /// pushed next, or null: this filter's outputs come back as new Buffers.
    #[napi(ts_args_type = "len: number")]
    pub fn output_bound(&self, Arg(len): Arg<u32>) -> Option<u32> {
        self.handle
            .output_bound(len as usize)
            .and_then(|n| u32::try_from(n).ok())
    }
}

/// Every code a filter can fail with (the registry test checks them).
#[napi]
pub fn filter_error_codes() -> Vec<&'static str> {
    offthread_filters::ERROR_CODES.to_vec()
}

impl NativePool {
    fn submit_work(&mut self, id: u32, work: Work) -> std::result::Result<(), CodedError> {
        self.submit(id, false, move |_| {
            Ok(match work.run() {
                // Most pushes of a deflate, digest or record stream hand back nothing yet:
                // a number (0) drains with the completion, no `take` and no Buffer.
                Ok(bytes) if bytes.is_empty() => Outcome::Number(0.0),
                Ok(bytes) => Outcome::Bytes(bytes),
                Err(e) => Outcome::Error {
                    code: e.code,
                    message: e.message,
                },
            })
        })
    }
}

#[napi]
impl NativePool {
    /// The next chunk of `filter`'s stream; job `id` completes with the output bytes
    /// (the number 0 when the chunk produced none).
    /// A refused chunk (ERR_FILTER_BUSY, ERR_FILTER_CLOSED) throws here.
    #[napi(ts_args_type = "id: number, filter: NativeFilter, chunk: Uint8Array")]
    pub fn submit_filter_push(
        &mut self,
        Arg(id): Arg<u32>,
        Arg(mut filter): Arg<ClassInstance<'_, NativeFilter>>,
        Arg(chunk): Arg<Uint8ArraySlice>,
    ) -> Result<(), Code> {
        // Borrowed only during this call: prepare_push copies what the job reads.
        let work = filter.handle.prepare_push(&chunk).map_err(to_js)?;
        self.submit_work(id, work)
    }

    /// Like `submitFilterPush`, writing the output into `out` (at least
    /// `filter.outputBound(chunk.length)` bytes, from the start): job `id` completes
    /// with the number of bytes written. `out` must be a Buffer that nothing else
    /// holds, read or transfers until then: the TS package allocates a fresh one per
    /// chunk and hands out a view of it only after the completion.
    #[napi(ts_args_type = "id: number, filter: NativeFilter, chunk: Uint8Array, out: Uint8Array")]
    pub fn submit_filter_push_into(
        &mut self,
        Arg(id): Arg<u32>,
        Arg(mut filter): Arg<ClassInstance<'_, NativeFilter>>,
        Arg(chunk): Arg<Uint8ArraySlice>,
        Arg(mut out): Arg<Uint8Array>,
    ) -> Result<(), Code> {
        filter.release_done();
        let bound = filter.handle.output_bound(chunk.len());
        if bound.is_none_or(|b| b > out.len()) {
            return Err(coded(
                "ERR_INVALID_ARG",
                format!(
                    "out holds {} bytes; this push needs {}",
                    out.len(),
                    bound.map_or("a returned Buffer".to_owned(), |b| b.to_string())
                ),
            ));
        }
        // In place, the chunk is copied into `out` during this call: they must not
        // share bytes (a borrowed slice and a mutable one over the same memory).
        let (c, o) = (chunk.as_ptr_range(), out.as_ptr_range());
        if !chunk.is_empty() && !out.is_empty() && c.start < o.end && o.start < c.end {
            return Err(coded("ERR_INVALID_ARG", "out overlaps the chunk"));
        }
        // SAFETY: JS is blocked in this call, and afterwards only the job below
        // touches these bytes; the caller reads `out` only after the job completes
        // (documented above).
        let bytes = unsafe { out.as_mut() };
        let work: WorkInto = filter
            .handle
            .prepare_push_into(&chunk, bytes)
            .map_err(to_js)?;
        let dst = OutBytes(bytes.as_mut_ptr(), bytes.len());
        let done = Arc::new(AtomicBool::new(false));
        let finished = Finished(Arc::clone(&done));
        self.submit(id, false, move |_| {
            // Dropped after the write, or unrun with the job (a destroyed pool).
            let _finished = finished;
            // SAFETY: `dst` points at the Buffer `lent` keeps alive until `_finished`
            // drops, after this write; nobody else touches those bytes meanwhile.
            let out = unsafe { dst.bytes() };
            let result = work.run(out);
            Ok(match result {
                Ok(n) => {
                    // The output chunk is a view of `out`'s first n bytes, but its
                    // ArrayBuffer is all of `out`: clear the uninitialised rest (a few
                    // bytes for ASCII, at most a third for CJK) so it shows no old heap.
                    out[n..].fill(0);
                    Outcome::Number(n as f64)
                }
                Err(e) => Outcome::Error {
                    code: e.code,
                    message: e.message,
                },
            })
        })?;
        filter.lent.push(Lent { done, buffer: out });
        Ok(())
    }

    /// The end of `filter`'s stream; job `id` completes with the bytes held back (0: none).
    #[napi(ts_args_type = "id: number, filter: NativeFilter")]
    pub fn submit_filter_finish(
        &mut self,
        Arg(id): Arg<u32>,
        Arg(mut filter): Arg<ClassInstance<'_, NativeFilter>>,
    ) -> Result<(), Code> {
        filter.release_done();
        let work = filter.handle.prepare_finish().map_err(to_js)?;
        self.submit_work(id, work)
    }
}

impl Expected for ClassInstance<'_, NativeFilter> {
    const WHAT: &'static str = "a NativeFilter";
}
