//! Shared by the integration tests: golden files, a seeded PRNG, mutation loops.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `tests/fixtures/schema` at the repo root.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/schema")
}

pub fn bless() -> bool {
    std::env::var_os("OFFTHREAD_SCHEMA_BLESS").is_some()
}

/// Hex, 32 bytes per line: easy to diff and to parse from JS.
pub fn to_hex(bytes: &[u8]) -> String {
    let mut out = String::new();
    for line in bytes.chunks(32) {
        for b in line {
            out += &format!("{b:02x}");
        }
        out.push('\n');
    }
    out
}

pub fn from_hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(|b| b.is_ascii_hexdigit()).collect();
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

/// Compares `bytes` with `golden/<name>.hex`, rewriting it under OFFTHREAD_SCHEMA_BLESS.
pub fn check_golden(name: &str, bytes: &[u8]) {
    let path = fixtures().join("golden").join(format!("{name}.hex"));
    if bless() {
        std::fs::write(&path, to_hex(bytes)).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with OFFTHREAD_SCHEMA_BLESS=1)",
            path.display()
        )
    });
    assert_eq!(
        to_hex(bytes),
        expected,
        "{name}: bytes differ from {}",
        path.display()
    );
}

/// xorshift64*: seeded, no time-based randomness, reproducible failures.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Runs `read` over `iterations` mutations of `valid` (byte flips, interesting
/// 32-bit words, truncations, pure noise). `read` must return, never panic; returns
/// how many inputs it rejected.
pub fn mutate_and_read(
    valid: &[u8],
    iterations: usize,
    seed: u64,
    mut read: impl FnMut(&[u8]) -> bool,
) -> usize {
    let mut rng = Rng::new(seed);
    let mut rejected = 0;
    let interesting = [
        0u32,
        1,
        7,
        8,
        63,
        64,
        0x7fff_ffff,
        0xffff_ffff,
        0x2000_0001,
        0xe000_0001,
    ];
    for _ in 0..iterations {
        let mut buf = valid.to_vec();
        match rng.below(4) {
            0 => {
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(buf.len());
                    buf[i] ^= 1 << rng.below(8);
                }
            }
            1 => {
                let i = rng.below(buf.len().saturating_sub(4) + 1) & !3;
                let w = interesting[rng.below(interesting.len())];
                if i + 4 <= buf.len() {
                    buf[i..i + 4].copy_from_slice(&w.to_le_bytes());
                }
            }
            2 => buf.truncate(rng.below(buf.len() + 1)),
            _ => {
                for b in buf.iter_mut() {
                    *b = rng.next_u64() as u8;
                }
            }
        }
        if !read(&buf) {
            rejected += 1;
        }
    }
    rejected
}

/// Compares the committed file `path` with `code` (pushing it onto `drift` when it
/// differs), rewriting it under OFFTHREAD_SCHEMA_BLESS.
pub fn check(path: impl AsRef<Path>, code: &str, drift: &mut Vec<String>) {
    let path = path.as_ref();
    if bless() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, code).unwrap();
    } else if std::fs::read_to_string(path).ok().as_deref() != Some(code) {
        drift.push(path.display().to_string());
    }
}
