//! The compiler (lex → parse → IR → layout), both emitters and the diagnostic renderer
//! over arbitrary text, through the one `driver::build` every front end shares:
//! diagnostics only, never a panic; either files or diagnostics, never both or neither.
#![no_main]

use libfuzzer_sys::fuzz_target;
use offthread_schema::compiler::limits::MAX_DIAGNOSTICS;
use offthread_schema::driver::{BuildOptions, build};

fuzz_target!(|data: &[u8]| {
    // Lossy: invalid UTF-8 becomes U+FFFD, which the lexer must reject (E0001) rather
    // than the input being skipped.
    let src = String::from_utf8_lossy(data);
    let out = build(&src, &BuildOptions::new("fuzz.km", "fuzz"));
    if out.diagnostics.is_empty() {
        assert_eq!(out.files.len(), 2, "no diagnostics but no files");
        assert!(out.rendered.is_empty());
    } else {
        assert!(out.files.is_empty(), "files despite diagnostics");
        // The limits (docs/schema-format.md §4.1): a bounded report whatever the input.
        assert!(out.diagnostics.len() <= MAX_DIAGNOSTICS);
        assert!(
            out.rendered.len() <= 100 + out.diagnostics.len() * 32 * 1024,
            "{} bytes of diagnostics",
            out.rendered.len()
        );
        assert_eq!(out.positions.len(), out.diagnostics.len());
        for d in &out.diagnostics {
            let c = d.code;
            assert!(
                c.len() == 5 && c.starts_with('E'),
                "bad diagnostic code {c:?}"
            );
            assert!(
                out.rendered.contains(&format!("error[{c}]")),
                "{}",
                out.rendered
            );
            assert!(
                d.span.start <= d.span.end && d.span.end <= src.len(),
                "span {:?}",
                d.span
            );
        }
        for (line, col) in &out.positions {
            assert!(*line >= 1 && *col >= 1);
        }
    }
});
