//! The Karmem paper's layout experiment (Silva et al. 2024, §5.1.2): add a runtime
//! `speed` to every scooter's `distance` (scooter = id u32, distance u32), with the data
//! laid out seven ways. One `run` per variant builds its layout once and repeats the
//! update `reps` times, so native and WASM builds time the same code.

/// The variants, in the paper's order.
pub const VARIANTS: [&str; 7] = [
    "native",
    "fixed",
    "stride",
    "fixedSimd",
    "soa",
    "soaSimd",
    "aop",
];

#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
pub struct Scooter {
    pub id: u32,
    pub distance: u32,
}

// Each variant follows the paper's Zig code (its Figures 21–29) line for line: the
// "u32" variants index a u32 view of the scooter array, as the paper's
// `scooters_aos_u32`, with Rust's bounds-checked indexing standing in for Zig's.

/// Words per scooter in the u32 view, and the word holding `distance`.
const STRIDE: usize = 2;
const OFFSET: usize = 1;

/// Variant 1 (Fig. 21): the native struct array: the compiler knows the layout.
fn native(items: &mut [Scooter], speed: u32) {
    for s in items {
        s.distance = s.distance.wrapping_add(speed);
    }
}

/// Variant 2 (Fig. 22): the u32 view, stride and offset constant at compile time (what
/// reading serialized data with a fixed layout looks like).
fn fixed(words: &mut [u32], count: usize, speed: u32) {
    let max = count * STRIDE;
    let mut i = 0;
    while i < max {
        words[i + OFFSET] = words[i + OFFSET].wrapping_add(speed);
        i += STRIDE;
    }
}

/// Variant 3 (Fig. 23): as `fixed`, with stride and offset known only at run time (the
/// paper's global `scooters_runtime_stride`: dynamic structs).
#[inline(never)]
fn stride(words: &mut [u32], count: usize, stride: usize, offset: usize, speed: u32) {
    let max = count * stride;
    let mut i = 0;
    while i < max {
        words[i + offset] = words[i + offset].wrapping_add(speed);
        i += stride;
    }
}

/// Variant 4 (Fig. 24): the u32 view in 4-word vectors plus the mask [0, speed, 0, speed]
/// (two scooters per 128-bit vector; the paper's `@Vector(4, u32)`). `chunks_exact_mut`
/// is Rust's way to say "whole vectors, checked once", as Zig's `[i..][0..4].*`.
fn fixed_simd(words: &mut [u32], count: usize, speed: u32) {
    let mask = [0, speed, 0, speed];
    let mut vectors = words[..count * STRIDE].chunks_exact_mut(4);
    for v in &mut vectors {
        for (d, m) in v.iter_mut().zip(mask) {
            *d = d.wrapping_add(m);
        }
    }
    // An odd count leaves one scooter (the paper's counts are even).
    for pair in vectors.into_remainder().chunks_exact_mut(STRIDE) {
        pair[OFFSET] = pair[OFFSET].wrapping_add(speed);
    }
}

/// Variant 5 (Fig. 25): SoA: the distances as one column.
fn soa(distances: &mut [u32], speed: u32) {
    for d in distances.iter_mut() {
        *d = d.wrapping_add(speed);
    }
}

/// Variant 6 (Fig. 27): SoA in 4-lane vectors (`@Vector(4, u32)`: four distances per add).
fn soa_simd(distances: &mut [u32], speed: u32) {
    let mut blocks = distances.chunks_exact_mut(4);
    for block in &mut blocks {
        for d in block {
            *d = d.wrapping_add(speed);
        }
    }
    for d in blocks.into_remainder() {
        *d = d.wrapping_add(speed);
    }
}

/// Variant 7 (Fig. 29): an array of pointers to scooters scattered on the heap.
fn aop(items: &mut [Box<Scooter>], speed: u32) {
    for s in items {
        s.distance = s.distance.wrapping_add(speed);
    }
}

fn scooters(n: usize) -> Vec<Scooter> {
    (0..n as u32)
        .map(|id| Scooter {
            id,
            distance: id.wrapping_mul(2_654_435_761) >> 20,
        })
        .collect()
}

/// Runs `variant` (an index into [`VARIANTS`]) `reps` times over `n` scooters with a
/// runtime `speed`; returns the sum of the final distances (the same for every variant,
/// so callers can check the work was done).
pub fn run(variant: usize, n: usize, reps: u32, speed: u32) -> Option<u64> {
    let base = scooters(n);
    let sum = |it: &mut dyn Iterator<Item = u32>| it.map(u64::from).sum::<u64>();
    Some(match *VARIANTS.get(variant)? {
        "native" => {
            let mut v = base;
            for _ in 0..reps {
                native(std::hint::black_box(&mut v), speed);
            }
            sum(&mut v.iter().map(|s| s.distance))
        }
        "fixed" | "stride" | "fixedSimd" => {
            let mut words: Vec<u32> = base.iter().flat_map(|s| [s.id, s.distance]).collect();
            let (st, off) = std::hint::black_box((STRIDE, OFFSET));
            for _ in 0..reps {
                let w = std::hint::black_box(&mut words);
                match VARIANTS[variant] {
                    "fixed" => fixed(w, n, speed),
                    "stride" => stride(w, n, st, off, speed),
                    _ => fixed_simd(w, n, speed),
                }
            }
            sum(&mut words.iter().skip(OFFSET).step_by(STRIDE).copied())
        }
        "soa" | "soaSimd" => {
            let mut distances: Vec<u32> = base.iter().map(|s| s.distance).collect();
            let plain = VARIANTS[variant] == "soa";
            for _ in 0..reps {
                if plain {
                    soa(std::hint::black_box(&mut distances), speed);
                } else {
                    soa_simd(std::hint::black_box(&mut distances), speed);
                }
            }
            sum(&mut distances.iter().copied())
        }
        _ => {
            let mut boxes: Vec<Box<Scooter>> = base.into_iter().map(Box::new).collect();
            for _ in 0..reps {
                aop(std::hint::black_box(&mut boxes), speed);
            }
            sum(&mut boxes.iter().map(|s| s.distance))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_does_the_same_work() {
        let expected = run(0, 1001, 3, 7).unwrap();
        for (v, name) in VARIANTS.iter().enumerate().skip(1) {
            assert_eq!(run(v, 1001, 3, 7), Some(expected), "{name}");
        }
        assert_eq!(run(VARIANTS.len(), 10, 1, 1), None);
    }
}
