//! `offthread-schema check <file.km>` and
//! `offthread-schema build <file.km> [--rust <dir>] [--ts <dir>] [--c <dir>] [--c-guest <dir>]`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use offthread_schema::driver::{self, BuildOptions};

#[derive(Parser)]
#[command(
    name = "offthread-schema",
    version,
    about = "Compile .km schemas to Rust and TypeScript"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and validate a schema; print diagnostics.
    Check { file: PathBuf },
    /// Generate `<stem>.rs` and/or `<stem>.ts` from a schema.
    Build {
        file: PathBuf,
        /// Directory for the Rust module.
        #[arg(long)]
        rust: Option<PathBuf>,
        /// Directory for the TypeScript module.
        #[arg(long)]
        ts: Option<PathBuf>,
        /// Path of the runtime the Rust code uses.
        #[arg(long, default_value = driver::DEFAULT_RUST_RUNTIME)]
        rust_runtime: String,
        /// Import specifier of the TS runtime.
        #[arg(long, alias = "runtime-import", default_value = driver::DEFAULT_TS_RUNTIME)]
        ts_runtime: String,
        /// Directory for the Rust guest module `<stem>_guest.rs` (docs/guest-abi.md).
        #[arg(long)]
        rust_guest: Option<PathBuf>,
        /// Path of the schema's Rust module as the guest module sees it.
        #[arg(long, default_value = "super::schema")]
        guest_schema: String,
        /// Directory for the C header `<stem>.h` and its runtime `offthread_rt.h`.
        #[arg(long)]
        c: Option<PathBuf>,
        /// Directory for the C guest glue `<stem>_guest.h` (docs/guests.md, "C guests").
        #[arg(long)]
        c_guest: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprint!("{msg}");
            ExitCode::FAILURE
        }
    }
}

/// Reads `file` and builds it; the error is the text to print on stderr.
fn load(file: &Path, opts: impl FnOnce(&mut BuildOptions)) -> Result<Vec<driver::File>, String> {
    let src = std::fs::read_to_string(file)
        .map_err(|e| format!("error: cannot read {}: {e}\n", file.display()))?;
    let stem = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("schema");
    let mut o = BuildOptions::new(file.display().to_string(), stem);
    o.rust = false;
    o.ts = false;
    opts(&mut o);
    let out = driver::build(&src, &o);
    if out.diagnostics.is_empty() {
        Ok(out.files)
    } else {
        Err(out.rendered)
    }
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Check { file } => {
            load(&file, |_| {})?;
            println!("{}: ok", file.display());
            Ok(())
        }
        Command::Build {
            file,
            rust,
            ts,
            rust_runtime,
            ts_runtime,
            rust_guest,
            guest_schema,
            c,
            c_guest,
        } => {
            let files = load(&file, |o| {
                o.rust = rust.is_some();
                o.ts = ts.is_some();
                o.rust_runtime = rust_runtime;
                o.ts_runtime = ts_runtime;
                o.rust_guest = rust_guest.is_some();
                o.guest_schema = guest_schema;
                o.c = c.is_some();
                o.c_guest = c_guest.is_some();
            })?;
            for f in files {
                let dir = match f.lang {
                    "rust" => &rust,
                    "rust-guest" => &rust_guest,
                    "c" => &c,
                    "c-guest" => &c_guest,
                    _ => &ts,
                };
                write(
                    dir.as_deref().unwrap_or(Path::new(".")),
                    &f.path,
                    &f.contents,
                )?;
            }
            Ok(())
        }
    }
}

fn write(dir: &Path, file: &str, code: &str) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("error: cannot create {}: {e}\n", dir.display()))?;
    let path = dir.join(file);
    std::fs::write(&path, code)
        .map_err(|e| format!("error: cannot write {}: {e}\n", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}
