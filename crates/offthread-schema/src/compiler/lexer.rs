//! Tokens of the `.km` language. `//` comments run to the end of the line.

use super::diag::{Diagnostic, Span};
use super::limits::MAX_NAME_BYTES;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    Int(u64),
    /// One of `{ } ( ) [ ] : ; , = # @`.
    Punct(char),
    /// `->` (Figure 35's `name: (a) -> (b)` functions).
    Arrow,
    Eof,
}

impl Tok {
    /// How the token reads in a diagnostic.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(n) => format!("`{n}`"),
            Tok::Punct(c) => format!("`{c}`"),
            Tok::Arrow => "`->`".into(),
            Tok::Eof => "end of file".into(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

pub fn lex(src: &str) -> Result<Vec<Token>, Diagnostic> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            if i - start > MAX_NAME_BYTES {
                return Err(Diagnostic::new(
                    "E0020",
                    Span::new(start, i),
                    format!(
                        "name `{}…` is {} bytes long",
                        &src[start..start + 16],
                        i - start
                    ),
                    format!("names are at most {MAX_NAME_BYTES} bytes"),
                ));
            }
            out.push(Token {
                tok: Tok::Ident(src[start..i].into()),
                span: Span::new(start, i),
            });
        } else if c.is_ascii_digit() {
            let hex = c == b'0' && matches!(bytes.get(i + 1), Some(b'x' | b'X'));
            if hex {
                i += 2;
            }
            let digits_start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let digits: String = src[digits_start..i].chars().filter(|c| *c != '_').collect();
            let value = u64::from_str_radix(&digits, if hex { 16 } else { 10 });
            let span = Span::new(start, i);
            match value {
                Ok(v) => out.push(Token {
                    tok: Tok::Int(v),
                    span,
                }),
                Err(e) if *e.kind() == core::num::IntErrorKind::PosOverflow => {
                    return Err(Diagnostic::new(
                        "E0002",
                        span,
                        format!(
                            "integer literal `{}` does not fit in 64 bits",
                            clip(&src[start..i])
                        ),
                        "values in schemas are at most 18446744073709551615",
                    ));
                }
                Err(_) => {
                    return Err(Diagnostic::new(
                        "E0003",
                        span,
                        format!("malformed integer literal `{}`", clip(&src[start..i])),
                        "write integers in decimal (`42`) or hexadecimal (`0x2a`)",
                    ));
                }
            }
        } else if c == b'-' && bytes.get(i + 1) == Some(&b'>') {
            out.push(Token {
                tok: Tok::Arrow,
                span: Span::new(i, i + 2),
            });
            i += 2;
        } else if b"{}()[]:;,=#@".contains(&c) {
            out.push(Token {
                tok: Tok::Punct(c as char),
                span: Span::new(i, i + 1),
            });
            i += 1;
        } else {
            let ch = src[i..].chars().next().unwrap_or('?');
            return Err(Diagnostic::new(
                "E0001",
                Span::new(i, i + ch.len_utf8()),
                format!("unexpected character `{ch}`"),
                "schemas use identifiers, integers, `//` comments and the punctuation { } ( ) [ ] : ; , = # @ ->",
            ));
        }
    }
    out.push(Token {
        tok: Tok::Eof,
        span: Span::new(src.len(), src.len()),
    });
    Ok(out)
}

/// A literal as a message quotes it: a long one is cut (it is ASCII up to its end), so
/// a megabyte of digits is not copied into the diagnostic.
fn clip(literal: &str) -> String {
    const SHOWN: usize = 32;
    match literal.get(..SHOWN) {
        Some(head) if literal.len() > SHOWN => format!("{head}…"),
        _ => literal.to_string(),
    }
}
