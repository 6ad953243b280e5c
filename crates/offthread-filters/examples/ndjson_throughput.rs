//! NDJSON → columns, three ways, on the streams bench's rows (id u32, score f64, name
//! string, ok bool, ts i64), in MiB/s of input on one thread:
//! - `Value`: a `serde_json::Value` per line, then the columns (the filter before);
//! - `serde visitor`: serde_json's `Deserializer` with a map visitor that decodes the
//!   wanted keys straight into the columns and skips others with `IgnoredAny`;
//! - `filter`: the ndjson filter itself (ndjson.rs, a hand-rolled scanner), batches
//!   included.
//!
//! `cargo run --release -p offthread-filters --example ndjson_throughput [MiB] [filter]`

use std::fmt;
use std::time::Instant;

use offthread_filters::FilterHandle;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

const NAMES: [&str; 5] = ["id", "score", "name", "ok", "ts"];

fn data(mib: usize) -> Vec<u8> {
    let words = ["the café", "naïve, \"日本語\"", "Москва", "of 😀", "and"];
    let mut out = Vec::new();
    let mut i: u64 = 0;
    while out.len() < mib << 20 {
        i += 1;
        let score = (i.wrapping_mul(2_654_435_761) % 2_000_000) as f64 / 1000.0 - 1000.0;
        let line = serde_json::json!({
            "id": i, "score": score, "name": words[(i % 5) as usize],
            "ok": i.is_multiple_of(3), "ts": 1_700_000_000_000u64 + i * 1000,
        });
        out.extend_from_slice(line.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

#[derive(Default)]
struct Columns {
    id: Vec<u32>,
    score: Vec<f64>,
    name: Vec<u8>,
    name_ends: Vec<u32>,
    ok: Vec<u8>,
    ts: Vec<i64>,
}

fn by_value(input: &[u8], c: &mut Columns) {
    for line in input.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: Value = serde_json::from_slice(line).unwrap();
        c.id.push(v["id"].as_u64().unwrap() as u32);
        c.score.push(v["score"].as_f64().unwrap());
        c.name
            .extend_from_slice(v["name"].as_str().unwrap().as_bytes());
        c.name_ends.push(c.name.len() as u32);
        c.ok.push(u8::from(v["ok"].as_bool().unwrap()));
        c.ts.push(v["ts"].as_i64().unwrap());
    }
}

/// A key → its column index (or none), without allocating.
struct Key;
impl<'de> DeserializeSeed<'de> for Key {
    type Value = Option<usize>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}
impl Visitor<'_> for Key {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(NAMES.iter().position(|n| *n == s))
    }
}

/// A string value appended to the text column.
struct Text<'a>(&'a mut Vec<u8>);
impl<'de> DeserializeSeed<'de> for Text<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}
impl Visitor<'_> for Text<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

struct Row<'a>(&'a mut Columns);
impl<'de> Visitor<'de> for Row<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let c = self.0;
        while let Some(k) = map.next_key_seed(Key)? {
            match k {
                Some(0) => c.id.push(map.next_value()?),
                Some(1) => c.score.push(map.next_value()?),
                Some(2) => {
                    map.next_value_seed(Text(&mut c.name))?;
                    c.name_ends.push(c.name.len() as u32);
                }
                Some(3) => c.ok.push(u8::from(map.next_value::<bool>()?)),
                Some(4) => c.ts.push(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

fn by_visitor(input: &[u8], c: &mut Columns) {
    for line in input.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let mut d = serde_json::Deserializer::from_slice(line);
        de::Deserializer::deserialize_map(&mut d, Row(c)).unwrap();
        d.end().unwrap();
    }
}

fn by_filter(input: &[u8]) -> usize {
    let spec = r#"{"kind":"ndjson","columns":[{"name":"id","type":"u32"},{"name":"score","type":"f64"},{"name":"name","type":"string"},{"name":"ok","type":"bool"},{"name":"ts","type":"i64"}]}"#;
    let mut h = FilterHandle::from_json(spec).unwrap();
    let mut bytes = 0;
    for chunk in input.chunks(64 * 1024) {
        bytes += h.push_now(chunk).unwrap().len();
    }
    bytes + h.finish_now().unwrap().len()
}

fn main() {
    let mib: usize = std::env::args().nth(1).map_or(64, |a| a.parse().unwrap());
    let input = data(mib);
    let size = input.len() as f64 / f64::from(1 << 20);
    if std::env::args().nth(2).as_deref() == Some("filter") {
        // The filter alone (for a profiler).
        let t = Instant::now();
        by_filter(&input);
        println!("filter {:.0} MiB/s", size / t.elapsed().as_secs_f64());
        return;
    }
    for round in 0..2 {
        let rate = |t: Instant| size / t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut c = Columns::default();
        by_value(&input, &mut c);
        let value = rate(t);
        let rows = c.id.len();
        let t = Instant::now();
        let mut c = Columns::default();
        by_visitor(&input, &mut c);
        let visitor = rate(t);
        assert_eq!(c.id.len(), rows);
        let t = Instant::now();
        let batches = by_filter(&input);
        let filter = rate(t);
        println!(
            "round {round}: {size:.0} MiB, {rows} rows: Value {value:.0} MiB/s, serde visitor {visitor:.0} MiB/s, filter {filter:.0} MiB/s ({batches} batch bytes)"
        );
    }
}
