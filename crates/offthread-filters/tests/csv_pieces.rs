//! One CSV stream parsed in pieces (several threads) gives the bytes one thread gives:
//! random CSVs with quoted newlines, CRLF, bare CR, blank lines, BOMs, escaped and
//! stray quotes, ragged rows, cut at random points, quotes landing on the cuts.

use offthread_filters::FilterHandle;
use offthread_filters::fuzzing::check_csv_pieces;

/// xorshift64*: reproducible cases without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const CELLS: &[&str] = &[
    "1",
    "-7",
    " 42 ",
    "3.5",
    "",
    "true",
    "x",
    "hello world",
    "\"quoted\"",
    "\"a,b\"",
    "\"line\nbreak\"",
    "\"crlf\r\ninside\"",
    "\"\"",
    "\"say \"\"hi\"\"\"",
    "\"\n\"",
    "ab\"c",
    "\"ab\"c",
    "\"5\"",
    "\"\r\"",
    "9e3",
    "nope",
];
const ENDS: &[&str] = &["\n", "\r\n", "\r", "\n\n", "\r\n\r\n"];

/// A CSV of `rows` rows of `width` cells (some ragged), with a header `a,b,c…` unless not.
fn random_csv(rng: &mut Rng, header: bool, width: usize, rows: usize, delimiter: char) -> Vec<u8> {
    let mut text = String::new();
    if rng.below(4) == 0 {
        text.push('\u{feff}');
    }
    if header {
        let names: Vec<String> = (0..width)
            .map(|i| ((b'a' + i as u8) as char).to_string())
            .collect();
        text.push_str(&names.join(&delimiter.to_string()));
        text.push_str(rng.pick(ENDS));
    }
    for r in 0..rows {
        let n = if rng.below(15) == 0 {
            width + rng.below(3)
        } else {
            width
        };
        let n = if rng.below(20) == 0 {
            n.saturating_sub(1)
        } else {
            n
        };
        for i in 0..n {
            if i > 0 {
                text.push(delimiter);
            }
            text.push_str(rng.pick(CELLS));
        }
        if r + 1 < rows || rng.below(2) == 0 {
            text.push_str(rng.pick(ENDS));
        }
    }
    text.into_bytes()
}

fn random_cuts(rng: &mut Rng, len: usize) -> Vec<usize> {
    let mut cuts: Vec<usize> = (0..rng.below(12)).map(|_| rng.below(len + 1)).collect();
    cuts.sort_unstable();
    cuts
}

const SPECS: &[(&str, bool, usize, char)] = &[
    (
        r#"{"kind":"csv","layout":"records","report":true,"onError":"skip","columns":[{"name":"a","type":"i32","nullable":true},{"name":"b","type":"string"},{"name":"c","type":"f64","default":1.5}]}"#,
        true,
        3,
        ',',
    ),
    (
        r#"{"kind":"csv","layout":"records","report":true,"onError":"skip","inferRows":3}"#,
        true,
        3,
        ',',
    ),
    (
        r#"{"kind":"csv","layout":"records","report":true,"onError":"skip"}"#,
        true,
        4,
        ',',
    ),
    (
        r#"{"kind":"csv","columns":[{"name":"b","type":"string"},{"name":"a","type":"string"}]}"#,
        true,
        2,
        ',',
    ),
    (
        r#"{"kind":"csv","onError":"skip","report":true,"header":false,"columns":[{"name":"x","type":"string"},{"name":"y","type":"string"},{"name":"z","type":"string"}]}"#,
        false,
        3,
        ',',
    ),
    (
        r#"{"kind":"csv","delimiter":";","layout":"records","report":true,"onError":"skip","inferRows":1}"#,
        true,
        3,
        ';',
    ),
    (
        r#"{"kind":"csv","columns":[{"name":"a","type":"f64"},{"name":"b","type":"string"}]}"#,
        true,
        2,
        ',',
    ),
];

#[test]
fn pieces_give_the_bytes_of_one_thread() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for case in 0..3000 {
        let (spec, header, width, delimiter) = SPECS[case % SPECS.len()];
        let rows = rng.below(40);
        let input = random_csv(&mut rng, header, width, rows, delimiter);
        let cuts = random_cuts(&mut rng, input.len());
        check_csv_pieces(spec, &input, &cuts);
    }
}

/// Cuts right before, on and after every quote and terminator of one file.
#[test]
fn pieces_hold_with_every_cut_at_a_quote_or_a_terminator() {
    let input =
        b"\xEF\xBB\xBFa,b,c\r\n1,\"x\ny\",2\r\n\"\"\"q\",\"\r\n\",3\n\r\nab\"c,\"d\"e,4\r5,\"\",6"
            .to_vec();
    let specs = [
        SPECS[0].0,
        SPECS[2].0,
        SPECS[3]
            .0
            .replace("\"b\"", "\"c\"")
            .as_str()
            .to_owned()
            .leak(),
    ];
    for spec in specs {
        for i in 0..=input.len() {
            for j in i..=input.len().min(i + 3) {
                check_csv_pieces(spec, &input, &[i, j]);
            }
        }
    }
}

/// CSV pushes may be in flight at once, unless a setting makes record ends unfollowable
/// (a quote that is also the delimiter): then one at a time, as before.
#[test]
fn csv_is_parallel_unless_its_quote_is_its_delimiter() {
    let spec = r#"{"kind":"csv","columns":[{"name":"n","type":"u32"}]}"#;
    assert!(FilterHandle::from_json(spec).unwrap().parallel());
    let odd = r#"{"kind":"csv","delimiter":";","quote":";","columns":[{"name":"n","type":"u32"}]}"#;
    assert!(!FilterHandle::from_json(odd).unwrap().parallel());
}

/// Where a CSV stream's time goes (`cargo test --release --test csv_pieces -- --ignored
/// --nocapture`): the ordered step on the caller's thread (quote scan, piece copy) next
/// to the pieces' parse on the pool. Prints, asserts nothing about time.
#[test]
#[ignore]
fn caller_share_of_a_csv_stream() {
    let mut text = String::from("id,score,name,ok,ts\n");
    let mut id = 0u64;
    while text.len() < 64 << 20 {
        id += 1;
        let name = if id.is_multiple_of(10) {
            "\"word, \"\"multi\"\"\""
        } else {
            "word multi"
        };
        text.push_str(&format!(
            "{id},{}.{},{name},{},{}\n",
            id % 1000,
            id % 7,
            id.is_multiple_of(2),
            1_700_000_000_000u64 + id
        ));
    }
    let spec = r#"{"kind":"csv","layout":"records","report":true}"#;
    let mut h = FilterHandle::from_json(spec).unwrap();
    let (mut caller, mut pool) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
    let mut chunks = text.as_bytes().chunks(1 << 20);
    // The first chunk holds the header: the head parser reads it on the caller's thread.
    let first = chunks.next().unwrap();
    h.prepare_push(first).unwrap().run().unwrap();
    for chunk in chunks {
        let t = std::time::Instant::now();
        let work = h.prepare_push(chunk).unwrap();
        caller += t.elapsed();
        let t = std::time::Instant::now();
        work.run().unwrap();
        pool += t.elapsed();
    }
    let mib = (text.len() - first.len()) as f64 / (1 << 20) as f64;
    println!(
        "{mib:.0} MiB: caller's step {:.0} MiB/s ({:.1}% of the time), pieces' parse {:.0} MiB/s",
        mib / caller.as_secs_f64(),
        100.0 * caller.as_secs_f64() / (caller + pool).as_secs_f64(),
        mib / pool.as_secs_f64()
    );
}

/// A header that fails leaves the head parser mid-stream: chunks already on their way
/// behind it are refused, never parsed by it (its field positions are unset).
#[test]
fn chunks_behind_a_failed_header_are_refused() {
    let spec = r#"{"kind":"csv","columns":[{"name":"missing","type":"u32"}]}"#;
    let mut h = FilterHandle::from_json(spec).unwrap();
    let first = h.prepare_push(b"a,b\n1,2\n").unwrap();
    let second = h.prepare_push(b"3,4\n").unwrap();
    let err = first.run().unwrap_err();
    assert_eq!(err.code, "ERR_FILTER_BAD_RECORD");
    assert!(
        err.message.contains("no column \"missing\""),
        "{}",
        err.message
    );
    assert_eq!(second.run().unwrap_err().code, "ERR_FILTER_CLOSED");
}

/// A push the host's queue refused is taken back (`restore`) and pushed again, in the
/// head parser's chunks (which it has parsed already), in the chunk where the head
/// hands over to a piece (small head slices) and in the pieces after: the outputs are
/// those of a stream never refused.
#[test]
fn a_refused_push_pushed_again_gives_the_same_outputs() {
    for (spec, slice) in [
        (SPECS[1].0, None),
        (SPECS[1].0, Some(7)),
        (SPECS[0].0, Some(7)),
    ] {
        a_refused_push_pushed_again(spec, slice);
    }
}

fn a_refused_push_pushed_again(spec: &str, slice: Option<usize>) {
    let mut rng = Rng(7);
    let input = random_csv(&mut rng, true, 3, 60, ',');
    let chunks: Vec<&[u8]> = input.chunks(23).collect();
    let run = |refuse: bool| {
        let mut h = FilterHandle::from_json(spec).unwrap();
        if let Some(bytes) = slice {
            h.set_csv_head_slice(bytes);
        }
        let mut outs = Vec::new();
        for c in &chunks {
            if refuse {
                let mark = h.checkpoint();
                drop(h.prepare_push(c).unwrap());
                h.restore(mark);
            }
            outs.push(h.prepare_push(c).unwrap().run());
        }
        if refuse {
            let mark = h.checkpoint();
            drop(h.prepare_finish().unwrap());
            h.restore(mark);
        }
        outs.push(h.prepare_finish().unwrap().run());
        outs
    };
    let (plain, refused) = (run(false), run(true));
    assert!(plain.iter().all(Result::is_ok));
    assert_eq!(plain, refused);
}
