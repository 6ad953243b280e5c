//! The one napi entry for every kernel of the registry (`offthread_kernels::KERNELS`):
//! `kernelNames()` lists them, `kernelCallSync` runs one on the calling thread,
//! `NativePool.submitKernel` on the pool and `kernelCallUv` as a libuv AsyncTask.
//! Arguments are checked by the kernel itself, so a new kernel adds nothing here.

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use offthread_kernels::{Call, KERNELS, KernelDef, Never, Output, registry};

use crate::arg::{self, Arg};
use crate::bytes::JobBytes;
use crate::error::{Code, CodedResult, coded, from_kernel, guard};
use crate::runtime::{NativePool, Outcome};

/// The registry's kernel names; a kernel's index here is its number in the calls below.
#[napi]
pub fn kernel_names() -> Vec<&'static str> {
    KERNELS.iter().map(|k| k.name).collect()
}

fn is_string(env: sys::napi_env, value: sys::napi_value) -> bool {
    let mut t = sys::ValueType::napi_undefined;
    // SAFETY: a value of the current call, on the JS thread.
    let ok = unsafe { sys::napi_typeof(env, value, &mut t) } == sys::Status::napi_ok;
    ok && t == sys::ValueType::napi_string
}

/// A call's input: a string (its UTF-8) or a Uint8Array.
pub enum SyncInput<'a> {
    Text(String),
    Bytes(Uint8ArraySlice<'a>),
}

impl SyncInput<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            SyncInput::Text(s) => s.as_bytes(),
            SyncInput::Bytes(b) => b,
        }
    }
}

impl TypeName for SyncInput<'_> {
    fn type_name() -> &'static str {
        "string | Uint8Array"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl FromNapiValue for SyncInput<'_> {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        if is_string(env, value) {
            // SAFETY: forwarded from napi-derive's call of this conversion.
            return Ok(SyncInput::Text(unsafe {
                String::from_napi_value(env, value)?
            }));
        }
        // SAFETY: as above.
        match unsafe { Uint8ArraySlice::from_napi_value(env, value) } {
            Ok(b) => Ok(SyncInput::Bytes(b)),
            Err(_) => Err(unsafe { arg::throw_invalid(env, value, "a string or Uint8Array") }),
        }
    }
}

/// A pool job's input: a string, or bytes the job owns (see `bytes.rs`).
pub enum JobInput {
    Text(String),
    Bytes(JobBytes),
}

impl std::ops::Deref for JobInput {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            JobInput::Text(s) => s.as_bytes(),
            JobInput::Bytes(b) => b,
        }
    }
}

impl TypeName for JobInput {
    fn type_name() -> &'static str {
        "string | Uint8Array"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl FromNapiValue for JobInput {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        // SAFETY (both): forwarded from napi-derive's call of this conversion.
        if is_string(env, value) {
            return Ok(JobInput::Text(unsafe {
                String::from_napi_value(env, value)?
            }));
        }
        Ok(JobInput::Bytes(unsafe {
            JobBytes::from_napi_value(env, value)?
        }))
    }
}

fn into_outcome(o: Output) -> Outcome {
    match o {
        Output::Number(x) => Outcome::Number(x),
        Output::Text(s) => Outcome::Text(s),
        Output::Bytes(b) => Outcome::Bytes(b),
    }
}

/// Runs registry kernel `kernel` on the calling thread: a number, a string or a Buffer.
#[napi(
    ts_args_type = "kernel: number, input: string | Uint8Array, a: number, b: number, c: number",
    ts_return_type = "number | string | Buffer"
)]
pub fn kernel_call_sync<'env>(
    env: &'env Env,
    Arg(kernel): Arg<u32>,
    input: SyncInput,
    Arg(a): Arg<f64>,
    Arg(b): Arg<f64>,
    Arg(c): Arg<f64>,
) -> Result<Unknown<'env>, Code> {
    let def = registry::lookup(KERNELS, kernel).map_err(from_kernel)?;
    let call = Call {
        input: input.bytes(),
        nums: [a, b, c],
    };
    let out = guard(|| (def.run)(&call, &Never).map_err(from_kernel))?;
    let js = match out {
        Output::Number(x) => x.into_unknown(env),
        Output::Text(s) => s.into_unknown(env),
        Output::Bytes(v) => BufferSlice::from_data(env, v).and_then(|b| b.into_unknown(env)),
    };
    js.map_err(|e| coded("ERR_INVALID_ARG", e.reason))
}

#[napi]
impl NativePool {
    /// Registry kernel `kernel` as a pool job (cancellable between its chunks).
    #[napi(
        ts_args_type = "id: number, kernel: number, input: string | Uint8Array, a: number, b: number, c: number, cancellable: boolean"
    )]
    #[allow(clippy::too_many_arguments)]
    pub fn submit_kernel(
        &mut self,
        Arg(id): Arg<u32>,
        Arg(kernel): Arg<u32>,
        input: JobInput,
        Arg(a): Arg<f64>,
        Arg(b): Arg<f64>,
        Arg(c): Arg<f64>,
        Arg(cancellable): Arg<bool>,
    ) -> Result<(), Code> {
        let def = registry::lookup(KERNELS, kernel).map_err(from_kernel)?;
        self.submit(id, cancellable, move |ctx| {
            let call = Call {
                input: &input,
                nums: [a, b, c],
            };
            (def.run)(&call, ctx).map(into_outcome)
        })
    }
}

/// A registry kernel as one napi AsyncTask on libuv's thread pool: the paper's
/// `addonAsync` form of any kernel (π's `nativeAsync` / `nativeChunked` variants).
pub struct KernelTask {
    def: KernelDef,
    input: JobInput,
    nums: [f64; 3],
}

impl KernelTask {
    pub(crate) fn start(def: KernelDef, input: JobInput, nums: [f64; 3]) -> AsyncTask<Self> {
        AsyncTask::new(Self { def, input, nums })
    }
}

impl Task for KernelTask {
    /// The output or the coded error, turned into a JS error on the JS thread (a
    /// `napi::Error` from `compute` would carry only a napi status).
    type Output = CodedResult<Output>;
    type JsValue = Either3<f64, String, Buffer>;

    fn compute(&mut self) -> Result<Self::Output> {
        let call = Call {
            input: &self.input,
            nums: self.nums,
        };
        let run = self.def.run;
        Ok(guard(|| run(&call, &Never).map_err(from_kernel)))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        match output {
            Ok(Output::Number(x)) => Ok(Either3::A(x)),
            Ok(Output::Text(s)) => Ok(Either3::B(s)),
            Ok(Output::Bytes(b)) => Ok(Either3::C(b.into())),
            // napi-rs rejects with this exact JS value (err.code included).
            Err(e) => Err(napi::Error::from_unknown_without_coercion(
                JsError::from(e).into_unknown(env),
            )),
        }
    }
}

/// Registry kernel `kernel` as a libuv AsyncTask (not cancellable: kept for the paper's
/// comparison; the offthread pool is the product).
#[napi(
    ts_args_type = "kernel: number, input: string | Uint8Array, a: number, b: number, c: number",
    ts_return_type = "Promise<number | string | Buffer>"
)]
pub fn kernel_call_uv(
    Arg(kernel): Arg<u32>,
    input: JobInput,
    Arg(a): Arg<f64>,
    Arg(b): Arg<f64>,
    Arg(c): Arg<f64>,
) -> Result<AsyncTask<KernelTask>, Code> {
    let def = *registry::lookup(KERNELS, kernel).map_err(from_kernel)?;
    Ok(KernelTask::start(def, input, [a, b, c]))
}
