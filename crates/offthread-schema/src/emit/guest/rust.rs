//! Rust guests: per interface a module with the trait an exporter implements, the
//! `Export` that dispatches the ABI's calls to it, and the `Client` an importer
//! calls through the host. Inputs arrive as zero-copy `…Ref` readers over the
//! guest's 64-byte aligned copy of the message, or — for a function whose input is in
//! an interface memory, in a guest that implements the trait with `guest::InPlace` —
//! over the input where the host put it (read in place, docs/guest-abi.md).

use super::{descriptor, message};
use crate::compiler::diag::Diagnostic;
use crate::compiler::ir::Schema;
use crate::compiler::pascal_case;
use crate::emit::rust::ident;

/// Where the generated guest code finds the schema's generated Rust and the guest crate.
#[derive(Clone, Debug)]
pub struct GuestOptions {
    /// Path of the module holding `offthread-schema`'s Rust output for the same schema.
    pub schema: String,
    /// Path of the guest crate.
    pub guest: String,
}

impl Default for GuestOptions {
    fn default() -> Self {
        Self {
            schema: "super::schema".into(),
            guest: "::offthread_guest".into(),
        }
    }
}

pub fn emit(s: &Schema, opts: &GuestOptions) -> Result<String, Diagnostic> {
    let mut out = String::new();
    out.push_str(crate::emit::HEADER);
    out.push_str("\n//! Guest code (docs/guest-abi.md): one module per interface.\n");
    out.push_str("\n#![allow(clippy::all, dead_code, unused_imports, unused_variables)]\n\n");
    out += &format!(
        "use {} as schema;\nuse {} as guest;\n",
        opts.schema, opts.guest
    );
    for i in &s.interfaces {
        let name = pascal_case(&i.name);
        let desc = descriptor(s, i);
        // An interface with a function whose input is in one of its memories reads it
        // where the host put it, through `P` (guest::Place): a slice by default.
        let in_memory = |f: &crate::compiler::ir::Function| {
            f.params.first().is_some_and(|p| p.memory.is_some())
        };
        let placed = i.functions.iter().any(in_memory);
        let generics = if placed {
            "<P: guest::Place = guest::Copied>"
        } else {
            ""
        };
        out += &format!(
            "\n/// Interface `{iname}` ({pattern}).\npub mod {module} {{\n    use super::{{guest, schema}};\n\n\
             \x20   pub const NAME: &str = \"{iname}\";\n\
             \x20   /// What the host reads through `offthread_export` / `offthread_import`.\n\
             \x20   pub const DESCRIPTOR: &str = r#\"{desc}\"#;\n\n\
             \x20   /// Implemented by guests that export `{iname}`.{place_doc}\n    pub trait {name}{generics} {{\n",
            iname = i.name,
            pattern = i.pattern.name(),
            module = ident(&i.name),
            place_doc = if placed {
                "\n    /// `P`: where the inputs in an interface memory are read — `guest::Copied`\n\
                 \x20   /// (a slice in this guest's memory) or `guest::InPlace` (in place, `guest::Input`)."
            } else {
                ""
            },
        );
        let mut dispatch = String::new();
        let mut client = String::new();
        for (k, f) in i.functions.iter().enumerate() {
            let (input, result) = message(i, f)?;
            let fname = ident(&f.name);
            let placed_fn = in_memory(f);
            let where_ = |params: &[crate::compiler::ir::Param], what: &str| {
                params
                    .first()
                    .map_or(format!("no {what}"), |p| match p.memory {
                        Some(m) => format!("{what} in memory `{}`", i.memories[m].name),
                        None => format!("{what} in the callee's own memory"),
                    })
            };
            let ret = result.map_or("()".into(), |r| {
                format!("schema::{}", pascal_case(&s.structs[r].name))
            });
            let (lt, arg) = match input {
                None => ("", String::new()),
                Some(r) if placed_fn => (
                    "<'a>",
                    format!(
                        ", input: schema::{}Ref<'a, P::Source<'a>>",
                        pascal_case(&s.structs[r].name)
                    ),
                ),
                Some(r) => (
                    "",
                    format!(
                        ", input: schema::{}Ref<'_>",
                        pascal_case(&s.structs[r].name)
                    ),
                ),
            };
            out += &format!(
                "        /// `{}`: {}, {}.\n        fn {fname}{lt}(&mut self{arg}) -> Result<{ret}, guest::Error>;\n",
                f.name,
                where_(&f.params, "input"),
                where_(&f.results, "result")
            );
            let read = input.map_or(String::new(), |r| {
                let (open, src) = if !placed {
                    ("from_bytes", "input")
                } else if placed_fn {
                    ("from_source", "P::source(input)?")
                } else {
                    ("from_bytes", "guest::local(input)?")
                };
                format!(
                    "let input = schema::{}Ref::{open}({src}).map_err(guest::Error::read)?;\n                    ",
                    pascal_case(&s.structs[r].name)
                )
            });
            let call = if input.is_some() {
                format!("this.{fname}(input)?")
            } else {
                format!("this.{fname}()?")
            };
            let encode = if result.is_some() {
                format!("{call}.to_bytes().map_err(guest::Error::write)")
            } else {
                format!("{call};\n                    Ok(guest::Bytes::new())")
            };
            dispatch += &format!(
                "                {k} => {{\n                    {read}{encode}\n                }}\n"
            );
            let (param, bytes) = match input {
                Some(r) => (
                    format!("input: &schema::{}", pascal_case(&s.structs[r].name)),
                    "let bytes = input.to_bytes().map_err(guest::Error::write)?;\n            "
                        .to_string(),
                ),
                None => (
                    String::new(),
                    "let bytes: [u8; 0] = [];\n            ".to_string(),
                ),
            };
            client += &format!(
                "        /// Calls `{iname}.{fn_}`{reader}.\n\
                 \x20       pub fn {fname}(&self{sep}{param}) -> Result<guest::Message, guest::Error> {{\n\
                 \x20           {bytes}guest::invoke(NAME, {k}, &bytes)\n        }}\n",
                iname = i.name,
                fn_ = f.name,
                reader = result.map_or(String::new(), |r| format!(
                    "; read the answer with `schema::{}Ref::from_bytes(msg.bytes())`",
                    pascal_case(&s.structs[r].name)
                )),
                sep = if param.is_empty() { "" } else { ", " },
            );
        }
        out += "    }\n\n";
        let export = if placed {
            format!(
                "    /// `export_guest!(…, exports: [{module}::Export])` for a guest implementing [`{name}`];\n\
                 \x20   /// `{module}::Export<guest::InPlace>` for one implementing `{name}<guest::InPlace>`.\n\
                 \x20   pub struct Export<P = guest::Copied>(core::marker::PhantomData<P>);\n\n\
                 \x20   impl<T: {name}<P>, P: guest::Place> guest::Interface<T> for Export<P> {{\n\
                 \x20       const DESCRIPTOR: &'static str = DESCRIPTOR;\n\n\
                 \x20       fn dispatch(this: &mut T, function: u32, input: &[u8]) -> Result<guest::Bytes, guest::Error> {{\n\
                 \x20           Self::dispatch_input(this, function, guest::Input::local(input))\n        }}\n\n\
                 \x20       fn dispatch_input(this: &mut T, function: u32, input: guest::Input<'_>) -> Result<guest::Bytes, guest::Error> {{\n",
                module = ident(&i.name),
            )
        } else {
            format!(
                "    /// `export_guest!(…, exports: [{module}::Export])` for a guest implementing [`{name}`].\n\
                 \x20   pub struct Export;\n\n\
                 \x20   impl<T: {name}> guest::Interface<T> for Export {{\n\
                 \x20       const DESCRIPTOR: &'static str = DESCRIPTOR;\n\n\
                 \x20       fn dispatch(this: &mut T, function: u32, input: &[u8]) -> Result<guest::Bytes, guest::Error> {{\n",
                module = ident(&i.name),
            )
        };
        out += &format!(
            "{export}\
             \x20           match function {{\n{dispatch}\
             \x20               _ => Err(guest::unknown_function(NAME, function)),\n\
             \x20           }}\n        }}\n    }}\n\n\
             \x20   /// `export_guest!(…, imports: [{module}::Import])` for a guest calling `{iname}`.\n\
             \x20   pub struct Import;\n\n\
             \x20   impl guest::Imported for Import {{\n        const DESCRIPTOR: &'static str = DESCRIPTOR;\n    }}\n\n\
             \x20   /// Calls `{iname}` through the host (declare it in `imports`).\n\
             \x20   pub struct Client;\n\n    impl Client {{\n{client}    }}\n}}\n",
            module = ident(&i.name),
            iname = i.name,
        );
    }
    Ok(out)
}
