//! What every integrity guest shares (docs/guest-integrity.md): the PRNG the producer draws
//! values from, the per-path digests (the canonical stringification, token by token) and
//! the `producer` / `consumer` exports over a table of the batch's schemas.

use crate::guest::{consumer, producer};
use crate::schema;
use ::offthread_guest::Error;
use ::offthread_schema_rt as rt;
use sha2::{Digest, Sha256};
use std::borrow::Cow;

/// Deepest nesting the producer builds (dynamic structs, unions, slices of structs).
const MAX_DEPTH: u32 = 3;

/// SplitMix64: the producer's values are a function of `producer_input.entropy` alone.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    pub fn bit(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }

    /// An integer of `bits` bits (cast by the caller), edge values one time in two.
    pub fn int(&mut self, bits: u32) -> u64 {
        let top = 1u64 << (bits - 1);
        match self.below(10) {
            0 => 0,
            1 => 1,
            2 => u64::MAX,
            3 => top,
            4 => top - 1,
            _ => self.next_u64(),
        }
    }

    /// Any f32 but NaNs other than the quiet one: JS numbers do not keep NaN payloads.
    pub fn f32(&mut self) -> f32 {
        let bits = match self.below(8) {
            0 => [0, 0x8000_0000, 0x7f80_0000, 0xff80_0000, 1, 0x7f7f_ffff][self.below(6) as usize],
            _ => self.next_u64() as u32,
        };
        let x = f32::from_bits(bits);
        if x.is_nan() {
            f32::from_bits(0x7fc0_0000)
        } else {
            x
        }
    }

    pub fn f64(&mut self) -> f64 {
        let bits = match self.below(8) {
            0 => [
                0,
                1 << 63,
                0x7ff0 << 48,
                0xfff0 << 48,
                1,
                0x7fef_ffff_ffff_ffff,
            ][self.below(6) as usize],
            _ => self.next_u64(),
        };
        let x = f64::from_bits(bits);
        if x.is_nan() {
            f64::from_bits(0x7ff8 << 48)
        } else {
            x
        }
    }

    /// An enum's repr: a named value three times in four, else any (enums are open).
    pub fn enum_value(&mut self, named: &[u64], bits: u32) -> u64 {
        if self.below(4) < 3 {
            named[self.below(named.len() as u64) as usize]
        } else {
            self.int(bits)
        }
    }

    /// Text of up to `max` characters: ASCII, 2-, 3- and 4-byte UTF-8 (surrogate pairs in UTF-16).
    pub fn text(&mut self, max: u64) -> String {
        const CHARS: [char; 8] = ['a', 'Z', '0', ' ', 'é', 'ß', '中', '😀'];
        (0..self.below(max + 1))
            .map(|_| {
                if self.below(4) == 0 {
                    CHARS[self.below(8) as usize]
                } else {
                    (b'a' + self.below(26) as u8) as char
                }
            })
            .collect()
    }

    /// Whether to build an optional nested value at `depth`.
    pub fn nest(&mut self, depth: u32) -> bool {
        depth < MAX_DEPTH && self.below(5) < 3
    }

    /// A slice length at `depth`: 0 ..= max, and 0 past the depth limit.
    pub fn count(&mut self, depth: u32, max: u64) -> usize {
        if depth >= MAX_DEPTH {
            0
        } else {
            self.below(max + 1) as usize
        }
    }
}

/// One SHA-256 per field path, fed with `<byte length>:<bytes>` tokens.
pub struct Paths(Vec<Sha256>);

impl Paths {
    pub fn new(count: usize) -> Self {
        Paths((0..count).map(|_| Sha256::new()).collect())
    }

    pub fn token(&mut self, path: usize, bytes: &[u8]) {
        let h = &mut self.0[path];
        h.update(bytes.len().to_string().as_bytes());
        h.update(b":");
        h.update(bytes);
    }

    pub fn num(&mut self, path: usize, x: impl core::fmt::Display) {
        self.token(path, x.to_string().as_bytes());
    }

    /// Any NaN as the quiet one: a JS number does not keep NaN payloads, and a malicious
    /// message may hold any.
    pub fn f32(&mut self, path: usize, x: f32) {
        let bits = if x.is_nan() { 0x7fc0_0000 } else { x.to_bits() };
        self.token(path, format!("{bits:08x}").as_bytes());
    }

    pub fn f64(&mut self, path: usize, x: f64) {
        let bits = if x.is_nan() {
            0x7ff8 << 48
        } else {
            x.to_bits()
        };
        self.token(path, format!("{bits:016x}").as_bytes());
    }

    pub fn boolean(&mut self, path: usize, x: bool) {
        self.token(path, if x { b"true" } else { b"false" });
    }

    pub fn text(&mut self, path: usize, x: &str) {
        self.token(path, x.as_bytes());
    }

    /// The path digests, concatenated in path order.
    pub fn finish(self) -> Vec<u8> {
        self.0
            .into_iter()
            .flat_map(|h| h.finalize().to_vec())
            .collect()
    }
}

/// A batch schema's two entry points (generated per schema by rust-gen.mjs).
pub struct SchemaFns {
    pub produce: fn(u64) -> Result<(Vec<u8>, Paths), rt::WriteError>,
    pub consume: fn(&[u8]) -> Result<Paths, rt::ReadError>,
}

#[derive(Default)]
pub struct Integrity;

fn schema_fns(index: u32) -> Result<&'static SchemaFns, Error> {
    crate::SCHEMAS
        .get(index as usize)
        .ok_or_else(|| Error::new(format!("no schema {index} in this batch")))
}

impl producer::Producer for Integrity {
    fn produce(&mut self, input: schema::ProducerInputRef<'_>) -> Result<schema::Produced, Error> {
        let fns = schema_fns(input.schema())?;
        let (message, paths) = (fns.produce)(input.entropy()).map_err(Error::write)?;
        Ok(schema::Produced {
            message,
            paths: paths.finish(),
        })
    }
}

impl consumer::Consumer for Integrity {
    fn consume(
        &mut self,
        input: schema::ConsumerInputRef<'_>,
    ) -> Result<schema::ConsumerOutput, Error> {
        let fns = schema_fns(input.schema())?;
        let full = input.full();
        let messages = input.messages().map_err(Error::read)?;
        let mut verdicts = Vec::with_capacity(messages.len());
        for message in messages.iter() {
            let bytes = message.bytes().map_err(Error::read)?;
            let bytes = bytes
                .as_slice()
                .map_or_else(|| Cow::Owned(bytes.to_vec()), Cow::Borrowed);
            verdicts.push(match (fns.consume)(&bytes) {
                Ok(paths) => {
                    let paths = paths.finish();
                    let mut digest = [0u8; 32];
                    digest.copy_from_slice(&Sha256::digest(&paths));
                    schema::Verdict {
                        code: 0,
                        digest,
                        paths: if full { paths } else { Vec::new() },
                    }
                }
                Err(e) => schema::Verdict {
                    code: e.code()[1..].parse().unwrap_or(u32::MAX),
                    ..Default::default()
                },
            });
        }
        Ok(schema::ConsumerOutput { verdicts })
    }
}
