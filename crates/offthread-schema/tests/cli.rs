//! The `offthread-schema` binary: `check` and `build`.

mod common;

use std::process::Command;

fn cli() -> Command {
    Command::new(env!("CARGO_BIN_EXE_offthread-schema"))
}

#[test]
fn check_accepts_a_valid_schema() {
    let out = cli()
        .arg("check")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/schemas/temperature.km"
        ))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).ends_with(": ok\n"));
}

#[test]
fn check_reports_diagnostics_and_fails() {
    let input = common::fixtures().join("errors/unknown_type/input.km");
    let out = cli().arg("check").arg(&input).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error[E0004]: unknown type `vec3`"),
        "{stderr}"
    );
    assert!(stderr.contains("input.km:2:10"), "{stderr}");
}

#[test]
fn build_writes_rust_and_ts() {
    let dir = std::env::temp_dir().join(format!("offthread-schema-cli-{}", std::process::id()));
    let out = cli()
        .args([
            "build",
            concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/scooter.km"),
            "--rust",
        ])
        .arg(dir.join("rs"))
        .arg("--ts")
        .arg(dir.join("ts"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rs = std::fs::read_to_string(dir.join("rs/scooter.rs")).unwrap();
    let ts = std::fs::read_to_string(dir.join("ts/scooter.ts")).unwrap();
    assert!(
        rs.contains("use ::offthread_schema_rt as rt;")
            && rs.contains("pub struct ScooterFleetRef")
    );
    assert!(
        ts.contains("import * as rt from 'offthread/schema';")
            && ts.contains("export class ScooterSoaReader")
    );
    std::fs::remove_dir_all(dir).unwrap();
}
