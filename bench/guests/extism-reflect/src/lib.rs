//! Extism plugin for the guests benchmark: the same three functions as the offthread
//! test guest (tests/guests/basic), with Extism's calling convention (bytes in,
//! bytes out through the Extism kernel's memory).

use extism_pdk::*;

/// Returns its input: the 64 KiB round trip.
#[plugin_fn]
pub fn reflect(input: Vec<u8>) -> FnResult<Vec<u8>> {
    Ok(input)
}

/// No input, no output: the empty call.
#[plugin_fn]
pub fn empty(_: ()) -> FnResult<()> {
    Ok(())
}

/// `n` (u64, little-endian) rounds of a xorshift: the CPU-bound guest.
#[plugin_fn]
pub fn crunch(input: Vec<u8>) -> FnResult<Vec<u8>> {
    let mut n = [0u8; 8];
    let len = input.len().min(8);
    n[..len].copy_from_slice(&input[..len]);
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..u64::from_le_bytes(n) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    Ok(x.to_le_bytes().to_vec())
}
