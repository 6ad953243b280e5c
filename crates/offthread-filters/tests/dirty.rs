//! Dirty data (docs/streams.md, "Dirty data"): nullable columns with Arrow validity
//! bitmaps, defaults, `onError: "skip"` with the skipped lines reported, a BOM cut
//! anywhere, header names with spaces around them, CRLF, ragged rows named by line,
//! and columns inferred from the header and the first rows — the same rules for CSV
//! and NDJSON where they apply, at every split of the input.

mod common;

use common::run_chunks;
use offthread_filters::{BAD_RECORD, INVALID_SPEC, REPORT_MAGIC, VALIDITY};
use offthread_schema_rt::{ReadOptions, StructView, field_path_hash};

/// One column's values as text (`null` for a null), read from a batch message.
type Table = Vec<Vec<String>>;

/// Splits reported outputs into (message, report JSON).
fn split_report(out: &[u8]) -> (&[u8], serde_json::Value) {
    assert_eq!(&out[out.len() - 4..], REPORT_MAGIC);
    let n = out.len();
    let json_len = u32::from_le_bytes(out[n - 8..n - 4].try_into().unwrap()) as usize;
    let msg_len = u32::from_le_bytes(out[n - 12..n - 8].try_into().unwrap()) as usize;
    assert_eq!(msg_len + json_len + 12, n);
    let json = serde_json::from_slice(&out[msg_len..msg_len + json_len]).unwrap();
    (&out[..msg_len], json)
}

/// Columns in a batch's SoA table (its header's word A).
fn column_count(msg: &[u8]) -> u32 {
    let word = |at: usize| u32::from_le_bytes(msg[at..at + 4].try_into().unwrap());
    word(word(4) as usize + 8)
}

/// Reads columns `types` (field i = column i; a trailing `?`: nullable) of a batch.
fn read(msg: &[u8], types: &[&str]) -> Table {
    let root = StructView::root_dynamic(msg, ReadOptions::DEFAULT).unwrap();
    let soa = root.soa(4).unwrap();
    let mut rows = vec![Vec::new(); soa.len()];
    for (f, ty) in types.iter().enumerate() {
        let f = f as u32;
        let valid = soa
            .column::<u8>(field_path_hash(&[f, VALIDITY]), 1)
            .unwrap();
        let has_validity = ty.ends_with('?');
        let ty = &ty.trim_end_matches('?');
        for (i, row) in rows.iter_mut().enumerate() {
            let bit = valid.get(i / 8).unwrap_or(0) >> (i % 8) & 1;
            if has_validity && bit == 0 {
                row.push("null".into());
                continue;
            }
            let h = field_path_hash(&[f]);
            row.push(match *ty {
                "f64" => soa.column::<f64>(h, 1).unwrap().get(i).unwrap().to_string(),
                "i64" => soa.column::<i64>(h, 1).unwrap().get(i).unwrap().to_string(),
                "i32" => soa.column::<i32>(h, 1).unwrap().get(i).unwrap().to_string(),
                "bool" => (soa.column::<u8>(h, 1).unwrap().get(i).unwrap() != 0).to_string(),
                _ => soa.utf8_column(h).unwrap().get(i).unwrap().to_owned(),
            });
        }
    }
    rows
}

/// Every output's rows and reports, for the input cut at `cuts`.
fn run(
    spec: &str,
    input: &[u8],
    cuts: &[usize],
    types: &[&str],
) -> Result<(Table, Vec<serde_json::Value>), String> {
    let mut chunks = Vec::new();
    let mut at = 0;
    for &c in cuts {
        chunks.push(&input[at..c]);
        at = c;
    }
    chunks.push(&input[at..]);
    let outs = run_chunks(spec, &chunks).map_err(|e| format!("{}: {}", e.code, e.message))?;
    let mut rows = Vec::new();
    let mut reports = Vec::new();
    for out in outs.iter().filter(|o| !o.is_empty()) {
        let (msg, report) = split_report(out);
        if !msg.is_empty() {
            rows.extend(read(msg, types));
        }
        reports.push(report);
    }
    Ok((rows, reports))
}

fn strings(rows: &[&[&str]]) -> Table {
    rows.iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect()
}

const CSV_COLUMNS: &str = r#"[
    {"name":"id","type":"i64"},
    {"name":"amount","type":"f64","nullable":true},
    {"name":"city","type":"string","default":"?"},
    {"name":"ok","type":"bool","default":false}
]"#;

fn csv_spec(on_error: &str) -> String {
    format!(
        r#"{{"kind":"csv","layout":"records","report":true,"onError":"{on_error}","columns":{CSV_COLUMNS}}}"#
    )
}

/// A BOM, CRLF, header names with spaces, empty cells, a ragged row, a bad number.
const DIRTY: &[u8] = b"\xEF\xBB\xBF id , amount,city ,ok\r\n1,2.5,Oslo,true\r\n2,,,\r\n3,x,Rome,true\r\n4,1\r\n5, 7 ,\"Li\r\nma\",TRUE\r\n";

#[test]
fn a_dirty_csv_skips_and_reports_its_bad_rows_at_every_split() {
    let types = ["i64", "f64?", "string", "bool"];
    let want = strings(&[
        &["1", "2.5", "Oslo", "true"],
        &["2", "null", "?", "false"],
        &["5", "7", "Li\r\nma", "true"],
    ]);
    for at in 0..=DIRTY.len() {
        for b in (at..=DIRTY.len()).step_by(7) {
            let (rows, reports) = run(&csv_spec("skip"), DIRTY, &[at, b], &types).unwrap();
            assert_eq!(rows, want, "cut at {at}, {b}");
            let skipped: u64 = reports.iter().filter_map(|r| r["skipped"].as_u64()).sum();
            let lines: Vec<u64> = reports
                .iter()
                .filter_map(|r| r["lines"].as_array())
                .flatten()
                .map(|l| l.as_u64().unwrap())
                .collect();
            assert_eq!((skipped, lines), (2, vec![4, 5]), "cut at {at}, {b}");
            // The columns are announced once, in the first report.
            assert_eq!(reports[0]["columns"][1]["nullable"], true);
            assert_eq!(
                reports
                    .iter()
                    .filter(|r| r.get("columns").is_some())
                    .count(),
                1
            );
        }
    }
    // Failing instead: the first bad row, by line.
    let e = run(&csv_spec("fail"), DIRTY, &[], &types).unwrap_err();
    assert_eq!(
        e,
        format!("{BAD_RECORD}: line 4: column \"amount\": \"x\" is not a f64")
    );
    let ragged = b"id,amount,city,ok\n1,1,a,true\n\n2,1\n";
    let e = run(&csv_spec("fail"), ragged, &[], &types).unwrap_err();
    assert_eq!(e, format!("{BAD_RECORD}: line 4: 2 fields, expected 4"));
}

#[test]
fn the_validity_bitmap_is_arrows() {
    // 11 rows, every third amount empty: bits LSB first, 1 = valid, zero padding.
    let mut text = String::from("id,amount,city,ok\n");
    for i in 0..11 {
        let amount = if i % 3 == 0 {
            String::new()
        } else {
            format!("{i}.5")
        };
        text += &format!("{i},{amount},c,true\n");
    }
    let outs = run_chunks(&csv_spec("fail"), &[text.as_bytes()]).unwrap();
    let (msg, _) = split_report(&outs[0]);
    let root = StructView::root_dynamic(msg, ReadOptions::DEFAULT).unwrap();
    let soa = root.soa(4).unwrap();
    let bits = soa
        .column::<u8>(field_path_hash(&[1, VALIDITY]), 1)
        .unwrap();
    let bytes: Vec<u8> = (0..soa.len()).map(|i| bits.get(i).unwrap()).collect();
    // Rows 0, 3, 6, 9 null: 0b1011_0110, then rows 8..11: 0b0000_0101 (row 9 null).
    assert_eq!(bytes[..2], [0b1011_0110, 0b0000_0101]);
    assert!(bytes[2..].iter().all(|&b| b == 0));
    // Only the nullable column has a validity column (4 values + 1).
    assert_eq!(column_count(msg), 5);
}

#[test]
fn ndjson_follows_the_same_rules() {
    let spec = format!(
        r#"{{"kind":"ndjson","layout":"records","report":true,"onError":"skip","columns":{CSV_COLUMNS}}}"#
    );
    let text = "\u{feff}{\"id\":1,\"amount\":2.5,\"city\":\"Oslo\",\"ok\":true}\r\n\
                {\"id\":2,\"amount\":null}\n\
                {\"id\":3,\"amount\":\"x\"}\n\
                not json\n\
                {\"id\":5,\"amount\":7,\"city\":\"Lima\",\"ok\":null}\n";
    let types = ["i64", "f64?", "string", "bool"];
    let want = strings(&[
        &["1", "2.5", "Oslo", "true"],
        &["2", "null", "?", "false"],
        &["5", "7", "Lima", "false"],
    ]);
    for at in 0..=text.len() {
        let (rows, reports) = run(&spec, text.as_bytes(), &[at], &types).unwrap();
        assert_eq!(rows, want, "cut at {at}");
        let lines: Vec<u64> = reports
            .iter()
            .filter_map(|r| r["lines"].as_array())
            .flatten()
            .map(|l| l.as_u64().unwrap())
            .collect();
        assert_eq!(lines, vec![3, 4], "cut at {at}");
    }
    // A missing key of a column that takes no null fails the row (by line), as in CSV.
    let fail = spec.replace("\"skip\"", "\"fail\"");
    let e = run(&fail, b"{\"amount\":1}\n", &[], &types).unwrap_err();
    assert_eq!(e, format!("{BAD_RECORD}: line 1: column \"id\": no \"id\""));
}

#[test]
fn columns_are_inferred_from_the_header_and_first_rows() {
    let spec = r#"{"kind":"csv","layout":"records","report":true,"inferRows":3}"#;
    let text = b"\xEF\xBB\xBFid, price ,name,flag,empty\n1,2.5,a,true,\n2,,b b,FALSE,\n3,-1e3,\"c,d\",,\n4,5,e,true,\n";
    let types = ["f64?", "f64?", "string", "bool?", "string"];
    let want = strings(&[
        &["1", "2.5", "a", "true", ""],
        &["2", "null", "b b", "false", ""],
        &["3", "-1000", "c,d", "null", ""],
        &["4", "5", "e", "true", ""],
    ]);
    for at in 0..=text.len() {
        let (rows, reports) = run(spec, text, &[at], &types).unwrap();
        assert_eq!(rows, want, "cut at {at}");
        let columns: Vec<(String, String, bool)> = reports[0]["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_owned(),
                    c["type"].as_str().unwrap().to_owned(),
                    c["nullable"].as_bool().unwrap(),
                )
            })
            .collect();
        let named = |n: &str, t: &str, null: bool| (n.to_owned(), t.to_owned(), null);
        assert_eq!(
            columns,
            vec![
                named("id", "f64", true),
                named("price", "f64", true),
                named("name", "string", false),
                named("flag", "bool", true),
                named("empty", "string", false),
            ],
            "cut at {at}"
        );
    }
    // A value past the rows typed from that does not fit fails by line (or is skipped).
    let e = run(spec, b"n\n1\n2\n3\nx\n", &[], &["f64?"]).unwrap_err();
    assert_eq!(
        e,
        format!("{BAD_RECORD}: line 5: column \"n\": \"x\" is not a f64")
    );
    // The sample is whole records, however the input is cut: blank lines (and quoted
    // newlines) are not rows, so the rows typed from here are "5" (f64) at every split.
    let one = r#"{"kind":"csv","layout":"records","report":true,"inferRows":1}"#;
    let text = b"n\n\n\n\n5\nx\n";
    for at in 0..=text.len() {
        let e = run(one, text, &[at], &["f64?"]).unwrap_err();
        assert_eq!(
            e,
            format!("{BAD_RECORD}: line 6: column \"n\": \"x\" is not a f64"),
            "cut at {at}"
        );
    }
    // A last row without a newline is typed from when it is all the input.
    let (rows, _) = run(spec, b"a,b\ntrue,2", &[3], &["bool?", "f64?"]).unwrap();
    assert_eq!(rows, strings(&[&["true", "2"]]));
    // A quote left open while rows are still held back for inference is still an error.
    let e = run(spec, b"a,b\n1,\"2\n", &[], &["f64", "f64"]).unwrap_err();
    assert!(
        e.starts_with("ERR_FILTER_QUOTE_NOT_CLOSED: line 2: "),
        "{e}"
    );
}

#[test]
fn bad_options_are_refused_when_the_filter_opens() {
    use offthread_filters::FilterHandle;
    for (spec, what) in [
        (
            r#"{"kind":"csv","columns":[{"name":"a","type":"f64","nullable":true}]}"#,
            "give it a \"default\" instead",
        ),
        (
            r#"{"kind":"csv","layout":"records","columns":[{"name":"a","type":"f64","nullable":true,"default":1}]}"#,
            "nullable or default, not both",
        ),
        (
            r#"{"kind":"csv","layout":"records","columns":[{"name":"a","type":"i8","default":300}]}"#,
            "default 300 is not a i8",
        ),
        (
            r#"{"kind":"csv","layout":"records","onError":"ignore"}"#,
            "\"onError\" must be",
        ),
        (
            r#"{"kind":"csv","layout":"records","header":false}"#,
            "with \"header\": false give",
        ),
        (r#"{"kind":"csv"}"#, "\"columns\" must be an array"),
        (r#"{"kind":"ndjson"}"#, "needs \"columns\""),
        (
            r#"{"kind":"ndjson","layout":"records","inferRows":0}"#,
            "\"inferRows\" must be 1–100000",
        ),
    ] {
        let e = FilterHandle::from_json(spec).err().expect(spec);
        assert_eq!(e.code, INVALID_SPEC, "{spec}");
        assert!(e.message.contains(what), "{spec}: {}", e.message);
    }
}

/// The fuzz target's property (chunked = one-shot, registry codes) on the dirty-data
/// specs, over inputs drawn from the bytes that matter to them.
#[test]
fn dirty_specs_hold_the_fuzz_property() {
    use offthread_filters::fuzzing::{SPECS, check_chunking};
    const ALPHABET: &[u8] = b"ab1,,\"\n\n\r \t5.e-{}:\"truefalsnul\xEF\xBB\xBF";
    let picks: Vec<u8> = (0..SPECS.len())
        .filter(|&i| SPECS[i].contains("\"report\":true"))
        .map(|i| i as u8)
        .collect();
    assert_eq!(picks.len(), 4);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for round in 0..3000 {
        let len = (next() % 48) as usize;
        let mut data = vec![picks[round % picks.len()], next() as u8, next() as u8];
        data.extend((0..len).map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize]));
        check_chunking(&data);
    }
}

/// The columns a report announces, as (name, type, nullable).
fn announced(report: &serde_json::Value) -> Vec<(String, String, bool)> {
    report["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["type"].as_str().unwrap().to_owned(),
                c["nullable"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// NDJSON without columns: typed from the first `inferRows` lines as CSV's are from
/// its first rows, every column nullable; keys holding objects, arrays or values of two
/// kinds are no column. The same columns and rows at every split, one parser or pieces.
#[test]
fn ndjson_columns_are_inferred_from_the_first_lines() {
    let spec = r#"{"kind":"ndjson","layout":"records","report":true,"inferRows":4}"#;
    let text = "\u{feff}{\"id\":1,\"name\":\"a\",\"ok\":true,\"meta\":{\"x\":[1]},\"mixed\":1}\r\n\
                \n\
                {\"name\":null,\"id\":2.5,\"mixed\":\"one\",\"late\":null}\n\
                not json\n\
                {\"ok\":false,\"id\":-3e2,\"name\":\"c\\u00e9\",\"ok\":null}\n\
                {\"id\":4}\n\
                {\"id\":5,\"name\":\"e\",\"later\":1}\n";
    let types = ["f64?", "string?", "bool?", "string?"];
    let want = strings(&[
        &["1", "a", "true", "null"],
        &["2.5", "null", "null", "null"],
        &["-300", "cé", "null", "null"],
        &["4", "null", "null", "null"],
        &["5", "e", "null", "null"],
    ]);
    let named = |n: &str, t: &str| (n.to_owned(), t.to_owned(), true);
    let columns = vec![
        named("id", "f64"),
        named("name", "string"),
        named("ok", "bool"),
        named("late", "string"),
    ];
    let skip = spec.replace("\"report\"", "\"onError\":\"skip\",\"report\"");
    let bytes = text.as_bytes();
    for at in 0..=bytes.len() {
        for b in (at..=bytes.len()).step_by(11) {
            let (rows, reports) = run(&skip, bytes, &[at, b], &types).unwrap();
            assert_eq!(rows, want, "cut at {at}, {b}");
            assert_eq!(announced(&reports[0]), columns, "cut at {at}, {b}");
            let lines: Vec<u64> = reports
                .iter()
                .filter_map(|r| r["lines"].as_array())
                .flatten()
                .map(|l| l.as_u64().unwrap())
                .collect();
            assert_eq!(lines, vec![4], "cut at {at}, {b}");
        }
        // One parser, a push per chunk: the same rows.
        let offthread_filters::FilterSpec::Records {
            columns,
            format,
            options,
        } = offthread_filters::FilterSpec::from_json(&skip).unwrap()
        else {
            unreachable!()
        };
        let mut one =
            offthread_filters::RecordParser::with_options(columns, format, options).unwrap();
        let mut rows = Vec::new();
        for out in [one.push(&bytes[..at]), one.push(&bytes[at..]), one.finish()] {
            let out = out.unwrap();
            if !out.is_empty() {
                let (msg, _) = split_report(&out);
                if !msg.is_empty() {
                    rows.extend(read(msg, &types));
                }
            }
        }
        assert_eq!(rows, want, "one parser, cut at {at}");
    }
    // A later value that does not fit fails by line (skipped with onError: 'skip').
    let e = run(spec, text.as_bytes(), &[], &types).unwrap_err();
    assert_eq!(
        e,
        format!("{BAD_RECORD}: line 4: not JSON: expected a value at column 1")
    );
    // Both lines are the sample: "a" holds two kinds, so it is no column. Rows of no
    // columns are counted by the report (a SoA table of none cannot be read, R0009).
    let (_, reports) = run(spec, b"{\"a\":1}\n{\"a\":\"x\"}\n", &[], &[]).unwrap();
    assert_eq!(announced(&reports[0]), vec![]);
    assert_eq!(
        reports
            .iter()
            .filter_map(|r| r["rows"].as_u64())
            .sum::<u64>(),
        2
    );
    let one = spec.replace("\"inferRows\":4", "\"inferRows\":1");
    let e = run(&one, b"{\"a\":1}\n{\"a\":\"x\"}\n", &[], &["f64?"]).unwrap_err();
    assert_eq!(
        e,
        format!("{BAD_RECORD}: line 2: column \"a\": \"x\" is not a number")
    );
    // Only null seen: text. A last line without a newline is typed from at the end.
    let (rows, reports) = run(
        spec,
        b"{\"a\":null,\"b\":true}",
        &[5],
        &["string?", "bool?"],
    )
    .unwrap();
    assert_eq!(rows, strings(&[&["null", "true"]]));
    assert_eq!(
        announced(&reports[0]),
        vec![named("a", "string"), named("b", "bool")]
    );
    // No key to type (only nested values, or no objects): rows of no columns.
    for at in 0..=12 {
        let (_, reports) = run(spec, b"{\"a\":[]}\n{}\n", &[at], &[]).unwrap();
        assert_eq!(announced(&reports[0]), vec![], "cut at {at}");
        assert_eq!(
            reports
                .iter()
                .filter_map(|r| r["rows"].as_u64())
                .sum::<u64>(),
            2,
            "cut at {at}"
        );
    }
    // A first line longer than the 4 MiB held for the sample is still typed from.
    let big = format!(
        "{{\"s\":\"{}\",\"n\":1}}\n{{\"n\":2}}\n",
        "x".repeat(5 << 20)
    );
    for at in [0, 1 << 20, (4 << 20) + 3, big.len() - 3] {
        let (rows, reports) = run(spec, big.as_bytes(), &[at], &["string?", "f64?"]).unwrap();
        assert_eq!(
            announced(&reports[0]),
            vec![named("s", "string"), named("n", "f64")]
        );
        assert_eq!(rows.len(), 2, "cut at {at}");
        assert_eq!(
            (rows[0][0].len(), &rows[1][..]),
            (5 << 20, &["null".to_owned(), "2".to_owned()][..])
        );
    }
    // Nothing at all: no output.
    assert_eq!(run(spec, b"", &[], &[]).unwrap().0, Table::new());
}
