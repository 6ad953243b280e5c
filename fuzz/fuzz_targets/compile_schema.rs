//! The compiler and both emitters over arbitrary text: diagnostics only, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use offthread_schema::compiler::compile;
use offthread_schema::emit;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(schema) = compile(src) {
        let _ = emit::rust::emit(&schema, &emit::rust::RustOptions::default());
        let _ = emit::ts::emit(&schema, &emit::ts::TsOptions::default());
    }
});
