mod common;

use std::io::{Read, Write};

use common::{MIXED, every_split, run_chunks, split_at};
use offthread_filters::{BUSY, CLOSED, CORRUPT_DATA, FilterHandle};

fn sample() -> Vec<u8> {
    let mut s = MIXED.repeat(40).into_bytes();
    s.extend((0..2000u32).map(|i| (i * 7 % 251) as u8));
    s
}

fn gunzip_ref(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn gzip_ref(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn gzip_output_gunzips_to_the_input_at_every_split() {
    let input = sample();
    for at in (0..=input.len()).step_by(97).chain([input.len()]) {
        let gz = split_at(r#"{"kind":"gzip"}"#, &input, at).unwrap();
        assert_eq!(&gz[..3], &[0x1f, 0x8b, 8], "a gzip member header");
        assert_eq!(gunzip_ref(&gz), input, "cut at {at}");
    }
    // zlib and raw deflate, every level.
    for level in 0..=9 {
        let z = split_at(
            &format!(r#"{{"kind":"deflate","level":{level}}}"#),
            &input,
            100,
        )
        .unwrap();
        let mut out = Vec::new();
        flate2::read::ZlibDecoder::new(&z[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, input, "level {level}");
        let raw = split_at(
            &format!(r#"{{"kind":"deflateRaw","level":{level}}}"#),
            &input,
            5,
        )
        .unwrap();
        let mut out = Vec::new();
        flate2::read::DeflateDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, input, "level {level}");
    }
}

#[test]
fn gunzip_at_every_split_and_across_members() {
    let input = sample();
    let gz = gzip_ref(&input);
    every_split(r#"{"kind":"gunzip"}"#, &gz, &Ok(input.clone()));
    // `cat a.gz b.gz`: both members, in order.
    let two = [gzip_ref(b"first "), gzip_ref(b"second")].concat();
    every_split(r#"{"kind":"gunzip"}"#, &two, &Ok(b"first second".to_vec()));
    // The other formats round-trip through our own compressor.
    for (c, d) in [("deflate", "inflate"), ("deflateRaw", "inflateRaw")] {
        let packed = split_at(&format!(r#"{{"kind":"{c}"}}"#), &input, 33).unwrap();
        for at in (0..=packed.len()).step_by(13) {
            assert_eq!(
                split_at(&format!(r#"{{"kind":"{d}"}}"#), &packed, at).unwrap(),
                input
            );
        }
    }
}

#[test]
fn corrupt_and_truncated_streams_fail_with_a_code() {
    let gz = gzip_ref(&sample());
    let mut bad = gz.clone();
    bad[gz.len() / 2] ^= 0x55;
    let mut bad_crc = gz.clone();
    let n = bad_crc.len();
    bad_crc[n - 6] ^= 1;
    for (name, bytes) in [
        ("flipped byte", bad),
        ("bad CRC", bad_crc),
        ("truncated", gz[..gz.len() - 10].to_vec()),
        ("not gzip", b"hello world".to_vec()),
        ("empty", Vec::new()),
    ] {
        let e = split_at(r#"{"kind":"gunzip"}"#, &bytes, bytes.len() / 3).unwrap_err();
        assert_eq!(e.code, CORRUPT_DATA, "{name}: {e}");
    }
    // Data after a zlib stream is not silently dropped.
    let z = split_at(r#"{"kind":"deflate"}"#, b"abc", 1).unwrap();
    let e = split_at(r#"{"kind":"inflate"}"#, &[z, b"junk".to_vec()].concat(), 2).unwrap_err();
    assert_eq!(e.code, CORRUPT_DATA);
}

#[test]
fn digests_at_every_split() {
    every_split(
        r#"{"kind":"sha256"}"#,
        b"abc",
        &Ok(hex(
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        )),
    );
    every_split(
        r#"{"kind":"md5"}"#,
        b"abc",
        &Ok(hex("900150983cd24fb0d6963f7d28e17f72")),
    );
    let input = sample();
    let whole = run_chunks(r#"{"kind":"sha256"}"#, &[&input])
        .unwrap()
        .concat();
    every_split(r#"{"kind":"sha256"}"#, &input, &Ok(whole));
    assert_eq!(
        run_chunks(r#"{"kind":"sha256"}"#, &[]).unwrap().concat(),
        hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    );
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn a_sequential_filter_takes_one_chunk_at_a_time_and_closes_after_an_error() {
    let mut h = FilterHandle::from_json(r#"{"kind":"gzip"}"#).unwrap();
    assert!(!h.parallel());
    let first = h.prepare_push(b"one").unwrap();
    assert_eq!(h.prepare_push(b"two").err().map(|e| e.code), Some(BUSY));
    first.run().unwrap();
    h.prepare_push(b"two").unwrap().run().unwrap();
    h.finish_now().unwrap();
    assert_eq!(h.push_now(b"three").unwrap_err().code, CLOSED);

    let mut g = FilterHandle::from_json(r#"{"kind":"gunzip"}"#).unwrap();
    assert_eq!(
        g.push_now(b"not gzip at all").unwrap_err().code,
        CORRUPT_DATA
    );
    assert_eq!(g.push_now(b"more").unwrap_err().code, CLOSED);
}

#[test]
fn chunks_copied_into_a_recycled_buffer_keep_nothing_of_the_one_before() {
    // Each push copies its chunk into the previous push's buffer: long chunks, then
    // short ones, then empty ones must read as exactly themselves.
    let input = sample();
    let sizes = [4000, 17, 3000, 1, 0, 2500, 64, 0, 900];
    let mut h = FilterHandle::from_json(r#"{"kind":"sha256"}"#).unwrap();
    let mut z = FilterHandle::from_json(r#"{"kind":"gzip"}"#).unwrap();
    let mut gz = Vec::new();
    let mut at = 0;
    for n in sizes.iter().cycle().take(40) {
        let piece = &input[at.min(input.len())..(at + n).min(input.len())];
        at += n;
        assert!(h.push_now(piece).unwrap().is_empty());
        gz.extend(z.push_now(piece).unwrap());
    }
    gz.extend(z.finish_now().unwrap());
    let fed = &input[..at.min(input.len())];
    assert_eq!(gunzip_ref(&gz), fed);
    let mut one_shot = FilterHandle::from_json(r#"{"kind":"sha256"}"#).unwrap();
    one_shot.push_now(fed).unwrap();
    assert_eq!(h.finish_now().unwrap(), one_shot.finish_now().unwrap());
}

#[test]
fn specs_are_checked() {
    use offthread_filters::INVALID_SPEC;
    for spec in [
        "not json",
        "[]",
        r#"{"kind":"zip"}"#,
        r#"{"kind":"gzip","level":10}"#,
        r#"{"kind":"gzip","lvl":1}"#,
        r#"{"kind":"transcode","from":"utf8","to":"ebcdic"}"#,
        r#"{"kind":"transcode","from":"utf8"}"#,
        r#"{"kind":"csv","columns":[]}"#,
        r#"{"kind":"csv","columns":[{"name":"a","type":"u128"}]}"#,
        r#"{"kind":"csv","columns":[{"name":"a","type":"u8","field":0},{"name":"b","type":"u8","field":0}]}"#,
        r#"{"kind":"csv","columns":[{"name":"a","type":"u8"}],"delimiter":";;"}"#,
        r#"{"kind":"sha256","strict":true}"#,
    ] {
        let e = FilterHandle::from_json(spec)
            .err()
            .unwrap_or_else(|| panic!("{spec} accepted"));
        assert_eq!(e.code, INVALID_SPEC, "{spec}");
    }
}

#[test]
fn a_decompressor_hands_out_bounded_pieces_and_keeps_the_rest() {
    use offthread_filters::{DECOMPRESS_PIECE, FilterHandle};
    let zeros = vec![0u8; 20 * DECOMPRESS_PIECE + 12345];
    let gz = gzip_ref(&zeros);
    let mut h = FilterHandle::from_json(r#"{"kind":"gunzip"}"#).unwrap();
    let (mut total, mut pieces) = (0usize, 0usize);
    let mut out = h.push_now(&gz).unwrap();
    loop {
        assert!(out.len() <= DECOMPRESS_PIECE, "a piece of {}", out.len());
        assert!(out.iter().all(|&b| b == 0));
        total += out.len();
        pieces += 1;
        if out.len() < DECOMPRESS_PIECE {
            break;
        }
        out = h.push_now(&[]).unwrap();
    }
    assert!(h.finish_now().unwrap().is_empty());
    assert_eq!((total, pieces), (zeros.len(), 21));
}

#[test]
fn zero_padding_after_a_gzip_member_is_skipped() {
    let member = gzip_ref(b"hello");
    let padded = [member.clone(), vec![0; 40]].concat();
    every_split(r#"{"kind":"gunzip"}"#, &padded, &Ok(b"hello".to_vec()));
    // Anything but zeros after the padding is refused, not dropped.
    let e = split_at(
        r#"{"kind":"gunzip"}"#,
        &[padded.clone(), member].concat(),
        10,
    )
    .unwrap_err();
    assert_eq!(e.code, CORRUPT_DATA);
    // zlib streams have no members: zeros after one are data after its end.
    let z = split_at(r#"{"kind":"deflate"}"#, b"abc", 1).unwrap();
    let e = split_at(r#"{"kind":"inflate"}"#, &[z, vec![0; 4]].concat(), 2).unwrap_err();
    assert_eq!(e.code, CORRUPT_DATA);
}
