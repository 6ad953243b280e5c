//! Diagnostics: a stable code, a message, the span it points at and a help line.

use core::fmt::Write as _;

/// A byte range in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Self { start, end }
    }
}

/// Every diagnostic code, its title and what it means. `docs/schema-format.md`
/// lists the same table; a test keeps them in step.
pub const CODES: &[(&str, &str)] = &[
    ("E0001", "unexpected character"),
    ("E0002", "integer literal too large"),
    ("E0003", "syntax error"),
    ("E0004", "unknown type"),
    ("E0005", "duplicate declaration"),
    ("E0006", "duplicate member"),
    ("E0007", "duplicate enum value or union tag"),
    ("E0008", "value out of range"),
    ("E0009", "recursive inline struct"),
    ("E0010", "invalid annotation"),
    ("E0011", "conflicting annotations"),
    ("E0012", "type not allowed here"),
    ("E0013", "invalid options"),
    ("E0014", "unknown memory"),
    ("E0015", "column hash collision"),
    ("E0016", "empty declaration"),
    ("E0017", "memory access forbids this parameter"),
];

/// One problem in a schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: &'static str,
    pub message: String,
    pub span: Span,
    pub help: String,
}

impl Diagnostic {
    pub fn new(
        code: &'static str,
        span: Span,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Self {
        debug_assert!(
            CODES.iter().any(|(c, _)| *c == code),
            "unregistered code {code}"
        );
        Self {
            code,
            message: message.into(),
            span,
            help: help.into(),
        }
    }

    /// 1-based line and column (in characters) of the span start.
    pub fn line_col(&self, source: &str) -> (usize, usize) {
        let start = self.span.start.min(source.len());
        let before = &source[..start];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }

    /// Renders in rustc's shape: header, `--> file:line:col`, the source line with
    /// carets, and the help line.
    pub fn render(&self, file: &str, source: &str) -> String {
        let (line, col) = self.line_col(source);
        let text = source.lines().nth(line - 1).unwrap_or("");
        let width = line.to_string().len();
        let pad = " ".repeat(width);
        let span_chars = source
            .get(self.span.start..self.span.end.max(self.span.start))
            .map_or(1, |s| s.lines().next().unwrap_or("").chars().count().max(1));
        let mut out = String::new();
        let _ = writeln!(out, "error[{}]: {}", self.code, self.message);
        let _ = writeln!(out, "{pad}--> {file}:{line}:{col}");
        let _ = writeln!(out, "{pad} |");
        let _ = writeln!(out, "{line} | {text}");
        let _ = writeln!(
            out,
            "{pad} | {}{}",
            " ".repeat(col - 1),
            "^".repeat(span_chars)
        );
        let _ = writeln!(out, "{pad} = help: {}", self.help);
        out
    }
}

/// Renders several diagnostics separated by blank lines.
pub fn render_all(diags: &[Diagnostic], file: &str, source: &str) -> String {
    diags
        .iter()
        .map(|d| d.render(file, source))
        .collect::<Vec<_>>()
        .join("\n")
}
