//! MD5 and the MD5 loop against RFC 1321 and a straightforward reference.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Instant;

use offthread_kernels::md5::{self, MAX_ROUNDS, Md5IterateOptions};
use offthread_kernels::{ErrorCode, Interrupt, KernelError, Never};

/// RFC 1321 appendix A.5 test suite.
const RFC1321: &[(&str, &str)] = &[
    ("", "d41d8cd98f00b204e9800998ecf8427e"),
    ("a", "0cc175b9c0f1b6a831c399e269772661"),
    ("abc", "900150983cd24fb0d6963f7d28e17f72"),
    ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
    (
        "abcdefghijklmnopqrstuvwxyz",
        "c3fcd3d76192e4007dfb496cca67e13b",
    ),
    (
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        "d174ab98d277d9f5a5611c2c9f419d9f",
    ),
    (
        "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
        "57edf4a22be3c955ac49da2e2107b67a",
    ),
];

#[test]
fn hex_matches_rfc1321() {
    for &(input, want) in RFC1321 {
        assert_eq!(&md5::hex(input.as_bytes()), want.as_bytes(), "{input:?}");
        assert_eq!(md5::hex_string(input.as_bytes()), want, "{input:?}");
    }
}

/// Independent hex of a digest (format! per byte, no table).
fn hex_fmt(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The loop of docs/kernels.md written plainly: a fresh hasher and a `format!` every round.
fn reference(text: &[u8], rounds: u64) -> String {
    let mut d = String::new();
    for _ in 0..rounds {
        let mut msg = text.to_vec();
        msg.extend_from_slice(d.as_bytes());
        d = hex_fmt(&digest_of(&msg));
    }
    d
}

/// MD5 through the kernel's one-shot path, then re-decoded from hex, so the
/// reference shares no hex code with the loop.
fn digest_of(msg: &[u8]) -> [u8; 16] {
    let h = md5::hex(msg);
    let mut out = [0u8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(std::str::from_utf8(&h[2 * i..2 * i + 2]).unwrap(), 16).unwrap();
    }
    out
}

fn texts() -> Vec<Vec<u8>> {
    let kb: Vec<u8> = (0..1024u32).map(|i| b'a' + (i % 26) as u8).collect();
    vec![
        Vec::new(),
        b"hello world".to_vec(),
        "héllo wörld ✓ 日本".as_bytes().to_vec(),
        // Lengths around the 64-byte block edges once the 32 hex bytes are added.
        vec![b'x'; 23],
        vec![b'x'; 24],
        vec![b'x'; 32],
        vec![b'x'; 55],
        vec![b'x'; 64],
        kb,
    ]
}

#[test]
fn iterate_matches_reference() {
    for text in texts() {
        for rounds in [0, 1, 2, 3, 1000] {
            let got = md5::iterate(
                Md5IterateOptions {
                    text: &text,
                    rounds,
                },
                &Never,
            )
            .unwrap();
            assert_eq!(
                got,
                reference(&text, rounds),
                "len {} rounds {rounds}",
                text.len()
            );
        }
    }
}

fn iterate(text: &[u8], rounds: u64) -> Result<String, KernelError> {
    md5::iterate(Md5IterateOptions { text, rounds }, &Never)
}

#[test]
fn iterate_edge_values() {
    assert_eq!(iterate(b"x", 0).unwrap(), "", "d0 is the empty string");
    let opts = Md5IterateOptions {
        text: b"x",
        rounds: 0,
    };
    assert_eq!(md5::iterate_hex(opts, &Never).unwrap(), None);
    // d1 = hex(MD5(text)); d2 = hex(MD5(text ‖ d1)).
    assert_eq!(
        iterate(b"abc", 1).unwrap(),
        "900150983cd24fb0d6963f7d28e17f72"
    );
    assert_eq!(
        iterate(b"abc", 2).unwrap(),
        md5::hex_string(b"abc900150983cd24fb0d6963f7d28e17f72")
    );
}

#[test]
fn iterate_across_check_chunks() {
    // More rounds than one interrupt chunk, for short and long text.
    for text in [b"abc".to_vec(), vec![b'z'; 5000]] {
        let rounds = md5::CHECK_ROUNDS * 2 + 3;
        let got = md5::iterate(
            Md5IterateOptions {
                text: &text,
                rounds,
            },
            &Never,
        )
        .unwrap();
        assert_eq!(got, reference(&text, rounds), "len {}", text.len());
    }
}

#[test]
fn split_loops_equal_one_loop() {
    for text in texts() {
        let whole = iterate(&text, 1000).unwrap();
        // 0 + 1 + 249 + 0 + 750 rounds, resuming from each intermediate digest.
        let mut d = String::new();
        for rounds in [0, 1, 249, 0, 750] {
            d = md5::iterate_from(
                Md5IterateOptions {
                    text: &text,
                    rounds,
                },
                &d,
                &Never,
            )
            .unwrap();
        }
        assert_eq!(d, whole, "len {}", text.len());
        let mid = iterate(&text, 400).unwrap();
        let mid: [u8; 32] = mid.as_bytes().try_into().unwrap();
        let opts = Md5IterateOptions {
            text: &text,
            rounds: 600,
        };
        let end = md5::iterate_hex_from(opts, Some(&mid), &Never)
            .unwrap()
            .unwrap();
        assert_eq!(&end, whole.as_bytes());
    }
    let e = md5::iterate_from(
        Md5IterateOptions {
            text: b"x",
            rounds: 1,
        },
        "abc",
        &Never,
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
}

#[test]
fn rounds_out_of_range() {
    let e = md5::iterate(
        Md5IterateOptions {
            text: b"abc",
            rounds: MAX_ROUNDS + 1,
        },
        &Never,
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidRounds);
    assert_eq!(e.code.as_str(), "ERR_INVALID_ROUNDS");
    assert!(e.message.contains("1000000001"), "{}", e.message);
    assert!(
        md5::iterate(
            Md5IterateOptions {
                text: b"",
                rounds: u64::MAX
            },
            &Never
        )
        .is_err()
    );
}

#[test]
fn interrupt_stops_the_loop() {
    let flag = AtomicBool::new(true);
    let e = md5::iterate(
        Md5IterateOptions {
            text: b"abc",
            rounds: MAX_ROUNDS,
        },
        &flag,
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::Aborted);

    /// Aborts at the third check.
    struct AfterChecks(AtomicU32);
    impl Interrupt for AfterChecks {
        fn check(&self) -> Result<(), KernelError> {
            if self.0.fetch_add(1, Ordering::Relaxed) >= 2 {
                Err(KernelError::new(ErrorCode::Aborted, "stop"))
            } else {
                Ok(())
            }
        }
    }
    let counter = AfterChecks(AtomicU32::new(0));
    let t = Instant::now();
    let e = md5::iterate(
        Md5IterateOptions {
            text: b"abc",
            rounds: MAX_ROUNDS,
        },
        &counter,
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::Aborted);
    assert_eq!(counter.0.load(Ordering::Relaxed), 3);
    assert!(t.elapsed().as_secs() < 5, "stopped after two chunks");
}

/// `cargo test --release -p offthread-kernels --test md5 -- --ignored --nocapture`
#[test]
#[ignore = "timing; run in release"]
fn timing() {
    for (name, text) in [
        ("short (11 B)", b"hello world".to_vec()),
        ("1 KB", vec![b'a'; 1024]),
    ] {
        let rounds = 300_000;
        let mut best = f64::INFINITY;
        for _ in 0..20 {
            let t = Instant::now();
            let d = md5::iterate(
                Md5IterateOptions {
                    text: &text,
                    rounds,
                },
                &Never,
            )
            .unwrap();
            std::hint::black_box(d);
            best = best.min(t.elapsed().as_nanos() as f64 / rounds as f64);
        }
        println!("md5 loop, text {name}: {best:.1} ns/round (best of 20 × {rounds} rounds)");
    }
}
