//! The `filters` fuzz target's property, here so that the fuzz target (fuzz/) and the
//! replay of its saved inputs (tests/fuzz_fixtures.rs) run the same check: every
//! stream filter over arbitrary bytes, cut at arbitrary points — no panic, a registry
//! code on failure, and the same result (bytes or error code) as the same bytes in one
//! chunk (except where chunking may shape the output: record batches, deflate blocks).
//! Compressors must round-trip through their decompressor.

use crate::{ERROR_CODES, FilterError, FilterHandle};

/// The specs the target picks from (by the input's first byte).
pub const SPECS: &[&str] = &[
    r#"{"kind":"transcode","from":"utf8","to":"utf16le"}"#,
    r#"{"kind":"transcode","from":"utf8","to":"utf16le","strict":true}"#,
    r#"{"kind":"transcode","from":"utf16le","to":"utf8"}"#,
    r#"{"kind":"transcode","from":"utf16le","to":"utf8","strict":true}"#,
    r#"{"kind":"transcode","from":"utf8","to":"utf8","strict":true}"#,
    r#"{"kind":"transcode","from":"utf8","to":"utf8"}"#,
    r#"{"kind":"transcode","from":"utf8","to":"latin1","strict":true}"#,
    r#"{"kind":"transcode","from":"utf16le","to":"latin1"}"#,
    r#"{"kind":"transcode","from":"latin1","to":"utf8"}"#,
    r#"{"kind":"gzip","level":1}"#,
    r#"{"kind":"deflateRaw"}"#,
    r#"{"kind":"gunzip"}"#,
    r#"{"kind":"inflate"}"#,
    r#"{"kind":"inflateRaw"}"#,
    r#"{"kind":"sha256"}"#,
    r#"{"kind":"md5"}"#,
    r#"{"kind":"csv","columns":[{"name":"a","type":"u32"},{"name":"b","type":"string"},{"name":"c","type":"f64"}]}"#,
    r#"{"kind":"csv","header":false,"columns":[{"name":"a","type":"i8"},{"name":"b","type":"bool"}]}"#,
    r#"{"kind":"ndjson","columns":[{"name":"a","type":"u64"},{"name":"b","type":"string"},{"name":"c","type":"bool"}]}"#,
    r#"{"kind":"csv","layout":"records","report":true,"onError":"skip","columns":[{"name":"a","type":"u32","nullable":true},{"name":"b","type":"string","default":"x"},{"name":"c","type":"f64","default":1.5}]}"#,
    r#"{"kind":"csv","layout":"records","report":true,"inferRows":2}"#,
    r#"{"kind":"ndjson","layout":"records","report":true,"onError":"skip","columns":[{"name":"a","type":"i8","nullable":true},{"name":"b","type":"bool","default":true}]}"#,
    r#"{"kind":"ndjson","columns":[{"name":"x","type":"f32"},{"name":"y","type":"i8"},{"name":"","type":"string"}]}"#,
];

fn run(spec: &str, chunks: &[&[u8]]) -> Result<Vec<u8>, FilterError> {
    let mut h = FilterHandle::from_json(spec).expect("the specs above are valid");
    let mut out = Vec::new();
    for c in chunks {
        out.extend(h.push_now(c)?);
    }
    out.extend(h.finish_now()?);
    Ok(out)
}

/// The property, on one input: `[spec pick, cut a, cut b, input…]`. Panics when it does not hold.
pub fn check_chunking(data: &[u8]) {
    let [pick, a, b, input @ ..] = data else {
        return;
    };
    let spec = SPECS[usize::from(*pick) % SPECS.len()];
    let n = input.len();
    let (a, b) = (usize::from(*a) * n / 255, usize::from(*b) * n / 255);
    let (a, b) = (a.min(b), a.max(b));
    let whole = run(spec, &[input]);
    let cut = run(spec, &[&input[..a], &input[a..b], &input[b..]]);
    if let Err(e) = &cut {
        assert!(
            ERROR_CODES.contains(&e.code),
            "unregistered code {}",
            e.code
        );
    }
    // Record batches follow chunk boundaries and deflate blocks may too, so for those
    // only success must agree (compressed bytes are checked by the round trip below).
    if ["csv", "ndjson", "gzip", "deflateRaw"]
        .iter()
        .any(|k| spec.contains(k))
    {
        assert_eq!(whole.is_ok(), cut.is_ok(), "{spec}: {whole:?} vs {cut:?}");
    } else {
        assert_eq!(
            whole.map_err(|e| e.code),
            cut.clone().map_err(|e| e.code),
            "{spec}"
        );
    }
    if let (Ok(packed), true) = (&cut, spec.contains("gzip")) {
        assert_eq!(run(r#"{"kind":"gunzip"}"#, &[packed]).unwrap(), input);
    }
    if let (Ok(packed), true) = (&cut, spec.contains("deflateRaw")) {
        assert_eq!(run(r#"{"kind":"inflateRaw"}"#, &[packed]).unwrap(), input);
    }
}
