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

const STRIDE: usize = 8;
const DISTANCE: usize = 4;

/// Variant 1: A native struct array: the compiler knows the layout.
fn native(items: &mut [Scooter], speed: u32) {
    for s in items {
        s.distance = s.distance.wrapping_add(speed);
    }
}

/// Variant 2: A byte buffer read as generated accessors do: fixed stride and offset known at
/// compile time, each field decoded little-endian from its bytes.
fn fixed(buf: &mut [u8], speed: u32) {
    for item in buf.chunks_exact_mut(STRIDE) {
        let d = u32::from_le_bytes([
            item[DISTANCE],
            item[DISTANCE + 1],
            item[DISTANCE + 2],
            item[DISTANCE + 3],
        ]);
        item[DISTANCE..DISTANCE + 4].copy_from_slice(&d.wrapping_add(speed).to_le_bytes());
    }
}

/// Variant 3: As `fixed`, but stride and offset known only at run time (dynamic structs).
#[inline(never)]
fn stride(buf: &mut [u8], stride: usize, offset: usize, speed: u32) {
    let n = buf.len() / stride;
    for i in 0..n {
        let at = i * stride + offset;
        let d = u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]);
        buf[at..at + 4].copy_from_slice(&d.wrapping_add(speed).to_le_bytes());
    }
}

/// Variant 4: Fixed stride over u32 words, written so the compiler vectorises it (even words
/// are ids, odd words distances: add [0, speed] to each pair).
fn fixed_simd(words: &mut [u32], speed: u32) {
    for pair in words.chunks_exact_mut(2) {
        pair[1] = pair[1].wrapping_add(speed);
    }
}

/// Variant 5: SoA: the distances as one column.
fn soa(distances: &mut [u32], speed: u32) {
    for d in distances.iter_mut() {
        *d = d.wrapping_add(speed);
    }
}

/// Variant 6: SoA in explicit 8-wide blocks (one SIMD register of u32 on AVX2, two on SIMD128).
fn soa_simd(distances: &mut [u32], speed: u32) {
    let mut blocks = distances.chunks_exact_mut(8);
    for block in &mut blocks {
        for d in block {
            *d = d.wrapping_add(speed);
        }
    }
    for d in blocks.into_remainder() {
        *d = d.wrapping_add(speed);
    }
}

/// Variant 7: An array of pointers to scooters scattered on the heap.
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
        "fixed" | "stride" => {
            let mut buf: Vec<u8> = base
                .iter()
                .flat_map(|s| [s.id.to_le_bytes(), s.distance.to_le_bytes()])
                .flatten()
                .collect();
            let is_fixed = VARIANTS[variant] == "fixed";
            let (st, off) = std::hint::black_box((STRIDE, DISTANCE));
            for _ in 0..reps {
                if is_fixed {
                    fixed(std::hint::black_box(&mut buf), speed);
                } else {
                    stride(std::hint::black_box(&mut buf), st, off, speed);
                }
            }
            sum(&mut buf
                .chunks_exact(STRIDE)
                .map(|c| u32::from_le_bytes([c[4], c[5], c[6], c[7]])))
        }
        "fixedSimd" => {
            let mut words: Vec<u32> = base.iter().flat_map(|s| [s.id, s.distance]).collect();
            for _ in 0..reps {
                fixed_simd(std::hint::black_box(&mut words), speed);
            }
            sum(&mut words.iter().skip(1).step_by(2).copied())
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
