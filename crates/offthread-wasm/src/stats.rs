//! Batch statistics over a TemperatureBatch buffer that JS wrote into linear memory:
//! read in place, like the native kernel.

use offthread_kernels::stats;

use crate::abi::{fail, input, null_pointer};

/// Average/min/max of the TemperatureBatch at `buf` (`len` bytes). Writes
/// `[count, average, min, max]` as four f64 at `out` and returns 4, or a negative
/// error code (`ERR_INVALID_BUFFER` for a malformed batch).
///
/// # Safety
/// `buf` points to `len` readable bytes (or is null with `len` 0); `out` points to 32
/// writable bytes, 8-byte aligned.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn stats_temperature(buf: *const u8, len: usize, out: *mut f64) -> i32 {
    // SAFETY: forwarded from the caller.
    let Some(bytes) = (unsafe { input(buf, len) }) else {
        return null_pointer();
    };
    if out.is_null() {
        return null_pointer();
    }
    match stats::temperature(bytes) {
        Ok(s) => {
            let values = [
                s.count as f64,
                s.average,
                f64::from(s.min),
                f64::from(s.max),
            ];
            // SAFETY: the caller guarantees 32 writable, aligned bytes at `out`.
            unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), out, 4) };
            4
        }
        Err(e) => fail(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use offthread_schema_rt::generated::temperature::{TemperatureBatch, TemperatureReading};

    #[test]
    fn reads_a_batch_and_rejects_garbage() {
        let readings = (0..100)
            .map(|i| TemperatureReading {
                timestamp: i,
                value: i as f32,
            })
            .collect();
        let buf = TemperatureBatch { readings }.to_bytes().unwrap();
        let mut out = [0f64; 4];
        // SAFETY: valid pointers and lengths from live locals.
        assert_eq!(
            unsafe { stats_temperature(buf.as_ptr(), buf.len(), out.as_mut_ptr()) },
            4
        );
        assert_eq!(out, [100.0, 49.5, 0.0, 99.0]);
        // SAFETY: as above.
        let bad = unsafe { stats_temperature(buf.as_ptr(), 10, out.as_mut_ptr()) };
        assert!(bad < 0);
    }
}
