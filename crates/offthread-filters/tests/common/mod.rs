// Shared by the integration tests (each file is its own crate, so not all are used).
#![allow(dead_code)]

use offthread_filters::{FilterError, FilterHandle};

/// Runs `input` through a fresh filter in the given chunks, then finishes it.
pub fn run_chunks(spec: &str, chunks: &[&[u8]]) -> Result<Vec<Vec<u8>>, FilterError> {
    let mut h = FilterHandle::from_json(spec).expect("valid spec");
    let mut outs = Vec::new();
    for c in chunks {
        outs.push(h.push_now(c)?);
    }
    outs.push(h.finish_now()?);
    Ok(outs)
}

/// Output of `input` cut once at `at` (concatenated).
pub fn split_at(spec: &str, input: &[u8], at: usize) -> Result<Vec<u8>, FilterError> {
    Ok(run_chunks(spec, &[&input[..at], &input[at..]])?.concat())
}

/// Asserts that every single cut point, and every pair of cut points when the input is
/// short, gives `expected`.
pub fn every_split(spec: &str, input: &[u8], expected: &Result<Vec<u8>, FilterError>) {
    for at in 0..=input.len() {
        let got = split_at(spec, input, at);
        assert_eq!(
            got.as_ref().map_err(|e| e.code),
            expected.as_ref().map_err(|e| e.code),
            "{spec}: cut at {at}"
        );
        if let (Ok(got), Ok(want)) = (&got, expected) {
            assert_eq!(got, want, "{spec}: cut at {at}");
        }
    }
    if input.len() <= 64 {
        for a in 0..=input.len() {
            for b in a..=input.len() {
                let got =
                    run_chunks(spec, &[&input[..a], &input[a..b], &input[b..]]).map(|o| o.concat());
                assert_eq!(
                    got.as_ref().map_err(|e| e.code),
                    expected.as_ref().map_err(|e| e.code),
                    "{spec}: cuts at {a}, {b}"
                );
                if let (Ok(got), Ok(want)) = (&got, expected) {
                    assert_eq!(got, want, "{spec}: cuts at {a}, {b}");
                }
            }
        }
    }
}

/// ASCII, 2-, 3- and 4-byte UTF-8 sequences side by side.
pub const MIXED: &str =
    "ab é ü ß € 日本語 𝄞 😀 z\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}!";
