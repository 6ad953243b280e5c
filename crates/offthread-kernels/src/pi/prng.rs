//! Park–Miller "minimal standard" generator (m = 2^31 − 1, a = 16807) with
//! jump-ahead, exactly as docs/kernels.md defines it.

/// m = 2^31 − 1 (prime).
pub const MODULUS: u64 = 2_147_483_647;
/// a = 16807 = 7^5.
pub const MULTIPLIER: u64 = 16_807;
/// Largest seed magnitude accepted (JS safe integers).
pub const MAX_SEED_MAGNITUDE: i64 = (1 << 53) - 1;

/// Seed normalisation: s = seed mod m (truncated, as JS `%`); if s ≤ 0 then s += m − 1.
pub fn normalize_seed(seed: i64) -> u32 {
    let mut s = seed % MODULUS as i64;
    if s <= 0 {
        s += MODULUS as i64 - 1;
    }
    s as u32
}

/// x mod m for any x < 2^62 without a division (2^31 ≡ 1 mod m).
#[inline(always)]
pub fn reduce(x: u64) -> u64 {
    let r = (x & MODULUS) + (x >> 31); // < 2^32
    let r = (r & MODULUS) + (r >> 31); // ≤ m + 2
    if r >= MODULUS { r - MODULUS } else { r }
}

/// a·b mod m for a, b < m.
#[inline(always)]
pub fn mul_mod(a: u64, b: u64) -> u64 {
    reduce(a * b)
}

/// 16807^k mod m by square-and-multiply: the jump-ahead multiplier for k steps.
pub fn jump_multiplier(mut k: u64) -> u64 {
    let mut base = MULTIPLIER;
    let mut acc = 1;
    while k > 0 {
        if k & 1 == 1 {
            acc = mul_mod(acc, base);
        }
        base = mul_mod(base, base);
        k >>= 1;
    }
    acc
}

/// The generator. `state` is the last value produced (initially the normalised seed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParkMiller {
    state: u32,
}

impl ParkMiller {
    pub fn new(seed: i64) -> Self {
        Self {
            state: normalize_seed(seed),
        }
    }

    pub fn from_state(state: u32) -> Self {
        debug_assert!(state > 0 && u64::from(state) < MODULUS);
        Self { state }
    }

    pub fn state(self) -> u32 {
        self.state
    }

    /// s ← a·s mod m, computed with `%` — the textbook step.
    #[allow(clippy::should_implement_trait)]
    #[inline(always)]
    pub fn next(&mut self) -> u32 {
        self.state = ((MULTIPLIER * u64::from(self.state)) % MODULUS) as u32;
        self.state
    }

    /// (s − 1)/(m − 1) as an f64 division: a float in [0, 1).
    #[inline(always)]
    pub fn next_f64(&mut self) -> f64 {
        to_unit(self.next())
    }

    /// Advances by `k` steps in O(log k).
    pub fn jump(&mut self, k: u64) {
        self.state = mul_mod(u64::from(self.state), jump_multiplier(k)) as u32;
    }
}

/// The float of one draw, exactly as the definition: (s − 1)/(m − 1).
#[inline(always)]
pub fn to_unit(s: u32) -> f64 {
    f64::from(s - 1) / (MODULUS - 1) as f64
}
