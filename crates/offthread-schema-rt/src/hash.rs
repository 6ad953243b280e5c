//! Field-path hashes for SoA lookup tables.
//!
//! A column is named by the *positions* of the fields on its path, not their names,
//! so renaming a field never breaks old data, and appending a field to a dynamic
//! struct gives a new, unused position. Nested inline structs extend the chain
//! (the paper's `H(H(N) ‖ i)`).

/// Start of every chain: FNV-1a 32 of the bytes `offthread`.
pub const FIELD_PATH_SEED: u32 = fnv1a32(0x811c_9dc5, b"offthread");

const fn fnv1a32(mut h: u32, bytes: &[u8]) -> u32 {
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u32;
        h = h.wrapping_mul(0x0100_0193);
        i += 1;
    }
    h
}

/// Hash of a field path given as declaration indices, outermost first:
/// `h₀ = SEED`, `hₖ₊₁ = FNV-1a32(hₖ as LE bytes ‖ iₖ as LE u32)` (each step restarts from the FNV offset basis).
pub const fn field_path_hash(path: &[u32]) -> u32 {
    let mut h = FIELD_PATH_SEED;
    let mut i = 0;
    while i < path.len() {
        let h_bytes = h.to_le_bytes();
        let i_bytes = path[i].to_le_bytes();
        let buf = [
            h_bytes[0], h_bytes[1], h_bytes[2], h_bytes[3], i_bytes[0], i_bytes[1], i_bytes[2],
            i_bytes[3],
        ];
        h = fnv1a32(0x811c_9dc5, &buf);
        i += 1;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_differ_by_position_and_depth() {
        let a = field_path_hash(&[0]);
        let b = field_path_hash(&[1]);
        let c = field_path_hash(&[0, 0]);
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_ne!(field_path_hash(&[]), a);
    }

    #[test]
    fn pinned_values_match_the_spec() {
        // Pinned so that a change to the hash (a format break) fails loudly.
        // The TS runtime test pins the same numbers.
        assert_eq!(FIELD_PATH_SEED, 0xb32c_6e8e);
        assert_eq!(field_path_hash(&[0]), 0x7c3c_3420);
        assert_eq!(field_path_hash(&[1]), 0xcc68_7331);
        assert_eq!(field_path_hash(&[0, 0]), 0x1b5d_3c41);
    }
}
