mod common;

use common::{MIXED, every_split, run_chunks, split_at};
use offthread_filters::{FilterHandle, INVALID_UTF8, INVALID_UTF16, UNMAPPABLE};

fn utf16le(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

const TO_UTF16: &str = r#"{"kind":"transcode","from":"utf8","to":"utf16le"}"#;
const TO_UTF16_STRICT: &str = r#"{"kind":"transcode","from":"utf8","to":"utf16le","strict":true}"#;
const FROM_UTF16: &str = r#"{"kind":"transcode","from":"utf16le","to":"utf8"}"#;
const FROM_UTF16_STRICT: &str =
    r#"{"kind":"transcode","from":"utf16le","to":"utf8","strict":true}"#;
const VALIDATE: &str = r#"{"kind":"transcode","from":"utf8","to":"utf8","strict":true}"#;
const LOSSY: &str = r#"{"kind":"transcode","from":"utf8","to":"utf8"}"#;

#[test]
fn utf8_to_utf16le_at_every_split() {
    every_split(TO_UTF16, MIXED.as_bytes(), &Ok(utf16le(MIXED)));
    every_split(TO_UTF16_STRICT, MIXED.as_bytes(), &Ok(utf16le(MIXED)));
}

#[test]
fn utf16le_to_utf8_at_every_split() {
    every_split(FROM_UTF16, &utf16le(MIXED), &Ok(MIXED.as_bytes().to_vec()));
    every_split(
        FROM_UTF16_STRICT,
        &utf16le(MIXED),
        &Ok(MIXED.as_bytes().to_vec()),
    );
}

/// Invalid bytes of every kind: stray continuations, overlongs, surrogates, bytes that
/// never appear, and sequences cut short, at the start, middle and end.
fn invalid_utf8() -> Vec<Vec<u8>> {
    vec![
        b"a\x80b".to_vec(),
        b"\xc0\xafx".to_vec(),
        b"\xe0\x80\x80y".to_vec(),
        b"\xed\xa0\x80z".to_vec(),
        b"\xf4\x90\x80\x80".to_vec(),
        b"\xf5\xff\xfe".to_vec(),
        b"ok \xe2\x82 then \xf0\x9f\x98 then \xc3".to_vec(),
        b"\xe2\x82".to_vec(),
        b"\xf0\x9f\x98\x80\xf0".to_vec(),
        [b"\xff".as_slice(), MIXED.as_bytes(), b"\xe2"].concat(),
    ]
}

#[test]
fn invalid_utf8_is_replaced_as_the_whatwg_decoder_does_at_every_split() {
    for bytes in invalid_utf8() {
        // encoding_rs's one-shot decoder is the WHATWG reference; Rust's lossy decoding agrees.
        let (text, had_errors) = encoding_rs::UTF_8.decode_without_bom_handling(&bytes);
        assert!(had_errors);
        assert_eq!(text, String::from_utf8_lossy(&bytes));
        every_split(TO_UTF16, &bytes, &Ok(utf16le(&text)));
        every_split(LOSSY, &bytes, &Ok(text.as_bytes().to_vec()));
    }
}

#[test]
fn strict_utf8_fails_at_the_same_byte_at_every_split() {
    for bytes in invalid_utf8() {
        let first_bad = std::str::from_utf8(&bytes).unwrap_err().valid_up_to();
        for at in 0..=bytes.len() {
            for spec in [TO_UTF16_STRICT, VALIDATE] {
                let e = split_at(spec, &bytes, at).unwrap_err();
                assert_eq!(e.code, INVALID_UTF8);
                assert!(
                    e.message.ends_with(&format!("at byte {first_bad}")),
                    "{:?} cut at {at}: {}",
                    bytes,
                    e.message
                );
            }
        }
    }
}

#[test]
fn a_sequence_cut_off_by_the_end_is_named_so() {
    for spec in [VALIDATE, TO_UTF16_STRICT] {
        let e = run_chunks(spec, &[b"ab\xe2\x82"]).unwrap_err();
        assert_eq!(e.code, INVALID_UTF8);
        assert!(
            e.message.contains("cut off by the end"),
            "{spec}: {}",
            e.message
        );
    }
}

#[test]
fn validation_passes_valid_utf8_through_unchanged() {
    every_split(VALIDATE, MIXED.as_bytes(), &Ok(MIXED.as_bytes().to_vec()));
}

#[test]
fn lone_surrogates_and_odd_bytes_in_utf16le() {
    let units: Vec<u16> = vec![0x61, 0xD800, 0x62, 0xDC00, 0xD83D, 0xDE00, 0xD83D];
    let bytes: Vec<u8> = units.iter().flat_map(|u| u.to_le_bytes()).collect();
    let text = String::from_utf16_lossy(&units);
    every_split(FROM_UTF16, &bytes, &Ok(text.as_bytes().to_vec()));
    let e = split_at(FROM_UTF16_STRICT, &bytes, 5).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (INVALID_UTF16, "a lone surrogate at byte 2")
    );
    // A trailing odd byte: U+FFFD (WHATWG), or an error in strict mode.
    let mut odd = utf16le("hi");
    odd.push(0x41);
    every_split(FROM_UTF16, &odd, &Ok("hi\u{FFFD}".as_bytes().to_vec()));
    assert_eq!(
        split_at(FROM_UTF16_STRICT, &odd, 1).unwrap_err().code,
        INVALID_UTF16
    );
}

#[test]
fn latin1_both_ways() {
    let all: Vec<u8> = (0..=255).collect();
    let text: String = all.iter().map(|&b| char::from(b)).collect();
    every_split(
        r#"{"kind":"transcode","from":"latin1","to":"utf8"}"#,
        &all,
        &Ok(text.as_bytes().to_vec()),
    );
    every_split(
        r#"{"kind":"transcode","from":"latin1","to":"utf16le"}"#,
        &all,
        &Ok(utf16le(&text)),
    );
    every_split(
        r#"{"kind":"transcode","from":"utf8","to":"latin1","strict":true}"#,
        text.as_bytes(),
        &Ok(all.clone()),
    );
    let e = split_at(
        r#"{"kind":"transcode","from":"utf8","to":"latin1","strict":true}"#,
        "aé€".as_bytes(),
        2,
    )
    .unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (UNMAPPABLE, "U+20AC at byte 3 has no latin1 form")
    );
    assert_eq!(
        split_at(
            r#"{"kind":"transcode","from":"utf8","to":"latin1"}"#,
            "aé€".as_bytes(),
            2
        )
        .unwrap(),
        b"a\xe9?"
    );
    assert_eq!(
        split_at(
            r#"{"kind":"transcode","from":"utf16le","to":"latin1"}"#,
            &utf16le("é€"),
            1
        )
        .unwrap(),
        b"\xe9?"
    );
}

/// The pieces of a parallel filter are independent: converting them in reverse order
/// gives the same bytes.
#[test]
fn parallel_pieces_run_in_any_order() {
    let input = MIXED.repeat(50);
    let mut h = FilterHandle::from_json(TO_UTF16).unwrap();
    assert!(h.parallel());
    let mut work: Vec<_> = input
        .as_bytes()
        .chunks(7)
        .map(|c| h.prepare_push(c).unwrap())
        .collect();
    work.push(h.prepare_finish().unwrap());
    let mut outs: Vec<Vec<u8>> = work.into_iter().rev().map(|w| w.run().unwrap()).collect();
    outs.reverse();
    assert_eq!(outs.concat(), utf16le(&input));
}

/// Pushes `chunks` through `prepare_push_into`, each into a buffer of exactly the
/// announced bound at byte `shift` of a larger one (an odd shift: unaligned UTF-16
/// output), then finishes the stream the usual way.
fn run_into_chunks(
    spec: &str,
    chunks: &[&[u8]],
    shift: usize,
) -> Result<Vec<u8>, offthread_filters::FilterError> {
    let mut h = FilterHandle::from_json(spec).unwrap();
    let mut all = Vec::new();
    for c in chunks {
        let bound = h.output_bound(c.len()).expect("a bound");
        // Garbage where the output goes: run_into must not depend on zeroed memory.
        let mut buf = vec![0xA5u8; shift + bound];
        let work = h.prepare_push_into(c, &mut buf[shift..])?;
        let n = work.run(&mut buf[shift..])?;
        assert!(n <= bound);
        all.extend_from_slice(&buf[shift..shift + n]);
    }
    all.extend(h.finish_now()?);
    Ok(all)
}

#[test]
fn writing_into_a_given_buffer_gives_the_same_bytes_at_every_split() {
    let latin1: Vec<u8> = (0..=255u8).collect();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (TO_UTF16, MIXED.as_bytes().to_vec()),
        (TO_UTF16_STRICT, MIXED.as_bytes().to_vec()),
        (TO_UTF16, invalid_utf8().concat()),
        (
            r#"{"kind":"transcode","from":"latin1","to":"utf16le"}"#,
            latin1.clone(),
        ),
        // In place: the input copied into the given buffer, then checked there.
        (
            r#"{"kind":"transcode","from":"latin1","to":"latin1"}"#,
            latin1,
        ),
        (VALIDATE, MIXED.as_bytes().to_vec()),
    ];
    for (spec, input) in cases {
        let want = split_at(spec, &input, 0).unwrap();
        for at in 0..=input.len() {
            for shift in [0, 1] {
                let got = run_into_chunks(spec, &[&input[..at], &input[at..]], shift);
                assert_eq!(
                    got.as_ref(),
                    Ok(&want),
                    "{spec}: cut at {at}, shift {shift}"
                );
            }
        }
        // Many small chunks: the input buffers go round the stream's spares.
        let chunks: Vec<&[u8]> = input.chunks(3).collect();
        assert_eq!(
            run_into_chunks(spec, &chunks, 0),
            Ok(want),
            "{spec}: chunks of 3"
        );
    }
}

#[test]
fn writing_into_a_given_buffer_fails_as_push_does() {
    for spec in [TO_UTF16_STRICT, VALIDATE] {
        for bytes in invalid_utf8() {
            for at in 0..=bytes.len() {
                let want = split_at(spec, &bytes, at).map_err(|e| e.message);
                let got =
                    run_into_chunks(spec, &[&bytes[..at], &bytes[at..]], 0).map_err(|e| e.message);
                // The same first bad byte, named the same way.
                assert_eq!(got, want, "{spec}: cut at {at}");
                assert!(got.is_err(), "{spec}: cut at {at}");
            }
        }
    }
    // After a failed piece the stream is closed.
    for spec in [TO_UTF16_STRICT, VALIDATE] {
        let mut h = FilterHandle::from_json(spec).unwrap();
        let mut out = vec![0; 16];
        let work = h.prepare_push_into(b"\xff a", &mut out).unwrap();
        assert_eq!(work.run(&mut out).map_err(|e| e.code), Err(INVALID_UTF8));
        assert_eq!(
            h.prepare_push_into(b"a", &mut out).err().map(|e| e.code),
            Some(offthread_filters::CLOSED)
        );
    }
}

#[test]
fn a_buffer_below_the_bound_and_filters_without_one_are_refused() {
    let mut h = FilterHandle::from_json(TO_UTF16).unwrap();
    let bound = h.output_bound(5).unwrap();
    assert_eq!(bound, 12);
    let mut small = vec![0; bound - 1];
    let work = h.prepare_push_into(b"hello", &mut small).unwrap();
    let err = work.run(&mut small).unwrap_err();
    assert_eq!(err.code, offthread_filters::TOO_LARGE);
    // In place, the copy itself needs the room.
    let mut v = FilterHandle::from_json(VALIDATE).unwrap();
    assert_eq!(v.output_bound(5), Some(5));
    let err = v.prepare_push_into(b"hello", &mut small[..4]).err();
    assert_eq!(err.map(|e| e.code), Some(offthread_filters::TOO_LARGE));
    // A carried partial character counts in the next bound.
    let mut h = FilterHandle::from_json(TO_UTF16).unwrap();
    let mut out = vec![0; 64];
    let work = h.prepare_push_into(b"a\xe2\x82", &mut out).unwrap();
    assert_eq!(work.run(&mut out), Ok(2));
    assert_eq!(h.output_bound(1), Some(2 * (2 + 1 + 1)));
    let work = h.prepare_push_into(b"\xac", &mut out).unwrap();
    assert_eq!(work.run(&mut out), Ok(2));
    assert_eq!(&out[..2], &0x20ACu16.to_le_bytes());
    for spec in [
        FROM_UTF16,
        LOSSY,
        r#"{"kind":"gzip"}"#,
        r#"{"kind":"sha256"}"#,
    ] {
        let mut h = FilterHandle::from_json(spec).unwrap();
        assert_eq!(h.output_bound(10), None, "{spec}");
        assert_eq!(
            h.prepare_push_into(b"x", &mut out).err().map(|e| e.code),
            Some(offthread_filters::TOO_LARGE),
            "{spec}"
        );
    }
}

#[test]
fn a_push_taken_back_leaves_the_stream_as_before() {
    use offthread_filters::FilterHandle;
    // A host whose queue refuses a push drops its work item unrun and restores the
    // checkpoint; pushing the same chunk again gives the bytes of an undisturbed run.
    let text = "é😀x".repeat(50);
    let bytes = text.as_bytes();
    for spec in [
        r#"{"kind":"transcode","from":"utf8","to":"utf16le"}"#,
        r#"{"kind":"gzip"}"#,
        r#"{"kind":"ndjson","columns":[{"name":"a","type":"u8"}]}"#,
    ] {
        let input: Vec<u8> = if spec.contains("ndjson") {
            "{\"a\":1}\n{\"a\":2}\n{\"a\":3}".into()
        } else {
            bytes.to_vec()
        };
        let (a, b) = input.split_at(5);
        let mut plain = FilterHandle::from_json(spec).unwrap();
        let want = [
            plain.push_now(a).unwrap(),
            plain.push_now(b).unwrap(),
            plain.finish_now().unwrap(),
        ]
        .concat();
        let mut h = FilterHandle::from_json(spec).unwrap();
        let mut got = h.push_now(a).unwrap();
        let cp = h.checkpoint();
        drop(h.prepare_push(b).unwrap());
        h.restore(cp);
        got.extend(h.push_now(b).unwrap());
        let cp = h.checkpoint();
        drop(h.prepare_finish().unwrap());
        h.restore(cp);
        got.extend(h.finish_now().unwrap());
        assert_eq!(got, want, "{spec}");
    }
}
