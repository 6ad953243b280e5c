//! MD5: one-shot hex and the loop of docs/kernels.md, sync and on the pool.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use offthread_kernels::Never;
use offthread_kernels::md5::{self, Md5IterateOptions};

use crate::arg::Arg;
use crate::error::{Code, from_kernel, guard};
use crate::runtime::{NativePool, Outcome};

/// MD5 of a string's UTF-8 bytes, lowercase hex.
#[napi(ts_args_type = "text: string")]
pub fn md5_hex_string(Arg(text): Arg<String>) -> String {
    md5::hex_string(text.as_bytes())
}

/// MD5 of bytes (borrowed from JS, no copy), lowercase hex.
#[napi(ts_args_type = "data: Uint8Array")]
pub fn md5_hex_bytes(Arg(data): Arg<Uint8ArraySlice>) -> String {
    md5::hex_string(&data)
}

/// d_N of the loop dᵢ = hex(MD5(text ‖ dᵢ₋₁)), continuing from `start` (d_k or "").
#[napi(ts_args_type = "text: string, rounds: number, start: string")]
pub fn md5_iterate_sync(
    Arg(text): Arg<String>,
    Arg(rounds): Arg<f64>,
    Arg(start): Arg<String>,
) -> Result<String, Code> {
    let opts = Md5IterateOptions::from_f64(text.as_bytes(), rounds).map_err(from_kernel)?;
    guard(|| md5::iterate_from(opts, &start, &Never).map_err(from_kernel))
}

#[napi]
impl NativePool {
    /// The MD5 loop as a pool job (cancellable between chunks of rounds).
    #[napi(
        ts_args_type = "id: number, text: string, rounds: number, start: string, cancellable: boolean"
    )]
    pub fn submit_md5_iterate(
        &mut self,
        Arg(id): Arg<u32>,
        Arg(text): Arg<String>,
        Arg(rounds): Arg<f64>,
        Arg(start): Arg<String>,
        Arg(cancellable): Arg<bool>,
    ) -> Result<(), Code> {
        // Checked here, so a bad count throws at the call instead of rejecting later.
        let rounds = Md5IterateOptions::from_f64(&[], rounds)
            .map_err(from_kernel)?
            .rounds;
        self.submit(id, cancellable, move |ctx| {
            let opts = Md5IterateOptions {
                text: text.as_bytes(),
                rounds,
            };
            md5::iterate_from(opts, &start, ctx).map(Outcome::Text)
        })
    }

    /// One MD5 as a pool job (the per-round async row of the http-md5 experiment).
    #[napi(ts_args_type = "id: number, text: string")]
    pub fn submit_md5_hex(
        &mut self,
        Arg(id): Arg<u32>,
        Arg(text): Arg<String>,
    ) -> Result<(), Code> {
        self.submit(id, false, move |_| {
            Ok(Outcome::Text(md5::hex_string(text.as_bytes())))
        })
    }
}
