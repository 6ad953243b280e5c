//! Fixture folders `tests/fixtures/schema/errors/<case>/{input.km,expected.txt}`:
//! each input must fail with exactly the expected rendered diagnostics.
//! `OFFTHREAD_SCHEMA_BLESS=1` rewrites the expected files.

mod common;

use offthread_schema::compiler::{compile, diag};

#[test]
fn error_fixtures_match_expected_output() {
    let dir = common::fixtures().join("errors");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    assert!(cases.len() >= 15, "fixtures missing from {}", dir.display());
    let mut failures = Vec::new();
    for case in cases {
        let src = std::fs::read_to_string(case.join("input.km")).unwrap();
        let Err(diags) = compile(&src) else {
            failures.push(format!("{}: compiled without errors", case.display()));
            continue;
        };
        let got = diag::render_all(&diags, "input.km", &src);
        let expected_path = case.join("expected.txt");
        if common::bless() {
            std::fs::write(&expected_path, &got).unwrap();
        } else if std::fs::read_to_string(&expected_path).ok().as_deref() != Some(got.as_str()) {
            failures.push(format!("{}:\n{got}", case.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "mismatched diagnostics:\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_code_has_a_fixture_and_is_documented() {
    let mut fixtures = String::new();
    for e in std::fs::read_dir(common::fixtures().join("errors")).unwrap() {
        fixtures +=
            &std::fs::read_to_string(e.unwrap().path().join("expected.txt")).unwrap_or_default();
    }
    let spec =
        std::fs::read_to_string(common::fixtures().join("../../../docs/schema-format.md")).unwrap();
    for (code, title) in diag::CODES {
        // E0015 (two field paths with the same 32-bit hash) has no natural fixture;
        // E0021 needs 16 MiB of generated code (tests/limits.rs builds its input).
        if !matches!(*code, "E0015" | "E0021") {
            assert!(
                fixtures.contains(&format!("error[{code}]")),
                "{code} ({title}) has no fixture"
            );
        }
        assert!(
            spec.contains(&format!("| {code} |")),
            "{code} is not in docs/schema-format.md"
        );
    }
}

#[test]
fn the_repo_schemas_compile() {
    for name in ["temperature", "scooter"] {
        let path = format!("{}/schemas/{name}.km", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(&path).unwrap();
        compile(&src).unwrap_or_else(|d| panic!("{}", diag::render_all(&d, &path, &src)));
    }
}

#[test]
fn every_runtime_error_code_is_documented() {
    use offthread_schema::rt::{ReadError as R, WriteError as W};
    let spec =
        std::fs::read_to_string(common::fixtures().join("../../../docs/schema-format.md")).unwrap();
    let read = [
        R::OutOfBounds {
            offset: 0,
            len: 0,
            buf_len: 0,
        },
        R::BadStructHeader {
            offset: 0,
            header: 0,
        },
        R::Misaligned {
            offset: 0,
            align: 0,
        },
        R::CountExceedsCapacity {
            count: 0,
            capacity: 0,
        },
        R::TooManyColumns {
            columns: 0,
            limit: 0,
        },
        R::DepthLimit { limit: 0 },
        R::BadElementSize {
            expected: 0,
            found: 0,
        },
        R::InvalidString { offset: 0 },
        R::CountTooLarge {
            count: 0,
            buf_len: 0,
        },
        R::TraversalLimit { limit: 0 },
    ];
    let write = [
        W::TooLarge { needed: 0 },
        W::BufferTooSmall {
            needed: 0,
            available: 0,
        },
    ];
    let codes: Vec<&str> = read
        .iter()
        .map(R::code)
        .chain(write.iter().map(W::code))
        .collect();
    let mut unique = codes.clone();
    unique.dedup();
    assert_eq!(unique.len(), codes.len(), "codes must be unique");
    for code in codes {
        assert!(
            spec.contains(&format!("| {code} |")),
            "{code} is not in docs/schema-format.md"
        );
    }
}
