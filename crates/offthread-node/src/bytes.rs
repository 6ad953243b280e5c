//! Bytes from JS that a pool job reads after the submitting call has returned.
//!
//! A reference to a Uint8Array keeps the view and its ArrayBuffer *object* alive, not
//! the memory: a transfer (`postMessage`/`structuredClone` with a transfer list,
//! `ArrayBuffer.prototype.transfer`) detaches the buffer and hands its backing store to
//! a new owner, which frees it when it is collected — while the job may still read it
//! (issue 11: SIGSEGV). So the bytes of a detachable buffer are copied on the JS thread
//! during the submit call and the job owns the copy. A SharedArrayBuffer cannot be
//! detached and its memory lives while any SharedArrayBuffer object over it does, so a
//! view of one is read in place, the reference keeping it alive.

use std::ops::Deref;

use napi::bindgen_prelude::*;
use napi::sys;

use crate::arg;

/// What a job reads: its own copy, or a view of shared memory kept alive by a reference.
pub enum JobBytes {
    Copied(AlignedBytes),
    Shared(Uint8Array),
}

impl Deref for JobBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            JobBytes::Copied(b) => b,
            JobBytes::Shared(view) => view,
        }
    }
}

impl TypeName for JobBytes {
    fn type_name() -> &'static str {
        "Uint8Array"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ValidateNapiValue for JobBytes {}

impl FromNapiValue for JobBytes {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        let mut kind = -1;
        let mut len = 0;
        let mut data = std::ptr::null_mut();
        let mut buffer = std::ptr::null_mut();
        let mut offset = 0;
        let mut is_view = false;
        // SAFETY: plain Node-API queries on a value of this call, on the JS thread.
        let is_u8 = unsafe {
            sys::napi_is_typedarray(env, value, &mut is_view) == sys::Status::napi_ok
                && is_view
                && sys::napi_get_typedarray_info(
                    env,
                    value,
                    &mut kind,
                    &mut len,
                    &mut data,
                    &mut buffer,
                    &mut offset,
                ) == sys::Status::napi_ok
                && kind == sys::TypedarrayType::uint8_array
        };
        if !is_u8 {
            return Err(unsafe { arg::throw_invalid(env, value, "a Uint8Array") });
        }
        // `napi_is_arraybuffer` is false for a SharedArrayBuffer (V8: IsArrayBuffer()
        // excludes shared ones). Anything else — including a failed query — is copied.
        let mut plain = true;
        // SAFETY: `buffer` was just returned by napi_get_typedarray_info.
        let status = unsafe { sys::napi_is_arraybuffer(env, buffer, &mut plain) };
        if status == sys::Status::napi_ok && !plain {
            // SAFETY: `value` is a Uint8Array of this call (checked above).
            return Ok(JobBytes::Shared(unsafe {
                Uint8Array::from_napi_value(env, value)?
            }));
        }
        let bytes = if len == 0 || data.is_null() {
            &[][..]
        } else {
            // SAFETY: Node-API reports `len` bytes at `data`; JS is blocked in this call.
            unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }
        };
        Ok(JobBytes::Copied(AlignedBytes::copy_of(bytes)))
    }
}

/// One 64-byte block: schema arrays are 64-byte aligned relative to the buffer start,
/// so a copy that starts on a 64-byte boundary keeps every column's alignment (the
/// readers then borrow `&[f32]` instead of decoding).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Block([u8; 64]);

/// Owned bytes starting on a 64-byte boundary.
pub struct AlignedBytes {
    blocks: Vec<Block>,
    len: usize,
}

impl AlignedBytes {
    pub fn copy_of(bytes: &[u8]) -> Self {
        let mut blocks = vec![Block([0; 64]); bytes.len().div_ceil(64)];
        for (block, chunk) in blocks.iter_mut().zip(bytes.chunks(64)) {
            block.0[..chunk.len()].copy_from_slice(chunk);
        }
        Self {
            blocks,
            len: bytes.len(),
        }
    }
}

impl Deref for AlignedBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: `blocks` holds `blocks.len() * 64 >= len` initialised bytes
        // (`Block` is plain bytes with no padding); an empty Vec's pointer is dangling
        // but aligned, which a zero-length slice allows.
        unsafe { std::slice::from_raw_parts(self.blocks.as_ptr().cast::<u8>(), self.len) }
    }
}
