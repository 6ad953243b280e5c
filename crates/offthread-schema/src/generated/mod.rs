//! The repo's own schemas, generated from `crates/offthread-schema/schemas/*.km` by
//! `tests/generated_drift.rs` (`OFFTHREAD_SCHEMA_BLESS=1 cargo test -p offthread-schema
//! --test generated_drift` rewrites them). Not rustfmt-ed: the emitter's output is
//! committed byte for byte, so the drift check needs no formatter.

#[rustfmt::skip]
pub mod scooter;
#[rustfmt::skip]
pub mod temperature;
