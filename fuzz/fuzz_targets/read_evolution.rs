//! The evolving schema over arbitrary bytes, read by both versions; and evolution
//! itself: whatever one version encodes, the other must read.
#![no_main]

#[path = "common/mod.rs"]
mod common;

#[rustfmt::skip]
#[path = "../../crates/offthread-schema/tests/generated/evolution_v1.rs"]
#[allow(clippy::all, dead_code)]
mod evolution_v1;
#[rustfmt::skip]
#[path = "../../crates/offthread-schema/tests/generated/evolution_v2.rs"]
#[allow(clippy::all, dead_code)]
mod evolution_v2;

use common::{ok, round_trip};
use libfuzzer_sys::fuzz_target;
use offthread_schema_rt::ReadOptions;

fuzz_target!(|data: &[u8]| {
    let v1 = round_trip(
        data,
        evolution_v1::Batch::from_bytes_with,
        evolution_v1::Batch::to_bytes,
    );
    let v2 = round_trip(
        data,
        evolution_v2::Batch::from_bytes_with,
        evolution_v2::Batch::to_bytes,
    );
    if let Some(bytes) = v1 {
        let old = evolution_v1::Batch::from_bytes(&bytes).unwrap();
        let new = evolution_v2::Batch::from_bytes_with(&bytes, ReadOptions::DEFAULT)
            .expect("v2 reads what v1 wrote");
        assert_eq!(new.label, old.label);
        assert_eq!(new.readings.len(), old.readings.len());
        assert_eq!(new.readings_aos.len(), old.readings_aos.len());
        assert!(
            new.readings
                .iter()
                .all(|r| r.quality == 0 && r.extra.to_bits() == 0)
        );
    }
    if let Some(bytes) = v2 {
        let new = evolution_v2::Batch::from_bytes(&bytes).unwrap();
        let old = evolution_v1::Batch::from_bytes_with(&bytes, ReadOptions::DEFAULT)
            .expect("v1 reads what v2 wrote");
        assert_eq!(old.label, new.label);
        assert_eq!(old.readings.len(), new.readings.len());
        assert_eq!(old.readings_aos.len(), new.readings_aos.len());
        for (o, n) in old.readings.iter().zip(&new.readings) {
            assert_eq!((o.id, o.value.to_bits()), (n.id, n.value.to_bits()));
        }
    }
    // Lazy: v2's AoS accessors over v1-shaped (shorter) items read zeros past the stride.
    if let Some(r) = ok(evolution_v2::BatchRef::from_bytes(data))
        && let Some(aos) = ok(r.readings_aos())
    {
        assert_eq!(aos.iter().count(), aos.len());
        for item in aos.iter() {
            let _ = (item.id(), item.value(), item.quality(), item.extra());
        }
    }
});
