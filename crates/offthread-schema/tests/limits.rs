//! The compiler's limits (docs/schema-format.md §4.1, issue 31): hostile sources get one
//! located diagnostic with a stable code, quickly, instead of a stack overflow, a trap,
//! quadratic time or gigabytes of output. The same sources are in the fuzz corpus
//! (tests/fixtures/fuzz/compile_schema/); `npm run fuzz` replays them.

use std::time::{Duration, Instant};

use offthread_schema::compiler::limits::{
    MAX_DIAGNOSTICS, MAX_SOA_COLUMNS, MAX_SOURCE_BYTES, MAX_TYPE_DEPTH,
};
use offthread_schema::compiler::{compile, ir};
use offthread_schema::driver::{BuildOptions, Output, build};
use offthread_schema::{emit, rt};

fn build_all(src: &str) -> Output {
    build(src, &BuildOptions::new("h.km", "h"))
}

/// The one diagnostic of `src`: its code and 1-based (line, column).
fn only(src: &str) -> (&'static str, (usize, usize)) {
    let out = build_all(src);
    assert_eq!(out.diagnostics.len(), 1, "{}", out.rendered);
    assert!(out.files.is_empty());
    (out.diagnostics[0].code, out.positions[0])
}

fn fields(n: usize, f: impl Fn(usize) -> String) -> String {
    (0..n).map(f).collect::<Vec<_>>().join("\n")
}

/// `n` fields of one type, one per line, in a SoA item `row` of `batch`.
fn soa_row(n: usize) -> String {
    format!(
        "struct row (inline) {{\n{}\n}}\nstruct batch (dynamic) {{\n    rows: []row #soa;\n}}\n",
        fields(n, |i| format!("    c{i}: u8;"))
    )
}

#[test]
fn the_column_limit_is_the_readers_default() {
    assert_eq!(
        MAX_SOA_COLUMNS,
        rt::ReadOptions::default().max_soa_columns as usize
    );
}

#[test]
fn a_soa_row_past_the_readers_column_limit_fails_to_compile() {
    // Issue 31 item 3: 300 columns compiled, then the generated reader refused them.
    let (code, at) = only(&soa_row(300));
    assert_eq!((code, at), ("E0018", (304, 11)));
    assert_eq!(only(&soa_row(257)).0, "E0018");
    assert!(build_all(&soa_row(256)).diagnostics.is_empty());
}

#[test]
fn a_bov_union_slice_past_the_readers_variant_limit_fails_to_compile() {
    let union = |n: usize, layout: &str| {
        format!(
            "struct s (inline) {{ x: u8; }}\nunion u (dynamic, u16) {{\n{}\n}}\nstruct r (dynamic) {{ xs: []u #{layout}; }}\n",
            fields(n, |i| format!("    v{i}: s;"))
        )
    };
    for layout in ["bovoa", "bovos"] {
        assert_eq!(only(&union(257, layout)), ("E0018", (261, 26)));
        assert!(build_all(&union(256, layout)).diagnostics.is_empty());
    }
    // The other union layouts have no variant table.
    assert!(build_all(&union(300, "soa")).diagnostics.is_empty());
}

fn quick(src: &str) -> (&'static str, (usize, usize)) {
    let t = Instant::now();
    let r = only(src);
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "took {:?}",
        t.elapsed()
    );
    r
}

#[test]
fn brackets_nested_100_000_deep_are_refused_without_recursing() {
    // Before: a stack overflow (the test process aborted).
    let src = format!(
        "struct a (dynamic) {{\n  x: {}u8;\n}}\n",
        "[]".repeat(100_000)
    );
    assert_eq!(quick(&src), ("E0019", (2, 6 + 2 * MAX_TYPE_DEPTH)));
}

#[test]
fn an_inline_chain_of_10_000_structs_is_refused_at_depth_32() {
    // Before: a stack overflow in layout, which recursed along the chain.
    let src = fields(10_000, |i| {
        let ty = if i == 9_999 {
            "u32".into()
        } else {
            format!("s{}", i + 1)
        };
        format!("struct s{i} (inline) {{ x: {ty}; }}")
    });
    assert_eq!(quick(&src), ("E0019", (33, 26)));
}

#[test]
fn a_soa_item_fanning_out_to_65_536_columns_stops_at_257() {
    // 685 bytes whose item flattens to 2^16 columns: 167 MB of TS before.
    let mut src = String::from("struct root (dynamic) { items: []l0; }\n");
    for i in 0..16 {
        src += &format!("struct l{i} (inline) {{ a: l{0}; b: l{0}; }}\n", i + 1);
    }
    src += "struct l16 (inline) { x: u8; }\n";
    assert_eq!(quick(&src), ("E0018", (1, 32)));
    // 2^20 leaves that are not columns: one diagnostic each before, 257 steps now.
    let mut src =
        String::from("struct d (dynamic) { x: u8; }\nstruct root (dynamic) { items: []l0; }\n");
    for i in 0..20 {
        src += &format!("struct l{i} (inline) {{ a: l{0}; b: l{0}; }}\n", i + 1);
    }
    src += "struct l20 (inline) { x: d; }\n";
    let out = build_all(&src);
    assert!(out.diagnostics.iter().all(|d| d.code == "E0012"));
    assert!(out.diagnostics.len() <= MAX_DIAGNOSTICS);
}

#[test]
fn five_thousand_unknown_types_on_one_line_render_100_diagnostics_of_bounded_size() {
    // 2.9 GB before: each diagnostic rendered the whole 68 KB line.
    let src = format!(
        "struct a (dynamic) {{ {} }}\n",
        (0..5_000)
            .map(|i| format!("f{i}: t{i};"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let t = Instant::now();
    let out = build_all(&src);
    assert!(t.elapsed() < Duration::from_secs(1));
    assert_eq!(out.diagnostics.len(), MAX_DIAGNOSTICS);
    assert!(out.diagnostics.iter().all(|d| d.code == "E0004"));
    assert_eq!(out.positions[0], (1, 26));
    assert_eq!(out.positions[99], (1, 997));
    assert!(
        out.rendered.len() < MAX_DIAGNOSTICS * 1_000,
        "{}",
        out.rendered.len()
    );
    assert!(
        out.rendered
            .ends_with("note: at most 100 errors are shown\n")
    );
    let last = out.rendered.split("error[").last().unwrap();
    assert!(last.contains("| …"), "{last}");
}

#[test]
fn a_source_past_512_kib_is_refused_where_it_passes_the_limit() {
    let line = "// padding\n";
    let src = format!("struct a (inline) {{ x: u8; }}\n{}", line.repeat(60_000));
    let (code, (l, c)) = quick(&src);
    let before = MAX_SOURCE_BYTES - 29;
    assert_eq!(
        (code, l, c),
        ("E0020", 2 + before / line.len(), 1 + before % line.len())
    );
    assert!(build_all(&src[..MAX_SOURCE_BYTES]).diagnostics.is_empty());
}

#[test]
fn generated_code_past_16_mib_is_refused_at_the_declaration_that_passes_it() {
    // 20,000 structs compiled to 110 MB of Rust and TS (3 s in wasm) before.
    let src = fields(12_000, |i| format!("struct s{i} (inline) {{ x: u32; }}"));
    let (code, (line, col)) = quick(&src);
    assert_eq!((code, col), ("E0021", 8));
    assert!(line > 1_000 && line < 12_000, "{line}");
}

#[test]
fn generated_c_past_16_mib_is_refused_at_the_declaration_that_passes_it() {
    // The C emitter had no limit: the header of any schema was written whole.
    let src = fields(14_000, |i| format!("struct s{i} (inline) {{ x: u32; }}"));
    let mut opts = BuildOptions::new("h.km", "h");
    (opts.rust, opts.ts, opts.c) = (false, false, true);
    let out = build(&src, &opts);
    assert_eq!(out.diagnostics.len(), 1, "{}", out.rendered);
    assert!(out.files.is_empty());
    let (code, (line, col)) = (out.diagnostics[0].code, out.positions[0]);
    assert_eq!((code, col), ("E0021", 8));
    assert!(line > 1_000 && line < 14_000, "{line}");
    // The limit counts per declaration: one byte short of a header refuses its last one.
    let schema = compile("struct a (inline) { x: u32; }\nstruct b (inline) { y: u8; }\n").unwrap();
    let whole = emit::c::emit(&schema, "h").unwrap();
    assert!(emit::c::emit_within(&schema, "h", whole.len()).is_ok());
    let refused = emit::c::emit_within(&schema, "h", whole.len() - 1).unwrap_err();
    assert_eq!((refused.code, refused.span), ("E0021", schema.spans[1]));
}

#[test]
fn emitting_is_linear_in_the_declarations() {
    // Each struct asked the whole schema which structs are SoA/AoS items: 20,000
    // structs took 11.6 s in wasm. 4× the structs took 13× the time (quadratic) before,
    // about 4× now. Unlimited output, to time the emitters alone; best of 3 (shared CPUs).
    let time = |n: usize| {
        let src = fields(n, |i| format!("struct s{i} (inline) {{ x: u32; }}"));
        let schema: ir::Schema = compile(&src).unwrap();
        (0..3)
            .map(|_| {
                let t = Instant::now();
                emit::ts::emit_within(&schema, &Default::default(), usize::MAX).unwrap();
                emit::rust::emit_within(&schema, &Default::default(), usize::MAX).unwrap();
                t.elapsed()
            })
            .min()
            .unwrap()
    };
    let (small, large) = (time(3_500), time(14_000));
    assert!(
        large < small * 8,
        "3,500 structs: {small:?}, 14,000: {large:?}"
    );
}

#[test]
fn long_names_and_literals_are_not_copied_into_messages() {
    let name = "n".repeat(300_000);
    let (code, _) = quick(&format!("struct {name} (inline) {{ x: u8; }}\n"));
    assert_eq!(code, "E0020");
    let out = build_all(&format!("enum e (u8) {{ a = {}; }}\n", "9".repeat(400_000)));
    assert_eq!(out.diagnostics[0].code, "E0002");
    assert!(out.rendered.len() < 1_000, "{}", out.rendered.len());
}

#[test]
fn the_hostile_fuzz_fixtures_get_diagnostics_quickly() {
    // tests/fixtures/fuzz/compile_schema/: the inputs above at fuzzer size (libFuzzer's
    // -max_len is 16 KiB); `npm run fuzz` seeds the corpus with them.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/fuzz/compile_schema");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let src = std::fs::read_to_string(&path).unwrap();
        let t = Instant::now();
        let out = build_all(&src);
        let name = path.display();
        assert!(
            t.elapsed() < Duration::from_secs(1),
            "{name}: {:?}",
            t.elapsed()
        );
        assert!(!out.diagnostics.is_empty(), "{name} compiled");
        assert!(out.diagnostics.len() <= MAX_DIAGNOSTICS, "{name}");
        assert!(
            out.rendered.len() < 64 * 1024,
            "{name}: {}",
            out.rendered.len()
        );
        n += 1;
    }
    assert!(n >= 10, "fixtures missing from {}", dir.display());
}
