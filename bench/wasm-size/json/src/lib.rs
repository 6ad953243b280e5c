//! TemperatureBatch as JSON (serde_json).
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct TemperatureReading {
    timestamp: i64,
    value: f32,
}

#[derive(Serialize, Deserialize)]
struct TemperatureBatch {
    readings: Vec<TemperatureReading>,
}

static mut OUT: Vec<u8> = Vec::new();

#[unsafe(no_mangle)]
pub extern "C" fn write(n: u32) -> u32 {
    let batch = TemperatureBatch {
        readings: (0..n)
            .map(|i| TemperatureReading { timestamp: i64::from(i), value: i as f32 })
            .collect(),
    };
    let bytes = serde_json::to_vec(&batch).unwrap_or_default();
    let len = bytes.len() as u32;
    // SAFETY: single-threaded wasm32 module; nothing else holds OUT.
    unsafe { OUT = bytes };
    len
}

#[unsafe(no_mangle)]
pub extern "C" fn read() -> f32 {
    // SAFETY: as in `write`.
    let bytes: &[u8] = unsafe { &*core::ptr::addr_of!(OUT) };
    match serde_json::from_slice::<TemperatureBatch>(bytes) {
        Ok(b) => b.readings.iter().map(|r| r.value).sum(),
        Err(_) => -1.0,
    }
}
