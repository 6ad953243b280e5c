//! Shared by the reader targets: the read options an input is tried with, and the
//! canonical round trip every successfully decoded input must survive.
#![allow(dead_code)]

use offthread_schema_rt::{ReadError, ReadOptions, WriteError};

/// The defaults, then limits small enough that fuzzed inputs reach every limit error
/// (R0005, R0006, R0010) rather than only the structural ones.
pub const OPTIONS: [ReadOptions; 2] = [
    ReadOptions::DEFAULT,
    ReadOptions {
        max_depth: 2,
        max_soa_columns: 1,
        max_traversal: Some(24),
    },
];

/// Every code a reader may return: anything else is a bug in the error type.
pub fn check_code(e: &ReadError) {
    let code = e.code();
    assert!(
        code.len() == 5 && code.starts_with('R') && code[1..].bytes().all(|b| b.is_ascii_digit()),
        "bad read error code {code:?}"
    );
    // Display must not panic and must start with the code.
    assert!(e.to_string().starts_with(code));
}

/// Decodes `data` with every option set; when the default decode succeeds, the value
/// must re-encode, the encoding must decode, and encoding that again must give the
/// same bytes (the writer is canonical; `bool` bytes and shared offsets normalise
/// on the first pass, so the second pass is the fixed point).
pub fn round_trip<T>(
    data: &[u8],
    decode: impl Fn(&[u8], ReadOptions) -> Result<T, ReadError>,
    encode: impl Fn(&T) -> Result<Vec<u8>, WriteError>,
) -> Option<Vec<u8>> {
    let mut canonical = None;
    for (i, opts) in OPTIONS.iter().enumerate() {
        match decode(data, *opts) {
            Err(e) => check_code(&e),
            Ok(v) if i == 0 => {
                let once = encode(&v).expect("a decoded value re-encodes");
                let again = decode(&once, ReadOptions::DEFAULT)
                    .expect("the writer's own encoding of a decoded value reads back");
                let twice = encode(&again).expect("re-encodes twice");
                assert_eq!(once, twice, "canonical encoding is a fixed point");
                canonical = Some(once);
            }
            Ok(_) => {}
        }
    }
    canonical
}

/// Reads a lazy accessor's result, checking its error code.
pub fn ok<T>(r: Result<T, ReadError>) -> Option<T> {
    r.map_err(|e| check_code(&e)).ok()
}
