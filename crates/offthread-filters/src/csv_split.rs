//! One CSV stream parsed in pieces on several threads, with the bytes one thread gives.
//!
//! A newline inside quotes is no record end, so where a chunk may be cut depends on
//! every byte before it. [`QuoteScan`] follows csv-core's state machine from the
//! stream's start as far as record ends go (a cheap, ordered step on the caller's
//! thread: it jumps from quote to quote with memchr and looks for the last terminator
//! outside them; with the piece's copy about 15% of the stream's CPU time, against a
//! parse 5–7× slower — tests/csv_pieces.rs, `caller_share_of_a_csv_stream`), and each
//! chunk is cut after its last record end. A speculative parse (each piece parsed as
//! if it started outside quotes, redone when wrong) would move that 15% off this thread
//! but parse some pieces twice and need a parser whose state can be compared; the scan
//! is exact and never redoes work. The pieces — every record the chunk completes, as
//! one thread would output for that chunk — are then parsed independently, each by a
//! parser that starts at a record boundary with the header's field positions and the
//! line count before it (`RecordParser::csv_piece`).
//!
//! The header, column inference and the BOM are the stream's first records: the
//! chunks until they are read go through one sequential parser (the head) on the
//! caller's thread, exactly as on one thread; the pieces start after them.

use crate::error::{CLOSED, FilterError, FilterResult};
use crate::lines::newlines;
use crate::records::RecordParser;
use crate::transcode::{Spares, take_spare};

const BOM: &[u8; 3] = b"\xEF\xBB\xBF";

/// csv-core's reader states, as far as they decide record ends (its DFA with the
/// default CRLF terminator, no escape, no comments: after a `\r` it ends a record, and
/// a `\n` next is skipped as a blank line would be from the start of a record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Between records (csv-core's StartRecord, EndRecord and CRLF): a cut point.
    Start,
    /// At a field's start after a delimiter: a quote opens a quoted field.
    Field,
    /// In an unquoted field: a quote is text.
    Unquoted,
    /// In a quoted field: only a quote matters.
    Quoted,
    /// Just after a quote in a quoted field: another one is an escaped quote.
    QuoteSeen,
}

/// Follows record ends from the stream's start ([module docs](self)).
#[derive(Clone, Copy, Debug)]
pub(crate) struct QuoteScan {
    delimiter: u8,
    quote: u8,
    state: State,
    /// Bytes of a leading BOM matched so far; 3 (or a mismatch) decides it.
    bom: u8,
    bom_decided: bool,
}

/// What [`QuoteScan::scan`] found in a chunk.
pub(crate) struct Scanned {
    /// The chunk's bytes up to its last record end (or after a leading BOM).
    pub cut: Option<usize>,
}

impl QuoteScan {
    /// None for the settings whose record ends this scan does not follow.
    pub(crate) fn new(delimiter: u8, quote: u8) -> Option<Self> {
        let special = |b: u8| b == b'\r' || b == b'\n';
        if special(delimiter) || special(quote) || delimiter == quote {
            return None;
        }
        Some(Self {
            delimiter,
            quote,
            state: State::Start,
            bom: 0,
            bom_decided: false,
        })
    }

    /// The state after a byte that is neither a quote nor a terminator.
    fn after_text(&self, b: u8) -> State {
        if b == self.delimiter {
            State::Field
        } else {
            State::Unquoted
        }
    }

    /// One byte through the states (the slow path: a BOM's bytes that turned out to be data).
    fn step(&mut self, b: u8) {
        self.state = match self.state {
            State::Quoted if b == self.quote => State::QuoteSeen,
            State::Quoted => State::Quoted,
            _ if b == b'\r' || b == b'\n' => State::Start,
            State::Unquoted if b == self.quote => State::Unquoted,
            _ if b == self.quote => State::Quoted,
            _ => self.after_text(b),
        };
    }

    /// Follows `chunk` (the stream's next bytes) and finds its last cut point.
    /// `stretches`: scratch space, kept by the caller between chunks.
    pub(crate) fn scan(&mut self, chunk: &[u8], stretches: &mut Vec<(usize, usize)>) -> Scanned {
        let mut at = 0;
        let mut cut = None;
        // A leading BOM: csv-core strips it when its first read holds all three bytes
        // (the head parser makes sure of that); the bytes after it start a record.
        while !self.bom_decided && at < chunk.len() {
            if chunk[at] == BOM[usize::from(self.bom)] {
                self.bom += 1;
                at += 1;
                if usize::from(self.bom) == BOM.len() {
                    self.bom_decided = true;
                    cut = Some(at);
                }
            } else {
                self.bom_decided = true;
                for &b in &BOM[..usize::from(self.bom)] {
                    self.step(b);
                }
            }
        }
        let (quote, delimiter) = (self.quote, self.delimiter);
        // Outside quotes every state reads text and terminators alike (a terminator ends
        // the record, else the field goes on); only a quote's meaning depends on the byte
        // before it. So the scan jumps from quote to quote, noting the unquoted stretches,
        // and looks for the last terminator in them, from the end, once.
        let after = |b: u8| match b {
            b'\r' | b'\n' => State::Start,
            b if b == delimiter => State::Field,
            _ => State::Unquoted,
        };
        stretches.clear();
        let len = chunk.len();
        while at < len {
            if self.state == State::Quoted {
                match memchr::memchr(quote, &chunk[at..]) {
                    Some(i) => {
                        at += i + 1;
                        self.state = State::QuoteSeen;
                    }
                    None => at = len,
                }
                continue;
            }
            let q = memchr::memchr(quote, &chunk[at..]).map_or(len, |i| at + i);
            if q > at {
                stretches.push((at, q));
                self.state = after(chunk[q - 1]);
            }
            if q == len {
                break;
            }
            // A quote opens a field only at its start (`""` after a closing quote: one quote).
            if self.state != State::Unquoted {
                self.state = State::Quoted;
            }
            at = q + 1;
        }
        for &(from, to) in stretches.iter().rev() {
            if let Some(i) = memchr::memrchr2(b'\r', b'\n', &chunk[from..to]) {
                cut = Some(from + i + 1);
                break;
            }
        }
        Scanned { cut }
    }
}

/// The ordered state of a CSV stream cut into pieces ([module docs](self)).
pub(crate) struct CsvCutter {
    pub(crate) scan: QuoteScan,
    /// The bytes after the last cut: the next piece's start.
    pub(crate) carry: Vec<u8>,
    /// Newlines before the carry.
    pub(crate) lines: u64,
    /// The sequential parser of the stream's start; pieces are made from it once it
    /// is past the header ([`RecordParser::csv_piece`]).
    pub(crate) head: RecordParser,
    pub(crate) ready: bool,
    /// A head push whose work item was dropped unrun ([`crate::FilterHandle::restore`]):
    /// the head has parsed that chunk, so its push again hands back this output.
    pub(crate) replay: Option<FilterResult<Vec<u8>>>,
    /// The output of the last head push, kept until the next one for `replay`.
    pub(crate) last_head: Option<FilterResult<Vec<u8>>>,
    /// The scan's scratch space.
    stretches: Vec<(usize, usize)>,
    /// Piece buffers given back by finished work items.
    pub(crate) spares: Spares,
}

/// A push prepared by the cutter.
pub(crate) enum CsvStep {
    /// The head parsed the chunk here: its output.
    Done(FilterResult<Vec<u8>>),
    /// A piece (whole records) and its parser.
    Piece(Vec<u8>, Box<RecordParser>),
}

impl CsvCutter {
    pub(crate) fn new(head: RecordParser, scan: QuoteScan) -> Self {
        Self {
            scan,
            carry: Vec::new(),
            lines: 0,
            head,
            ready: false,
            replay: None,
            last_head: None,
            stretches: Vec::new(),
            spares: Spares::default(),
        }
    }

    /// A step of the head parser, or the output it gave for this step before the step
    /// was taken back.
    fn head_step(
        &mut self,
        run: impl FnOnce(&mut RecordParser) -> FilterResult<Vec<u8>>,
    ) -> FilterResult<Vec<u8>> {
        let out = match self.replay.take() {
            Some(out) => out,
            // A failed head is not run again (its work item, failing the stream, may not
            // have run yet): a parser that failed mid-record has no state to go on from.
            None if self.last_head.as_ref().is_some_and(Result::is_err) => Err(FilterError::new(
                CLOSED,
                "an earlier chunk of this stream failed",
            )),
            None => run(&mut self.head),
        };
        self.last_head = Some(out.clone());
        out
    }

    /// Takes the next chunk in stream order.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> CsvStep {
        let Scanned { cut } = self.scan.scan(chunk, &mut self.stretches);
        let before = self.lines;
        let piece = match cut {
            None => {
                self.carry.extend_from_slice(chunk);
                Vec::new()
            }
            Some(cut) => {
                // Into a buffer a finished piece gave back: mapped and warm already.
                let mut piece = take_spare(&self.spares);
                piece.extend_from_slice(&self.carry);
                piece.extend_from_slice(&chunk[..cut]);
                self.carry.clear();
                self.carry.extend_from_slice(&chunk[cut..]);
                self.lines += newlines(&piece);
                piece
            }
        };
        if !self.ready {
            let out = self.head_step(|head| head.push(chunk));
            self.ready = out.is_ok() && self.head.csv_piece(0).is_some();
            return CsvStep::Done(out);
        }
        let parser = self
            .head
            .csv_piece(before)
            .expect("the head is past the header");
        CsvStep::Piece(piece, Box::new(parser))
    }

    /// The end: the head's finish, or the carry (a last record without a newline, or a
    /// quoted field still open) and a parser for it.
    pub(crate) fn finish(&mut self) -> CsvStep {
        if !self.ready {
            return CsvStep::Done(self.head_step(RecordParser::finish));
        }
        let parser = self
            .head
            .csv_piece(self.lines)
            .expect("the head is past the header");
        CsvStep::Piece(std::mem::take(&mut self.carry), Box::new(parser))
    }

    /// What a restore needs: the ordered state before a step.
    pub(crate) fn mark(&self) -> CsvMark {
        CsvMark {
            scan: self.scan,
            carry: self.carry.clone(),
            lines: self.lines,
            ready: self.ready,
        }
    }

    /// Takes back the step since `mark`; a head step is handed back again ([`Self::replay`]).
    pub(crate) fn restore(&mut self, mark: CsvMark) {
        if !mark.ready {
            self.replay = self.last_head.take();
        }
        self.scan = mark.scan;
        self.carry = mark.carry;
        self.lines = mark.lines;
        self.ready = mark.ready;
    }
}

/// The cutter's ordered state before a step.
pub(crate) struct CsvMark {
    scan: QuoteScan,
    carry: Vec<u8>,
    lines: u64,
    ready: bool,
}
