//! TemperatureBatch with offthread-schema's generated Rust (`generated::temperature`).
use offthread_schema_rt::generated::temperature::{TemperatureBatch, TemperatureBatchRef, TemperatureReading};

static mut OUT: Vec<u8> = Vec::new();

/// Writes `n` readings; returns the message length (the bytes stay in the module).
#[unsafe(no_mangle)]
pub extern "C" fn write(n: u32) -> u32 {
    let batch = TemperatureBatch {
        readings: (0..n)
            .map(|i| TemperatureReading { timestamp: i64::from(i), value: i as f32 })
            .collect(),
    };
    let bytes = batch.to_bytes().unwrap_or_default();
    let len = bytes.len() as u32;
    // SAFETY: single-threaded wasm32 module; nothing else holds OUT.
    unsafe { OUT = bytes };
    len
}

/// Sums the `value` column of the message written last (-1 when it does not read).
#[unsafe(no_mangle)]
pub extern "C" fn read() -> f32 {
    // SAFETY: as in `write`.
    let bytes: &[u8] = unsafe { &*core::ptr::addr_of!(OUT) };
    let sum = TemperatureBatchRef::from_bytes(bytes)
        .and_then(|b| b.readings())
        .and_then(|r| r.value())
        .map(|c| c.iter().sum());
    sum.unwrap_or(-1.0)
}
