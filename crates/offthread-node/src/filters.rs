//! Stream filters (crates/offthread-filters) on the pool. A `NativeFilter` is one
//! stream's filter; `NativePool.submitFilter` takes the next chunk in stream order on
//! the JS thread (copying it: the job owns its bytes, a transfer of the JS buffer
//! cannot pull them away — see bytes.rs) and runs the filter's work on the pool.
//! Filter failures complete the job with their registry code (ERR_FILTER_*).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offthread_filters::{FilterError, FilterHandle, Work};

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
}

#[napi]
impl NativeFilter {
    #[napi(constructor, ts_args_type = "spec: string")]
    pub fn new(Arg(spec): Arg<String>) -> Result<Self, Code> {
        FilterHandle::from_json(&spec)
            .map(|handle| Self { handle })
            .map_err(to_js)
    }

    /// Several chunks may be in flight at once (transcoding); else one at a time.
    #[napi(getter)]
    pub fn parallel(&self) -> bool {
        self.handle.parallel()
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
    /// The next chunk of `filter`'s stream; job `id` completes with the output bytes.
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

    /// The end of `filter`'s stream; job `id` completes with the bytes held back.
    #[napi(ts_args_type = "id: number, filter: NativeFilter")]
    pub fn submit_filter_finish(
        &mut self,
        Arg(id): Arg<u32>,
        Arg(mut filter): Arg<ClassInstance<'_, NativeFilter>>,
    ) -> Result<(), Code> {
        let work = filter.handle.prepare_finish().map_err(to_js)?;
        self.submit_work(id, work)
    }
}

impl Expected for ClassInstance<'_, NativeFilter> {
    const WHAT: &'static str = "a NativeFilter";
}
