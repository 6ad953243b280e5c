//! Running digests: every chunk updates the hash; the end of the stream yields it.

use md5::Md5;
use sha2::{Digest as _, Sha256};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DigestKind {
    Sha256,
    Md5,
}

#[derive(Clone)]
pub enum Digest {
    Sha256(Sha256),
    Md5(Md5),
}

impl Digest {
    pub fn new(kind: DigestKind) -> Self {
        match kind {
            DigestKind::Sha256 => Digest::Sha256(Sha256::new()),
            DigestKind::Md5 => Digest::Md5(Md5::new()),
        }
    }

    pub fn update(&mut self, chunk: &[u8]) {
        match self {
            Digest::Sha256(h) => h.update(chunk),
            Digest::Md5(h) => h.update(chunk),
        }
    }

    /// The digest of everything so far (32 bytes for SHA-256, 16 for MD5).
    pub fn finish(&mut self) -> Vec<u8> {
        match self {
            Digest::Sha256(h) => h.finalize_reset().to_vec(),
            Digest::Md5(h) => h.finalize_reset().to_vec(),
        }
    }
}
