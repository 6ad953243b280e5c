//! One stream's filter as the bindings drive it: an ordered, cheap step on the caller's
//! thread, then a [`Work`] item for the pool.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::brotli::{BrotliCompressor, BrotliDecompressor};
use crate::columns::RecordColumn;
use crate::compress::{Compressor, Decompressor};
use crate::csv_split::{CsvCutter, CsvMark, CsvStep, QuoteScan};
use crate::digest::Digest;
use crate::error::{BUSY, CLOSED, FilterError, FilterResult, TOO_LARGE};
use crate::records::{
    CsvOptions, RecordFormat, RecordOptions, RecordParser, infer_ndjson, ndjson_sample_ready,
};
use crate::spec::FilterSpec;
use crate::transcode::{Conversion, Spares, Transcoder, give_back, recycle, take_spare};
use crate::zstd::{ZstdCompressor, ZstdDecompressor};

/// A stateful filter: chunks in order, then `finish` once.
pub trait Filter: Send {
    fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>>;
    fn finish(&mut self) -> FilterResult<Vec<u8>>;
}

impl Filter for Compressor {
    fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        Compressor::push(self, chunk)
    }
    fn finish(&mut self) -> FilterResult<Vec<u8>> {
        Compressor::finish(self)
    }
}

impl Filter for Decompressor {
    fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        Decompressor::push(self, chunk)
    }
    fn finish(&mut self) -> FilterResult<Vec<u8>> {
        Decompressor::finish(self)
    }
}

impl Filter for Digest {
    fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        self.update(chunk);
        Ok(Vec::new())
    }
    fn finish(&mut self) -> FilterResult<Vec<u8>> {
        Ok(Digest::finish(self))
    }
}

impl Filter for RecordParser {
    fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        RecordParser::push(self, chunk)
    }
    fn finish(&mut self) -> FilterResult<Vec<u8>> {
        RecordParser::finish(self)
    }
}

impl Filter for ZstdCompressor {
    fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        ZstdCompressor::push(self, chunk)
    }
    fn finish(&mut self) -> FilterResult<Vec<u8>> {
        ZstdCompressor::finish(self)
    }
}

impl Filter for ZstdDecompressor {
    fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        ZstdDecompressor::push(self, chunk)
    }
    fn finish(&mut self) -> FilterResult<Vec<u8>> {
        ZstdDecompressor::finish(self)
    }
}

impl Filter for BrotliCompressor {
    fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        BrotliCompressor::push(self, chunk)
    }
    fn finish(&mut self) -> FilterResult<Vec<u8>> {
        BrotliCompressor::finish(self)
    }
}

impl Filter for BrotliDecompressor {
    fn push(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        BrotliDecompressor::push(self, chunk)
    }
    fn finish(&mut self) -> FilterResult<Vec<u8>> {
        BrotliDecompressor::finish(self)
    }
}

/// The part of a push that runs on a pool thread; owns everything it reads.
pub struct Work(Box<dyn FnOnce() -> FilterResult<Vec<u8>> + Send>);

impl Work {
    pub fn run(self) -> FilterResult<Vec<u8>> {
        (self.0)()
    }
}

/// A push that writes its output into a buffer the host owns ([`FilterHandle::prepare_push_into`])
/// and returns how many bytes it wrote.
pub struct WorkInto(Box<WriteInto>);

type WriteInto = dyn FnOnce(&mut [u8]) -> FilterResult<usize> + Send;

impl WorkInto {
    /// `out` holds at least the [`FilterHandle::output_bound`] given before the push.
    pub fn run(self, out: &mut [u8]) -> FilterResult<usize> {
        (self.0)(out)
    }
}

enum State {
    Parallel(Transcoder),
    /// NDJSON cut after each chunk's last newline: the pieces parse independently.
    Lines(LineCutter),
    /// CSV cut after each chunk's last record end (csv_split.rs): the pieces parse
    /// independently once the header is read.
    Csv(Box<CsvCutter>),
    Sequential {
        filter: Arc<Mutex<Box<dyn Filter>>>,
        busy: Arc<AtomicBool>,
        /// Chunk copies given back by finished work items (as a transcoder's): the next
        /// push copies into memory that is already mapped and warm.
        spares: Spares,
    },
}

/// Cuts an NDJSON stream into pieces of whole lines, each parsed by a parser of its own
/// on any thread (its batch holds that piece's rows; the host keeps the batches in order).
struct LineCutter {
    columns: Vec<RecordColumn>,
    /// Columns still to be inferred: the stream's first lines are held in the carry
    /// until the sample is complete, then typed once, here on the caller's thread, so
    /// every piece parses with the same columns.
    infer: bool,
    options: RecordOptions,
    /// The unfinished line: the start of the next piece.
    carry: Vec<u8>,
    /// Lines (newlines) before the carry: where the next piece's numbering starts.
    lines: u64,
}

impl LineCutter {
    /// The next piece (all of `chunk` up to its last newline, after the carry) and the
    /// lines before it; `None` (the end): the carry, a last line without a newline.
    fn cut(&mut self, chunk: Option<&[u8]>) -> (Vec<u8>, u64) {
        let before = self.lines;
        if self.infer {
            let rows = self.options.infer_rows;
            if let Some(chunk) = chunk
                && !ndjson_sample_ready(&mut self.carry, chunk, rows)
            {
                return (Vec::new(), before);
            }
            // A push the host takes back after this keeps the columns: it must push the
            // same chunk again, which completes the same sample.
            self.columns = infer_ndjson(&self.carry, rows, chunk.is_none());
            self.infer = false;
            if chunk.is_some() {
                let held = std::mem::take(&mut self.carry);
                return self.cut(Some(&held));
            }
        }
        let Some(chunk) = chunk else {
            return (std::mem::take(&mut self.carry), before);
        };
        let Some(nl) = memchr::memrchr(b'\n', chunk) else {
            self.carry.extend_from_slice(chunk);
            return (Vec::new(), before);
        };
        let mut piece = std::mem::take(&mut self.carry);
        piece.extend_from_slice(&chunk[..=nl]);
        self.carry.extend_from_slice(&chunk[nl + 1..]);
        self.lines += crate::lines::newlines(&chunk[..=nl]);
        (piece, before)
    }
}

/// A handle's ordered state before a push or finish ([`FilterHandle::checkpoint`]).
pub struct Checkpoint {
    carry: Option<(Vec<u8>, u64)>,
    csv: Option<CsvMark>,
    finished: bool,
}

pub struct FilterHandle {
    state: State,
    /// Set by a failed work item: the stream is broken, later pushes are refused.
    failed: Arc<AtomicBool>,
    finished: bool,
}

/// Clears `busy` when a sequential work item ends, and marks the filter failed when it
/// ends by panicking (the pool turns the panic into ERR_KERNEL_PANIC).
struct Running {
    busy: Arc<AtomicBool>,
    failed: Arc<AtomicBool>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.failed.store(true, Ordering::Release);
        }
        self.busy.store(false, Ordering::Release);
    }
}

impl FilterHandle {
    pub fn new(spec: FilterSpec) -> FilterResult<Self> {
        let sequential = |f: Box<dyn Filter>| State::Sequential {
            filter: Arc::new(Mutex::new(f)),
            busy: Arc::new(AtomicBool::new(false)),
            spares: Spares::default(),
        };
        let state = match spec {
            FilterSpec::Transcode(c) => State::Parallel(Transcoder::new(c)),
            FilterSpec::Compress { format, level } => {
                sequential(Box::new(Compressor::new(format, level)))
            }
            FilterSpec::Decompress(format) => sequential(Box::new(Decompressor::new(format))),
            FilterSpec::Digest(kind) => sequential(Box::new(Digest::new(kind))),
            FilterSpec::ZstdCompress => sequential(Box::<ZstdCompressor>::default()),
            FilterSpec::ZstdDecompress { window_log_max } => {
                sequential(Box::new(ZstdDecompressor::new(window_log_max)))
            }
            FilterSpec::BrotliCompress { quality, window } => {
                sequential(Box::new(BrotliCompressor::new(quality, window)))
            }
            FilterSpec::BrotliDecompress => sequential(Box::<BrotliDecompressor>::default()),
            FilterSpec::Records {
                columns,
                format: RecordFormat::Ndjson,
                options,
            } => {
                // Checks the columns once; each piece then gets a parser of its own.
                RecordParser::with_options(columns.clone(), RecordFormat::Ndjson, options.clone())?;
                State::Lines(LineCutter {
                    infer: columns.is_empty(),
                    columns,
                    options,
                    carry: Vec::new(),
                    lines: 0,
                })
            }
            FilterSpec::Records {
                columns,
                format: RecordFormat::Csv(csv),
                options,
            } => {
                let CsvOptions {
                    delimiter, quote, ..
                } = csv;
                let head = RecordParser::with_options(columns, RecordFormat::Csv(csv), options)?;
                match QuoteScan::new(delimiter, quote) {
                    Some(scan) => State::Csv(Box::new(CsvCutter::new(head, scan))),
                    None => sequential(Box::new(head)),
                }
            }
        };
        Ok(Self {
            state,
            failed: Arc::new(AtomicBool::new(false)),
            finished: false,
        })
    }

    /// What [`restore`](Self::restore) needs to take back the next push or finish whose
    /// work item never runs (a host whose queue refused it): the bytes kept back and
    /// the stream position. A host that retries must then push the same chunk again.
    pub fn checkpoint(&self) -> Checkpoint {
        let carry = match &self.state {
            State::Parallel(t) => Some(t.checkpoint()),
            State::Lines(c) => Some((c.carry.clone(), c.lines)),
            State::Csv(_) | State::Sequential { .. } => None,
        };
        let csv = match &self.state {
            State::Csv(c) => Some(c.mark()),
            _ => None,
        };
        Checkpoint {
            carry,
            csv,
            finished: self.finished,
        }
    }

    /// Undoes the push or finish prepared since `checkpoint`; its work item must be
    /// dropped unrun (a sequential filter's state only changes when its work runs).
    pub fn restore(&mut self, checkpoint: Checkpoint) {
        self.finished = checkpoint.finished;
        match (&mut self.state, checkpoint.carry) {
            (State::Parallel(t), Some(saved)) => t.restore(saved),
            (State::Lines(c), Some((carry, lines))) => {
                c.carry = carry;
                c.lines = lines;
            }
            (State::Sequential { busy, .. }, _) => busy.store(false, Ordering::Release),
            _ => {}
        }
        if let (State::Csv(c), Some(mark)) = (&mut self.state, checkpoint.csv) {
            c.restore(mark);
        }
    }

    /// Several pushes may be in flight at once.
    pub fn parallel(&self) -> bool {
        matches!(
            self.state,
            State::Parallel(_) | State::Lines(_) | State::Csv(_)
        )
    }

    fn check_open(&self) -> FilterResult<()> {
        if self.finished {
            return Err(FilterError::new(CLOSED, "the filter has already finished"));
        }
        if self.failed.load(Ordering::Acquire) {
            return Err(FilterError::new(
                CLOSED,
                "an earlier chunk of this stream failed",
            ));
        }
        Ok(())
    }

    /// Takes `chunk` in stream order (copying what the work item needs).
    pub fn prepare_push(&mut self, chunk: &[u8]) -> FilterResult<Work> {
        self.check_open()?;
        self.prepare(Some(chunk))
    }

    /// The room the output of pushing a `chunk_len`-byte chunk next needs when it is
    /// written into the host's buffer ([`prepare_push_into`](Self::prepare_push_into)),
    /// or `None`: this filter's pushes return new `Vec`s ([`prepare_push`](Self::prepare_push)).
    pub fn output_bound(&self, chunk_len: usize) -> Option<usize> {
        match &self.state {
            State::Parallel(t) => t.conversion.output_bound(t.next_piece_len(chunk_len)),
            State::Lines(_) | State::Csv(_) | State::Sequential { .. } => None,
        }
    }

    /// Like [`prepare_push`](Self::prepare_push), for a work item that writes into
    /// `out`, a buffer of at least [`output_bound`](Self::output_bound) bytes that the
    /// host hands to [`WorkInto::run`] again. Conversions to UTF-16LE copy the input
    /// into a buffer the stream recycles; in-place ones (latin1 → latin1, validation)
    /// copy it into `out` right here and the work item only checks it. No allocation
    /// either way once the stream is warm. Fails with TOO_LARGE when the filter has no
    /// bound.
    pub fn prepare_push_into(&mut self, chunk: &[u8], out: &mut [u8]) -> FilterResult<WorkInto> {
        self.check_open()?;
        let failed = Arc::clone(&self.failed);
        let State::Parallel(t) = &mut self.state else {
            return Err(FilterError::new(
                TOO_LARGE,
                "this filter returns its output; it cannot write into a given buffer",
            ));
        };
        let conversion = t.conversion;
        if conversion.output_bound(0).is_none() {
            return Err(FilterError::new(
                TOO_LARGE,
                "this conversion returns its output; it cannot write into a given buffer",
            ));
        }
        if conversion.in_place() {
            let (n, offset) = t.cut_into(chunk, out)?;
            return Ok(WorkInto(Box::new(move |out| {
                let checked = match out.get(..n) {
                    Some(piece) => conversion.check_in_place(piece, offset),
                    None => Err(FilterError::new(TOO_LARGE, "the output buffer shrank")),
                };
                if checked.is_err() {
                    failed.store(true, Ordering::Release);
                }
                checked.map(|()| n)
            })));
        }
        let piece = t.cut(chunk);
        let spares = t.spares();
        Ok(WorkInto(Box::new(move |out| {
            let n = conversion.run_into(&piece, out);
            if n.is_err() {
                failed.store(true, Ordering::Release);
            }
            recycle(&spares, piece);
            n
        })))
    }

    /// The end of the stream: the work item yields the last output (a digest, a
    /// deflate trailer, a last record, a character kept back).
    pub fn prepare_finish(&mut self) -> FilterResult<Work> {
        self.check_open()?;
        let work = self.prepare(None)?;
        self.finished = true;
        Ok(work)
    }

    fn prepare(&mut self, chunk: Option<&[u8]>) -> FilterResult<Work> {
        let failed = Arc::clone(&self.failed);
        match &mut self.state {
            State::Parallel(t) => {
                let piece = match chunk {
                    Some(c) => t.cut(c),
                    None => t.cut_end(),
                };
                let conversion: Conversion = t.conversion;
                Ok(Work(Box::new(move || {
                    let out = conversion.run(piece);
                    if out.is_err() {
                        failed.store(true, Ordering::Release);
                    }
                    out
                })))
            }
            State::Lines(cutter) => {
                let end = chunk.is_none();
                let (piece, before) = cutter.cut(chunk);
                let columns = cutter.columns.clone();
                let options = cutter.options.clone();
                Ok(Work(Box::new(move || {
                    if piece.is_empty() {
                        return Ok(Vec::new());
                    }
                    let parser = RecordParser::with_columns(columns, RecordFormat::Ndjson, options)
                        .map(|p| p.starting_after_line(before));
                    let out = parser.and_then(|mut p| {
                        if end {
                            p.push_last(&piece)
                        } else {
                            p.push(&piece)
                        }
                    });
                    if out.is_err() {
                        failed.store(true, Ordering::Release);
                    }
                    out
                })))
            }
            State::Csv(cutter) => {
                let end = chunk.is_none();
                let step = match chunk {
                    Some(c) => cutter.push(c),
                    None => cutter.finish(),
                };
                let spares = Arc::clone(&cutter.spares);
                Ok(Work(Box::new(move || {
                    let out = match step {
                        CsvStep::Done(out) => out,
                        CsvStep::Piece {
                            bytes,
                            from,
                            mut parser,
                        } => {
                            let piece = &bytes[from..];
                            let out = match () {
                                () if end => parser.finish_after(piece),
                                () if piece.is_empty() => Ok(Vec::new()),
                                () => parser.push(piece),
                            };
                            give_back(&spares, bytes);
                            out
                        }
                    };
                    if out.is_err() {
                        failed.store(true, Ordering::Release);
                    }
                    out
                })))
            }
            State::Sequential {
                filter,
                busy,
                spares,
            } => {
                if busy.swap(true, Ordering::AcqRel) {
                    return Err(FilterError::new(
                        BUSY,
                        "this filter is sequential: wait for the previous chunk",
                    ));
                }
                let owned = chunk.map(|c| {
                    let mut bytes = take_spare(spares);
                    bytes.extend_from_slice(c);
                    bytes
                });
                let (filter, busy, spares) =
                    (Arc::clone(filter), Arc::clone(busy), Arc::clone(spares));
                Ok(Work(Box::new(move || {
                    let _running = Running {
                        busy,
                        failed: Arc::clone(&failed),
                    };
                    // Never poisoned in practice: a panic marks the filter failed and
                    // check_open refuses any later push first.
                    let mut f = filter.lock().unwrap_or_else(|p| p.into_inner());
                    let out = match &owned {
                        Some(c) => f.push(c),
                        None => f.finish(),
                    };
                    if out.is_err() {
                        failed.store(true, Ordering::Release);
                    }
                    // Given back before `_running` clears `busy` (dropped after this).
                    if let Some(bytes) = owned {
                        give_back(&spares, bytes);
                    }
                    out
                })))
            }
        }
    }
}

impl FilterHandle {
    /// Parses a JSON spec ([`FilterSpec::from_json`]) and opens its filter.
    pub fn from_json(spec: &str) -> FilterResult<Self> {
        Self::new(FilterSpec::from_json(spec)?)
    }

    /// A CSV stream's head reads at most `bytes` of a chunk before it looks whether it is
    /// past the header (tests: small slices send small inputs down every path).
    #[doc(hidden)]
    pub fn set_csv_head_slice(&mut self, bytes: usize) {
        if let State::Csv(c) = &mut self.state {
            c.set_head_slice(bytes);
        }
    }

    /// Runs a push in place (hosts without a pool, tests).
    pub fn push_now(&mut self, chunk: &[u8]) -> FilterResult<Vec<u8>> {
        self.prepare_push(chunk)?.run()
    }

    /// Runs the end of the stream in place.
    pub fn finish_now(&mut self) -> FilterResult<Vec<u8>> {
        self.prepare_finish()?.run()
    }
}
