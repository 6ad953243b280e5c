mod common;

use common::run_chunks;
use offthread_filters::{BAD_RECORD, FilterHandle};
use offthread_schema_rt::{ReadOptions, StructView, field_path_hash};

/// One decoded row: (id u32, score f64, label string, ok bool, delta i16).
type Row = (u32, f64, String, bool, i16);

/// Reads a batch the way the generated reader of
/// `struct row_batch (dynamic) { rows: []row #soa; }` does: root struct, `rows` at +4,
/// columns by the hash of their field index.
fn read_batch(bytes: &[u8]) -> Vec<Row> {
    let root = StructView::root_dynamic(bytes, ReadOptions::DEFAULT).unwrap();
    let soa = root.soa(4).unwrap();
    let id = soa.column::<u32>(field_path_hash(&[0]), 1).unwrap();
    let score = soa.column::<f64>(field_path_hash(&[1]), 1).unwrap();
    let label = soa.utf8_column(field_path_hash(&[2])).unwrap();
    let ok = soa.column::<u8>(field_path_hash(&[3]), 1).unwrap();
    let delta = soa.column::<i16>(field_path_hash(&[4]), 1).unwrap();
    assert!(
        id.as_slice().is_some(),
        "columns are aligned for in-place reads"
    );
    (0..soa.len())
        .map(|i| {
            (
                id.get(i).unwrap(),
                score.get(i).unwrap(),
                label.get(i).unwrap().to_owned(),
                ok.get(i).unwrap() != 0,
                delta.get(i).unwrap(),
            )
        })
        .collect()
}

const COLUMNS: &str = r#"[{"name":"id","type":"u32"},{"name":"score","type":"f64"},{"name":"label","type":"string"},{"name":"ok","type":"bool"},{"name":"delta","type":"i16"}]"#;

fn csv_spec() -> String {
    format!(r#"{{"kind":"csv","columns":{COLUMNS}}}"#)
}

fn ndjson_spec() -> String {
    format!(r#"{{"kind":"ndjson","columns":{COLUMNS}}}"#)
}

fn rows_of(spec: &str, chunks: &[&[u8]]) -> Result<Vec<Row>, offthread_filters::FilterError> {
    Ok(run_chunks(spec, chunks)?
        .iter()
        .filter(|b| !b.is_empty())
        .flat_map(|b| read_batch(b))
        .collect())
}

fn expected() -> Vec<Row> {
    vec![
        (1, 0.5, "plain".into(), true, -3),
        (2, -1e300, "with, comma".into(), false, 0),
        (3, 2.25, "quote \" and\r\nnewline".into(), true, 32767),
        (4294967295, 0.0, "日本語 😀".into(), false, -32768),
        (7, 1.0, String::new(), true, 1),
    ]
}

/// RFC 4180 quoting, CRLF and LF, columns in another order than the schema, an extra
/// column, no newline after the last record.
const CSV: &str = "label,extra,id,ok,score,delta\r\n\
plain,x,1,true,0.5,-3\r\n\
\"with, comma\",x,2,false,-1e300,0\n\
\"quote \"\" and\r\nnewline\",x,3,1,2.25,32767\n\
日本語 😀,x,4294967295,0,0,-32768\n\
,,7,true,1.0,1";

const NDJSON: &str = r#"{"id":1,"score":0.5,"label":"plain","ok":true,"delta":-3}
{"id":2,"score":-1e300,"label":"with, comma","ok":false,"delta":0,"ignored":[1,2]}

{"label":"quote \" and\r\nnewline","id":3,"score":2.25,"ok":true,"delta":32767}
{"id":4294967295,"score":0,"label":"日本語 😀","ok":false,"delta":-32768}
{"id":7,"score":1.0,"label":"","ok":true,"delta":1}"#;

#[test]
fn csv_rows_at_every_split() {
    let input = CSV.as_bytes();
    for a in 0..=input.len() {
        assert_eq!(
            rows_of(&csv_spec(), &[&input[..a], &input[a..]]).unwrap(),
            expected(),
            "cut at {a}"
        );
    }
    for a in (0..=input.len()).step_by(3) {
        for b in (a..=input.len()).step_by(5) {
            let got = rows_of(&csv_spec(), &[&input[..a], &input[a..b], &input[b..]]).unwrap();
            assert_eq!(got, expected(), "cuts at {a}, {b}");
        }
    }
}

#[test]
fn ndjson_rows_at_every_split() {
    let input = NDJSON.as_bytes();
    for a in 0..=input.len() {
        assert_eq!(
            rows_of(&ndjson_spec(), &[&input[..a], &input[a..]]).unwrap(),
            expected(),
            "cut at {a}"
        );
    }
}

#[test]
fn csv_without_a_header_is_positional() {
    let spec = format!(r#"{{"kind":"csv","header":false,"delimiter":";","columns":{COLUMNS}}}"#);
    let rows = rows_of(&spec, &[b"9;1.5;a;false;2\n10;2;b;true;-2\n"]).unwrap();
    assert_eq!(
        rows,
        vec![
            (9, 1.5, "a".into(), false, 2),
            (10, 2.0, "b".into(), true, -2)
        ]
    );
}

#[test]
fn each_push_yields_the_rows_it_completed() {
    let mut h = FilterHandle::from_json(&csv_spec()).unwrap();
    assert!(
        !h.push_now(
            b"label,id,ok,score,delta
x,1,true,1,1
y,2"
        )
        .unwrap()
        .is_empty()
    );
    assert!(
        h.push_now(b",tr").unwrap().is_empty(),
        "no row completed: no batch"
    );
    let last = h.push_now(b"ue,2,2\n").unwrap();
    assert_eq!(read_batch(&last), vec![(2, 2.0, "y".into(), true, 2)]);
    assert!(h.finish_now().unwrap().is_empty());
}

#[test]
fn bad_records_fail_with_their_number() {
    let header = "label,id,ok,score,delta\n";
    for (body, what) in [
        (
            "a,1,true,1,1\nb,x,true,1,1\n",
            "line 3: column \"id\": \"x\" is not a u32",
        ),
        (
            "a,1,true,1,1\nb,-1,true,1,1\n",
            "line 3: column \"id\": \"-1\" is not a u32",
        ),
        (
            "a,1,yes,1,1\n",
            "line 2: column \"ok\": \"yes\" is not a bool (true/false/1/0)",
        ),
        (
            "a,1,true,1,40000\n",
            "line 2: column \"delta\": \"40000\" is not a i16",
        ),
        ("a,1,true,1\n", "line 2: 4 fields, expected 5"),
        (
            "a,1,true,,1\n",
            "line 2: column \"score\": \"\" is not a f64",
        ),
    ] {
        let input = format!("{header}{body}");
        let e = rows_of(&csv_spec(), &[input.as_bytes()]).unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (BAD_RECORD, what));
    }
    let e = rows_of(&csv_spec(), &[b"label,id\n"]).unwrap_err();
    assert_eq!(e.message, "line 1: the header has no column \"score\"");
    let e = rows_of(
        &csv_spec(),
        &[b"label,id,ok,score,delta\n\xff,1,true,1,1\n"],
    )
    .unwrap_err();
    assert_eq!(e.code, BAD_RECORD);

    for (line, what) in [
        ("[1]", "line 1: not a JSON object"),
        (r#"{"id":1}"#, "line 1: column \"score\": no \"score\""),
        (
            r#"{"id":1.5,"score":1,"label":"","ok":true,"delta":1}"#,
            "line 1: column \"id\": 1.5 is not a u32",
        ),
        (
            r#"{"id":1,"score":"1","label":"","ok":true,"delta":1}"#,
            "line 1: column \"score\": \"1\" is not a number",
        ),
        (
            r#"{"id":1,"score":1,"label":2,"ok":true,"delta":1}"#,
            "line 1: column \"label\": expected a string, got 2",
        ),
    ] {
        let e = rows_of(&ndjson_spec(), &[line.as_bytes()]).unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (BAD_RECORD, what));
    }
    let e = rows_of(&ndjson_spec(), &[b"{\"id\":"]).unwrap_err();
    assert!(e.message.starts_with("line 1: not JSON"), "{}", e.message);
}

/// The five-column row of one NDJSON line, or the error message.
fn ndjson_line(line: &str) -> Result<Row, String> {
    match rows_of(&ndjson_spec(), &[line.as_bytes()]) {
        Ok(rows) if rows.len() == 1 => Ok(rows.into_iter().next().unwrap()),
        Ok(rows) => panic!("{line}: {} rows", rows.len()),
        Err(e) => {
            assert_eq!(e.code, BAD_RECORD, "{line}");
            Err(e.message)
        }
    }
}

#[test]
fn ndjson_string_escapes_are_decoded() {
    let line = r#"{"id":1,"score":0,"label":"q\" b\\ s\/ \b\f\n\r\t \u00e9\u65E5 \ud83d\ude00","ok":true,"delta":0}"#;
    assert_eq!(
        ndjson_line(line).unwrap().2,
        "q\" b\\ s/ \u{8}\u{c}\n\r\t é日 😀"
    );
    // An escaped key names the column all the same.
    let line = r#"{"\u0069d":5,"sc\u006fre":0,"label":"","ok":false,"delta":0}"#;
    assert_eq!(ndjson_line(line).unwrap().0, 5);
    for bad in [
        r#""\ud83d x""#, // a high surrogate alone
        r#""\ude00""#,   // a low surrogate alone
        r#""\x""#,       // not an escape
        r#""\u12""#,     // short
        "\"tab\there\"", // a raw control character
    ] {
        let line = format!(r#"{{"id":1,"score":0,"label":{bad},"ok":true,"delta":0}}"#);
        let e = ndjson_line(&line).unwrap_err();
        assert!(e.starts_with("line 1: not JSON"), "{bad}: {e}");
    }
}

#[test]
fn ndjson_skips_nested_values_and_checks_them() {
    let line = r#"{"x":{"a":[1,{"b":"}]"}],"c":null,"d":[[],{}]},"id":2,"s":"{","score":1,"label":"l","y":[true,false,-0.5e-3],"ok":true,"delta":-1,"z":{}}"#;
    assert_eq!(ndjson_line(line).unwrap(), (2, 1.0, "l".into(), true, -1));
    // Deep nesting in a skipped value: scanned iteratively, no stack to run out of.
    let deep = format!(
        r#"{{"x":{}{},"id":1,"score":0,"label":"","ok":true,"delta":0}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert_eq!(ndjson_line(&deep).unwrap().0, 1);
    for bad in [
        r#"[1,]"#,
        r#"{"a":1,}"#,
        r#"{"a" 1}"#,
        r#"{1:2}"#,
        r#"[1 2]"#,
        r#"[}"#,
        r#"tru"#,
        r#"nul"#,
        r#"01"#,
        r#"1."#,
        r#"-"#,
        r#"1e"#,
        r#"+1"#,
    ] {
        let line = format!(r#"{{"x":{bad},"id":1,"score":0,"label":"","ok":true,"delta":0}}"#);
        let e = ndjson_line(&line).unwrap_err();
        assert!(e.starts_with("line 1: not JSON"), "{bad}: {e}");
    }
    // A nested value where a column wants a scalar is a type error, shown cut short.
    let line = format!(
        r#"{{"id":[{}],"score":0,"label":"","ok":true,"delta":0}}"#,
        "1,".repeat(100) + "1"
    );
    let e = ndjson_line(&line).unwrap_err();
    assert!(
        e.starts_with("line 1: column \"id\": [1,1,") && e.ends_with("… is not a u32"),
        "{e}"
    );
}

#[test]
fn ndjson_numbers_in_exponent_form() {
    let row = |id: &str, score: &str, delta: &str| {
        ndjson_line(&format!(
            r#"{{"id":{id},"score":{score},"label":"","ok":true,"delta":{delta}}}"#
        ))
    };
    // Integer columns take any number with an integral value, exactly.
    assert_eq!(
        row("1e3", "1.5E-3", "-3.2768e4").unwrap(),
        (1000, 0.0015, String::new(), true, -32768)
    );
    assert_eq!(row("4.294967295e9", "2e0", "7.0").unwrap().0, u32::MAX);
    assert_eq!(row("12500e-2", "0", "-0").unwrap().0, 125);
    for (id, what) in [
        ("2.5e0", "2.5e0 is not a u32"),
        ("4.294967296e9", "4.294967296e9 is not a u32"),
        ("1e-1", "1e-1 is not a u32"),
        ("1e400", "1e400 is not a u32"),
    ] {
        let e = row(id, "0", "0").unwrap_err();
        assert_eq!(e, format!("line 1: column \"id\": {what}"));
    }
    let e = row("1", "-1e400", "0").unwrap_err();
    assert_eq!(
        e,
        "line 1: column \"score\": -1e400 is out of range for f64"
    );
}

#[test]
fn ndjson_duplicate_keys_last_wins() {
    let line = r#"{"id":1,"score":0,"label":"first","ok":true,"delta":0,"id":2,"label":"second"}"#;
    assert_eq!(
        ndjson_line(line).unwrap(),
        (2, 0.0, "second".into(), true, 0)
    );
    // An earlier bad value is forgotten; a later bad one fails the row.
    let line = r#"{"id":"x","score":0,"label":7,"ok":true,"delta":0,"id":3,"label":"ok"}"#;
    assert_eq!(ndjson_line(line).unwrap(), (3, 0.0, "ok".into(), true, 0));
    let line = r#"{"id":1,"score":0,"label":"","ok":true,"delta":0,"id":-1}"#;
    assert_eq!(
        ndjson_line(line).unwrap_err(),
        "line 1: column \"id\": -1 is not a u32"
    );
}

#[test]
fn ndjson_missing_and_mistyped_fields_report_the_first_column() {
    for (line, what) in [
        (r#"{}"#, "column \"id\": no \"id\""),
        (
            r#"{"score":1,"label":"","ok":true,"delta":0}"#,
            "column \"id\": no \"id\"",
        ),
        (
            r#"{"id":1,"score":1,"label":"","delta":0}"#,
            "column \"ok\": no \"ok\"",
        ),
        // The schema's order, not the line's.
        (
            r#"{"label":2,"id":1.5,"score":1,"ok":true,"delta":0}"#,
            "column \"id\": 1.5 is not a u32",
        ),
        (
            r#"{"id":1,"score":null,"label":"","ok":true,"delta":0}"#,
            "column \"score\": null is not a number",
        ),
        (
            r#"{"id":1,"score":1,"label":"","ok":1,"delta":0}"#,
            "column \"ok\": 1 is not a bool",
        ),
        (
            r#"{"id":1,"score":1,"label":"","ok":"true","delta":0}"#,
            "column \"ok\": \"true\" is not a bool",
        ),
        (
            r#"{"id":1,"score":1,"label":{"a":1},"ok":true,"delta":0}"#,
            "column \"label\": expected a string, got {\"a\":1}",
        ),
    ] {
        assert_eq!(
            ndjson_line(line).unwrap_err(),
            format!("line 1: {what}"),
            "{line}"
        );
    }
    // A syntax error after a type error is reported as what it is.
    let e = ndjson_line(r#"{"id":"x","score":1,"label":"","ok":true,"delta":0"#).unwrap_err();
    assert!(e.starts_with("line 1: not JSON"), "{e}");
    for (line, what) in [
        ("\"text\"", "not a JSON object"),
        ("[{}]", "not a JSON object"),
        ("{} x", "not JSON"),
    ] {
        let e = ndjson_line(line).unwrap_err();
        assert!(e.starts_with(&format!("line 1: {what}")), "{line}: {e}");
    }
}

/// A row the way the filter read NDJSON before (a `serde_json::Value` per line), with the
/// documented changes: integer columns take integral numbers in any form.
fn reference_row(line: &[u8]) -> Result<Row, String> {
    use serde_json::Value;
    let value: Value = serde_json::from_slice(line).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(o) = value else {
        return Err("not a JSON object".into());
    };
    let get = |k: &str| o.get(k).ok_or_else(|| format!("column \"{k}\""));
    let int = |k: &str, v: &Value| {
        v.as_i64()
            .map(i128::from)
            .or_else(|| v.as_u64().map(i128::from))
            .or_else(|| {
                v.as_f64()
                    .filter(|x| x.fract() == 0.0 && x.abs() < 2f64.powi(53))
                    .map(|x| x as i128)
            })
            .ok_or_else(|| format!("column \"{k}\""))
    };
    let id = u32::try_from(int("id", get("id")?)?).map_err(|_| "column \"id\"".to_owned())?;
    let score = get("score")?.as_f64().ok_or("column \"score\"")?;
    let label = get("label")?.as_str().ok_or("column \"label\"")?.to_owned();
    let ok = get("ok")?.as_bool().ok_or("column \"ok\"")?;
    let delta =
        i16::try_from(int("delta", get("delta")?)?).map_err(|_| "column \"delta\"".to_owned())?;
    Ok((id, score, label, ok, delta))
}

/// Thousands of mutated lines (bytes deleted, inserted, replaced, cut off): the scanner
/// accepts exactly what serde_json accepts, reads the same values, and fails with the
/// same kind of error on the same column.
#[test]
fn ndjson_agrees_with_serde_json_on_mutated_lines() {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    const ALPHABET: &[u8] = br#"{}[]",:\ 0123456789eE.-+tfnrul"abxyz/"#;
    let mut checked = 0;
    for base in NDJSON.lines().filter(|l| !l.is_empty()) {
        for _ in 0..4000 {
            let mut line = base.as_bytes().to_vec();
            for _ in 0..1 + next(3) {
                let at = next(line.len() + 1);
                match next(4) {
                    0 if at < line.len() => {
                        line.remove(at);
                    }
                    1 => line.insert(at, ALPHABET[next(ALPHABET.len())]),
                    2 if at < line.len() => line[at] = ALPHABET[next(ALPHABET.len())],
                    _ => line.truncate(at.max(1)),
                }
            }
            if line.contains(&b'\n') || line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let want = reference_row(&line);
            if matches!(&want, Err(e) if e.contains("out of range")) {
                continue; // serde_json refuses 1e400 anywhere; the scanner only in columns
            }
            let text = String::from_utf8_lossy(&line).into_owned();
            let got = match rows_of(&ndjson_spec(), &[&line]) {
                Ok(rows) => Ok(rows[0].clone()),
                Err(e) => Err(e.message),
            };
            match (&want, &got) {
                (Ok(w), Ok(g)) => {
                    // serde_json's default float parser may be 1 ulp off (-18e300); the
                    // scanner's (std's) rounds correctly, as JSON.parse does.
                    let ulps = (w.1.to_bits() as i64 - g.1.to_bits() as i64).abs();
                    assert!(ulps <= 1, "{text}: {} vs {}", w.1, g.1);
                    assert_eq!((w.0, &w.2, w.3, w.4), (g.0, &g.2, g.3, g.4), "{text}");
                }
                (Err(w), Err(g)) => {
                    let kind = w.split(':').next().unwrap();
                    assert!(
                        g.starts_with(&format!("line 1: {kind}")),
                        "{text}: {w} vs {g}"
                    );
                }
                _ => panic!("{text}: serde_json {want:?}, scanner {got:?}"),
            }
            checked += 1;
        }
    }
    assert!(checked > 10_000, "{checked} lines checked");
}

/// NDJSON pushes are cut after their last newline and parse independently: run in any
/// order, the batches (kept in push order) hold every row once.
#[test]
fn ndjson_pieces_parse_in_any_order() {
    let input = NDJSON.as_bytes();
    for size in [1, 7, 40, input.len()] {
        let mut h = FilterHandle::from_json(&ndjson_spec()).unwrap();
        assert!(h.parallel());
        let mut works: Vec<_> = input
            .chunks(size)
            .map(|c| h.prepare_push(c).unwrap())
            .collect();
        works.push(h.prepare_finish().unwrap());
        let mut outs: Vec<Vec<u8>> = works.into_iter().rev().map(|w| w.run().unwrap()).collect();
        outs.reverse();
        let rows: Vec<Row> = outs
            .iter()
            .filter(|b| !b.is_empty())
            .flat_map(|b| read_batch(b))
            .collect();
        assert_eq!(rows, expected(), "chunks of {size}");
    }
}

/// A bad line is named by its number in the whole stream (blank lines count), wherever
/// the chunks were cut.
#[test]
fn ndjson_errors_number_lines_across_pieces() {
    let good = r#"{"id":1,"score":1,"label":"","ok":true,"delta":1}"#;
    let text = format!("{good}\n\n{good}\r\n{good}\n[1]\n{good}");
    for size in 1..=text.len() {
        let chunks: Vec<&[u8]> = text.as_bytes().chunks(size).collect();
        let e = rows_of(&ndjson_spec(), &chunks).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (BAD_RECORD, "line 5: not a JSON object"),
            "chunks of {size}"
        );
    }
    let last = format!("{good}\n\n{{\"id\":");
    let e = rows_of(&ndjson_spec(), &[last.as_bytes()]).unwrap_err();
    assert!(e.message.starts_with("line 3: not JSON"), "{}", e.message);
}

#[test]
fn a_quote_left_open_is_an_error_not_one_swallowed_field() {
    use offthread_filters::QUOTE_NOT_CLOSED;
    // Four records after the header; the quote opened in the first is never closed:
    // csv-core alone would read one record whose label holds all the rest.
    let input =
        b"label,id,ok,score,delta\n\"a,1,true,1,1\nb,2,true,1,1\nc,3,true,1,1\nd,4,true,1,1\n";
    common::every_split(
        &csv_spec(),
        input,
        &Err(offthread_filters::FilterError::new(QUOTE_NOT_CLOSED, "")),
    );
    let e = rows_of(&csv_spec(), &[input]).unwrap_err();
    assert_eq!(e.code, QUOTE_NOT_CLOSED);
    assert!(e.message.starts_with("line 2: "), "{}", e.message);
    // A lone quote as the last byte, and one after a closed quoted field.
    for tail in [&b"\""[..], b"\"x\",1,true,1,\"1\n"] {
        let input = [&b"label,id,ok,score,delta\na,1,true,1,1\n"[..], tail].concat();
        let e = rows_of(&csv_spec(), &[&input]).unwrap_err();
        assert_eq!(
            (e.code, e.message.get(..7)),
            (QUOTE_NOT_CLOSED, Some("line 3:"))
        );
    }
    // Closed quotes, a newline inside one, and a doubled quote at the very end stay rows.
    let ok = b"label,id,ok,score,delta\n\"a\nb\",1,true,1,1\n\"q\"\"\",2,false,2,2";
    let rows = rows_of(&csv_spec(), &[ok]).unwrap();
    assert_eq!(rows[0].2, "a\nb");
    assert_eq!(rows[1].2, "q\"");
}

/// The readers refuse a SoA table of more than 256 columns (R0005): a batch spec must
/// not write one. 256 fields write a batch the default reader opens; 257 columns, or a
/// field index past 255, are refused when the filter opens.
#[test]
fn a_batch_has_no_more_columns_than_its_readers_take() {
    let spec = |n: usize, last_field: Option<usize>| {
        let cols: Vec<String> = (0..n)
            .map(|i| match last_field {
                Some(f) if i == n - 1 => format!(r#"{{"name":"c{i}","type":"u8","field":{f}}}"#),
                _ => format!(r#"{{"name":"c{i}","type":"u8"}}"#),
            })
            .collect();
        format!(
            r#"{{"kind":"csv","header":false,"columns":[{}]}}"#,
            cols.join(",")
        )
    };
    let row: Vec<String> = (0..256).map(|i| (i % 200).to_string()).collect();
    let line = format!("{}\n", row.join(","));
    let batches = run_chunks(&spec(256, None), &[line.as_bytes()]).unwrap();
    let root = StructView::root_dynamic(&batches[0], ReadOptions::DEFAULT).unwrap();
    let soa = root.soa(4).unwrap();
    let last = soa.column::<u8>(field_path_hash(&[255]), 1).unwrap();
    assert_eq!(last.get(0), Some(55));
    for bad in [spec(257, None), spec(2, Some(256))] {
        let err = FilterHandle::from_json(&bad).err().expect("refused");
        assert_eq!(err.code, offthread_filters::INVALID_SPEC, "{}", err.message);
        assert!(err.message.contains("R0005"), "{}", err.message);
    }
}
