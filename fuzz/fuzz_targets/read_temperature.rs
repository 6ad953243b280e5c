//! `temperature_batch` (and `analysis_result`) over arbitrary bytes: typed errors only,
//! never a panic, an out-of-bounds read or a hang; decoded values round-trip.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use common::{ok, round_trip};
use libfuzzer_sys::fuzz_target;
use offthread_schema_rt::generated::temperature::{
    AnalysisResult, AnalysisResultRef, TemperatureBatch, TemperatureBatchRef,
};

fuzz_target!(|data: &[u8]| {
    round_trip(
        data,
        TemperatureBatch::from_bytes_with,
        TemperatureBatch::to_bytes,
    );
    round_trip(
        data,
        AnalysisResult::from_bytes_with,
        AnalysisResult::to_bytes,
    );
    if let Some(r) = ok(AnalysisResultRef::from_bytes(data)) {
        let _ = (
            r.average_temperature(),
            r.max_temperature(),
            r.min_temperature(),
        );
    }
    // The lazy path, as the stats kernel walks it: columns summed.
    if let Some(r) = ok(TemperatureBatchRef::from_bytes(data))
        && let Some(soa) = ok(r.readings())
    {
        if let Some(v) = ok(soa.value()) {
            assert_eq!(v.len(), soa.len());
            let _ = v.iter().map(f64::from).sum::<f64>();
        }
        if let Some(t) = ok(soa.timestamp()) {
            assert_eq!(t.len(), soa.len());
            let _ = t.iter().fold(0i64, |a, x| a.wrapping_add(x));
        }
    }
});
