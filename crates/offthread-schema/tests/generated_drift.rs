//! Regenerates every committed generated file and fails on drift.
//! `OFFTHREAD_SCHEMA_BLESS=1 cargo test -p offthread-schema --test generated_drift`
//! rewrites them.

mod common;

use common::check;

use std::path::PathBuf;

use offthread_schema::compiler::{compile, diag};
use offthread_schema::emit::rust::{RustOptions, emit as emit_rust};
use offthread_schema::emit::ts::{TsOptions, emit as emit_ts};

struct Target {
    schema: PathBuf,
    rust: PathBuf,
    rust_runtime: &'static str,
    ts: PathBuf,
    ts_runtime: &'static str,
}

fn targets() -> Vec<Target> {
    let krate = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let repo = krate.join("../..");
    let ts_dir = repo.join("packages/offthread/src/schema/generated");
    let mut out = Vec::new();
    for name in ["temperature", "scooter"] {
        out.push(Target {
            schema: krate.join(format!("schemas/{name}.km")),
            rust: krate.join(format!("../offthread-schema-rt/src/generated/{name}.rs")),
            rust_runtime: "crate",
            ts: ts_dir.join(format!("{name}.ts")),
            ts_runtime: "../runtime.js",
        });
    }
    for name in [
        "kitchen_sink",
        "evolution_v1",
        "evolution_v2",
        "unions",
        "records",
        "records_v1",
    ] {
        out.push(Target {
            schema: common::fixtures().join(format!("{name}.km")),
            rust: krate.join(format!("tests/generated/{name}.rs")),
            rust_runtime: "::offthread_schema_rt",
            ts: ts_dir.join(format!("fixtures/{name}.ts")),
            ts_runtime: "../../runtime.js",
        });
    }
    out
}

#[test]
fn generated_files_match_the_emitters() {
    let mut drift = Vec::new();
    for t in targets() {
        let src = std::fs::read_to_string(&t.schema).unwrap();
        let name = t.schema.display().to_string();
        let schema =
            compile(&src).unwrap_or_else(|d| panic!("{}", diag::render_all(&d, &name, &src)));
        let rust = emit_rust(
            &schema,
            &RustOptions {
                runtime: t.rust_runtime.into(),
            },
        )
        .unwrap();
        check(&t.rust, &rust, &mut drift);
        let ts = emit_ts(
            &schema,
            &TsOptions {
                runtime: t.ts_runtime.into(),
            },
        )
        .unwrap();
        check(&t.ts, &ts, &mut drift);
    }
    assert!(
        drift.is_empty(),
        "generated files are stale (rerun with OFFTHREAD_SCHEMA_BLESS=1):\n{}",
        drift.join("\n")
    );
}

#[test]
fn every_generated_file_carries_the_header() {
    for t in targets() {
        for path in [&t.rust, &t.ts] {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            assert!(
                text.starts_with(offthread_schema::emit::HEADER),
                "{} lacks the DO NOT EDIT header",
                path.display()
            );
        }
    }
}
