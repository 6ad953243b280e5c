//! The Karmem paper's Figures 1 and 35 compile as printed, with the IR they describe.

mod common;

use offthread_schema::compiler::compile;
use offthread_schema::compiler::ir::{Access, Pattern};

fn figure(name: &str) -> String {
    std::fs::read_to_string(common::fixtures().join(format!("papers/{name}.km"))).unwrap()
}

#[test]
fn figure_1_compiles_as_printed() {
    let s = compile(&figure("figure1")).expect("Figure 1 compiles");
    let i = &s.interfaces[0];
    assert_eq!(i.name, "updater");
    assert_eq!(i.pattern, Pattern::Fanout);
    let mems: Vec<_> = i
        .memories
        .iter()
        .map(|m| (m.name.as_str(), m.import, m.export, m.pages))
        .collect();
    assert_eq!(
        mems,
        [
            ("shared", Access::Write, Access::Read, 64),
            ("out", Access::Read, Access::Write, 1)
        ]
    );
    let f = &i.functions[0];
    assert_eq!(f.name, "update");
    assert_eq!(
        (f.params[0].name.as_str(), f.params[0].memory),
        ("input", Some(0))
    );
    assert_eq!(
        (f.results[0].name.as_str(), f.results[0].memory),
        ("res", Some(1))
    );
}

#[test]
fn figure_35_compiles_as_printed() {
    let s = compile(&figure("figure35")).expect("Figure 35 compiles");
    let producer = &s.interfaces[0];
    assert_eq!(producer.name, "test_producer");
    assert_eq!(producer.pattern, Pattern::Singleton);
    let produce = &producer.functions[0];
    // `(producer_input) -> (producer_output)`: unnamed, in the callee's own memory.
    assert_eq!(produce.params[0].name, "input");
    assert_eq!(produce.params[0].memory, None);
    assert_eq!(produce.results[0].name, "output");
    let consumer = &s.interfaces[1];
    assert_eq!(consumer.pattern, Pattern::Fanout);
    let consume = &consumer.functions[0];
    assert_eq!(consume.params[0].memory, Some(0));
    assert_eq!(consume.results[0].memory, Some(1));
    assert_eq!(consumer.memories[0].pages, 1024);
}

#[test]
fn every_pattern_and_param_form_parses() {
    let src = "struct m (dynamic) { x: u32; }
        interface a (dynamic, direct) { f: fn(m) (m); }
        interface b (dynamic, pool) { mem: memory (import: write, export: read, 2); g: (x: m @ mem, m) -> (); }
        interface c (dynamic, singleton) { h: () -> (m, m); }";
    let s = compile(src).unwrap();
    let patterns: Vec<_> = s.interfaces.iter().map(|i| i.pattern).collect();
    assert_eq!(
        patterns,
        [Pattern::Direct, Pattern::Pool, Pattern::Singleton]
    );
    let g = &s.interfaces[1].functions[0];
    assert_eq!(g.params[0].name, "x");
    assert_eq!(g.params[1].name, "input1");
    assert!(g.results.is_empty());
    let h = &s.interfaces[2].functions[0];
    let names: Vec<_> = h.results.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["output0", "output1"]);
}

#[test]
fn figures_emit_rust_and_ts() {
    for name in ["figure1", "figure35"] {
        let out = offthread_schema::driver::build(
            &figure(name),
            &offthread_schema::driver::BuildOptions::new(format!("{name}.km"), name),
        );
        assert!(out.diagnostics.is_empty(), "{}", out.rendered);
        assert_eq!(out.files.len(), 2);
    }
}
