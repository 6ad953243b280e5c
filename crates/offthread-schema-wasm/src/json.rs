//! The JSON result, written by hand: the crate stays free of serde, and the shape
//! is small and fixed.

use std::fmt::Write as _;

use offthread_schema::driver::Output;

/// A JSON string literal (quotes included).
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `{ "files": [...], "diagnostics": [...], "rendered": "..." }`.
pub fn output(out: &Output) -> String {
    let files: Vec<String> = out
        .files
        .iter()
        .map(|f| {
            format!(
                "{{\"lang\":{},\"path\":{},\"contents\":{}}}",
                string(f.lang),
                string(&f.path),
                string(&f.contents)
            )
        })
        .collect();
    let diags: Vec<String> = out
        .diagnostics
        .iter()
        .zip(&out.positions)
        .map(|(d, (line, column))| {
            format!(
                "{{\"code\":{},\"message\":{},\"help\":{},\"line\":{line},\"column\":{column},\"start\":{},\"end\":{}}}",
                string(d.code),
                string(&d.message),
                string(&d.help),
                d.span.start,
                d.span.end
            )
        })
        .collect();
    format!(
        "{{\"files\":[{}],\"diagnostics\":[{}],\"rendered\":{}}}",
        files.join(","),
        diags.join(","),
        string(&out.rendered)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_quotes_backslashes_and_controls() {
        assert_eq!(string("a\"b\\c\n\u{1}é"), "\"a\\\"b\\\\c\\n\\u0001é\"");
    }
}
