//! Stream filters (crates/offthread-filters) on the pool. A `NativeFilter` is one
//! stream's filter; `NativePool.submitFilterPush` takes the next chunk in stream order on
//! the JS thread (copying it: the job owns its bytes, a transfer of the JS buffer
//! cannot pull them away — see bytes.rs) and runs the filter's work on the pool.
//! Filter failures complete the job with their registry code (ERR_FILTER_*).
//!
//! Transcoding writes straight into its output chunk: the binding makes an uninitialised
//! Buffer of the filter's output bound, the job writes into it, and JS receives a view
//! of the bytes written from `take` once the job is done — no Rust allocation, zeroing,
//! external buffer or finalizer per chunk, and no JS code can see (or transfer away) the
//! Buffer while the job writes (`NativePool::lent`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offthread_filters::{FilterError, FilterHandle, Work, WorkInto};

use crate::arg::{Arg, Expected};
use crate::error::{Code, CodedError, coded};
use crate::runtime::{Lent, NativePool, Outcome};

fn to_js(e: FilterError) -> CodedError {
    coded(e.code, e.message)
}

/// A push's failure as its job's outcome (the same code and message).
impl From<FilterError> for Outcome {
    fn from(e: FilterError) -> Self {
        Outcome::Error {
            code: e.code,
            message: e.message,
        }
    }
}

/// One stream's filter (`spec`: the JSON the TS package writes, checked in Rust).
#[napi]
pub struct NativeFilter {
    handle: FilterHandle,
    /// Pushes and finishes the pool took (a refused one leaves the filter as it was).
    accepted: u32,
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
// Buffer it points into is kept alive by `Lent` and unseen by JS (see `submit_push_into`).
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
                accepted: 0,
            })
            .map_err(to_js)
    }

    /// Several chunks may be in flight at once (transcoding); else one at a time.
    #[napi(getter)]
    pub fn parallel(&self) -> bool {
        self.handle.parallel()
    }

    /// Pushes and finishes the pool has taken, counted when submitted: a submit that
    /// left it unchanged was refused (ERR_QUEUE_FULL) and left the filter as it was,
    /// so the same chunk can be pushed again later.
    #[napi(getter)]
    pub fn accepted(&self) -> u32 {
        self.accepted
    }
}

/// A push or finish the pool refused (its queue is full) is undone, so the stream can
/// wait and push the same chunk again instead of failing mid-stream.
fn undo_if_refused(
    filter: &mut NativeFilter,
    checkpoint: offthread_filters::Checkpoint,
    result: std::result::Result<(), CodedError>,
) -> Result<(), Code> {
    match result {
        Ok(()) => {
            filter.accepted = filter.accepted.wrapping_add(1);
            Ok(())
        }
        Err(e) => {
            filter.handle.restore(checkpoint);
            Err(e)
        }
    }
}

/// Every code a filter can fail with (the registry test checks them).
#[napi]
pub fn filter_error_codes() -> Vec<&'static str> {
    offthread_filters::ERROR_CODES.to_vec()
}

/// A new, uninitialised Buffer of `len` bytes, referenced (so kept alive) by the result.
fn new_buffer(env: &Env, len: usize) -> std::result::Result<Uint8Array, CodedError> {
    let (mut data, mut value) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: Node-API calls on the JS thread (this is a napi method's env).
    unsafe {
        let status = napi::sys::napi_create_buffer(env.raw(), len, &mut data, &mut value);
        if status != napi::sys::Status::napi_ok {
            return Err(coded(
                offthread_filters::TOO_LARGE,
                format!("cannot allocate {len} bytes for the output"),
            ));
        }
        Uint8Array::from_napi_value(env.raw(), value)
            .map_err(|e| coded(offthread_filters::TOO_LARGE, e.reason.clone()))
    }
}

impl NativePool {
    fn submit_work(&mut self, id: u32, work: Work) -> std::result::Result<(), CodedError> {
        self.submit(id, false, move |_| {
            Ok(match work.run() {
                // Most pushes of a deflate, digest or record stream hand back nothing yet:
                // a number (0) drains with the completion, no `take` and no Buffer.
                Ok(bytes) if bytes.is_empty() => Outcome::Number(0.0),
                Ok(bytes) => Outcome::Bytes(bytes),
                Err(e) => e.into(),
            })
        })
    }

    /// A push written into a new Buffer of `bound` bytes that only the job sees until
    /// it is done: job `id` completes with the byte count and `take` hands out the view.
    fn submit_push_into(
        &mut self,
        env: &Env,
        id: u32,
        handle: &mut FilterHandle,
        chunk: &[u8],
        bound: usize,
    ) -> std::result::Result<(), CodedError> {
        let mut out = new_buffer(env, bound)?;
        // SAFETY: the Buffer is new and no JS code holds it; after this call only the
        // job below touches its bytes, until `take` (after the job) hands it to JS.
        let bytes = unsafe { out.as_mut() };
        let work: WorkInto = handle.prepare_push_into(chunk, bytes).map_err(to_js)?;
        let dst = OutBytes(bytes.as_mut_ptr(), bytes.len());
        let done = Arc::new(AtomicBool::new(false));
        let finished = Finished(Arc::clone(&done));
        self.submit(id, false, move |_| {
            // Dropped after the write, or unrun with the job (a destroyed pool).
            let _finished = finished;
            // SAFETY: `dst` points at the Buffer `lent` keeps alive until `_finished`
            // drops, after this write; nobody else touches those bytes meanwhile.
            let out = unsafe { dst.bytes() };
            Ok(match work.run(out) {
                Ok(n) => {
                    // The view handed out covers n bytes, but its ArrayBuffer is all of
                    // `out`: clear the uninitialised rest (a few bytes for ASCII, at most
                    // a third for CJK) so it shows no old heap.
                    out[n..].fill(0);
                    Outcome::Lent(n)
                }
                Err(e) => e.into(),
            })
        })?;
        self.lent.insert(id, Lent { done, buffer: out });
        Ok(())
    }
}

#[napi]
impl NativePool {
    /// The next chunk of `filter`'s stream; job `id` completes with the output bytes
    /// (the number 0 when the chunk produced none). Transcoding writes into a Buffer the
    /// binding makes (`take` gives a view of the bytes written).
    /// A refused chunk (ERR_FILTER_BUSY, ERR_FILTER_CLOSED) throws here.
    #[napi(ts_args_type = "id: number, filter: NativeFilter, chunk: Uint8Array")]
    pub fn submit_filter_push(
        &mut self,
        env: &Env,
        Arg(id): Arg<u32>,
        Arg(mut filter): Arg<ClassInstance<'_, NativeFilter>>,
        Arg(chunk): Arg<Uint8ArraySlice>,
    ) -> Result<(), Code> {
        let checkpoint = filter.handle.checkpoint();
        let submitted = match filter.handle.output_bound(chunk.len()) {
            Some(bound) => self.submit_push_into(env, id, &mut filter.handle, &chunk, bound),
            // Borrowed only during this call: prepare_push copies what the job reads.
            None => match filter.handle.prepare_push(&chunk) {
                Ok(work) => self.submit_work(id, work),
                // Refused before anything changed (busy, closed): nothing to undo.
                Err(e) => return Err(to_js(e)),
            },
        };
        undo_if_refused(&mut filter, checkpoint, submitted)
    }

    /// The end of `filter`'s stream; job `id` completes with the bytes held back (0: none).
    #[napi(ts_args_type = "id: number, filter: NativeFilter")]
    pub fn submit_filter_finish(
        &mut self,
        Arg(id): Arg<u32>,
        Arg(mut filter): Arg<ClassInstance<'_, NativeFilter>>,
    ) -> Result<(), Code> {
        let checkpoint = filter.handle.checkpoint();
        let work = filter.handle.prepare_finish().map_err(to_js)?;
        let submitted = self.submit_work(id, work);
        undo_if_refused(&mut filter, checkpoint, submitted)
    }
}

impl Expected for ClassInstance<'_, NativeFilter> {
    const WHAT: &'static str = "a NativeFilter";
}
