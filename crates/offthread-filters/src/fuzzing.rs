//! The `filters` fuzz target's property, here so that the fuzz target (fuzz/) and the
//! replay of its saved inputs (tests/fuzz_fixtures.rs) run the same check: every
//! stream filter over arbitrary bytes, cut at arbitrary points — no panic, a registry
//! code on failure, and the same result (bytes or error code) as the same bytes in one
//! chunk (except where chunking may shape the output: record batches, deflate blocks).
//! Compressors must round-trip through their decompressor.

use crate::{ERROR_CODES, FilterError, FilterHandle, FilterSpec, RecordFormat, RecordParser};

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
    r#"{"kind":"ndjson","layout":"records","report":true,"onError":"skip","inferRows":2}"#,
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
    if spec.contains("\"csv\"") {
        check_csv_pieces(spec, input, &[a, b]);
    }
    if let (Ok(packed), true) = (&cut, spec.contains("gzip")) {
        assert_eq!(run(r#"{"kind":"gunzip"}"#, &[packed]).unwrap(), input);
    }
    if let (Ok(packed), true) = (&cut, spec.contains("deflateRaw")) {
        assert_eq!(run(r#"{"kind":"inflateRaw"}"#, &[packed]).unwrap(), input);
    }
}

/// A CSV stream cut into pieces that run out of order (as on several threads) gives, push
/// by push, the bytes one sequential parser gives for the same chunks, and the same
/// first error (code and message: line numbers included). `cuts`: where the input is
/// cut into chunks (ascending). Panics when it does not hold.
pub fn check_csv_pieces(spec: &str, input: &[u8], cuts: &[usize]) {
    let mut chunks = Vec::new();
    let mut at = 0;
    for &c in cuts {
        let c = c.clamp(at, input.len());
        chunks.push(&input[at..c]);
        at = c;
    }
    chunks.push(&input[at..]);
    // One thread: the parser itself, a push per chunk, until the first error.
    let FilterSpec::Records {
        columns,
        format: format @ RecordFormat::Csv(_),
        options,
    } = FilterSpec::from_json(spec).expect("a valid CSV spec")
    else {
        panic!("{spec} is not a CSV spec");
    };
    let mut one = RecordParser::with_options(columns, format, options).expect("valid columns");
    let mut sequential: Vec<Result<Vec<u8>, FilterError>> = Vec::new();
    for c in &chunks {
        sequential.push(one.push(c));
        if sequential.last().is_some_and(Result::is_err) {
            break;
        }
    }
    if sequential.last().is_none_or(Result::is_ok) {
        sequential.push(one.finish());
    }
    // Pieces: every step prepared in order, the work run last to first; the head reading
    // its default slice, or slices small enough to stop inside these small inputs.
    for slice in [None, Some(1), Some(7), Some(40)] {
        let mut h = FilterHandle::from_json(spec).expect("a valid CSV spec");
        if let Some(bytes) = slice {
            h.set_csv_head_slice(bytes);
        }
        let mut works: Vec<_> = chunks
            .iter()
            .map(|c| h.prepare_push(c).expect("open"))
            .collect();
        works.push(h.prepare_finish().expect("open"));
        let mut pieces: Vec<_> = works.into_iter().rev().map(|w| w.run()).collect();
        pieces.reverse();
        for (i, (one, piece)) in sequential.iter().zip(&pieces).enumerate() {
            assert_eq!(
                one,
                piece,
                "{spec}: step {i} of {} differs, head slice {slice:?}, chunks {chunks:?}",
                pieces.len()
            );
        }
    }
}
