//! MD5 (RustCrypto `md-5`) and the MD5 loop of the `http-md5` experiment.
//!
//! **The loop** (docs/kernels.md): d₀ = "" ; dᵢ = lowercase hex(MD5(text ‖ dᵢ₋₁)) ; the
//! result is d_N. So `rounds = 0` returns d₀, the empty string, and `rounds = 1`
//! returns `hex(MD5(text))`.
//!
//! The loop allocates nothing per round: the previous digest lives in a fixed
//! `[u8; 32]`, hex encoding is a table lookup, and the hasher state after absorbing
//! `text` is computed once and copied each round, so a round costs one or two MD5
//! blocks whatever the text length.
//!
//! ```
//! use offthread_kernels::{md5, Never};
//! assert_eq!(&md5::hex(b"abc"), b"900150983cd24fb0d6963f7d28e17f72");
//! let d = md5::iterate(md5::Md5IterateOptions { text: b"abc", rounds: 1 }, &Never)?;
//! assert_eq!(d, "900150983cd24fb0d6963f7d28e17f72");
//! # Ok::<(), offthread_kernels::KernelError>(())
//! ```

use md5_crate::{Digest, Md5};
use offthread_core::registry::{Call, KernelDef, Output};

use crate::{ErrorCode, Interrupt, KernelError};

/// Largest round count accepted: 10^9 (about two minutes at the ~115 ns per round measured here).
/// Counts stay exact as JS numbers; anything larger is almost surely a caller bug.
pub const MAX_ROUNDS: u64 = 1_000_000_000;

/// Rounds between two interrupt checks (about 0.5 ms here). A round costs one or
/// two MD5 blocks whatever the text length, as the text's whole blocks are
/// absorbed once.
pub const CHECK_ROUNDS: u64 = 4096;

/// Length of a hex digest.
pub const HEX_LEN: usize = 32;

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Options of [`iterate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Md5IterateOptions<'a> {
    /// Any bytes (a JS string arrives as its UTF-8 encoding).
    pub text: &'a [u8],
    /// N, from 0 to [`MAX_ROUNDS`].
    pub rounds: u64,
}

impl<'a> Md5IterateOptions<'a> {
    /// `rounds` as a JS number (f64 across napi and wasm): the one place the bindings
    /// check it. Not an integer from 0 to [`MAX_ROUNDS`]: `ERR_INVALID_ROUNDS`.
    pub fn from_f64(text: &'a [u8], rounds: f64) -> Result<Self, KernelError> {
        if rounds >= 0.0 && rounds.fract() == 0.0 && rounds <= MAX_ROUNDS as f64 {
            Ok(Self {
                text,
                rounds: rounds as u64,
            })
        } else {
            Err(rounds_error(rounds))
        }
    }

    pub fn validate(self) -> Result<Self, KernelError> {
        if self.rounds > MAX_ROUNDS {
            return Err(rounds_error(self.rounds));
        }
        Ok(self)
    }
}

fn rounds_error(got: impl std::fmt::Display) -> KernelError {
    KernelError::new(
        ErrorCode::InvalidRounds,
        format!("rounds must be an integer from 0 to {MAX_ROUNDS}, got {got}"),
    )
}

/// Lowercase hex of a 16-byte digest, by table.
#[inline]
fn encode_hex(digest: &[u8], out: &mut [u8; HEX_LEN]) {
    for (pair, &b) in out.chunks_exact_mut(2).zip(digest) {
        pair[0] = HEX_DIGITS[usize::from(b >> 4)];
        pair[1] = HEX_DIGITS[usize::from(b & 0x0f)];
    }
}

/// MD5 of `data` as 32 lowercase hex ASCII bytes.
pub fn hex(data: &[u8]) -> [u8; HEX_LEN] {
    let mut out = [0; HEX_LEN];
    encode_hex(&Md5::digest(data), &mut out);
    out
}

/// MD5 of `data` as a lowercase hex `String`.
pub fn hex_string(data: &[u8]) -> String {
    ascii_to_string(&hex(data))
}

fn ascii_to_string(hex: &[u8]) -> String {
    hex.iter().map(|&b| char::from(b)).collect()
}

/// Runs `rounds` rounds of the loop; `prev` holds dᵢ₋₁ unless `first_round`.
/// `seeded` is the hasher after absorbing `text`: copying it costs about the same
/// as re-feeding a short text and saves every whole block of a long one.
#[inline]
fn run(seeded: &Md5, prev: &mut [u8; HEX_LEN], first_round: bool, rounds: u64) {
    let mut rounds = rounds;
    if first_round && rounds > 0 {
        // d₁ = hex(MD5(text ‖ "")).
        encode_hex(&seeded.clone().finalize(), prev);
        rounds -= 1;
    }
    for _ in 0..rounds {
        let mut h = seeded.clone();
        h.update(&prev[..]);
        encode_hex(&h.finalize(), prev);
    }
}

/// The loop as 32 hex bytes: `None` for `rounds = 0` (d₀ is the empty string),
/// otherwise `Some(d_N)`. Checks `interrupt` every [`CHECK_ROUNDS`] rounds.
pub fn iterate_hex(
    opts: Md5IterateOptions<'_>,
    interrupt: &dyn Interrupt,
) -> Result<Option<[u8; HEX_LEN]>, KernelError> {
    iterate_hex_from(opts, None, interrupt)
}

/// Continues a loop: from `start` = d_k (`None` for d₀ = "") runs `rounds` more
/// rounds and returns d_(k+rounds) (`start` itself when `rounds = 0`). Splitting a
/// loop into pieces this way gives the same digest as one call — the `http-md5`
/// mixed sync/async experiment relies on it.
pub fn iterate_hex_from(
    opts: Md5IterateOptions<'_>,
    start: Option<&[u8; HEX_LEN]>,
    interrupt: &dyn Interrupt,
) -> Result<Option<[u8; HEX_LEN]>, KernelError> {
    let opts = opts.validate()?;
    if opts.rounds == 0 {
        return Ok(start.copied());
    }
    let mut seeded = Md5::new();
    seeded.update(opts.text);
    let mut digest = start.copied().unwrap_or([0; HEX_LEN]);
    let mut done = 0;
    while done < opts.rounds {
        interrupt.check()?;
        let n = (opts.rounds - done).min(CHECK_ROUNDS);
        run(&seeded, &mut digest, done == 0 && start.is_none(), n);
        done += n;
    }
    Ok(Some(digest))
}

/// The MD5 loop: d_N as 32 lowercase hex characters, or `""` when `rounds = 0`.
pub fn iterate(
    opts: Md5IterateOptions<'_>,
    interrupt: &dyn Interrupt,
) -> Result<String, KernelError> {
    iterate_from(opts, "", interrupt)
}

/// [`iterate_hex_from`] with strings: `start` is `""` (d₀) or a 32-character
/// digest d_k, anything else is `ERR_INVALID_ARG`.
pub fn iterate_from(
    opts: Md5IterateOptions<'_>,
    start: &str,
    interrupt: &dyn Interrupt,
) -> Result<String, KernelError> {
    let start = match start.len() {
        0 => None,
        HEX_LEN => start.as_bytes().try_into().ok(),
        n => {
            return Err(KernelError::new(
                ErrorCode::InvalidArgument,
                format!("start must be \"\" or a 32-character digest, got {n} bytes"),
            ));
        }
    };
    Ok(iterate_hex_from(opts, start, interrupt)?
        .map(|d| ascii_to_string(&d))
        .unwrap_or_default())
}

/// `md5.hex(data)`: the input's MD5 as hex text. No numbers.
pub const HEX: KernelDef = KernelDef {
    name: "md5.hex",
    run: |call, _| Ok(Output::Text(hex_string(call.input))),
};

/// `md5.iterate`: numbers `[rounds, start length]`; the input is the start digest d_k
/// (its first `start length` bytes: 0 for d₀ = "", or 32) followed by the text (two
/// inputs in one: the registry's convention). Returns d_(k+rounds) as text.
pub const ITERATE: KernelDef = KernelDef {
    name: "md5.iterate",
    run: iterate_call,
};

fn iterate_call(call: &Call<'_>, interrupt: &dyn Interrupt) -> Result<Output, KernelError> {
    let [rounds, start_len, _] = call.nums;
    // Rounds first, as the other entries check them.
    let rounds = Md5IterateOptions::from_f64(&[], rounds)?.rounds;
    let at = if start_len == 0.0 {
        0
    } else if start_len == HEX_LEN as f64 && call.input.len() >= HEX_LEN {
        HEX_LEN
    } else {
        return Err(KernelError::new(
            ErrorCode::InvalidArgument,
            format!("start must be \"\" or a 32-character digest, got length {start_len}"),
        ));
    };
    let (start, text) = call.input.split_at(at);
    let opts = Md5IterateOptions { text, rounds };
    let digest = iterate_hex_from(opts, start.try_into().ok(), interrupt)?;
    Ok(Output::Text(
        digest.map(|d| ascii_to_string(&d)).unwrap_or_default(),
    ))
}
