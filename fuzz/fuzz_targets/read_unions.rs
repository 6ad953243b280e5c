//! A union as a value and in all four slice layouts (AoS, SoA, BoVoA, BoVoS) over
//! arbitrary bytes: owned decode, round trip, and every lazy accessor, unknown tags
//! included.
#![no_main]

#[path = "common/mod.rs"]
mod common;

#[rustfmt::skip]
#[path = "../../crates/offthread-schema/tests/generated/unions.rs"]
#[allow(clippy::all, dead_code)]
mod unions;

use common::{ok, round_trip};
use libfuzzer_sys::fuzz_target;
use unions::{AnyPointRef, Particles, ParticlesRef};

fn touch(u: AnyPointRef<'_>) -> u32 {
    match u {
        AnyPointRef::Empty => 0,
        AnyPointRef::Point2d(p) => p.x().to_bits() ^ p.y().to_bits(),
        AnyPointRef::Point3d(p) => p.x().to_bits() ^ p.y().to_bits() ^ p.z().to_bits(),
        AnyPointRef::Unknown(t) => {
            assert!(t > 2, "known tag {t} reported as unknown");
            t
        }
    }
}

fuzz_target!(|data: &[u8]| {
    round_trip(data, Particles::from_bytes_with, Particles::to_bytes);
    let Some(r) = ok(ParticlesRef::from_bytes(data)) else {
        return;
    };
    let _ = ok(r.single()).map(touch);
    if let Some(aos) = ok(r.aos()) {
        for i in 0..aos.len() {
            let _ = ok(aos.get(i).expect("in range")).map(touch);
        }
        assert!(aos.get(aos.len()).is_none());
    }
    if let Some(soa) = ok(r.soa()) {
        assert_eq!(soa.tags().len(), soa.len());
        for i in 0..soa.len() {
            let _ = ok(soa.get(i).expect("in range")).map(touch);
        }
        assert!(soa.get(soa.len()).is_none());
    }
    if let Some(t) = ok(r.bovoa()) {
        if let Some(a) = ok(t.point_2d()) {
            let _ = a.iter().map(|p| p.x()).sum::<f32>();
        }
        if let Some(a) = ok(t.point_3d()) {
            let _ = a.iter().map(|p| p.z()).sum::<f32>();
        }
    }
    if let Some(t) = ok(r.bovos()) {
        if let Some(s) = ok(t.point_2d()) {
            let _ = ok(s.x()).map(|c| c.iter().sum::<f32>());
        }
        if let Some(s) = ok(t.point_3d()) {
            let _ = ok(s.z()).map(|c| c.iter().sum::<f32>());
        }
    }
});
