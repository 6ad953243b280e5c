//! `scooter_fleet` (a SoA and an AoS slice of inline structs) over arbitrary bytes.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use common::{ok, round_trip};
use libfuzzer_sys::fuzz_target;
use offthread_schema_rt::generated::scooter::{ScooterFleet, ScooterFleetRef};

fuzz_target!(|data: &[u8]| {
    round_trip(data, ScooterFleet::from_bytes_with, ScooterFleet::to_bytes);
    if let Some(r) = ok(ScooterFleetRef::from_bytes(data)) {
        if let Some(soa) = ok(r.soa()) {
            for col in [ok(soa.id()), ok(soa.distance())].into_iter().flatten() {
                assert_eq!(col.len(), soa.len());
                let _ = col.iter().fold(0u32, u32::wrapping_add);
            }
        }
        if let Some(aos) = ok(r.aos()) {
            assert_eq!(aos.iter().count(), aos.len());
            assert!(aos.get(aos.len()).is_none());
            let _ = aos
                .iter()
                .map(|s| s.id() ^ s.distance())
                .fold(0, u32::wrapping_add);
        }
    }
});
