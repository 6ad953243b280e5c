//! Every generated reader over arbitrary bytes: typed errors only, never a panic,
//! an out-of-bounds read or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use offthread_schema::generated::{scooter, temperature};

#[rustfmt::skip]
#[path = "../../crates/offthread-schema/tests/generated/unions.rs"]
#[allow(clippy::all, dead_code)]
mod unions;
#[rustfmt::skip]
#[path = "../../crates/offthread-schema/tests/generated/evolution_v2.rs"]
#[allow(clippy::all, dead_code)]
mod evolution_v2;
#[rustfmt::skip]
#[path = "../../crates/offthread-schema/tests/generated/kitchen_sink.rs"]
#[allow(clippy::all, dead_code)]
mod kitchen_sink;

fuzz_target!(|data: &[u8]| {
    let _ = kitchen_sink::KitchenSink::from_bytes(data);
    let _ = evolution_v2::Batch::from_bytes(data);
    let _ = unions::Particles::from_bytes(data);
    let _ = scooter::ScooterFleet::from_bytes(data);
    let _ = temperature::TemperatureBatch::from_bytes(data);
    // The lazy path too: columns, as a caller would walk them.
    if let Ok(r) = temperature::TemperatureBatchRef::from_bytes(data)
        && let Ok(soa) = r.readings()
        && let (Ok(v), Ok(t)) = (soa.value(), soa.timestamp())
    {
        let _ = v.iter().map(f64::from).sum::<f64>() + t.iter().map(|x| x as f64).sum::<f64>();
    }
});
