//! CSV (RFC 4180) and NDJSON → record batches of a user's schema.
//!
//! A batch is a schema message whose root is `struct <name>_batch (dynamic) { rows:
//! []<row> #soa; }`: one 64-byte aligned column per field of the row struct, filled
//! through the same `offthread-schema-rt` builder calls, in the same order, as the
//! generated `write_soa`, so the bytes are those the generated writer would produce
//! and the generated readers (Rust or TS) read them in place. Columns are named by
//! their field's declaration index (the format's field-path hash), not by name.
//!
//! Records may be cut anywhere between chunks: csv-core keeps its state between input
//! slices, and NDJSON keeps the unfinished line. Each push yields one batch with the
//! rows that chunk completed (none: no batch). NDJSON lines are read by ndjson.rs.
//!
//! CSV errors name the record (header included); NDJSON errors name the line (blank
//! lines count), which a parser of one piece of a stream knows from where its piece
//! starts ([`RecordParser::starting_after_line`]): the handle cuts NDJSON after each
//! chunk's last newline and parses the pieces in parallel.

use offthread_schema_rt::{Builder, ColumnSpec, WriteError, field_path_hash};

use crate::columns::{ColumnData, ColumnType, INFER_BYTES, RecordColumn, trim_number};
use crate::csv_fields::{Span, read_records};
use crate::error::{
    BAD_RECORD, FilterError, FilterResult, INVALID_SPEC, QUOTE_NOT_CLOSED, TOO_LARGE,
};
use crate::ndjson::{LineError, NdjsonRows};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvOptions {
    pub delimiter: u8,
    pub quote: u8,
    /// The first record names the columns; columns are then found by name.
    pub header: bool,
}

impl Default for CsvOptions {
    fn default() -> Self {
        Self {
            delimiter: b',',
            quote: b'"',
            header: true,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordFormat {
    Csv(CsvOptions),
    Ndjson,
}

/// What a bad row does (docs/streams.md, "Dirty data").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// The stream fails with ERR_FILTER_BAD_RECORD naming the line.
    Fail,
    /// The row is left out; its line is counted and (the first [`MAX_SKIPPED_LINES`]) listed.
    Skip,
}

/// Which batch a record filter writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Exactly the generated writer's batch of the user's schema (no nulls).
    Schema,
    /// The same message, plus one validity column per nullable column (field path
    /// `[field, VALIDITY]`): `count` bytes whose first ⌈count/8⌉ are Arrow's bitmap
    /// (LSB first, 1 = valid), zero after. Columns may be inferred.
    Records,
}

/// The second element of a validity column's field path.
pub const VALIDITY: u32 = u32::MAX;

/// Skipped lines a parser lists per output (the count goes on past it).
pub const MAX_SKIPPED_LINES: usize = 1000;

/// The last bytes of a reported output (`report`): `…message, JSON, u32 message
/// length, u32 JSON length, REPORT_MAGIC`.
pub const REPORT_MAGIC: &[u8; 4] = b"OTRB";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordOptions {
    pub on_error: OnError,
    /// Every non-empty output ends in a report: the columns (first output), rows
    /// skipped and their lines (see [`REPORT_MAGIC`]).
    pub report: bool,
    pub layout: Layout,
    /// Data rows after the header that inferred columns are typed from.
    pub infer_rows: usize,
}

impl Default for RecordOptions {
    fn default() -> Self {
        Self {
            on_error: OnError::Fail,
            report: false,
            layout: Layout::Schema,
            infer_rows: 100,
        }
    }
}

pub struct RecordParser {
    columns: Vec<RecordColumn>,
    data: Vec<ColumnData>,
    /// Per column: its validity bitmap (nullable columns only), LSB first, 1 = valid.
    valid: Vec<Option<Vec<u8>>>,
    /// Per column: the row being added left it null.
    row_nulls: Vec<bool>,
    rows: usize,
    /// Records seen so far (header included).
    records: u64,
    options: RecordOptions,
    /// Rows skipped since the last output, and the first of their lines.
    skipped: u64,
    skipped_lines: Vec<u64>,
    /// The columns went out in a report.
    announced: bool,
    /// CSV or NDJSON whose columns are still to be inferred: the input so far.
    infer: Option<Vec<u8>>,
    /// The CSV cells being read are UTF-8: their piece was checked at once (one SIMD
    /// pass instead of a check per cell).
    utf8: bool,
    parser: Parser,
}

enum Parser {
    Csv {
        /// None for a piece's parser until a record is left open for csv-core (building
        /// its DFA costs as much as reading a few records).
        reader: Option<Box<csv_core::Reader>>,
        header: bool,
        /// CSV field index of each column (positional until a header says otherwise).
        source: Vec<usize>,
        /// Fields the records must have (None until the header or first record).
        width: Option<usize>,
        out: Vec<u8>,
        out_len: usize,
        ends: Vec<usize>,
        ends_len: usize,
        /// The stream's first bytes while they may still be a UTF-8 BOM: csv-core
        /// strips one only when its first read sees all three bytes.
        lead: Option<Vec<u8>>,
        /// Columns were inferred from the header: they are its fields, in order.
        positional_header: bool,
        delimiter: u8,
        quote: u8,
        /// A piece's parser while csv-core is between records: whole records are read
        /// in place (csv_fields.rs), csv-core only gets a record the input leaves open.
        in_place: bool,
        /// Newlines before the next byte (in-place reading numbers lines by it).
        lines: u64,
        /// In-place reading's scratch: fields built from `""` and their spans.
        scratch: Vec<u8>,
        spans: Vec<Span>,
    },
    Ndjson(Ndjson),
}

/// The NDJSON parser's state: the unfinished line, lines finished before it, and the
/// line reader's scratch.
#[derive(Default)]
struct Ndjson {
    line: Vec<u8>,
    lines: u64,
    rows: NdjsonRows,
}

impl RecordParser {
    pub fn new(columns: Vec<RecordColumn>, format: RecordFormat) -> FilterResult<Self> {
        Self::with_options(columns, format, RecordOptions::default())
    }

    pub fn with_options(
        columns: Vec<RecordColumn>,
        format: RecordFormat,
        options: RecordOptions,
    ) -> FilterResult<Self> {
        // Records-layout CSV with a header, and NDJSON, type columns left out from the
        // first rows.
        let infer = columns.is_empty()
            && options.layout == Layout::Records
            && match &format {
                RecordFormat::Csv(o) => o.header,
                RecordFormat::Ndjson => true,
            };
        if columns.is_empty() && !infer {
            return Err(FilterError::new(
                INVALID_SPEC,
                "a record filter needs columns",
            ));
        }
        Self::build(columns, format, options, infer)
    }

    /// A parser of columns already known — inferred by another parser of the stream,
    /// possibly none — that never infers them again.
    pub fn with_columns(
        columns: Vec<RecordColumn>,
        format: RecordFormat,
        options: RecordOptions,
    ) -> FilterResult<Self> {
        Self::build(columns, format, options, false)
    }

    fn build(
        columns: Vec<RecordColumn>,
        format: RecordFormat,
        options: RecordOptions,
        infer: bool,
    ) -> FilterResult<Self> {
        check_columns(&columns, options.layout)?;
        let parser = match format {
            RecordFormat::Csv(o) => Parser::Csv {
                positional_header: false,
                delimiter: o.delimiter,
                quote: o.quote,
                reader: Some(Box::new(
                    csv_core::ReaderBuilder::new()
                        .delimiter(o.delimiter)
                        .quote(o.quote)
                        .build(),
                )),
                header: o.header,
                source: (0..columns.len()).collect(),
                width: (!o.header).then_some(columns.len()),
                out: vec![0; 1024],
                out_len: 0,
                ends: vec![0; columns.len().max(16)],
                ends_len: 0,
                lead: Some(Vec::new()),
                in_place: false,
                lines: 0,
                scratch: Vec::new(),
                spans: Vec::new(),
            },
            RecordFormat::Ndjson => Parser::Ndjson(Ndjson::default()),
        };
        let mut parser = Self {
            columns: Vec::new(),
            data: Vec::new(),
            valid: Vec::new(),
            row_nulls: Vec::new(),
            rows: 0,
            records: 0,
            options,
            skipped: 0,
            skipped_lines: Vec::new(),
            announced: false,
            infer: infer.then(Vec::new),
            utf8: false,
            parser,
        };
        parser.set_columns(columns);
        Ok(parser)
    }

    fn set_columns(&mut self, columns: Vec<RecordColumn>) {
        self.data = columns.iter().map(|c| ColumnData::empty(c.ty)).collect();
        self.valid = columns.iter().map(|c| c.nullable.then(Vec::new)).collect();
        self.row_nulls = vec![false; columns.len()];
        self.columns = columns;
    }

    /// The columns, once known (inferred ones after the first rows).
    pub fn columns(&self) -> &[RecordColumn] {
        &self.columns
    }

    /// Parses the records `chunk` completes; returns their batch (empty: no rows).
    pub fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        self.parse(chunk, false)?;
        self.take_output()
    }

    /// The last record (one without a final newline) and its batch.
    pub fn finish(&mut self) -> FilterResult<Vec<u8>> {
        self.check_quotes_closed()?;
        self.parse(&[], true)?;
        self.take_output()
    }

    /// `chunk` is the rest of the input: its records (the last one may lack a newline)
    /// as one batch.
    pub fn push_last(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        self.parse(chunk, true)?;
        self.take_output()
    }

    /// The batch of the rows so far, with the report when asked for ([`push`](Self::push)'s
    /// output; the CSV head takes it after parsing a chunk in slices).
    pub(crate) fn take_output(&mut self) -> FilterResult<Vec<u8>> {
        let rows = self.rows;
        let mut out = self.take_batch()?;
        if !self.options.report {
            return Ok(out);
        }
        let announce = !self.announced && self.infer.is_none();
        if out.is_empty() && self.skipped == 0 && !announce {
            return Ok(out);
        }
        let mut report = serde_json::Map::new();
        if announce {
            self.announced = true;
            let columns = self
                .columns
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "name": c.name, "type": c.ty.name(), "field": c.field, "nullable": c.nullable,
                    })
                })
                .collect();
            report.insert("columns".into(), serde_json::Value::Array(columns));
        }
        // Rows of no columns (NDJSON whose sample had no key to type): the message has
        // no SoA table to count them (a reader refuses one without columns, R0009).
        if self.columns.is_empty() && rows > 0 {
            report.insert("rows".into(), rows.into());
        }
        if self.skipped > 0 {
            report.insert("skipped".into(), self.skipped.into());
            let lines = std::mem::take(&mut self.skipped_lines);
            report.insert("lines".into(), lines.into());
            self.skipped = 0;
        }
        let json = serde_json::Value::Object(report).to_string();
        let message = out.len() as u32;
        out.extend_from_slice(json.as_bytes());
        out.extend_from_slice(&message.to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(REPORT_MAGIC);
        Ok(out)
    }

    /// A row that does not fit: the stream fails, or (`onError: 'skip'`) the row is
    /// counted and left out.
    fn row_failed(&mut self, line: u64, what: impl std::fmt::Display) -> FilterResult<()> {
        if self.options.on_error == OnError::Fail {
            return Err(FilterError::new(BAD_RECORD, format!("line {line}: {what}")));
        }
        self.skipped += 1;
        if self.skipped_lines.len() < MAX_SKIPPED_LINES {
            self.skipped_lines.push(line);
        }
        Ok(())
    }

    /// A parser for a piece of this CSV stream that starts at a record boundary after
    /// `newlines` newlines, once this parser has read the header (and inferred the
    /// columns, and seen whether a BOM leads): it reads records as this one would, with
    /// the same columns, field positions, width and line numbers. None before then, or
    /// for NDJSON.
    pub fn csv_piece(&self, newlines: u64) -> Option<RecordParser> {
        if !self.csv_pieces_ready() {
            return None;
        }
        let Parser::Csv {
            source,
            width,
            positional_header,
            delimiter,
            quote,
            ..
        } = &self.parser
        else {
            return None;
        };
        let mut piece = Self {
            columns: Vec::new(),
            data: Vec::new(),
            valid: Vec::new(),
            row_nulls: Vec::new(),
            rows: 0,
            records: self.records,
            options: self.options.clone(),
            skipped: 0,
            skipped_lines: Vec::new(),
            announced: self.announced,
            infer: None,
            utf8: false,
            parser: Parser::Csv {
                reader: None,
                header: false,
                source: source.clone(),
                width: *width,
                out: vec![0; 1024],
                out_len: 0,
                ends: vec![0; self.columns.len().max(16)],
                ends_len: 0,
                lead: None,
                positional_header: *positional_header,
                delimiter: *delimiter,
                quote: *quote,
                in_place: true,
                lines: newlines,
                scratch: Vec::new(),
                spans: Vec::new(),
            },
        };
        piece.set_columns(self.columns.clone());
        Some(piece)
    }

    /// This CSV parser is past the header, the inference and the BOM check: pieces of
    /// its stream can be parsed without it ([`csv_piece`](Self::csv_piece)).
    pub(crate) fn csv_pieces_ready(&self) -> bool {
        matches!(
            &self.parser,
            Parser::Csv { header: false, lead: None, .. } if self.infer.is_none()
        )
    }

    /// [`csv_piece`](Self::csv_piece) holding a copy of this parser's rows, skipped
    /// rows and announcement still to go out: its batch starts with them, so the chunk
    /// this parser began gives one batch.
    pub(crate) fn csv_piece_with_rows(&self, newlines: u64) -> Option<RecordParser> {
        let mut piece = self.csv_piece(newlines)?;
        piece.data.clone_from(&self.data);
        piece.valid.clone_from(&self.valid);
        piece.rows = self.rows;
        piece.skipped = self.skipped;
        piece.skipped_lines.clone_from(&self.skipped_lines);
        Some(piece)
    }

    /// Its columns went out already: pieces made from it do not announce them again.
    pub(crate) fn set_announced(&mut self) {
        self.announced = true;
    }

    /// The end of a piece's stream: `rest` (no whole record) and the last record's batch,
    /// as [`finish`](Self::finish) after pushing `rest` would give.
    pub fn finish_after(&mut self, rest: &[u8]) -> FilterResult<Vec<u8>> {
        self.parse(rest, false)?;
        self.finish()
    }

    /// An NDJSON parser for a piece of a stream that starts after `lines` lines: its
    /// errors number lines as in the whole stream.
    pub fn starting_after_line(mut self, lines: u64) -> Self {
        if let Parser::Ndjson(state) = &mut self.parser {
            state.lines = lines;
        }
        self
    }

    /// Parses `input` without taking a batch ([`take_output`](Self::take_output) takes
    /// it); `end`: the stream's last bytes.
    pub(crate) fn parse(&mut self, input: &[u8], end: bool) -> FilterResult<()> {
        match &mut self.parser {
            Parser::Csv { .. } => self.parse_csv(input, end),
            Parser::Ndjson(state) => {
                let mut state = std::mem::take(state);
                // Held bytes (none while still holding: parsing no bytes is a no-op, as
                // no line has begun) or, once the columns are known, the input.
                let result = match self.ndjson_inference(input, end) {
                    None => self.parse_ndjson(&mut state, input, end),
                    Some(held) => self.parse_ndjson(&mut state, &held, end),
                };
                if let Parser::Ndjson(kept) = &mut self.parser {
                    *kept = state;
                }
                result
            }
        }
    }

    /// NDJSON whose columns are still to be inferred: `input` held back until the first
    /// `infer_rows` lines are in (or INFER_BYTES, or the end), then the columns typed
    /// from them and every byte held given back to parse (an empty Vec: still holding).
    /// None once the columns are known.
    fn ndjson_inference(&mut self, input: &[u8], end: bool) -> Option<Vec<u8>> {
        let pending = self.infer.as_mut()?;
        let rows = self.options.infer_rows;
        let complete = ndjson_sample_ready(pending, input, rows) || end;
        if !complete {
            return Some(Vec::new());
        }
        let held = self.infer.take().unwrap_or_default();
        self.set_columns(infer_ndjson(&held, rows, end));
        Some(held)
    }

    fn parse_csv(&mut self, input: &[u8], end: bool) -> FilterResult<()> {
        let Parser::Csv { lead, .. } = &mut self.parser else {
            unreachable!("parse_csv on a CSV parser")
        };
        if let Some(held) = lead {
            const BOM: &[u8] = b"\xEF\xBB\xBF";
            held.extend_from_slice(input);
            let undecided = held.len() < BOM.len() && BOM.starts_with(held);
            if undecided && !end {
                return Ok(());
            }
            // Decided (or the end): the first read gets the whole BOM, if there is one.
            let first = std::mem::take(held);
            *lead = None;
            return self.csv_input(&first, end);
        }
        self.csv_input(input, end)
    }

    /// CSV input after the BOM check: held back while columns are still to be inferred.
    fn csv_input(&mut self, input: &[u8], end: bool) -> FilterResult<()> {
        if let Some(pending) = &mut self.infer {
            pending.extend_from_slice(input);
            // Wait for the header and `infer_rows` whole records (counted, not lines: a
            // quoted field may hold newlines), so the sample never depends on chunking.
            let Parser::Csv {
                delimiter, quote, ..
            } = &self.parser
            else {
                unreachable!("inference is for CSV")
            };
            let want = self.options.infer_rows + 1;
            if !end
                && pending.len() < INFER_BYTES
                && sample_records(pending, *delimiter, *quote, want, false).len() < want
            {
                return Ok(());
            }
            self.resolve_inference(end)?;
            return self.parse_csv_bytes(&[], end);
        }
        self.parse_csv_bytes(input, end)
    }

    /// Types the columns from the header and the first rows held back, then parses them.
    fn resolve_inference(&mut self, end: bool) -> FilterResult<()> {
        let Some(pending) = self.infer.take() else {
            return Ok(());
        };
        let Parser::Csv {
            delimiter,
            quote,
            positional_header,
            ..
        } = &mut self.parser
        else {
            unreachable!("inference is for CSV")
        };
        *positional_header = true;
        // The sample: whole records in the first INFER_BYTES, and a last one without a
        // newline only when this is all the input.
        let prefix = &pending[..pending.len().min(INFER_BYTES)];
        let flush = end && pending.len() <= INFER_BYTES;
        let want = self.options.infer_rows + 1;
        let columns = infer_columns(&sample_records(prefix, *delimiter, *quote, want, flush));
        self.set_columns(columns);
        self.parse_csv_bytes(&pending, false)
    }

    fn parse_csv_bytes(&mut self, mut input: &[u8], end: bool) -> FilterResult<()> {
        if let Parser::Csv { in_place: true, .. } = self.parser
            && !input.is_empty()
        {
            input = self.read_in_place(input)?;
        }
        loop {
            // csv-core reads an empty slice as the end of the input.
            if input.is_empty() && !end {
                return Ok(());
            }
            let Parser::Csv {
                reader: Some(reader),
                out,
                out_len,
                ends,
                ends_len,
                ..
            } = &mut self.parser
            else {
                // A piece read in place to its end: csv-core holds no record to end.
                return Ok(());
            };
            let (result, n_in, n_out, n_ends) =
                reader.read_record(input, &mut out[*out_len..], &mut ends[*ends_len..]);
            let ended_line = n_in > 0 && input[n_in - 1] == b'\n';
            input = &input[n_in..];
            *out_len += n_out;
            *ends_len += n_ends;
            match result {
                csv_core::ReadRecordResult::InputEmpty if !end => return Ok(()),
                // At the end, reading empty input flushes a last record with no newline.
                csv_core::ReadRecordResult::InputEmpty => {}
                csv_core::ReadRecordResult::OutputFull => {
                    let grown = out.len() * 2;
                    out.resize(grown, 0);
                }
                csv_core::ReadRecordResult::OutputEndsFull => {
                    let grown = ends.len() * 2;
                    ends.resize(grown, 0);
                }
                csv_core::ReadRecordResult::Record => {
                    #[cfg(test)]
                    CSV_CORE_RECORDS.with(|n| n.set(n.get() + 1));
                    let (out, ends_buf) = (std::mem::take(out), std::mem::take(ends));
                    let fields = std::mem::take(ends_len);
                    let len = std::mem::take(out_len);
                    // The line the record starts on: csv-core counts every newline it
                    // reads, quoted ones (in the fields' bytes) and the terminator too.
                    let line = reader.line()
                        - u64::from(ended_line)
                        - memchr::memchr_iter(b'\n', &out[..len]).count() as u64;
                    let ends = &ends_buf[..fields];
                    let field = |i: usize| &out[if i == 0 { 0 } else { ends[i - 1] }..ends[i]];
                    let result = self.csv_record(fields, field, line);
                    if let Parser::Csv {
                        out: o, ends: e, ..
                    } = &mut self.parser
                    {
                        *o = out;
                        *e = ends_buf;
                    }
                    result?;
                }
                csv_core::ReadRecordResult::End => return Ok(()),
            }
        }
    }

    /// A piece's whole records read in place (csv_fields.rs); the rest of `input` (a
    /// record it leaves open) is for csv-core, which then goes on from its start.
    fn read_in_place<'i>(&mut self, input: &'i [u8]) -> FilterResult<&'i [u8]> {
        let Parser::Csv {
            delimiter,
            quote,
            lines,
            scratch,
            spans,
            ..
        } = &mut self.parser
        else {
            unreachable!("read_in_place on a CSV parser")
        };
        let (delimiter, quote, mut at) = (*delimiter, *quote, *lines);
        let (mut scratch, mut spans) = (std::mem::take(scratch), std::mem::take(spans));
        // A cell never starts or ends inside a UTF-8 sequence (it is cut at ASCII
        // bytes), so a piece that is UTF-8 has only UTF-8 cells. Else each is checked,
        // and the first bad one named.
        self.utf8 = encoding_rs::Encoding::utf8_valid_up_to(input) == input.len();
        let read = read_records(
            input,
            delimiter,
            quote,
            &mut at,
            &mut scratch,
            &mut spans,
            |fields, line| self.csv_record(fields.count(), |i| fields.get(i), line),
        );
        let Parser::Csv {
            lines,
            scratch: s,
            spans: p,
            in_place,
            reader,
            ..
        } = &mut self.parser
        else {
            unreachable!("read_in_place on a CSV parser")
        };
        (*s, *p, *lines) = (scratch, spans, at);
        self.utf8 = false;
        let rest = &input[read?..];
        if !rest.is_empty() {
            *in_place = false;
            *reader = Some(boundary_reader(delimiter, quote, at));
        }
        Ok(rest)
    }

    /// At the end of CSV input: a quoted field still open swallowed every byte after
    /// its quote (later records included), so it is an error, never one more field.
    /// csv-core does not show its state (and its DFA's `clone` loses the tables), so a
    /// newline is fed first: it ends a last record that lacks one, as the end would,
    /// and only inside quotes is it field text, leaving a record under way.
    fn check_quotes_closed(&mut self) -> FilterResult<()> {
        if !matches!(self.parser, Parser::Csv { .. }) {
            return Ok(());
        }
        // Whatever the first chunks held (a BOM's start, rows kept for inference) is parsed first.
        if let Parser::Csv { lead, .. } = &mut self.parser
            && let Some(held) = lead.take()
        {
            self.csv_input(&held, false)?;
        }
        self.resolve_inference(true)?;
        self.parse_csv(b"\n", false)?;
        let Parser::Csv {
            out,
            out_len,
            ends_len,
            reader: Some(reader),
            ..
        } = &self.parser
        else {
            return Ok(());
        };
        if *out_len + *ends_len > 0 {
            let line = reader.line() - memchr::memchr_iter(b'\n', &out[..*out_len]).count() as u64;
            return Err(FilterError::new(
                QUOTE_NOT_CLOSED,
                format!(
                    "line {line}: a quoted field is still open at the end of the input \
                     (every byte after its opening quote would be one field)"
                ),
            ));
        }
        Ok(())
    }

    /// One CSV record of `count` fields starting on line `line`; `field(i)` is field i.
    fn csv_record<'f>(
        &mut self,
        count: usize,
        field: impl Fn(usize) -> &'f [u8],
        line: u64,
    ) -> FilterResult<()> {
        self.records += 1;
        let Parser::Csv {
            header,
            source,
            width,
            positional_header,
            ..
        } = &mut self.parser
        else {
            unreachable!("csv_record on a CSV parser")
        };
        if *header {
            *header = false;
            *width = Some(count);
            source.clear();
            if *positional_header {
                source.extend(0..self.columns.len());
                return Ok(());
            }
            // Header names are matched without the spaces and tabs around them.
            let names: Vec<&[u8]> = (0..count).map(|i| trim_number(field(i))).collect();
            for c in &self.columns {
                match names.iter().position(|n| *n == c.name.as_bytes()) {
                    Some(i) => source.push(i),
                    None => {
                        return Err(FilterError::new(
                            BAD_RECORD,
                            format!("line {line}: the header has no column \"{}\"", c.name),
                        ));
                    }
                }
            }
            return Ok(());
        }
        if *width != Some(count) {
            let what = format!(
                "{} fields, expected {}",
                count,
                width.unwrap_or(self.columns.len())
            );
            return self.row_failed(line, what);
        }
        let source = std::mem::take(source);
        let result = self.add_row(|col| field(source[col]));
        if let Parser::Csv { source: s, .. } = &mut self.parser {
            *s = source;
        }
        match result {
            Ok(()) => Ok(()),
            Err(what) => self.row_failed(line, what),
        }
    }

    fn parse_ndjson(&mut self, state: &mut Ndjson, input: &[u8], end: bool) -> FilterResult<()> {
        // Lines wholly in a UTF-8 `input` need no check of their strings (one SIMD pass
        // instead of one per string); a line joined with held bytes is checked.
        let utf8 = encoding_rs::Encoding::utf8_valid_up_to(input) == input.len();
        let mut start = 0;
        while let Some(nl) = memchr::memchr(b'\n', &input[start..]) {
            let stop = start + nl;
            state.lines += 1;
            if state.line.is_empty() {
                state.rows.utf8 = utf8;
                let result = self.ndjson_record(&mut state.rows, &input[start..stop], state.lines);
                state.rows.utf8 = false;
                result?;
            } else {
                state.line.extend_from_slice(&input[start..stop]);
                let text = std::mem::take(&mut state.line);
                let result = self.ndjson_record(&mut state.rows, &text, state.lines);
                // Keep the allocation for the next split line.
                state.line = text;
                state.line.clear();
                result?;
            }
            start = stop + 1;
        }
        state.line.extend_from_slice(&input[start..]);
        if end && !state.line.is_empty() {
            state.lines += 1;
            let text = std::mem::take(&mut state.line);
            self.ndjson_record(&mut state.rows, &text, state.lines)?;
        }
        Ok(())
    }

    /// Line `line` of the stream (counting from 1).
    fn ndjson_record(
        &mut self,
        reader: &mut NdjsonRows,
        text: &[u8],
        line: u64,
    ) -> FilterResult<()> {
        let text = crate::ndjson::line_text(text, line == 1);
        if text.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        self.records += 1;
        let Err(e) = reader.row(text, &self.columns, &mut self.data, self.rows) else {
            for (c, null) in self.row_nulls.iter_mut().enumerate() {
                *null = reader.is_null(c);
            }
            self.commit_row();
            return Ok(());
        };
        for (d, c) in self.data.iter_mut().zip(&self.columns) {
            d.truncate_rows(self.rows, c.ty);
        }
        let what = match e {
            LineError::Syntax(what) => format!("not JSON: {what}"),
            LineError::NotObject => "not a JSON object".to_owned(),
            LineError::Column(c, what) => format!("column \"{}\": {what}", self.columns[c].name),
        };
        self.row_failed(line, what)
    }

    /// Appends one CSV row; `cell` gives each column's text. On an error no column
    /// keeps a partial row. An empty cell is the column's default or a null when it
    /// takes one; numbers are read without the spaces around them.
    fn add_row<'v>(&mut self, cell: impl Fn(usize) -> &'v [u8]) -> Result<(), String> {
        for (i, c) in self.columns.iter().enumerate() {
            let text = cell(i);
            let empty = if c.ty == ColumnType::String {
                text.is_empty()
            } else {
                trim_number(text).is_empty()
            };
            let fills = empty && (c.nullable || c.default.is_some());
            self.row_nulls[i] = fills && c.default.is_none();
            let pushed = if fills {
                self.data[i].push_fill(c.ty, c.default.as_deref())
            } else {
                self.data[i].push(c, text, self.utf8)
            };
            if let Err(what) = pushed {
                for (d, c) in self.data.iter_mut().zip(&self.columns) {
                    d.truncate_rows(self.rows, c.ty);
                }
                return Err(format!("column \"{}\": {what}", c.name));
            }
        }
        self.commit_row();
        Ok(())
    }

    /// The row just added is in: its validity bits, and the count.
    fn commit_row(&mut self) {
        let (byte, bit) = (self.rows / 8, self.rows % 8);
        for (bits, null) in self.valid.iter_mut().zip(&self.row_nulls) {
            if let Some(bits) = bits {
                if bit == 0 {
                    bits.push(0);
                }
                if !null {
                    bits[byte] |= 1 << bit;
                }
            }
        }
        self.rows += 1;
    }

    /// The rows so far as one batch message; empty when there are none.
    fn take_batch(&mut self) -> FilterResult<Vec<u8>> {
        if self.rows == 0 {
            return Ok(Vec::new());
        }
        let batch = self
            .write_batch()
            .map_err(|e| FilterError::new(TOO_LARGE, format!("the batch cannot be written: {e}")));
        for (d, c) in self.data.iter_mut().zip(&self.columns) {
            *d = ColumnData::empty(c.ty);
        }
        for bits in self.valid.iter_mut().flatten() {
            bits.clear();
        }
        self.rows = 0;
        batch
    }

    fn write_batch(&self) -> Result<Vec<u8>, WriteError> {
        let mut specs: Vec<ColumnSpec> = self
            .columns
            .iter()
            .zip(&self.data)
            .map(|(c, d)| {
                let hash = field_path_hash(&[c.field]);
                match d {
                    ColumnData::Fixed(_) => ColumnSpec::Fixed {
                        hash,
                        item_bytes: c.ty.item_bytes(),
                    },
                    ColumnData::Text { bytes, .. } => ColumnSpec::Var {
                        hash,
                        elem_bytes: 1,
                        values: bytes.len(),
                    },
                }
            })
            .collect();
        // Validity columns after the value columns: `rows` bytes each (every column of
        // a SoA table holds at least one byte per item), the bitmap first.
        let validity: Vec<(u32, &Vec<u8>)> = self
            .columns
            .iter()
            .zip(&self.valid)
            .filter_map(|(c, v)| Some((c.field, v.as_ref()?)))
            .collect();
        for (field, _) in &validity {
            specs.push(ColumnSpec::Fixed {
                hash: field_path_hash(&[*field, VALIDITY]),
                item_bytes: 1,
            });
        }
        let payload: usize =
            self.data.iter().map(ColumnData::bytes).sum::<usize>() + validity.len() * self.rows;
        let mut b = Builder::with_capacity(payload + 64 * (2 * specs.len() + 4));
        // The batch struct: header word, then `rows` (a pointer) at +4; USED = 8.
        let at = b.dynamic_struct(8)?;
        // No columns: an empty slice (the report counts the rows, see take_output).
        let count = if specs.is_empty() { 0 } else { self.rows };
        let Some(cols) = b.soa_columns(count, &specs)? else {
            return Ok(b.finish());
        };
        for (i, d) in self.data.iter().enumerate() {
            match d {
                ColumnData::Fixed(bytes) => b.put_array::<u8>(cols.columns[i], bytes),
                ColumnData::Text { offsets, bytes } => {
                    b.put_array::<u32>(cols.columns[i], offsets);
                    b.put_array::<u8>(cols.values[i], bytes);
                }
            }
        }
        let mut padded = Vec::with_capacity(self.rows);
        for (k, (_, bits)) in validity.iter().enumerate() {
            padded.clear();
            padded.extend_from_slice(bits);
            padded.resize(self.rows, 0);
            b.put_array::<u8>(cols.columns[self.data.len() + k], &padded);
        }
        b.put_ptr(at + 4, cols.header);
        Ok(b.finish())
    }
}

#[cfg(test)]
thread_local! {
    /// Records csv-core read on this thread (the rest were read in place).
    pub(crate) static CSV_CORE_RECORDS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A csv-core reader for records that start at a record boundary after `newlines`
/// newlines, numbering lines as a reader from the stream's start would.
fn boundary_reader(delimiter: u8, quote: u8, newlines: u64) -> Box<csv_core::Reader> {
    let mut reader = csv_core::ReaderBuilder::new()
        .delimiter(delimiter)
        .quote(quote)
        .build();
    // A new reader strips a BOM at its first read, but these first bytes are data: a
    // newline read first (a blank line, skipped) uses that read up.
    reader.set_line(newlines);
    let _ = reader.read_record(b"\n", &mut [0u8; 1], &mut [0usize; 1]);
    Box::new(reader)
}

/// Appends `input` to `held` (an NDJSON stream's first bytes, its columns still to be
/// inferred) and says whether they now hold the sample (`sample_complete`). Only a
/// newline can complete a line of the sample, and the size limit only on the push that
/// crosses it: rescanning the held bytes on every push past it is quadratic.
pub(crate) fn ndjson_sample_ready(held: &mut Vec<u8>, input: &[u8], rows: usize) -> bool {
    held.extend_from_slice(input);
    let grew = memchr::memchr(b'\n', input).is_some()
        || (held.len() >= INFER_BYTES && held.len() - input.len() < INFER_BYTES);
    grew && crate::ndjson::sample_complete(held, rows)
}

/// The columns of an NDJSON stream whose first bytes are `held` (all of it when `end`),
/// typed from the whole lines in the first INFER_BYTES, or the first line when it is
/// longer (ndjson.rs, `infer_columns`).
pub(crate) fn infer_ndjson(held: &[u8], rows: usize, end: bool) -> Vec<RecordColumn> {
    // The first line counts whatever its length: a stream is never typed from nothing.
    let first = memchr::memchr(b'\n', held).map_or(held.len(), |nl| nl + 1);
    let cut = INFER_BYTES.max(first).min(held.len());
    // Each inferred column is nullable: a value column and a validity column.
    let max = offthread_schema_rt::ReadOptions::DEFAULT.max_soa_columns as usize / 2;
    crate::ndjson::infer_columns(&held[..cut], rows, end && cut == held.len(), max)
}

/// The columns' field paths hash apart (validity columns included), so each reads back
/// as itself; a validity column needs the records layout.
fn check_columns(columns: &[RecordColumn], layout: Layout) -> FilterResult<()> {
    let mut fields: Vec<u32> = columns.iter().map(|c| c.field).collect();
    fields.sort_unstable();
    if fields.windows(2).any(|w| w[0] == w[1]) {
        return Err(FilterError::new(
            INVALID_SPEC,
            "two columns name the same field",
        ));
    }
    if layout == Layout::Schema && columns.iter().any(|c| c.nullable) {
        return Err(FilterError::new(
            INVALID_SPEC,
            "a schema's fields have no nulls: give the column a default instead",
        ));
    }
    let mut hashes: Vec<u32> = columns
        .iter()
        .map(|c| field_path_hash(&[c.field]))
        .chain(
            columns
                .iter()
                .filter(|c| c.nullable)
                .map(|c| field_path_hash(&[c.field, VALIDITY])),
        )
        .collect();
    hashes.sort_unstable();
    if hashes.windows(2).any(|w| w[0] == w[1]) {
        return Err(FilterError::new(
            INVALID_SPEC,
            "two columns' field paths hash alike; number the fields otherwise",
        ));
    }
    Ok(())
}

/// The columns of a CSV whose header and first `rows` rows are in `input`: named by
/// the header (trimmed), typed by their cells — `bool` when every non-empty cell is
/// true/false (any case), `f64` when every one is a number, else `string`. Numbers and
/// bools are nullable (an empty cell, here or later, is a null); text is not (empty is "").
/// The first `limit` records of `input` (whole ones: ended by a newline, or by the end
/// of the input when `end`), each as its fields.
fn sample_records(
    input: &[u8],
    delimiter: u8,
    quote: u8,
    limit: usize,
    end: bool,
) -> Vec<Vec<Vec<u8>>> {
    let mut reader = csv_core::ReaderBuilder::new()
        .delimiter(delimiter)
        .quote(quote)
        .build();
    let mut records: Vec<Vec<Vec<u8>>> = Vec::new();
    let (mut out, mut ends) = (vec![0u8; 1024], vec![0usize; 64]);
    let (mut out_len, mut ends_len) = (0, 0);
    let mut rest = input;
    let mut flushed = false;
    while records.len() < limit {
        let (result, n_in, n_out, n_ends) =
            reader.read_record(rest, &mut out[out_len..], &mut ends[ends_len..]);
        rest = &rest[n_in..];
        out_len += n_out;
        ends_len += n_ends;
        match result {
            csv_core::ReadRecordResult::OutputFull => out.resize(out.len() * 2, 0),
            csv_core::ReadRecordResult::OutputEndsFull => ends.resize(ends.len() * 2, 0),
            csv_core::ReadRecordResult::Record => {
                let mut start = 0;
                let fields = ends[..ends_len]
                    .iter()
                    .map(|&e| {
                        let f = out[start..e].to_vec();
                        start = e;
                        f
                    })
                    .collect();
                records.push(fields);
                (out_len, ends_len) = (0, 0);
            }
            // Only whole records are typed from, unless this is all the input: then an
            // empty read flushes a last record without a newline.
            csv_core::ReadRecordResult::InputEmpty if end && !flushed => flushed = true,
            _ => break,
        }
    }
    records
}

/// Columns typed from `records` (the header, then the sample rows).
fn infer_columns(records: &[Vec<Vec<u8>>]) -> Vec<RecordColumn> {
    let Some((header, sample)) = records.split_first() else {
        return Vec::new();
    };
    header
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let cells = || {
                sample
                    .iter()
                    .filter_map(move |r| r.get(i))
                    .map(|c| trim_number(c))
                    .filter(|c| !c.is_empty())
            };
            let is_bool =
                |c: &[u8]| c.eq_ignore_ascii_case(b"true") || c.eq_ignore_ascii_case(b"false");
            let is_number = |c: &[u8]| {
                c.iter()
                    .all(|b| matches!(b, b'0'..=b'9' | b'+' | b'-' | b'.' | b'e' | b'E'))
                    && std::str::from_utf8(c).is_ok_and(|s| s.parse::<f64>().is_ok())
            };
            let ty = if cells().next().is_none() {
                ColumnType::String
            } else if cells().all(is_bool) {
                ColumnType::Bool
            } else if cells().all(is_number) {
                ColumnType::F64
            } else {
                ColumnType::String
            };
            let name = String::from_utf8_lossy(trim_number(name)).into_owned();
            let mut column = RecordColumn::new(name, ty, i as u32);
            column.nullable = ty != ColumnType::String;
            column
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FilterSpec;

    /// The parser a record filter's JSON spec makes.
    fn parser_of(spec: &str) -> RecordParser {
        let FilterSpec::Records {
            columns,
            format,
            options,
        } = FilterSpec::from_json(spec).unwrap()
        else {
            unreachable!()
        };
        RecordParser::with_options(columns, format, options).unwrap()
    }

    /// A piece of whole records is read in place, csv-core reading none of them (it
    /// read every one, a DFA step and a copy per byte, before); a record the piece
    /// leaves open is csv-core's. The batches are the sequential parser's.
    #[test]
    fn a_piece_of_whole_records_is_read_without_csv_core() {
        let spec = r#"{"kind":"csv","layout":"records","report":true,"onError":"skip","columns":[
            {"name":"id","type":"f64","nullable":true},{"name":"name","type":"string"},
            {"name":"ok","type":"bool","nullable":true}]}"#;
        let head_and_rows = b"id,name,ok\n1,\"a, \"\"b\"\"\",true\n";
        let rows = b"2,plain,false\r\n3,\"x\ny\",\n\n4,\"q\"z,1\n5,ragged\n6,open,";
        let parser = || parser_of(spec);
        let mut one = parser();
        one.push(head_and_rows).unwrap();
        let whole = rows.len() - b"6,open,".len();
        let want = (
            one.push(&rows[..whole]).unwrap(),
            one.finish_after(&rows[whole..]),
        );
        let mut head = parser();
        head.push(head_and_rows).unwrap();
        let mut piece = head.csv_piece(2).unwrap();
        CSV_CORE_RECORDS.with(|n| n.set(0));
        let got = piece.push(&rows[..whole]).unwrap();
        assert_eq!(CSV_CORE_RECORDS.with(|n| n.get()), 0);
        assert_eq!(got, want.0);
        // The last piece: `6,open,` has no terminator, so csv-core ends it at the finish.
        let mut last = head
            .csv_piece(2 + crate::lines::newlines(&rows[..whole]))
            .unwrap();
        CSV_CORE_RECORDS.with(|n| n.set(0));
        assert_eq!(last.finish_after(&rows[whole..]), want.1);
        assert_eq!(CSV_CORE_RECORDS.with(|n| n.get()), 1);
    }

    /// Strings of a line wholly in a UTF-8 push skip their own check; a line joined
    /// with bytes held from the push before is checked, so a bad byte there is named.
    #[test]
    fn ndjson_utf8_is_checked_once_per_push_and_on_joined_lines() {
        let spec = r#"{"kind":"ndjson","columns":[{"name":"s","type":"string"}]}"#;
        let mut p = parser_of(spec);
        assert!(p.push("{\"s\":\"été\"}\n".as_bytes()).is_ok());
        p.push(b"{\"s\":\"a\xFF").unwrap();
        let err = p.push(b"b\"}\n{\"s\":\"c\"}\n").unwrap_err();
        assert!(
            err.message.contains("line 2: not JSON: invalid UTF-8"),
            "{}",
            err.message
        );
    }

    /// A first line longer than INFER_BYTES, pushed in small chunks: typed from that
    /// line as before, with the held bytes scanned only when the limit is crossed and
    /// when a newline comes, not on every push past the limit.
    #[test]
    fn a_long_first_line_is_scanned_a_bounded_number_of_times() {
        let spec = r#"{"kind":"ndjson","layout":"records","inferRows":3}"#;
        let mut parser = parser_of(spec);
        let mut text = b"{\"n\":1,\"s\":\"".to_vec();
        text.resize(12 << 20, b'x');
        text.extend_from_slice(b"\"}\n{\"n\":2,\"b\":true}\n");
        crate::ndjson::SCANS.with(|s| s.set(0));
        for chunk in text.chunks(64 << 10) {
            parser.push(chunk).unwrap();
        }
        let scans = crate::ndjson::SCANS.with(|s| s.get());
        parser.finish().unwrap();
        let named: Vec<(&str, ColumnType, bool)> = parser
            .columns
            .iter()
            .map(|c| (c.name.as_str(), c.ty, c.nullable))
            .collect();
        assert_eq!(
            named,
            vec![
                ("n", ColumnType::F64, true),
                ("s", ColumnType::String, true)
            ]
        );
        // The push that crosses INFER_BYTES, and the one with the first newline.
        assert_eq!(scans, 2);
    }
}
