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
            "record 3: column \"id\": \"x\" is not a u32",
        ),
        (
            "a,1,true,1,1\nb,-1,true,1,1\n",
            "record 3: column \"id\": \"-1\" is not a u32",
        ),
        (
            "a,1,yes,1,1\n",
            "record 2: column \"ok\": \"yes\" is not a bool (true/false/1/0)",
        ),
        (
            "a,1,true,1,40000\n",
            "record 2: column \"delta\": \"40000\" is not a i16",
        ),
        ("a,1,true,1\n", "record 2: 4 fields, expected 5"),
        (
            "a,1,true,,1\n",
            "record 2: column \"score\": \"\" is not a f64",
        ),
    ] {
        let input = format!("{header}{body}");
        let e = rows_of(&csv_spec(), &[input.as_bytes()]).unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (BAD_RECORD, what));
    }
    let e = rows_of(&csv_spec(), &[b"label,id\n"]).unwrap_err();
    assert_eq!(e.message, "record 1: the header has no column \"score\"");
    let e = rows_of(
        &csv_spec(),
        &[b"label,id,ok,score,delta\n\xff,1,true,1,1\n"],
    )
    .unwrap_err();
    assert_eq!(e.code, BAD_RECORD);

    for (line, what) in [
        ("[1]", "record 1: not a JSON object"),
        (r#"{"id":1}"#, "record 1: column \"score\": no \"score\""),
        (
            r#"{"id":1.5,"score":1,"label":"","ok":true,"delta":1}"#,
            "record 1: column \"id\": 1.5 is not a u32",
        ),
        (
            r#"{"id":1,"score":"1","label":"","ok":true,"delta":1}"#,
            "record 1: column \"score\": \"1\" is not a number",
        ),
        (
            r#"{"id":1,"score":1,"label":2,"ok":true,"delta":1}"#,
            "record 1: column \"label\": expected a string, got 2",
        ),
    ] {
        let e = rows_of(&ndjson_spec(), &[line.as_bytes()]).unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (BAD_RECORD, what));
    }
    let e = rows_of(&ndjson_spec(), &[b"{\"id\":"]).unwrap_err();
    assert!(e.message.starts_with("record 1: not JSON"), "{}", e.message);
}
