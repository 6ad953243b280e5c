//! Arguments whose wrong JS type throws a registry error (`ERR_INVALID_ARG`), not
//! napi's own status codes (`NumberExpected`, `StringExpected`, …), which are not in
//! the registry: the TS facade validates first, but the binding is public too.

use napi::bindgen_prelude::*;
use napi::sys;

pub const INVALID_ARG: &str = "ERR_INVALID_ARG";

/// `typeof value` as JS spells it (`null` for null).
unsafe fn type_of(env: sys::napi_env, value: sys::napi_value) -> &'static str {
    let mut t = sys::ValueType::napi_undefined;
    // SAFETY: a value of the current call, on the JS thread.
    if unsafe { sys::napi_typeof(env, value, &mut t) } != sys::Status::napi_ok {
        return "unknown";
    }
    match t {
        sys::ValueType::napi_undefined => "undefined",
        sys::ValueType::napi_null => "null",
        sys::ValueType::napi_boolean => "boolean",
        sys::ValueType::napi_number => "number",
        sys::ValueType::napi_string => "string",
        sys::ValueType::napi_symbol => "symbol",
        sys::ValueType::napi_function => "function",
        sys::ValueType::napi_bigint => "bigint",
        _ => "object",
    }
}

/// Throws `TypeError { code: 'ERR_INVALID_ARG' }` and returns the error that tells
/// napi-rs an exception is pending (it then leaves ours in place).
///
/// # Safety
/// `env` and `value` belong to the current call, on the JS thread.
pub unsafe fn throw_invalid(
    env: sys::napi_env,
    value: sys::napi_value,
    expected: &str,
) -> napi::Error {
    // SAFETY: forwarded from the caller.
    let got = unsafe { type_of(env, value) };
    let message = format!("expected {expected}, got {got}");
    let code = std::ffi::CString::new(INVALID_ARG).expect("no NUL in the code");
    let text = std::ffi::CString::new(message.clone()).expect("no NUL in the message");
    // SAFETY: NUL-terminated strings; a failed create/throw leaves no exception, and
    // napi-rs then throws `message` itself.
    unsafe {
        let mut js_code = std::ptr::null_mut();
        let mut js_text = std::ptr::null_mut();
        let mut error = std::ptr::null_mut();
        if sys::napi_create_string_utf8(
            env,
            code.as_ptr(),
            INVALID_ARG.len() as isize,
            &mut js_code,
        ) == sys::Status::napi_ok
            && sys::napi_create_string_utf8(
                env,
                text.as_ptr(),
                message.len() as isize,
                &mut js_text,
            ) == sys::Status::napi_ok
            && sys::napi_create_type_error(env, js_code, js_text, &mut error)
                == sys::Status::napi_ok
            && sys::napi_throw(env, error) == sys::Status::napi_ok
        {
            return napi::Error::new(Status::PendingException, message);
        }
    }
    napi::Error::new(Status::InvalidArg, message)
}

/// A JS argument of type `T`. A value of another JS type throws ERR_INVALID_ARG
/// (`expected a number, got symbol`) instead of napi's `NumberExpected`. napi-derive
/// cannot name `Arg<T>` in TypeScript, so functions taking one spell their
/// parameters with `ts_args_type`.
pub struct Arg<T>(pub T);

/// What an argument of this type must be, for the error message.
pub trait Expected {
    const WHAT: &'static str;
    /// The JS type to check first, for conversions that do not check it themselves.
    const TYPE: Option<sys::napi_valuetype> = None;
}

impl Expected for f64 {
    const WHAT: &'static str = "a number";
}
impl Expected for u32 {
    const WHAT: &'static str = "a number";
}
impl Expected for bool {
    const WHAT: &'static str = "a boolean";
}
impl Expected for String {
    const WHAT: &'static str = "a string";
}
impl Expected for Uint8Array {
    const WHAT: &'static str = "a Uint8Array";
}
impl Expected for Uint8ArraySlice<'_> {
    const WHAT: &'static str = "a Uint8Array";
}
impl Expected for Float64ArraySlice<'_> {
    const WHAT: &'static str = "a Float64Array";
}
impl<Args: JsValuesTupleIntoVec, Ret: FromNapiValue> Expected for Function<'_, Args, Ret> {
    const WHAT: &'static str = "a function";
    // `Function` wraps any value; a non-function failed only later, as a
    // threadsafe-function error.
    const TYPE: Option<sys::napi_valuetype> = Some(sys::ValueType::napi_function);
}

impl<T: TypeName> TypeName for Arg<T> {
    fn type_name() -> &'static str {
        T::type_name()
    }

    fn value_type() -> ValueType {
        T::value_type()
    }
}

impl<T: FromNapiValue + Expected> FromNapiValue for Arg<T> {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        if let Some(want) = T::TYPE {
            let mut t = sys::ValueType::napi_undefined;
            // SAFETY: forwarded from napi-derive's call of this conversion.
            let ok = unsafe { sys::napi_typeof(env, value, &mut t) } == sys::Status::napi_ok;
            if !ok || t != want {
                return Err(unsafe { throw_invalid(env, value, T::WHAT) });
            }
        }
        // SAFETY: forwarded from napi-derive's call of this conversion.
        match unsafe { T::from_napi_value(env, value) } {
            Ok(v) => Ok(Arg(v)),
            Err(_) => Err(unsafe { throw_invalid(env, value, T::WHAT) }),
        }
    }
}
