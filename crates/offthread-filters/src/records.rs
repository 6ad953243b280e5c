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

use crate::columns::{ColumnData, RecordColumn};
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

pub struct RecordParser {
    columns: Vec<RecordColumn>,
    data: Vec<ColumnData>,
    rows: usize,
    /// Records seen so far (header included): the number in error messages.
    records: u64,
    parser: Parser,
}

enum Parser {
    Csv {
        reader: Box<csv_core::Reader>,
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
        if columns.is_empty() {
            return Err(FilterError::new(
                INVALID_SPEC,
                "a record filter needs columns",
            ));
        }
        let mut fields: Vec<u32> = columns.iter().map(|c| c.field).collect();
        fields.sort_unstable();
        if fields.windows(2).any(|w| w[0] == w[1]) {
            return Err(FilterError::new(
                INVALID_SPEC,
                "two columns name the same field",
            ));
        }
        let parser = match format {
            RecordFormat::Csv(o) => Parser::Csv {
                reader: Box::new(
                    csv_core::ReaderBuilder::new()
                        .delimiter(o.delimiter)
                        .quote(o.quote)
                        .build(),
                ),
                header: o.header,
                source: (0..columns.len()).collect(),
                width: (!o.header).then_some(columns.len()),
                out: vec![0; 1024],
                out_len: 0,
                ends: vec![0; columns.len().max(16)],
                ends_len: 0,
                lead: Some(Vec::new()),
            },
            RecordFormat::Ndjson => Parser::Ndjson(Ndjson::default()),
        };
        let data = columns.iter().map(|c| ColumnData::empty(c.ty)).collect();
        Ok(Self {
            columns,
            data,
            rows: 0,
            records: 0,
            parser,
        })
    }

    /// Parses the records `chunk` completes; returns their batch (empty: no rows).
    pub fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        self.parse(chunk, false)?;
        self.take_batch()
    }

    /// The last record (one without a final newline) and its batch.
    pub fn finish(&mut self) -> FilterResult<Vec<u8>> {
        self.check_quotes_closed()?;
        self.parse(&[], true)?;
        self.take_batch()
    }

    /// `chunk` is the rest of the input: its records (the last one may lack a newline)
    /// as one batch.
    pub fn push_last(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        self.parse(chunk, true)?;
        self.take_batch()
    }

    /// An NDJSON parser for a piece of a stream that starts after `lines` lines: its
    /// errors number lines as in the whole stream.
    pub fn starting_after_line(mut self, lines: u64) -> Self {
        if let Parser::Ndjson(state) = &mut self.parser {
            state.lines = lines;
        }
        self
    }

    fn parse(&mut self, input: &[u8], end: bool) -> FilterResult<()> {
        match &mut self.parser {
            Parser::Csv { .. } => self.parse_csv(input, end),
            Parser::Ndjson(state) => {
                let mut state = std::mem::take(state);
                let result = self.parse_ndjson(&mut state, input, end);
                if let Parser::Ndjson(kept) = &mut self.parser {
                    *kept = state;
                }
                result
            }
        }
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
            return self.parse_csv_bytes(&first, end);
        }
        self.parse_csv_bytes(input, end)
    }

    fn parse_csv_bytes(&mut self, mut input: &[u8], end: bool) -> FilterResult<()> {
        loop {
            // csv-core reads an empty slice as the end of the input.
            if input.is_empty() && !end {
                return Ok(());
            }
            let Parser::Csv {
                reader,
                out,
                out_len,
                ends,
                ends_len,
                ..
            } = &mut self.parser
            else {
                unreachable!("parse_csv on a CSV parser")
            };
            let (result, n_in, n_out, n_ends) =
                reader.read_record(input, &mut out[*out_len..], &mut ends[*ends_len..]);
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
                    let (out, ends) = (std::mem::take(out), std::mem::take(ends));
                    let fields = std::mem::take(ends_len);
                    *out_len = 0;
                    let result = self.csv_record(&out, &ends[..fields]);
                    if let Parser::Csv {
                        out: o, ends: e, ..
                    } = &mut self.parser
                    {
                        *o = out;
                        *e = ends;
                    }
                    result?;
                }
                csv_core::ReadRecordResult::End => return Ok(()),
            }
        }
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
        self.parse_csv(b"\n", false)?;
        let Parser::Csv {
            out_len, ends_len, ..
        } = &self.parser
        else {
            return Ok(());
        };
        if *out_len + *ends_len > 0 {
            return Err(FilterError::new(
                QUOTE_NOT_CLOSED,
                format!(
                    "record {}: a quoted field is still open at the end of the input \
                     (every byte after its opening quote would be one field)",
                    self.records + 1
                ),
            ));
        }
        Ok(())
    }

    /// One CSV record: `ends[i]` is where field i ends in `out`.
    fn csv_record(&mut self, out: &[u8], ends: &[usize]) -> FilterResult<()> {
        self.records += 1;
        let field = |i: usize| &out[if i == 0 { 0 } else { ends[i - 1] }..ends[i]];
        let Parser::Csv {
            header,
            source,
            width,
            ..
        } = &mut self.parser
        else {
            unreachable!("csv_record on a CSV parser")
        };
        if *header {
            *header = false;
            *width = Some(ends.len());
            source.clear();
            for c in &self.columns {
                match (0..ends.len()).position(|i| field(i) == c.name.as_bytes()) {
                    Some(i) => source.push(i),
                    None => {
                        let what = format!("the header has no column \"{}\"", c.name);
                        return Err(self.bad(what));
                    }
                }
            }
            return Ok(());
        }
        if *width != Some(ends.len()) {
            let what = format!(
                "{} fields, expected {}",
                ends.len(),
                width.unwrap_or(self.columns.len())
            );
            return Err(self.bad(what));
        }
        let source = std::mem::take(source);
        let result = self.add_row(|col| field(source[col]));
        if let Parser::Csv { source: s, .. } = &mut self.parser {
            *s = source;
        }
        result
    }

    fn parse_ndjson(&mut self, state: &mut Ndjson, input: &[u8], end: bool) -> FilterResult<()> {
        let mut start = 0;
        while let Some(nl) = memchr::memchr(b'\n', &input[start..]) {
            let stop = start + nl;
            state.lines += 1;
            if state.line.is_empty() {
                self.ndjson_record(&mut state.rows, &input[start..stop], state.lines)?;
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

    fn bad(&self, what: impl std::fmt::Display) -> FilterError {
        FilterError::new(BAD_RECORD, format!("record {}: {what}", self.records))
    }

    /// Line `line` of the stream (counting from 1).
    fn ndjson_record(
        &mut self,
        reader: &mut NdjsonRows,
        text: &[u8],
        line: u64,
    ) -> FilterResult<()> {
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        self.records += 1;
        let Err(e) = reader.row(text, &self.columns, &mut self.data, self.rows) else {
            self.rows += 1;
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
        Err(FilterError::new(BAD_RECORD, format!("line {line}: {what}")))
    }

    /// Appends one CSV row; `cell` gives each column's text. On an error no column
    /// keeps a partial row.
    fn add_row<'v>(&mut self, cell: impl Fn(usize) -> &'v [u8]) -> FilterResult<()> {
        for (i, c) in self.columns.iter().enumerate() {
            if let Err(what) = self.data[i].push(c, cell(i)) {
                for (d, c) in self.data.iter_mut().zip(&self.columns) {
                    d.truncate_rows(self.rows, c.ty);
                }
                return Err(self.bad(format!("column \"{}\": {what}", c.name)));
            }
        }
        self.rows += 1;
        Ok(())
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
        self.rows = 0;
        batch
    }

    fn write_batch(&self) -> Result<Vec<u8>, WriteError> {
        let specs: Vec<ColumnSpec> = self
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
        let payload: usize = self.data.iter().map(ColumnData::bytes).sum();
        let mut b = Builder::with_capacity(payload + 64 * (2 * specs.len() + 4));
        // The batch struct: header word, then `rows` (a pointer) at +4; USED = 8.
        let at = b.dynamic_struct(8)?;
        let Some(cols) = b.soa_columns(self.rows, &specs)? else {
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
        b.put_ptr(at + 4, cols.header);
        Ok(b.finish())
    }
}
