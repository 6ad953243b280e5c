//! One build for every front end — the `offthread-schema` CLI and the wasm32 module
//! behind `npx offthread schema` / `schema.compile` — so both produce the same files
//! and the same diagnostic text, byte for byte.

use crate::compiler::limits::{MAX_DIAGNOSTICS, MAX_GENERATED_BYTES};
use crate::compiler::{self, diag};
use crate::emit;

// Each emitter owns its default (the emitters do not import the driver: no circle).
pub use crate::emit::rust::DEFAULT_RUNTIME as DEFAULT_RUST_RUNTIME;
pub use crate::emit::ts::DEFAULT_RUNTIME as DEFAULT_TS_RUNTIME;

/// What to build, and the names to print.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// The schema's file name as diagnostics show it (`--> file:line:col`).
    pub file: String,
    /// Base name of the generated files (`<stem>.rs`, `<stem>.ts`).
    pub stem: String,
    pub rust: bool,
    pub ts: bool,
    pub rust_runtime: String,
    pub ts_runtime: String,
    /// Also `<stem>_guest.rs`: guest code for the schema's interfaces (docs/guest-abi.md).
    pub rust_guest: bool,
    /// Path of the schema's Rust module as the guest module sees it.
    pub guest_schema: String,
    /// Also `<stem>.h` and `offthread_rt.h`: C readers and writers (docs/guests.md).
    pub c: bool,
    /// Also `<stem>_guest.h`: the C guest glue for the schema's interfaces.
    pub c_guest: bool,
}

impl BuildOptions {
    /// Both languages, default runtimes.
    pub fn new(file: impl Into<String>, stem: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            stem: stem.into(),
            rust: true,
            ts: true,
            rust_runtime: DEFAULT_RUST_RUNTIME.into(),
            ts_runtime: DEFAULT_TS_RUNTIME.into(),
            rust_guest: false,
            guest_schema: "super::schema".into(),
            c: false,
            c_guest: false,
        }
    }
}

/// A generated file, named relative to its language's output directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct File {
    /// `"rust"`, `"rust-guest"`, `"ts"`, `"c"` or `"c-guest"`.
    pub lang: &'static str,
    pub path: String,
    pub contents: String,
}

/// The result: files (empty on any error) and diagnostics with the text the CLI prints.
#[derive(Clone, Debug, Default)]
pub struct Output {
    pub files: Vec<File>,
    pub diagnostics: Vec<diag::Diagnostic>,
    /// `diagnostics` rendered like rustc's, as the CLI writes them to stderr.
    pub rendered: String,
    /// 1-based (line, column) of each diagnostic, for hosts that show their own.
    pub positions: Vec<(usize, usize)>,
}

/// Compiles `source`; emits the languages `opts` asks for (none: a check).
pub fn build(source: &str, opts: &BuildOptions) -> Output {
    let fail = |mut diags: Vec<diag::Diagnostic>| {
        diags.truncate(MAX_DIAGNOSTICS);
        let mut rendered = diag::render_all(&diags, &opts.file, source);
        if diags.len() == MAX_DIAGNOSTICS {
            rendered += &format!("\nnote: at most {MAX_DIAGNOSTICS} errors are shown\n");
        }
        Output {
            rendered,
            positions: diag::positions(&diags, source)
                .iter()
                .map(|p| (p.line, p.column))
                .collect(),
            diagnostics: diags,
            files: Vec::new(),
        }
    };
    let schema = match compiler::compile(source) {
        Ok(s) => s,
        Err(d) => return fail(d),
    };
    let mut files: Vec<File> = Vec::new();
    // What is left of MAX_GENERATED_BYTES for the next file.
    let left = |files: &[File]| {
        MAX_GENERATED_BYTES.saturating_sub(files.iter().map(|f| f.contents.len()).sum())
    };
    if opts.rust {
        let runtime = opts.rust_runtime.clone();
        let rust = emit::rust::RustOptions { runtime };
        match emit::rust::emit_within(&schema, &rust, left(&files)) {
            Ok(contents) => files.push(File {
                lang: "rust",
                path: format!("{}.rs", opts.stem),
                contents,
            }),
            Err(d) => return fail(vec![d]),
        }
    }
    if opts.rust_guest {
        let guest = emit::guest::rust::GuestOptions {
            schema: opts.guest_schema.clone(),
            ..Default::default()
        };
        match emit::guest::rust::emit(&schema, &guest) {
            Ok(contents) => files.push(File {
                lang: "rust-guest",
                path: format!("{}_guest.rs", opts.stem),
                contents,
            }),
            Err(d) => return fail(vec![d]),
        }
    }
    if opts.ts {
        let runtime = opts.ts_runtime.clone();
        let ts = emit::ts::TsOptions { runtime };
        match emit::ts::emit_within(&schema, &ts, left(&files)) {
            Ok(contents) => files.push(File {
                lang: "ts",
                path: format!("{}.ts", opts.stem),
                contents,
            }),
            Err(d) => return fail(vec![d]),
        }
    }
    if opts.c {
        // The runtime is written too: the header gets what is left after it.
        let runtime = emit::c::runtime();
        match emit::c::emit_within(
            &schema,
            &opts.stem,
            left(&files).saturating_sub(runtime.len()),
        ) {
            Ok(contents) => {
                files.push(File {
                    lang: "c",
                    path: format!("{}.h", opts.stem),
                    contents,
                });
                files.push(File {
                    lang: "c",
                    path: emit::c::RUNTIME_FILE.into(),
                    contents: runtime,
                });
            }
            Err(d) => return fail(vec![d]),
        }
    }
    if opts.c_guest {
        match emit::guest::c::emit(&schema, &opts.stem) {
            Ok(contents) => files.push(File {
                lang: "c-guest",
                path: format!("{}_guest.h", opts.stem),
                contents,
            }),
            Err(d) => return fail(vec![d]),
        }
    }
    Output {
        files,
        ..Output::default()
    }
}
