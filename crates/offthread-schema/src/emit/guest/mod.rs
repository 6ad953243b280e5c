//! Guest emitters: code for WebAssembly guests that implement (export) or call
//! (import) a schema's interfaces through offthread's guest ABI (docs/guest-abi.md).
//! The descriptor each interface carries is what the host reads at load time.

pub mod c;
pub mod rust;

use crate::compiler::diag::{Diagnostic, Span};
use crate::compiler::ir::{Function, Interface, Schema, Type};

/// The one message a guest function takes or returns: a struct, or nothing.
pub(crate) fn message(
    i: &Interface,
    f: &Function,
) -> Result<(Option<usize>, Option<usize>), Diagnostic> {
    let one =
        |params: &[crate::compiler::ir::Param], what: &str| -> Result<Option<usize>, Diagnostic> {
            match params {
                [] => Ok(None),
                [p] => match p.ty {
                    Type::Struct(id) => Ok(Some(id)),
                    _ => Err(unsupported(
                        i,
                        f,
                        &format!("its {what} `{}` is not a struct", p.name),
                    )),
                },
                _ => Err(unsupported(
                    i,
                    f,
                    &format!("it has {} {what}s", params.len()),
                )),
            }
        };
    Ok((one(&f.params, "input")?, one(&f.results, "result")?))
}

fn unsupported(i: &Interface, f: &Function, why: &str) -> Diagnostic {
    Diagnostic::new(
        "E0012",
        Span::default(),
        format!(
            "`{}.{}` cannot be called across the guest ABI: {why}",
            i.name, f.name
        ),
        "a guest function takes at most one struct message and returns at most one",
    )
}

/// The interface as JSON, the way the host reads it from `offthread_export`/`offthread_import`.
pub(crate) fn descriptor(s: &Schema, i: &Interface) -> String {
    let mems: Vec<String> = i
        .memories
        .iter()
        .map(|m| {
            format!(
                r#"{{"name":"{}","import":"{}","export":"{}","pages":{}}}"#,
                m.name,
                m.import.name(),
                m.export.name(),
                m.pages
            )
        })
        .collect();
    let place = |params: &[crate::compiler::ir::Param]| match params.first() {
        None => "null".to_string(),
        Some(p) => match p.memory {
            Some(m) => format!(r#"{{"memory":"{}"}}"#, i.memories[m].name),
            None => r#"{"memory":null}"#.to_string(),
        },
    };
    let fns: Vec<String> = i
        .functions
        .iter()
        .map(|f| {
            format!(
                r#"{{"name":"{}","fingerprint":"{:016x}","input":{},"output":{}}}"#,
                f.name,
                function_fingerprint(s, i, f),
                place(&f.params),
                place(&f.results)
            )
        })
        .collect();
    format!(
        r#"{{"name":"{}","pattern":"{}","fingerprint":"{:016x}","memories":[{}],"functions":[{}]}}"#,
        i.name,
        i.pattern.name(),
        fingerprint(s, i),
        mems.join(","),
        fns.join(",")
    )
}

/// FNV-1a 64 of the interface's signature: pattern, memories, functions with their
/// message types and memories. Equal fingerprints: the same interface, nothing to
/// check further. The types' fields are not part of it: dynamic structs evolve by the
/// schema's own rules.
pub(crate) fn fingerprint(s: &Schema, i: &Interface) -> u64 {
    let mut text = format!("{}({})", i.name, i.pattern.name());
    for m in &i.memories {
        text += &format!(
            "|{}:{}:{}:{}",
            m.name,
            m.import.name(),
            m.export.name(),
            m.pages
        );
    }
    for f in &i.functions {
        text += &format!("|{}", signature(s, i, f));
    }
    fnv(&text)
}

/// FNV-1a 64 of one function's signature (name, message types, their memories):
/// what lets an interface evolve (docs/guest-abi.md, "Evolving interfaces"). Appending
/// a function keeps every earlier one's fingerprint, so the host accepts modules built
/// against an older version of the interface, which are a prefix of the newer one.
pub(crate) fn function_fingerprint(s: &Schema, i: &Interface, f: &Function) -> u64 {
    fnv(&signature(s, i, f))
}

fn signature(s: &Schema, i: &Interface, f: &Function) -> String {
    let ty = |t: &Type| match t {
        Type::Struct(id) => s.structs[*id].name.clone(),
        other => format!("{other:?}"),
    };
    let mut text = format!("{}(", f.name);
    for p in f.params.iter().chain(&f.results) {
        let mem = p.memory.map_or("-", |m| i.memories[m].name.as_str());
        text += &format!("{}@{mem},", ty(&p.ty));
    }
    text.push(')');
    text
}

fn fnv(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}
