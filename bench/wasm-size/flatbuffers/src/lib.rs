//! TemperatureBatch with FlatBuffers (flatc --rust, tables as in the paper).
#[allow(warnings, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/temperature_generated.rs"));
}
use generated::bench::*;

static mut OUT: Vec<u8> = Vec::new();

#[no_mangle]
pub extern "C" fn write(n: u32) -> u32 {
    let mut b = flatbuffers::FlatBufferBuilder::new();
    let readings: Vec<_> = (0..n)
        .map(|i| {
            TemperatureReading::create(
                &mut b,
                &TemperatureReadingArgs { timestamp: i64::from(i), value: i as f32 },
            )
        })
        .collect();
    let readings = b.create_vector(&readings);
    let batch = TemperatureBatch::create(&mut b, &TemperatureBatchArgs { readings: Some(readings) });
    b.finish(batch, None);
    let bytes = b.finished_data().to_vec();
    let len = bytes.len() as u32;
    unsafe { OUT = bytes };
    len
}

#[no_mangle]
pub extern "C" fn read() -> f32 {
    let bytes: &[u8] = unsafe { &*core::ptr::addr_of!(OUT) };
    match root_as_temperature_batch(bytes) {
        Ok(b) => b.readings().map(|r| r.iter().map(|x| x.value()).sum()).unwrap_or(0.0),
        Err(_) => -1.0,
    }
}
