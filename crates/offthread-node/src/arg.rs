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
