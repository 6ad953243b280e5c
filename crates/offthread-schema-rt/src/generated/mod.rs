//! The repo's own schemas, generated from `crates/offthread-schema/schemas/*.km` by
//! `crates/offthread-schema/tests/generated_drift.rs` (`OFFTHREAD_SCHEMA_BLESS=1 cargo
//! test -p offthread-schema --test generated_drift` rewrites them). Not rustfmt-ed: the
//! emitter's output is committed byte for byte, so the drift check needs no formatter.
//!
//! ```
//! use offthread_schema_rt::generated::temperature::{TemperatureBatch, TemperatureBatchRef, TemperatureReading};
//!
//! let batch = TemperatureBatch {
//!     readings: vec![
//!         TemperatureReading { timestamp: 1, value: 20.5 },
//!         TemperatureReading { timestamp: 2, value: 21.0 },
//!     ],
//! };
//! let bytes = batch.to_bytes()?;
//!
//! // Zero-copy: the `value` column is read in place (a `&[f32]` when the buffer is aligned).
//! let readings = TemperatureBatchRef::from_bytes(&bytes)?.readings()?;
//! let values = readings.value()?;
//! let mean = values.iter().sum::<f32>() / readings.len() as f32;
//! assert_eq!(mean, 20.75);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[rustfmt::skip]
pub mod scooter;
#[rustfmt::skip]
pub mod temperature;
