//! SHA-256 (RustCrypto `sha2`), lowercase hex: one-shot, and a running digest for
//! callers that feed the bytes in pieces (stream filters).
//!
//! ```
//! use offthread_kernels::sha256;
//! let want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
//! assert_eq!(sha256::hex_string(b"abc"), want);
//! let mut running = sha256::Running::default();
//! running.update(b"a");
//! running.update(b"bc");
//! assert_eq!(running.finish_hex(), want);
//! ```

use offthread_core::registry::{Call, KernelDef, Output};
use sha2::{Digest, Sha256};

/// Length of a hex digest.
pub const HEX_LEN: usize = 64;

/// SHA-256 of `data` as 64 lowercase hex characters.
pub fn hex_string(data: &[u8]) -> String {
    to_hex(&Sha256::digest(data))
}

fn to_hex(digest: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(HEX_LEN);
    for &b in digest {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    s
}

/// A digest fed in pieces; the same result as [`hex_string`] of the concatenation.
#[derive(Debug, Clone, Default)]
pub struct Running(Sha256);

impl Running {
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    pub fn finish_hex(self) -> String {
        to_hex(&self.0.finalize())
    }
}

/// `sha256.hex(data)`: the input's SHA-256 as hex text. No numbers, nothing to check.
pub const HEX: KernelDef = KernelDef {
    name: "sha256.hex",
    run: |call: &Call<'_>, _| Ok(Output::Text(hex_string(call.input))),
};
