//! The compiler over mutated schema text: diagnostics only, never a panic (the
//! `compile_schema` fuzz target does the same, longer, with coverage feedback).

mod common;

use offthread_schema::compiler::compile;
use offthread_schema::emit;

#[test]
fn mutated_schemas_never_panic() {
    let sources: Vec<String> = ["kitchen_sink", "evolution_v2"]
        .iter()
        .map(|n| std::fs::read_to_string(common::fixtures().join(format!("{n}.km"))).unwrap())
        .collect();
    let tokens = [
        "struct",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        ";",
        ":",
        "#soa",
        "#string",
        "@",
        "=",
        "0",
        "99999999999",
        "u8",
        "inline",
        "dynamic",
        "union",
        "enum",
        "\u{e9}",
        "//",
    ];
    let mut rng = common::Rng::new(0x5eed_0006);
    let mut compiled = 0;
    for i in 0..20_000 {
        let mut src = sources[i % sources.len()].clone();
        for _ in 0..1 + rng.below(3) {
            // Mutate on char boundaries so the text stays valid UTF-8.
            let cuts: Vec<usize> = src
                .char_indices()
                .map(|(i, _)| i)
                .chain([src.len()])
                .collect();
            let at = cuts[rng.below(cuts.len())];
            match rng.below(3) {
                0 => src.insert_str(at, tokens[rng.below(tokens.len())]),
                1 => {
                    let end = cuts
                        .iter()
                        .copied()
                        .find(|c| *c > at + rng.below(12))
                        .unwrap_or(src.len());
                    src.replace_range(at..end, "");
                }
                _ => src.truncate(at),
            }
        }
        if let Ok(schema) = compile(&src) {
            compiled += 1;
            emit::rust::emit(&schema, &Default::default()).unwrap();
            emit::ts::emit(&schema, &Default::default()).unwrap();
        }
    }
    assert!(compiled > 0, "some mutations must still compile");
}
