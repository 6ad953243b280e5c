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
    ("E0018", "too many SoA columns"),
    ("E0019", "nesting too deep"),
    ("E0020", "source or name too long"),
    ("E0021", "generated code too large"),
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
        let p = positions(core::slice::from_ref(self), source)[0];
        (p.line, p.column)
    }

    /// Renders in rustc's shape: header, `--> file:line:col`, the source line with
    /// carets, and the help line.
    pub fn render(&self, file: &str, source: &str) -> String {
        let pos = positions(core::slice::from_ref(self), source)[0];
        self.render_at(pos, file, source)
    }

    /// [`Self::render`] at a known position. Shows at most [`WINDOW`] bytes of the line
    /// on each side of the span (`…` marks a cut): a diagnostic's size does not grow
    /// with the line, so a one-line megabyte schema renders in bounded memory.
    fn render_at(&self, pos: Position, file: &str, source: &str) -> String {
        let Position {
            line,
            column: col,
            line_start,
        } = pos;
        let start = floor_boundary(source, self.span.start.min(source.len()));
        let lo = ceil_boundary(source, line_start.max(start.saturating_sub(WINDOW)));
        let reach = floor_boundary(source, (start + WINDOW).min(source.len()));
        let (hi, cut_after) = match source[start..reach].find('\n') {
            Some(n) => (start + n, false),
            None => (
                reach,
                reach < source.len() && source.as_bytes()[reach] != b'\n',
            ),
        };
        let text = source[lo..hi].strip_suffix('\r').unwrap_or(&source[lo..hi]);
        let (lead, caret_at) = if lo > line_start {
            ("…", source[lo..start].chars().count() + 1)
        } else {
            ("", col - 1)
        };
        let tail = if cut_after { "…" } else { "" };
        let end = self.span.end.clamp(start, hi);
        let span_chars = source
            .get(start..end)
            .map_or(1, |s| s.lines().next().unwrap_or("").chars().count().max(1));
        let width = line.to_string().len();
        let pad = " ".repeat(width);
        let mut out = String::new();
        let _ = writeln!(out, "error[{}]: {}", self.code, self.message);
        let _ = writeln!(out, "{pad}--> {file}:{line}:{col}");
        let _ = writeln!(out, "{pad} |");
        let _ = writeln!(out, "{line} | {lead}{text}{tail}");
        let _ = writeln!(
            out,
            "{pad} | {}{}",
            " ".repeat(caret_at),
            "^".repeat(span_chars)
        );
        let _ = writeln!(out, "{pad} = help: {}", self.help);
        out
    }
}

/// Bytes of the source line shown on each side of a diagnostic's span.
const WINDOW: usize = 120;

/// Where a diagnostic starts: 1-based line and column (in characters), and the byte
/// offset of its line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
    pub line_start: usize,
}

/// The position of every diagnostic, in one pass over the source (not one per
/// diagnostic: a hundred diagnostics on a megabyte line would scan it a hundred times).
pub fn positions(diags: &[Diagnostic], source: &str) -> Vec<Position> {
    let mut order: Vec<usize> = (0..diags.len()).collect();
    let at = |i: usize| floor_boundary(source, diags[i].span.start.min(source.len()));
    order.sort_by_key(|&i| at(i));
    let mut out = vec![
        Position {
            line: 1,
            column: 1,
            line_start: 0
        };
        diags.len()
    ];
    let (mut line, mut line_start, mut chars, mut done) = (1, 0, 0, 0);
    for i in order {
        let target = at(i);
        for (k, b) in source.as_bytes()[done..target].iter().enumerate() {
            if *b == b'\n' {
                line += 1;
                line_start = done + k + 1;
                chars = 0;
            } else if b & 0xc0 != 0x80 {
                // Not a UTF-8 continuation byte: a new character.
                chars += 1;
            }
        }
        done = target;
        out[i] = Position {
            line,
            column: chars + 1,
            line_start,
        };
    }
    out
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Renders several diagnostics separated by blank lines.
pub fn render_all(diags: &[Diagnostic], file: &str, source: &str) -> String {
    let pos = positions(diags, source);
    diags
        .iter()
        .zip(pos)
        .map(|(d, p)| d.render_at(p, file, source))
        .collect::<Vec<_>>()
        .join("\n")
}
