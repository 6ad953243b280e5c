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
//! The header, column inference and the BOM are the stream's first records: they go
//! through one sequential parser (the head) on the caller's thread, exactly as on one
//! thread. The head reads a chunk's whole records a slice at a time ([`HEAD_SLICE`])
//! and stops at the first record end where it is past them; the rest of that chunk is
//! the first piece, whose parser starts with a copy of the head's rows, so the chunk
//! still gives one batch. Later pieces are made from the head's columns and positions.

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
    pub(crate) fn scan(&mut self, chunk: &[u8]) -> Scanned {
        self.scan_keeping::<STRETCHES>(chunk)
    }

    /// [`Self::scan`], keeping the last `KEEP` unquoted stretches (tests: few, so that
    /// the second walk runs).
    fn scan_keeping<const KEEP: usize>(&mut self, chunk: &[u8]) -> Scanned {
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
        // The last cut is the last terminator in an unquoted stretch. The walk keeps the
        // last KEEP stretches and looks in them from the end, once: nearly always one
        // holds a record end. When none does and there were more, a second walk looks
        // in the earlier ones — scratch of a fixed size, whatever the chunk (one pair per
        // stretch was up to 5x a quote-dense chunk's size).
        let from_state = self.state;
        let mut kept = [(0usize, 0usize); KEEP];
        let mut seen = 0usize;
        self.state = self.walk(chunk, at, from_state, |stretch| {
            kept[seen % KEEP] = stretch;
            seen += 1;
        });
        for n in (seen.saturating_sub(KEEP)..seen).rev() {
            let (from, to) = kept[n % KEEP];
            if let Some(i) = memchr::memrchr2(b'\r', b'\n', &chunk[from..to]) {
                return Scanned {
                    cut: Some(from + i + 1),
                };
            }
        }
        if seen > KEEP {
            let earlier = seen - KEEP;
            let mut n = 0;
            self.walk(chunk, at, from_state, |(from, to)| {
                if n < earlier
                    && let Some(i) = memchr::memrchr2(b'\r', b'\n', &chunk[from..to])
                {
                    cut = Some(from + i + 1);
                }
                n += 1;
            });
        }
        Scanned { cut }
    }

    /// Follows `chunk[at..]` from `state`: each unquoted stretch `(from, to)` to
    /// `stretch`, in order; returns the state at the end.
    ///
    /// Outside quotes every state reads text and terminators alike (a terminator ends
    /// the record, else the field goes on); only a quote's meaning depends on the byte
    /// before it. So the walk jumps from quote to quote with memchr.
    fn walk(
        &self,
        chunk: &[u8],
        mut at: usize,
        mut state: State,
        mut stretch: impl FnMut((usize, usize)),
    ) -> State {
        let (quote, delimiter) = (self.quote, self.delimiter);
        let after = |b: u8| match b {
            b'\r' | b'\n' => State::Start,
            b if b == delimiter => State::Field,
            _ => State::Unquoted,
        };
        let len = chunk.len();
        while at < len {
            if state == State::Quoted {
                match memchr::memchr(quote, &chunk[at..]) {
                    Some(i) => {
                        at += i + 1;
                        state = State::QuoteSeen;
                    }
                    None => at = len,
                }
                continue;
            }
            let q = memchr::memchr(quote, &chunk[at..]).map_or(len, |i| at + i);
            if q > at {
                stretch((at, q));
                state = after(chunk[q - 1]);
            }
            if q == len {
                break;
            }
            // A quote opens a field only at its start (`""` after a closing quote: one quote).
            if state != State::Unquoted {
                state = State::Quoted;
            }
            at = q + 1;
        }
        state
    }
}

/// Unquoted stretches a scan keeps ([`QuoteScan::scan`]): 4 KiB on the stack. A chunk
/// that ends inside a record of more quoted fields than this walks twice.
const STRETCHES: usize = 256;

/// How much of a chunk the head reads before it looks whether it is past the header
/// and the inference: it runs on the caller's thread, so it reads no more of a big
/// chunk than it needs. Read whole, a first chunk of 256 KiB held the caller 2.1 ms and
/// one of 4 MiB 31 ms; now 0.5–0.7 and 4.6–6.2 ms, the scan and the piece's copy into
/// memory not yet mapped (a release build, inferred columns).
const HEAD_SLICE: usize = 16 << 10;

/// The ordered state of a CSV stream cut into pieces ([module docs](self)).
pub(crate) struct CsvCutter {
    pub(crate) scan: QuoteScan,
    /// The bytes after the last cut: the next piece's start.
    pub(crate) carry: Vec<u8>,
    /// Newlines before the carry.
    pub(crate) lines: u64,
    /// The sequential parser of the stream's start; it reads the pieces until it is past
    /// the header ([`RecordParser::csv_pieces_ready`]).
    pub(crate) head: RecordParser,
    /// The record ends of the bytes the head read: where it may stop in a piece.
    head_scan: QuoteScan,
    /// Bytes the head reads at most before it looks again ([`HEAD_SLICE`]).
    head_slice: usize,
    /// Once the head is past the header: the parser the pieces are made from.
    template: Option<RecordParser>,
    /// A head step whose work item was dropped unrun ([`crate::FilterHandle::restore`]):
    /// the head has taken that chunk, so its push again takes this step.
    pub(crate) replay: Option<HeadStep>,
    /// The last head step, kept until the next one for `replay`.
    pub(crate) last_head: Option<HeadStep>,
    /// Piece buffers given back by finished work items.
    pub(crate) spares: Spares,
}

/// What the head made of a piece.
#[derive(Clone)]
pub(crate) enum HeadStep {
    /// It read the whole piece: its output.
    Output(FilterResult<Vec<u8>>),
    /// It got past the header `fed` bytes into the piece: the rest is parsed on the
    /// pool, by a parser holding the head's rows ([`RecordParser::csv_piece_with_rows`]).
    Ready { fed: usize },
}

/// A push prepared by the cutter.
pub(crate) enum CsvStep {
    /// The head parsed the chunk here: its output.
    Done(FilterResult<Vec<u8>>),
    /// A piece (whole records from `from` on: the bytes before are the head's) and its
    /// parser.
    Piece {
        bytes: Vec<u8>,
        from: usize,
        parser: Box<RecordParser>,
    },
}

impl CsvCutter {
    pub(crate) fn new(head: RecordParser, scan: QuoteScan) -> Self {
        Self {
            scan,
            carry: Vec::new(),
            lines: 0,
            head,
            head_scan: scan,
            head_slice: HEAD_SLICE,
            template: None,
            replay: None,
            last_head: None,
            spares: Spares::default(),
        }
    }

    /// The head reads at most `bytes` before it looks again (tests: small slices make
    /// small inputs take every path).
    pub(crate) fn set_head_slice(&mut self, bytes: usize) {
        self.head_slice = bytes.max(1);
    }

    fn ready(&self) -> bool {
        self.template.is_some()
    }

    /// A step of the head, or the one it took for this push before the step was taken
    /// back.
    fn head_step(&mut self, run: impl FnOnce(&mut Self) -> HeadStep) -> HeadStep {
        let step = match self.replay.take() {
            Some(step) => step,
            // A failed head is not run again (its work item, failing the stream, may not
            // have run yet): a parser that failed mid-record has no state to go on from.
            None if matches!(self.last_head, Some(HeadStep::Output(Err(_)))) => {
                HeadStep::Output(Err(FilterError::new(
                    CLOSED,
                    "an earlier chunk of this stream failed",
                )))
            }
            None => run(self),
        };
        self.last_head = Some(step.clone());
        step
    }

    /// The head reads `piece` a slice at a time, each cut at a record end when one is in
    /// it, until it is past the header with bytes of the piece left over.
    fn read_head(&mut self, piece: &[u8]) -> HeadStep {
        let mut fed = 0;
        while fed < piece.len() {
            let mut end = (fed + self.head_slice).min(piece.len());
            let mut at_record_end = true;
            if end < piece.len() {
                let mut scan = self.head_scan;
                match scan.scan(&piece[fed..end]).cut {
                    Some(cut) => {
                        end = fed + cut;
                        scan.state = State::Start;
                        scan.bom_decided = true;
                    }
                    // A record longer than the slice: the head reads on into the next.
                    None => at_record_end = false,
                }
                self.head_scan = scan;
            }
            if let Err(e) = self.head.parse(&piece[fed..end], false) {
                return HeadStep::Output(Err(e));
            }
            fed = end;
            if at_record_end && fed < piece.len() && self.head.csv_pieces_ready() {
                return HeadStep::Ready { fed };
            }
        }
        // The piece ends at a record end (or after a BOM).
        if !piece.is_empty() {
            self.head_scan.state = State::Start;
            self.head_scan.bom_decided = true;
        }
        HeadStep::Output(self.head.take_output())
    }

    /// The parser of the piece that starts after `newlines` newlines.
    fn piece_parser(&self, newlines: u64) -> Box<RecordParser> {
        let template = self.template.as_ref().expect("the head is past the header");
        Box::new(
            template
                .csv_piece(newlines)
                .expect("a piece's parser makes pieces"),
        )
    }

    /// Takes the next chunk in stream order.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> CsvStep {
        let Scanned { cut } = self.scan.scan(chunk);
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
        if self.ready() {
            return CsvStep::Piece {
                bytes: piece,
                from: 0,
                parser: self.piece_parser(before),
            };
        }
        match self.head_step(|c| c.read_head(&piece)) {
            HeadStep::Output(out) => {
                if out.is_ok() && self.head.csv_pieces_ready() {
                    self.make_template();
                }
                CsvStep::Done(out)
            }
            HeadStep::Ready { fed } => {
                let first = self
                    .head
                    .csv_piece_with_rows(before + newlines(&piece[..fed]))
                    .expect("the head is past the header");
                self.make_template();
                CsvStep::Piece {
                    bytes: piece,
                    from: fed,
                    parser: Box::new(first),
                }
            }
        }
    }

    /// The head is past the header: later pieces are parsed without it. Their columns
    /// went out with the head's output or the first piece's.
    fn make_template(&mut self) {
        let mut template = self.head.csv_piece(0).expect("the head is past the header");
        template.set_announced();
        self.template = Some(template);
    }

    /// The end: the head's finish, or the carry (a last record without a newline, or a
    /// quoted field still open) and a parser for it.
    pub(crate) fn finish(&mut self) -> CsvStep {
        if self.ready() {
            return CsvStep::Piece {
                bytes: std::mem::take(&mut self.carry),
                from: 0,
                parser: self.piece_parser(self.lines),
            };
        }
        match self.head_step(|c| HeadStep::Output(c.head.finish_after(&c.carry))) {
            HeadStep::Output(out) => CsvStep::Done(out),
            // A push taken back and not pushed again: the stream lost a chunk.
            HeadStep::Ready { .. } => CsvStep::Done(Err(FilterError::new(
                CLOSED,
                "a chunk taken back was not pushed again before the end",
            ))),
        }
    }

    /// What a restore needs: the ordered state before a step.
    pub(crate) fn mark(&self) -> CsvMark {
        CsvMark {
            scan: self.scan,
            carry: self.carry.clone(),
            lines: self.lines,
            ready: self.ready(),
        }
    }

    /// Takes back the step since `mark`; a head step is taken again ([`Self::replay`]).
    /// The head is not taken back: it keeps what it read, and so does its scan.
    pub(crate) fn restore(&mut self, mark: CsvMark) {
        if !mark.ready {
            self.replay = self.last_head.take();
            self.template = None;
        }
        self.scan = mark.scan;
        self.carry = mark.carry;
        self.lines = mark.lines;
    }
}

/// The cutter's ordered state before a step.
pub(crate) struct CsvMark {
    scan: QuoteScan,
    carry: Vec<u8>,
    lines: u64,
    ready: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: reproducible cases without a dependency.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
        }
    }

    /// The scan's answer byte by byte: csv-core's states one byte at a time, the cut after
    /// the last terminator read outside quotes.
    fn byte_by_byte(scan: &mut QuoteScan, chunk: &[u8]) -> Option<usize> {
        let mut cut = None;
        for (i, &b) in chunk.iter().enumerate() {
            let quoted = scan.state == State::Quoted;
            scan.step(b);
            if !quoted && (b == b'\r' || b == b'\n') {
                cut = Some(i + 1);
            }
        }
        cut
    }

    /// A stream's chunks scanned with few stretches kept (the second walk) and with the
    /// default, against the byte-by-byte states: the same cuts, the same state after.
    fn check_keeping<const KEEP: usize>(seed: u64) {
        let mut rng = Rng(seed);
        // Quote-dense: records of many quoted fields, so that a chunk's last record end
        // often lies before more than KEEP stretches.
        let alphabet: &[u8] = b",,\"\"\"\"\"\n\r\n;aab";
        for _ in 0..400 {
            let mut fast = QuoteScan::new(b',', b'"').unwrap();
            fast.bom_decided = true;
            let mut slow = fast;
            for _ in 0..8 {
                let len = rng.below(300);
                let chunk: Vec<u8> = (0..len)
                    .map(|_| alphabet[rng.below(alphabet.len())])
                    .collect();
                let expected = byte_by_byte(&mut slow, &chunk);
                let mut default = fast;
                assert_eq!(fast.scan_keeping::<KEEP>(&chunk).cut, expected, "{chunk:?}");
                assert_eq!(default.scan(&chunk).cut, expected, "{chunk:?}");
                assert_eq!(fast.state, slow.state, "{chunk:?}");
                assert_eq!(default.state, slow.state, "{chunk:?}");
            }
        }
    }

    #[test]
    fn the_scan_finds_the_cut_of_a_byte_by_byte_reading() {
        check_keeping::<1>(0x9E37_79B9_7F4A_7C15);
        check_keeping::<2>(0xD1B5_4A32_D192_ED03);
        check_keeping::<3>(0x8CB9_2BA7_2F3D_8DD7);
        check_keeping::<STRETCHES>(0xA076_1D64_78BD_642F);
    }
}
