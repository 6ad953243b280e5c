//! Guest code generation (docs/guest-abi.md): the generated files of the repo's test
//! guests and of examples/game match the emitters, descriptors carry what the host
//! reads, and functions the ABI cannot carry are refused. `OFFTHREAD_SCHEMA_BLESS=1`
//! rewrites the files.

mod common;

use common::check;

use std::path::PathBuf;

use offthread_schema::compiler::compile;
use offthread_schema::emit::guest::rust::{GuestOptions, emit as emit_guest};
use offthread_schema::emit::rust::{RustOptions, emit as emit_rust};
use offthread_schema::emit::ts::{TsOptions, emit as emit_ts};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Compares `generated/<stem>.rs` and `generated/<stem>_guest.rs` under `dir` with the
/// emitters' output for `dir/<stem>.km`; returns both for further checks.
fn check_rust_and_guest(
    dir: &std::path::Path,
    stem: &str,
    drift: &mut Vec<String>,
) -> (String, String) {
    let schema =
        compile(&std::fs::read_to_string(dir.join(format!("{stem}.km"))).unwrap()).unwrap();
    let rust = emit_rust(
        &schema,
        &RustOptions {
            runtime: "::offthread_schema_rt".into(),
        },
    )
    .unwrap();
    check(dir.join(format!("generated/{stem}.rs")), &rust, drift);
    let guest = emit_guest(&schema, &GuestOptions::default()).unwrap();
    check(
        dir.join(format!("generated/{stem}_guest.rs")),
        &guest,
        drift,
    );
    (rust, guest)
}

#[test]
fn test_guest_files_match_the_emitters() {
    let src = std::fs::read_to_string(repo().join("tests/guests/guests.km")).unwrap();
    let schema = compile(&src).unwrap();
    let mut drift = Vec::new();
    let (_, guest) = check_rust_and_guest(&repo().join("tests/guests"), "guests", &mut drift);
    assert!(guest.starts_with(offthread_schema::emit::HEADER));
    let ts = emit_ts(
        &schema,
        &TsOptions {
            runtime: "../../runtime.js".into(),
        },
    )
    .unwrap();
    let ts_path = "packages/offthread/src/schema/generated/fixtures/guests.ts";
    check(repo().join(ts_path), &ts, &mut drift);
    assert!(
        drift.is_empty(),
        "stale (rerun with OFFTHREAD_SCHEMA_BLESS=1): {drift:?}"
    );
}

/// tests/integrity/guest: the integrity batches' interface (build.mjs copies these files
/// into every batch crate it builds).
#[test]
fn integrity_guest_files_match_the_emitters() {
    let mut drift = Vec::new();
    check_rust_and_guest(
        &repo().join("tests/integrity/guest"),
        "integrity",
        &mut drift,
    );
    assert!(
        drift.is_empty(),
        "stale (rerun with OFFTHREAD_SCHEMA_BLESS=1): {drift:?}"
    );
}

/// examples/game (Karmem §5.2.4): the player guest's schema, Rust and guest code, and
/// the TS codec its host bundles (runtime `offthread/schema`, as an app imports it).
#[test]
fn game_example_files_match_the_emitters() {
    let dir = repo().join("examples/game");
    let schema = compile(&std::fs::read_to_string(dir.join("game.km")).unwrap()).unwrap();
    let mut drift = Vec::new();
    let (rust, guest) = check_rust_and_guest(&dir, "game", &mut drift);
    let ts = emit_ts(
        &schema,
        &TsOptions {
            runtime: "offthread/schema".into(),
        },
    )
    .unwrap();
    check(dir.join("generated/game.ts"), &ts, &mut drift);
    for code in [&rust, &guest, &ts] {
        assert!(code.starts_with(offthread_schema::emit::HEADER));
    }
    assert!(
        drift.is_empty(),
        "stale (rerun with OFFTHREAD_SCHEMA_BLESS=1): {drift:?}"
    );
}

#[test]
fn figure_35_gives_a_trait_an_export_and_a_client_per_interface() {
    let src = std::fs::read_to_string(common::fixtures().join("papers/figure35.km")).unwrap();
    let code = emit_guest(&compile(&src).unwrap(), &GuestOptions::default()).unwrap();
    for needle in [
        "pub mod test_producer",
        "pub trait TestProducer",
        "fn produce(&mut self, input: schema::ProducerInputRef<'_>) -> Result<schema::ProducerOutput, guest::Error>;",
        "pub mod test_consumer",
        r#""pattern":"fanout""#,
        r#""input":{"memory":"shared"},"output":{"memory":"out"}"#,
        r#"{"name":"shared","import":"write","export":"read","pages":1024}"#,
        "pub struct Client;",
    ] {
        assert!(code.contains(needle), "missing {needle}");
    }
}

#[test]
fn the_fingerprint_follows_the_signature_not_the_fields() {
    let fp = |src: &str| {
        let code = emit_guest(&compile(src).unwrap(), &GuestOptions::default()).unwrap();
        let at = code.find(r#""fingerprint":""#).unwrap() + 15;
        code[at..at + 16].to_string()
    };
    let base = "struct m (dynamic) { x: u32; } interface i (dynamic, direct) { f: (m) -> (m); }";
    let more_fields =
        "struct m (dynamic) { x: u32; y: u8; } interface i (dynamic, direct) { f: (m) -> (m); }";
    let other_pattern = base.replace("direct", "pool");
    let other_fn = base.replace("f: (m)", "g: (m)");
    assert_eq!(fp(base), fp(more_fields));
    assert_ne!(fp(base), fp(&other_pattern));
    assert_ne!(fp(base), fp(&other_fn));
}

#[test]
fn appending_a_function_keeps_the_earlier_functions_fingerprints() {
    // Every "fingerprint" in the descriptor: the interface's, then one per function.
    let fps = |src: &str| {
        let code = emit_guest(&compile(src).unwrap(), &GuestOptions::default()).unwrap();
        let line = code
            .lines()
            .find(|l| l.contains("DESCRIPTOR: &str"))
            .unwrap();
        line.match_indices(r#""fingerprint":""#)
            .map(|(at, k)| line[at + k.len()..at + k.len() + 16].to_string())
            .collect::<Vec<_>>()
    };
    let v1 = "struct m (dynamic) { x: u32; } interface i (dynamic, direct) { f: (m) -> (m); }";
    let v2 = v1.replace("-> (m); }", "-> (m); g: () -> (m); }");
    let other_type = v1.replace("f: (m) -> (m)", "f: (m) -> ()");
    let (a, b, c) = (fps(v1), fps(&v2), fps(&other_type));
    assert_eq!((a.len(), b.len()), (2, 3));
    assert_ne!(a[0], b[0], "the interface changed");
    assert_eq!(a[1], b[1], "f did not");
    assert_ne!(a[1], c[1], "f's result type is part of its fingerprint");
}

#[test]
fn functions_the_abi_cannot_carry_are_refused() {
    for src in [
        "struct m (dynamic) { x: u32; } interface i (dynamic, direct) { f: (m, m) -> (m); }",
        "interface i (dynamic, direct) { f: (u32) -> (); }",
    ] {
        let err = emit_guest(&compile(src).unwrap(), &GuestOptions::default()).unwrap_err();
        assert_eq!(err.code, "E0012", "{src}");
        assert!(err.message.contains("guest ABI"), "{}", err.message);
    }
}

#[test]
fn the_cli_writes_the_guest_module_with_rust_guest() {
    let dir = std::env::temp_dir().join(format!("offthread-guest-cli-{}", std::process::id()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_offthread-schema"))
        .arg("build")
        .arg(common::fixtures().join("papers/figure35.km"))
        .arg("--rust-guest")
        .arg(&dir)
        .arg("--guest-schema")
        .arg("crate::fig35")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let code = std::fs::read_to_string(dir.join("figure35_guest.rs")).unwrap();
    assert!(code.contains("use crate::fig35 as schema;"));
    assert!(code.contains("pub trait TestConsumer"));
    assert!(!dir.join("figure35.rs").exists(), "only what was asked for");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 33 item 1: a function whose input is in an interface memory reads it through
/// the trait's `P: guest::Place` (a slice by default, `guest::Input` in place); one
/// whose input is in the callee's own memory always gets a slice.
#[test]
fn inputs_in_an_interface_memory_are_read_through_the_place_parameter() {
    let src = "struct m (dynamic) { x: u32; }
        interface i (dynamic, fanout) {
            input: memory (import: write, export: read, 4);
            f: (m @ input) -> (m);
            g: (m) -> (m);
            h: () -> ();
        }
        interface j (dynamic, direct) { k: (m) -> (m); }";
    let code = emit_guest(&compile(src).unwrap(), &GuestOptions::default()).unwrap();
    for needle in [
        "pub trait I<P: guest::Place = guest::Copied> {",
        "fn f<'a>(&mut self, input: schema::MRef<'a, P::Source<'a>>) -> Result<schema::M, guest::Error>;",
        "fn g(&mut self, input: schema::MRef<'_>) -> Result<schema::M, guest::Error>;",
        "pub struct Export<P = guest::Copied>(core::marker::PhantomData<P>);",
        "impl<T: I<P>, P: guest::Place> guest::Interface<T> for Export<P> {",
        "let input = schema::MRef::from_source(P::source(input)?).map_err(guest::Error::read)?;",
        "let input = schema::MRef::from_bytes(guest::local(input)?).map_err(guest::Error::read)?;",
        // An interface without such a function is as before.
        "pub trait J {",
        "impl<T: J> guest::Interface<T> for Export {",
        "let input = schema::MRef::from_bytes(input).map_err(guest::Error::read)?;",
    ] {
        assert!(code.contains(needle), "missing {needle}\n{code}");
    }
}

/// The readers' source parameter never shadows a schema type: `S`, or `S1` when a type
/// is named `S`.
#[test]
fn the_readers_source_parameter_avoids_the_schemas_names() {
    let rust = |src: &str| emit_rust(&compile(src).unwrap(), &RustOptions::default()).unwrap();
    let plain = rust("struct m (dynamic) { x: u32; }");
    assert!(
        plain.contains("pub struct MRef<'a, S = &'a [u8]> {"),
        "{plain}"
    );
    assert!(
        plain.contains("impl<'a, S: rt::Source<'a>> MRef<'a, S> {"),
        "{plain}"
    );
    let named = rust("struct s (dynamic) { x: u32; } struct m (dynamic) { y: s; }");
    assert!(
        named.contains("pub struct MRef<'a, S1 = &'a [u8]> {"),
        "{named}"
    );
    assert!(
        named.contains("Result<Option<SRef<'a, S1>>, rt::ReadError>"),
        "{named}"
    );
}
