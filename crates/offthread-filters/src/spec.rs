//! A filter described as JSON (what both bindings pass through from the TS package),
//! checked here once: unknown kinds, keys and values are errors, never ignored.

use serde_json::{Map, Value};

use crate::columns::{ColumnType, RecordColumn};
use crate::compress::Format;
use crate::digest::DigestKind;
use crate::error::{FilterError, FilterResult, INVALID_SPEC};
use crate::records::{CsvOptions, Layout, OnError, RecordFormat, RecordOptions};
use crate::transcode::{Conversion, Encoding};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FilterSpec {
    Transcode(Conversion),
    Compress {
        format: Format,
        level: u32,
    },
    Decompress(Format),
    Digest(DigestKind),
    Records {
        columns: Vec<RecordColumn>,
        format: RecordFormat,
        options: RecordOptions,
    },
    ZstdCompress,
    ZstdDecompress {
        window_log_max: u32,
    },
    BrotliCompress {
        quality: u32,
        window: u32,
    },
    BrotliDecompress,
}

fn invalid(what: impl Into<String>) -> FilterError {
    FilterError::new(INVALID_SPEC, what)
}

/// The object's keys, each checked against `allowed`.
fn keys<'a>(o: &'a Map<String, Value>, allowed: &[&str]) -> FilterResult<&'a Map<String, Value>> {
    match o.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(invalid(format!(
            "unknown option \"{k}\" (known: {})",
            allowed.join(", ")
        ))),
        None => Ok(o),
    }
}

fn string<'a>(o: &'a Map<String, Value>, key: &str) -> FilterResult<Option<&'a str>> {
    match o.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(invalid(format!("\"{key}\" must be a string, got {v}"))),
    }
}

fn boolean(o: &Map<String, Value>, key: &str, default: bool) -> FilterResult<bool> {
    match o.get(key) {
        None => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(invalid(format!("\"{key}\" must be a boolean, got {v}"))),
    }
}

fn encoding(o: &Map<String, Value>, key: &str) -> FilterResult<Encoding> {
    let name = string(o, key)?.ok_or_else(|| invalid(format!("\"{key}\" is required")))?;
    Encoding::parse(name).ok_or_else(|| {
        invalid(format!(
            "unknown encoding \"{name}\" (utf8, utf16le, latin1)"
        ))
    })
}

fn uint(
    o: &Map<String, Value>,
    key: &str,
    range: std::ops::RangeInclusive<u32>,
    default: u32,
) -> FilterResult<u32> {
    match o.get(key) {
        None => Ok(default),
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| range.contains(n))
            .ok_or_else(|| {
                invalid(format!(
                    "\"{key}\" must be an integer {}–{}, got {v}",
                    range.start(),
                    range.end()
                ))
            }),
    }
}

fn one_byte(o: &Map<String, Value>, key: &str, default: u8) -> FilterResult<u8> {
    match string(o, key)? {
        None => Ok(default),
        Some(s) if s.len() == 1 => Ok(s.as_bytes()[0]),
        Some(s) => Err(invalid(format!(
            "\"{key}\" must be one ASCII character, got \"{s}\""
        ))),
    }
}

/// Most fields a batch's row may have: the readers refuse a SoA table of more columns
/// (R0005), so a batch past it could be written but never read.
const MAX_FIELDS: usize = offthread_schema_rt::ReadOptions::DEFAULT.max_soa_columns as usize;

fn columns(o: &Map<String, Value>, layout: Layout) -> FilterResult<Vec<RecordColumn>> {
    // Without columns a records-layout filter infers them (RecordOptions::infer_rows).
    if o.get("columns").is_none() && layout == Layout::Records {
        return Ok(Vec::new());
    }
    let Some(Value::Array(list)) = o.get("columns") else {
        return Err(invalid(
            "\"columns\" must be an array of { name, type, field? }",
        ));
    };
    if list.len() > MAX_FIELDS {
        return Err(invalid(format!(
            "{} columns: a batch's readers take at most {MAX_FIELDS} (R0005)",
            list.len()
        )));
    }
    list.iter()
        .enumerate()
        .map(|(i, c)| {
            let Value::Object(c) = c else {
                return Err(invalid(format!("column {i} is not an object")));
            };
            let c = keys(c, &["name", "type", "field", "nullable", "default"])?;
            let name = string(c, "name")?
                .ok_or_else(|| invalid(format!("column {i} has no \"name\"")))?;
            let ty = string(c, "type")?
                .ok_or_else(|| invalid(format!("column \"{name}\" has no \"type\"")))?;
            let ty = ColumnType::parse(ty).ok_or_else(|| {
                invalid(format!(
                    "column \"{name}\": unknown type \"{ty}\" (bool, u8…u64, i8…i64, f32, f64, string)"
                ))
            })?;
            let field = match c.get("field") {
                None => i as u32,
                Some(v) => v
                    .as_u64()
                    .and_then(|f| u32::try_from(f).ok())
                    .ok_or_else(|| invalid(format!("column \"{name}\": bad \"field\" {v}")))?,
            };
            if field as usize >= MAX_FIELDS {
                return Err(invalid(format!(
                    "column \"{name}\": field {field} is past the {MAX_FIELDS} fields a batch's readers take (R0005)"
                )));
            }
            let mut column = RecordColumn::new(name, ty, field);
            column.nullable = boolean(c, "nullable", false)?;
            if column.nullable && layout == Layout::Schema {
                return Err(invalid(format!(
                    "column \"{name}\": a schema's fields have no nulls; give it a \"default\" instead"
                )));
            }
            column.default = match c.get("default") {
                None | Some(Value::Null) => None,
                Some(v) => {
                    let text = match v {
                        Value::String(s) => s.clone(),
                        Value::Number(_) | Value::Bool(_) => v.to_string(),
                        _ => String::new(),
                    };
                    let bytes = matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_))
                        .then(|| column.encode(&text))
                        .and_then(Result::ok);
                    Some(bytes.ok_or_else(|| {
                        invalid(format!("column \"{name}\": default {v} is not a {}", ty.name()))
                    })?)
                }
            };
            if column.nullable && column.default.is_some() {
                return Err(invalid(format!(
                    "column \"{name}\": a column with a default is never null (nullable or default, not both)"
                )));
            }
            Ok(column)
        })
        .collect()
}

/// The options every record filter takes (docs/streams.md, "Dirty data").
fn record_options(o: &Map<String, Value>) -> FilterResult<RecordOptions> {
    let on_error = match string(o, "onError")? {
        None | Some("fail") => OnError::Fail,
        Some("skip") => OnError::Skip,
        Some(other) => {
            return Err(invalid(format!(
                "\"onError\" must be \"fail\" or \"skip\", got \"{other}\""
            )));
        }
    };
    let layout = match string(o, "layout")? {
        None | Some("schema") => Layout::Schema,
        Some("records") => Layout::Records,
        Some(other) => {
            return Err(invalid(format!(
                "\"layout\" must be \"schema\" or \"records\", got \"{other}\""
            )));
        }
    };
    let infer_rows = match o.get("inferRows") {
        None => RecordOptions::default().infer_rows,
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=100_000).contains(n))
            .ok_or_else(|| invalid(format!("\"inferRows\" must be 1–100000, got {v}")))?
            as usize,
    };
    Ok(RecordOptions {
        on_error,
        report: boolean(o, "report", false)?,
        layout,
        infer_rows,
    })
}

impl FilterSpec {
    pub fn from_json(text: &str) -> FilterResult<Self> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| invalid(format!("the filter spec is not JSON: {e}")))?;
        let Value::Object(o) = value else {
            return Err(invalid("the filter spec must be an object"));
        };
        let kind = string(&o, "kind")?.ok_or_else(|| invalid("\"kind\" is required"))?;
        let zformat = |k: &str| match k {
            "gzip" | "gunzip" => Format::Gzip,
            "deflate" | "inflate" => Format::Zlib,
            _ => Format::Raw,
        };
        Ok(match kind {
            "transcode" => {
                let o = keys(&o, &["kind", "from", "to", "strict"])?;
                FilterSpec::Transcode(Conversion {
                    from: encoding(o, "from")?,
                    to: encoding(o, "to")?,
                    strict: boolean(o, "strict", false)?,
                })
            }
            "gzip" | "deflate" | "deflateRaw" => {
                let o = keys(&o, &["kind", "level"])?;
                let level = match o.get("level") {
                    None => 6,
                    Some(v) => v
                        .as_u64()
                        .filter(|l| *l <= 9)
                        .ok_or_else(|| invalid(format!("\"level\" must be 0–9, got {v}")))?
                        as u32,
                };
                FilterSpec::Compress {
                    format: zformat(kind),
                    level,
                }
            }
            "gunzip" | "inflate" | "inflateRaw" => {
                keys(&o, &["kind"])?;
                FilterSpec::Decompress(zformat(kind))
            }
            "sha256" | "md5" => {
                keys(&o, &["kind"])?;
                FilterSpec::Digest(if kind == "md5" {
                    DigestKind::Md5
                } else {
                    DigestKind::Sha256
                })
            }
            "csv" => {
                let o = keys(
                    &o,
                    &[
                        "kind",
                        "columns",
                        "header",
                        "delimiter",
                        "quote",
                        "onError",
                        "report",
                        "layout",
                        "inferRows",
                    ],
                )?;
                let options = record_options(o)?;
                let columns = columns(o, options.layout)?;
                let header = boolean(o, "header", true)?;
                if columns.is_empty() && !header {
                    return Err(invalid(
                        "columns are inferred from the header: with \"header\": false give \"columns\"",
                    ));
                }
                FilterSpec::Records {
                    columns,
                    format: RecordFormat::Csv(CsvOptions {
                        delimiter: one_byte(o, "delimiter", b',')?,
                        quote: one_byte(o, "quote", b'"')?,
                        header,
                    }),
                    options,
                }
            }
            "ndjson" => {
                let o = keys(
                    &o,
                    &[
                        "kind",
                        "columns",
                        "onError",
                        "report",
                        "layout",
                        "inferRows",
                    ],
                )?;
                let options = record_options(o)?;
                // Without columns a records-layout filter infers them (ndjson.rs).
                if o.get("columns").is_none() && options.layout != Layout::Records {
                    return Err(invalid(
                        "an NDJSON filter of the schema layout needs \"columns\"",
                    ));
                }
                FilterSpec::Records {
                    columns: columns(o, options.layout)?,
                    format: RecordFormat::Ndjson,
                    options,
                }
            }
            "zstdCompress" => {
                let o = keys(&o, &["kind", "level"])?;
                // ruzstd has one level (about zstd -1): refused rather than ignored.
                uint(o, "level", 1..=1, 1).map_err(|e| {
                    invalid(format!(
                        "{}: the pure-Rust encoder has one level, 1",
                        e.message
                    ))
                })?;
                FilterSpec::ZstdCompress
            }
            "zstdDecompress" => {
                let o = keys(&o, &["kind", "windowLogMax"])?;
                FilterSpec::ZstdDecompress {
                    window_log_max: uint(
                        o,
                        "windowLogMax",
                        crate::zstd::WINDOW_LOG_RANGE,
                        crate::zstd::DEFAULT_WINDOW_LOG_MAX,
                    )?,
                }
            }
            "brotliCompress" => {
                use crate::brotli::*;
                let o = keys(&o, &["kind", "quality", "window"])?;
                FilterSpec::BrotliCompress {
                    quality: uint(o, "quality", QUALITY_RANGE, DEFAULT_QUALITY)?,
                    window: uint(o, "window", WINDOW_RANGE, DEFAULT_WINDOW)?,
                }
            }
            "brotliDecompress" => {
                keys(&o, &["kind"])?;
                FilterSpec::BrotliDecompress
            }
            other => {
                return Err(invalid(format!(
                    "unknown filter \"{other}\" (transcode, gzip, deflate, deflateRaw, gunzip, inflate, inflateRaw, zstdCompress, zstdDecompress, brotliCompress, brotliDecompress, sha256, md5, csv, ndjson)"
                )));
            }
        })
    }

    /// Chunks of this filter may be processed in parallel: each push is independent once
    /// cut at a character boundary (transcoding), after a line (NDJSON) or after a
    /// record (CSV whose delimiter and quote are neither a newline nor each other).
    pub fn parallel(&self) -> bool {
        match self {
            FilterSpec::Transcode(_) => true,
            FilterSpec::Records { format, .. } => match format {
                RecordFormat::Ndjson => true,
                RecordFormat::Csv(o) => {
                    crate::csv_split::QuoteScan::new(o.delimiter, o.quote).is_some()
                }
            },
            _ => false,
        }
    }
}
