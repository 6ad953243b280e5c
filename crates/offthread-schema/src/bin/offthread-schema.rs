//! `offthread-schema check <file.km>` and
//! `offthread-schema build <file.km> [--rust <dir>] [--ts <dir>]`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use offthread_schema::compiler::{self, diag};
use offthread_schema::emit;

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
        /// Path of the runtime module the Rust code uses.
        #[arg(long, default_value = "::offthread_schema::rt")]
        rust_runtime: String,
        /// Import specifier of the TS runtime.
        #[arg(long, default_value = "../runtime.js")]
        ts_runtime: String,
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

fn load(file: &Path) -> Result<(String, compiler::ir::Schema), String> {
    let src = std::fs::read_to_string(file)
        .map_err(|e| format!("error: cannot read {}: {e}\n", file.display()))?;
    let name = file.display().to_string();
    let schema = compiler::compile(&src).map_err(|d| diag::render_all(&d, &name, &src))?;
    Ok((src, schema))
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Check { file } => {
            load(&file)?;
            println!("{}: ok", file.display());
            Ok(())
        }
        Command::Build {
            file,
            rust,
            ts,
            rust_runtime,
            ts_runtime,
        } => {
            let (src, schema) = load(&file)?;
            let name = file.display().to_string();
            let stem = file
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("schema")
                .to_string();
            let render = |d: diag::Diagnostic| diag::render_all(&[d], &name, &src);
            if let Some(dir) = rust {
                let code = emit::rust::emit(
                    &schema,
                    &emit::rust::RustOptions {
                        runtime: rust_runtime,
                    },
                )
                .map_err(render)?;
                write(&dir, &format!("{stem}.rs"), &code)?;
            }
            if let Some(dir) = ts {
                let code = emit::ts::emit(
                    &schema,
                    &emit::ts::TsOptions {
                        runtime: ts_runtime,
                    },
                )
                .map_err(render)?;
                write(&dir, &format!("{stem}.ts"), &code)?;
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
