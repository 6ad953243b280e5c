//! Every stream filter over arbitrary bytes, cut at arbitrary points: the property is
//! `offthread_filters::fuzzing::check_chunking` (shared with the replay of the saved
//! inputs in tests/fixtures/fuzz/filters/).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| offthread_filters::fuzzing::check_chunking(data));
